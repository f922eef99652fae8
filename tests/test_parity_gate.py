"""The export's parity gate (models/training/export.py + parity.py) rejects a graph that drifted
from the torch model and accepts one that did not.

A tiny randomly initialised RhetoricaNet (a 2-layer, 32-wide BERT; no pretrained weights, no shared
data) is exported as the real export does (a sentence graph and a role graph); drifted copies are
made by editing one initializer of one graph with the ``onnx`` package:

* ``gamma`` (sentence graph): the last encoder LayerNorm's scale, each channel times
  (1 + 0.25 N(0, 1)): the sentence embeddings turn by about 11 degrees (mean cosine ~0.98,
  below the 0.99 threshold) while the roles stay within the agreement threshold (~0.98 >= 0.97):
  only the cosine condition catches it;
* ``classifier`` (role graph): N(0, 0.3 std) noise on the role classifier's weight: embeddings untouched,
  roles change (agreement ~0.45, below 0.97): only the agreement condition catches it.

So each would pass a gate that always passed, or one that checked only the other figure.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from core.errors import ModelError  # noqa: E402
from tests.tiny_bundle import WORDS, build_tokenizer  # noqa: E402

LAST_ENCODER_NORM = "/encoder/encoder/layer.1/output/LayerNorm/LayerNormalization"
CLASSIFIER = "/head/classifier/MatMul"
MIN_COSINE, MIN_AGREEMENT = 0.99, 0.97  # the ExportOptions defaults


def _initializer(model, node_name: str, position: int):  # type: ignore[no-untyped-def]
    """The initializer that feeds input ``position`` of the node named ``node_name``."""
    node = next(n for n in model.graph.node if n.name == node_name)
    return next(i for i in model.graph.initializer if i.name == node.input[position])


def _edit(source: Path, target: Path, node_name: str, position: int, change) -> None:  # type: ignore[no-untyped-def]
    from onnx import numpy_helper

    model = onnx.load(str(source))
    init = _initializer(model, node_name, position)
    weight = numpy_helper.to_array(init)
    new = change(weight).astype(weight.dtype)
    assert new.shape == weight.shape and not np.allclose(new, weight)
    init.CopyFrom(numpy_helper.from_array(new, init.name))
    onnx.checker.check_model(model)
    onnx.save(model, str(target))


def gamma_graph(source: Path, target: Path) -> None:
    noise = np.random.default_rng(2).standard_normal(32)
    _edit(source, target, LAST_ENCODER_NORM, 1, lambda w: w * (1 + 0.25 * noise))


def _copy(source: Path, target: Path) -> None:
    if Path(source).resolve() != Path(target).resolve():
        shutil.copyfile(source, target)


def drift_gamma(source, target) -> None:  # type: ignore[no-untyped-def]
    """GraphPair -> GraphPair with the sentence graph drifted."""
    _copy(source.roles, target.roles)
    gamma_graph(source.sentences, target.sentences)


def drift_classifier(source, target) -> None:  # type: ignore[no-untyped-def]
    """GraphPair -> GraphPair with the role graph drifted."""
    noise = np.random.default_rng(1).standard_normal((32, 6))
    _copy(source.sentences, target.sentences)
    _edit(source.roles, target.roles, CLASSIFIER, 1, lambda w: w + 0.3 * w.std() * noise)


def _pair(folder: Path, name: str):  # type: ignore[no-untyped-def]
    from models.training.export import GraphPair

    return GraphPair(folder / f"{name}.onnx", folder / f"{name}-roles.onnx")


DRIFTS = {"gamma": drift_gamma, "classifier": drift_classifier}


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """(net, base folder with tokenizer.json, parity documents, fp32 graph)."""
    from transformers import BertConfig, BertModel

    from models.training.export import export_onnx
    from models.training.net import HeadConfig, RhetoricaNet

    torch.manual_seed(0)
    config = BertConfig(vocab_size=2048, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    net = RhetoricaNet(BertModel(config, add_pooling_layer=False),
                       HeadConfig(dim=32, layers=1, heads=2, ffn=64, dropout=0.0))
    with torch.no_grad():  # LayerNorms off their (1, 0) start, as after training: own initializers
        for module in net.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.copy_(1 + 0.1 * torch.randn_like(module.weight))
                module.bias.copy_(0.1 * torch.randn_like(module.bias))
    net.eval()
    base = tmp_path_factory.mktemp("base")
    build_tokenizer(base / "tokenizer.json")  # word-level; ids < 2048 (export traces ids 1000-2000)
    rng = np.random.default_rng(3)
    documents = [[" ".join(rng.choice(WORDS, size=int(rng.integers(3, 12))))
                  for _ in range(int(rng.integers(3, 9)))] for _ in range(12)]
    fp32 = export_onnx(net, base / "fp32.onnx")
    return net, base, documents, fp32


def _passes(figures: dict[str, float]) -> bool:
    from models.training.export import ExportOptions, _passes

    return _passes(figures, ExportOptions(min_cosine=MIN_COSINE, min_agreement=MIN_AGREEMENT))


def test_parity_check_sees_each_drift_and_the_gate_rejects_it(setup, tmp_path: Path) -> None:
    from models.training.parity import parity_check

    net, base, documents, fp32 = setup
    graphs = {"exact": fp32}
    for name, drift in DRIFTS.items():
        graphs[name] = _pair(tmp_path, name)
        drift(fp32, graphs[name])
    result = parity_check(net, base / "tokenizer.json", graphs, documents, min_sentences=50)
    assert result["sentences"] >= 50
    exact, gamma, classifier = result["exact"], result["gamma"], result["classifier"]
    assert exact["mean_cosine"] >= 0.99999 and exact["role_agreement"] == 1.0
    assert exact["max_abs_logit_diff"] < 1e-3
    # The LayerNorm drift turns the embeddings but keeps (nearly all) roles; the classifier drift
    # leaves the embeddings exact and changes roles: each fails one condition only.
    assert gamma["mean_cosine"] < MIN_COSINE and gamma["role_agreement"] >= MIN_AGREEMENT
    assert classifier["mean_cosine"] >= 0.99999 and classifier["role_agreement"] < MIN_AGREEMENT
    assert _passes(exact)
    assert not _passes(gamma) and not _passes(classifier)


@pytest.fixture
def export_with(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """export_bundle with its fp32 export drifted by ``DRIFTS[drift]`` (None: left exact)."""
    from models.training import export

    real_export = export.export_onnx

    def run(setup, out: Path, drift: str | None, **options):  # type: ignore[no-untyped-def]
        net, base, documents, _ = setup

        def export_then_drift(model, path: Path):  # type: ignore[no-untyped-def]
            pair = real_export(model, path)
            if drift is not None:
                DRIFTS[drift](pair, pair)
            return pair

        monkeypatch.setattr(export, "export_onnx", export_then_drift)
        opts = export.ExportOptions(**{"name": "parity-gate", "max_length": 16, "quantize": False,
                                       "parity_sentences": 50, **options})
        return export.export_bundle(net, base, out, opts, documents)

    return run


@pytest.mark.parametrize("drift", sorted(DRIFTS))
def test_export_refuses_a_drifted_fp32_graph(setup, export_with, drift: str, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    with pytest.raises(ModelError, match=r"export parity check failed \(fp32\)"):
        export_with(setup, out, drift)
    assert not out.exists()  # nothing shipped


def test_export_ships_the_exact_graph(setup, export_with, tmp_path: Path) -> None:
    manifest = export_with(setup, tmp_path / "bundle", None)
    parity = manifest.context["parity"]
    assert parity["passed"] is True and parity["fp32"]["role_agreement"] == 1.0
    assert parity["fp32"]["mean_cosine"] >= 0.99999 and (tmp_path / "bundle" / "model.onnx").is_file()
    assert (tmp_path / "bundle" / "roles.onnx").is_file()
    assert manifest.context["graphs"] == {"sentences": "model.onnx", "roles": "roles.onnx"}


@pytest.mark.parametrize("drift", sorted(DRIFTS))
def test_unenforced_export_records_the_failure(setup, export_with, drift: str, tmp_path: Path) -> None:
    manifest = export_with(setup, tmp_path / "bundle", drift, enforce_parity=False)
    assert manifest.context["parity"]["passed"] is False


@pytest.mark.parametrize("drift", ["gamma", None])
def test_export_gates_the_quantised_graph(setup, export_with, drift: str | None, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped (int8) sentence graph is what the gate checks: a "quantiser" that drifts it is
    refused on every plan; one that copies it exactly is shipped (with the role graph)."""
    from models.training import quantize

    calls = []

    def fake_quantize(source: Path, target: Path, exclude: list[str] | None = None) -> None:
        if Path(source).stem.endswith("-roles"):  # the role graph: quantised once, exactly here
            shutil.copyfile(source, target)
            return
        calls.append(list(exclude or []))
        if drift is None:
            shutil.copyfile(source, target)
        else:
            gamma_graph(Path(source), Path(target))

    monkeypatch.setattr(quantize, "quantize_int8", fake_quantize)
    out = tmp_path / "bundle"
    plans = ((), ("layer.0/output/dense/",))
    if drift is None:
        manifest = export_with(setup, out, None, quantize=True, fp32_plans=plans)
        assert len(calls) == 1 and manifest.quantization == "int8-dynamic-per-channel"
        assert manifest.context["parity"]["passed"] is True
        assert manifest.context["parity"]["int8"]["role_agreement"] == 1.0
    else:
        with pytest.raises(ModelError, match=r"export parity check failed \(int8\)"):
            export_with(setup, out, None, quantize=True, fp32_plans=plans)
        assert calls == [[], ["/encoder/encoder/layer.0/output/dense/MatMul"]]  # every plan tried
        assert not out.exists()


def test_a_graph_wrong_for_one_section_kind_only_is_caught(setup, tmp_path: Path) -> None:
    """The parity documents cycle through every section kind, so a drift in one row of the
    section-kind embedding (here "method", a kind no other check feeds) changes roles and fails."""
    from onnx import numpy_helper

    from models.training.net import SECTION_KINDS, UNKNOWN_SECTION
    from models.training.parity import parity_check

    net, base, documents, fp32 = setup
    model = onnx.load(str(fp32.roles))
    (table,) = [i for i in model.graph.initializer
                if tuple(i.dims) == (UNKNOWN_SECTION + 1, 32) and "section" in i.name]
    weights = numpy_helper.to_array(table).copy()
    row = SECTION_KINDS.index("method")
    weights[row] = 20 * np.random.default_rng(4).standard_normal(weights.shape[1])
    table.CopyFrom(numpy_helper.from_array(weights, table.name))
    drifted = _pair(tmp_path, "section")
    shutil.copyfile(fp32.sentences, drifted.sentences)
    onnx.save(model, str(drifted.roles))
    result = parity_check(net, base / "tokenizer.json", {"exact": fp32, "section": drifted},
                          documents, min_sentences=10_000)  # all 12 documents: kinds 0..11
    assert result["documents"] == len(documents) > UNKNOWN_SECTION
    assert _passes(result["exact"]) and result["section"]["mean_cosine"] >= 0.99999
    assert not _passes(result["section"])


def test_two_graph_runtime_matches_the_torch_net(setup, export_with, tmp_path: Path) -> None:
    """The runtime runs the sentence graph on length-sorted batches and the role graph on each
    document's pooled vectors: the same numbers as the torch net on the document in one piece."""
    from models import load_model
    from models.encoder import pad_batch

    net, _, documents, _ = setup
    export_with(setup, tmp_path / "bundle", None)
    model = load_model(tmp_path / "bundle", device="cpu")
    assert model.two_graphs
    doc = [s for d in documents[:5] for s in d]  # sentences of many lengths: several batches
    encoding = model.encode_document(doc, "method")
    ids, mask = pad_batch(model.tokenize(doc), 0)
    kinds = torch.full((len(doc),), model.section_kind_ids("method", 1)[0], dtype=torch.long)
    with torch.no_grad():
        embedding, logits = net(torch.from_numpy(ids), torch.from_numpy(mask), kinds)
    assert np.allclose(encoding.embeddings, embedding.numpy(), atol=1e-4)
    assert np.allclose(encoding.probabilities, torch.softmax(logits, -1).numpy(), atol=1e-4)
    assert np.allclose(model.embed(doc, batch_size=4), embedding.numpy(), atol=1e-4)
    # Several documents encoded together (length-sorted across them) = each on its own.
    together = model.encode_documents([(documents[0], "method"), ([], None), (documents[1], None)])
    alone = [model.encode_document(documents[0], "method"), model.encode_document([], None),
             model.encode_document(documents[1], None)]
    for got, want in zip(together, alone, strict=True):
        assert got.embeddings.shape == want.embeddings.shape
        assert np.allclose(got.probabilities, want.probabilities, atol=1e-5)
        assert np.allclose(got.embeddings, want.embeddings, atol=1e-5)
