"""End to end on real CSAbstruct sentences: train a few steps, export, quantise, parity, reload."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from core.errors import ModelError  # noqa: E402
from models.roles import ROLES  # noqa: E402
from tests.conftest import shared_path  # noqa: E402

pytestmark = [pytest.mark.shared, pytest.mark.slow]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A few training steps on 6 real CSAbstruct abstracts (~40 sentences), max_length 32."""
    from models.datasets import load_dataset
    from models.training.trainer import TrainConfig, train

    shared = shared_path()
    tmp = tmp_path_factory.mktemp("train")
    docs = load_dataset("csabstruct", "train", shared)[:6]
    dev = load_dataset("csabstruct", "dev", shared)[:4]
    rows = [{"doc_id": d.doc_id, "sentences": d.sentences,
             "labels": ["result|conclusion" if x == "result" else x for x in d.labels],
             "section_kinds": d.section_kinds} for d in docs]
    (tmp / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp / "dev.jsonl").write_text("".join(json.dumps({"doc_id": d.doc_id, "sentences": d.sentences,
                                                       "labels": d.labels}) + "\n" for d in dev),
                                   encoding="utf-8")
    messages = []

    class Ctx:
        def progress(self, done, total, message=""):
            messages.append(message)

        def check(self):
            pass

        def child(self, start, end):
            return self

    cfg = TrainConfig(data=[f"jsonl:{tmp / 'train.jsonl'}"], dev=[f"jsonl:{tmp / 'dev.jsonl'}"],
                      out=str(tmp / "work"), max_steps=4, epochs=1, batch_size=16, max_length=32,
                      threads=2, log_every=1)
    result = train(cfg, Ctx())  # type: ignore[arg-type]
    return result, tmp, messages, dev


def _checkpoint_predictions(checkpoint, documents, base=None):
    """The roles a saved checkpoint gives each sentence, one document at a time (whole document as
    context, section kind unknown as in the dev file), straight from the torch net."""
    from models.encoder import pad_batch
    from models.training.base import load_tokenizer
    from models.training.checkpoint import load_checkpoint
    from models.training.net import UNKNOWN_SECTION

    net, base_dir, _ = load_checkpoint(checkpoint, base)
    net.eval()
    tokenizer = load_tokenizer(base_dir, 32)
    roles = []
    for doc in documents:
        ids, mask = pad_batch([e.ids for e in tokenizer.encode_batch(doc.sentences)], 0)
        kinds = torch.full((len(doc.sentences),), UNKNOWN_SECTION, dtype=torch.long)
        with torch.no_grad():
            _, logits = net(torch.from_numpy(ids), torch.from_numpy(mask), kinds)
        roles += [ROLES[k] for k in logits.argmax(-1).tolist()]
    return roles


def test_training_writes_best_checkpoint_and_reports_progress(tiny_run):
    from tests.test_model_cli import _f1_micro_macro

    result, tmp, messages, dev = tiny_run
    assert result.checkpoint.is_file() and result.steps == 4
    assert result.trained_section_kinds == ["abstract"]
    assert any("loss" in m for m in messages) and any("dev F1" in m for m in messages)
    history = [json.loads(line) for line in (tmp / "work" / "history.jsonl").read_text().splitlines()]
    spec = f"jsonl:{tmp / 'dev.jsonl'}"
    scores = [entry["dev_f1_micro"][spec] for entry in history]
    # Best on dev: the checkpoint is the first evaluation with the highest dev F1.
    best = history[scores.index(max(scores))]
    assert result.best_step == best["step"] and result.best_dev == {spec: max(scores)}
    # That F1 is the saved model's own: its predictions on the dev documents, scored here by hand
    # in the user-data label space (the six roles; CSAbstruct's labels are all roles).
    gold = [label for d in dev for label in d.labels]
    micro, macro = _f1_micro_macro(gold, _checkpoint_predictions(result.checkpoint, dev), list(ROLES))
    assert best["dev_f1_micro"][spec] == pytest.approx(micro)
    assert best["dev_f1_macro"][spec] == pytest.approx(macro)


def test_net_single_document_equals_batched_documents(tiny_run):
    from models.training.base import load_tokenizer
    from models.training.batching import Piece, collate, encode_documents
    from models.training.checkpoint import load_checkpoint

    result, _, _, dev = tiny_run
    net, base_dir, _ = load_checkpoint(result.checkpoint)
    net.eval()
    corpus = encode_documents(dev[:3], load_tokenizer(base_dir, 32), "dev")
    batch = collate([Piece(i, 0, len(d.doc)) for i, d in enumerate(corpus)], corpus)
    with torch.no_grad():
        emb, logits = net.forward_batch(batch.input_ids, batch.attention_mask, batch.section_kind,
                                        batch.doc_lengths)
        start = 0
        for i, doc in enumerate(corpus):
            one = collate([Piece(i, 0, len(doc.doc))], corpus)
            e, lg = net(one.input_ids, one.attention_mask, one.section_kind)
            n = len(doc.doc)
            assert torch.allclose(e, emb[start: start + n], atol=1e-5)
            assert torch.allclose(lg, logits[start: start + n], atol=1e-4)
            start += n
        single = net(one.input_ids[:1], one.attention_mask[:1], one.section_kind[:1])
        assert single[0].shape == (1, 384) and single[1].shape == (1, len(ROLES))
        assert torch.allclose(single[0].norm(dim=-1), torch.ones(1), atol=1e-5)


def test_export_quantise_parity_and_reload(tiny_run, tmp_path):
    import onnxruntime as ort

    from models.bundle import verify_bundle
    from models.training.checkpoint import load_checkpoint
    from models.training.export import ExportOptions, export_bundle

    result, _, _, dev = tiny_run
    net, base_dir, meta = load_checkpoint(result.checkpoint)
    documents = [d.sentences for d in dev]
    bundle = tmp_path / "bundle"
    # A 4-step head is near-uniform, so int8 may flip labels: record parity without enforcing it.
    options = ExportOptions(name="tiny", max_length=32, parity_sentences=20, enforce_parity=False,
                            fp32_plans=(("layer.0/output/dense/",),),
                            trained_section_kinds=meta["trained_section_kinds"], training={"steps": 4})
    manifest = export_bundle(net, base_dir, bundle, options, documents)

    assert sorted(p.name for p in bundle.iterdir()) == ["manifest.json", "model.onnx", "roles.onnx",
                                                         "tokenizer.json"]
    assert verify_bundle(bundle).files == manifest.files and "roles.onnx" in manifest.files
    assert manifest.labels == list(ROLES) and manifest.quantization == "int8-dynamic-per-channel"
    assert manifest.max_length == 32 and manifest.embedding_dim == 384
    parity = manifest.context["parity"]
    assert parity["sentences"] >= 20
    assert parity["fp32"]["mean_cosine"] > 0.9999 and parity["fp32"]["role_agreement"] == 1.0
    assert parity["int8"]["mean_cosine"] > 0.97
    assert "introduction" in manifest.context["section_kinds_tied_to_unknown"]
    assert manifest.context["quantization"]["fp32_nodes"] == ["/encoder/encoder/layer.0/output/dense/MatMul"]
    assert (bundle / "model.onnx").stat().st_size + (bundle / "roles.onnx").stat().st_size < 30e6
    tok = json.loads((bundle / "tokenizer.json").read_text())
    assert tok["truncation"]["max_length"] == 32 and tok["padding"] is None

    # The sentence graph: tokens -> pooled + embedding; the role graph: pooled + section kinds -> logits.
    session = ort.InferenceSession(str(bundle / "model.onnx"), providers=["CPUExecutionProvider"])
    roles = ort.InferenceSession(str(bundle / "roles.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["input_ids", "attention_mask"]
    assert [o.name for o in session.get_outputs()] == ["pooled", "sentence_embedding"]
    assert [i.name for i in roles.get_inputs()] == ["pooled", "section_kind"]
    for n, length in ((1, 5), (7, 19)):
        ids = np.full((n, length), 1000, dtype=np.int64)
        ids[:, 0] = 101
        pooled, emb = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})
        (logits,) = roles.run(None, {"pooled": pooled, "section_kind": np.zeros(n, dtype=np.int64)})
        assert emb.shape == (n, 384) and logits.shape == (n, len(ROLES)) and pooled.shape == (n, 384)
        assert np.allclose(np.linalg.norm(emb, axis=-1), 1.0, atol=1e-3)

    from models import load_model

    model = load_model(bundle)
    assert model.two_graphs
    sentences = dev[0].sentences
    predictions = model.classify_roles(sentences, ["abstract"] * len(sentences))
    assert len(predictions) == len(sentences) and all(p.label in ROLES for p in predictions)
    assert model.embed(sentences).shape == (len(sentences), 384)


def test_export_fails_when_parity_is_below_threshold(tiny_run, tmp_path):
    from models.training.checkpoint import load_checkpoint
    from models.training.export import ExportOptions, export_bundle

    result, _, _, dev = tiny_run
    net, base_dir, _ = load_checkpoint(result.checkpoint)
    options = ExportOptions(max_length=32, quantize=False, parity_sentences=10, min_cosine=1.01)
    with pytest.raises(ModelError, match="parity check failed"):
        export_bundle(net, base_dir, tmp_path / "bundle", options, [d.sentences for d in dev])
    assert not (tmp_path / "bundle").exists()


PMC_LABELS = ["other", "objective", "methods", "results", "background"]


def test_label_adapter_export_matches_torch_and_survives_calibration(tiny_run, tmp_path):
    from models import load_model
    from models.encoder import pad_batch
    from models.training.base import load_tokenizer
    from models.training.calibrate import apply_bias
    from models.training.checkpoint import load_checkpoint
    from models.training.export import ExportOptions, export_bundle

    result, _, _, dev = tiny_run
    net, base_dir, _ = load_checkpoint(result.checkpoint)
    torch.manual_seed(0)
    adapter = net.add_adapter("pmc-sents-full", PMC_LABELS)
    adapter.set_keep_fractions({"other": 0.5})
    assert float(adapter.prior_shift[0]) == pytest.approx(np.log(2.0))
    net.eval()
    sentences = dev[0].sentences
    ids = [e.ids for e in load_tokenizer(base_dir, 32).encode_batch(sentences)]

    def torch_adapter_logits():
        input_ids, mask = (torch.from_numpy(x) for x in pad_batch(ids, 0))
        with torch.no_grad():
            emb, logits = net(input_ids, mask, torch.full((len(ids),), 8, dtype=torch.long))
            return adapter(emb, logits).numpy()

    before = torch_adapter_logits()
    apply_bias(net, [0.5, -1.0, 0.0, 2.0, 0.3, -0.7])  # role logits move, the adapter must not
    assert np.allclose(torch_adapter_logits(), before, atol=1e-4)

    options = ExportOptions(name="tiny", max_length=32, quantize=False, parity_sentences=10,
                            enforce_parity=False)
    manifest = export_bundle(net, base_dir, tmp_path / "bundle", options, [d.sentences for d in dev])
    assert "adapters.npz" in manifest.files
    assert manifest.context["parity"]["fp32"]["adapter_agreement"] == {"pmc-sents-full": 1.0}
    assert manifest.context["adapters"]["pmc-sents-full"]["labels"] == PMC_LABELS
    model = load_model(tmp_path / "bundle", device="cpu", threads=1)
    encoding = model.encode_document(sentences)
    shipped = model.adapter("pmc-sents-full").logits(encoding.embeddings, encoding.probabilities)
    assert np.allclose(shipped, before, atol=2e-3)


def test_adapter_loss_uses_only_its_own_dataset_rows_and_trains(tiny_run):
    from models.datasets import load_dataset
    from models.training.base import load_tokenizer
    from models.training.batching import Piece, collate, encode_documents
    from models.training.checkpoint import load_checkpoint
    from models.training.trainer import adapter_loss

    result, _, _, _ = tiny_run
    net, base_dir, _ = load_checkpoint(result.checkpoint)
    tokenizer = load_tokenizer(base_dir, 32)
    shared = shared_path()
    pmc = encode_documents(load_dataset("pmc-sents-full", "dev-holdout", shared)[:24], tokenizer,
                           "pmc-sents-full:dev-holdout")
    cs = encode_documents(load_dataset("csabstruct", "dev", shared)[:2], tokenizer, "csabstruct:dev")
    corpus = pmc + cs
    assert pmc[0].dataset == "pmc-sents-full" and cs[0].dataset == "csabstruct"
    batch = collate([Piece(i, 0, len(d.doc)) for i, d in enumerate(corpus)], corpus)
    net.eval()
    with torch.no_grad():
        emb, logits = net.forward_batch(batch.input_ids, batch.attention_mask, batch.section_kind,
                                        batch.doc_lengths)
    assert float(adapter_loss(net, emb, logits, batch)) == 0.0  # no adapters yet
    adapter = net.add_adapter("pmc-sents-full", PMC_LABELS)
    optimiser = torch.optim.Adam(adapter.parameters(), lr=0.05)
    losses = []
    for _ in range(30):
        loss = adapter_loss(net, emb, logits, batch)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.5 * losses[0]
    # Only the 24 PMC rows count: the CSAbstruct rows add nothing.
    only_pmc = torch.nn.functional.cross_entropy(adapter(emb[:24], logits[:24], corrected=False),
                                                 batch.native[:24], reduction="sum") / len(batch.native)
    assert float(adapter_loss(net, emb, logits, batch)) == pytest.approx(float(only_pmc), rel=1e-5)


def test_teacher_loss_is_zero_for_the_starting_model_and_counts_only_role_dataset_rows(tiny_run):
    """Learning without forgetting: KL(starting model || model) on the role datasets' rows (and each
    label adapter's own rows); rows of other sources (hand-labelled function documents) add nothing."""
    import copy

    from models.datasets import load_dataset
    from models.training.base import load_tokenizer
    from models.training.batching import Piece, collate, encode_documents
    from models.training.checkpoint import load_checkpoint
    from models.training.trainer import teacher_loss

    result, _, _, _ = tiny_run
    net, base_dir, _ = load_checkpoint(result.checkpoint)
    net.add_adapter("pmc-sents-full", PMC_LABELS)
    tokenizer = load_tokenizer(base_dir, 32)
    shared = shared_path()
    pmc = encode_documents(load_dataset("pmc-sents-full", "dev-holdout", shared)[:8], tokenizer,
                           "pmc-sents-full:dev-holdout")
    cs = encode_documents(load_dataset("csabstruct", "dev", shared)[:2], tokenizer, "csabstruct:dev")
    other = encode_documents(load_dataset("csabstruct", "dev", shared)[2:3], tokenizer, "functions")
    corpus = pmc + cs + other
    batch = collate([Piece(i, 0, len(d.doc)) for i, d in enumerate(corpus)], corpus)
    net.eval()
    teacher = copy.deepcopy(net)

    def loss_of(student, datasets):
        emb, logits, _, pooled = student.forward_batch_all(batch.input_ids, batch.attention_mask,
                                                           batch.section_kind, batch.doc_lengths)
        return teacher_loss(teacher, student, batch, emb, logits, pooled, datasets)

    with torch.no_grad():
        assert float(loss_of(net, {"csabstruct", "pmc-sents-full"})) == pytest.approx(0.0, abs=1e-6)
        moved = copy.deepcopy(net)
        moved.head.classifier.bias += torch.linspace(-2.0, 2.0, moved.head.classifier.bias.numel())
        shifted = float(loss_of(moved, {"csabstruct"}))
        assert shifted > 0.01
        assert float(loss_of(moved, set())) == 0.0  # no role-dataset rows: nothing to keep
        # It is the mean KL over the CSAbstruct rows alone: the PMC and other-source rows add nothing.
        _, t_logits = teacher.forward_batch(batch.input_ids, batch.attention_mask, batch.section_kind,
                                            batch.doc_lengths)
        _, s_logits = moved.forward_batch(batch.input_ids, batch.attention_mask, batch.section_kind,
                                          batch.doc_lengths)
        rows = torch.tensor([d == "csabstruct" for d in batch.datasets])
        expected = torch.nn.functional.kl_div(torch.log_softmax(s_logits[rows], -1),
                                              torch.log_softmax(t_logits[rows], -1),
                                              reduction="batchmean", log_target=True)
        assert shifted == pytest.approx(float(expected), rel=1e-4)
        # With PMC's rows in, its adapter's outputs count too (the shifted role logits feed it).
        assert float(loss_of(moved, {"csabstruct", "pmc-sents-full"})) > shifted


def test_a_pack_carries_the_larger_teachers_rows_and_pack_run_may_weigh_them(tiny_run, tmp_path, monkeypatch):
    """A pack written from a distilling run carries the teacher's rows (teacher.npz + texts), read_pack gives
    them back for the sentences the teacher read, and pack-run's --distil-weight trains with them."""
    import models.training.pack as pack_module
    from app.cli import main
    from models.training.distil import TeacherTargets
    from models.training.pack import read_pack, write_pack
    from models.training.trainer import TrainConfig

    _, tmp, _, _ = tiny_run
    first = json.loads((tmp / "train.jsonl").read_text(encoding="utf-8").splitlines()[0])["sentences"]
    row = np.full(len(ROLES), 1.0 / len(ROLES), np.float32)
    monkeypatch.setattr(pack_module, "distil_targets",
                        lambda cfg, fconfig, pack: TeacherTargets({}, {text: row for text in first}))
    cfg = TrainConfig(data=[f"jsonl:{tmp / 'train.jsonl'}"], dev=[f"jsonl:{tmp / 'dev.jsonl'}"],
                      out=str(tmp_path / "unused"), max_steps=1, epochs=1, batch_size=16, max_length=32,
                      threads=2)
    sizes = write_pack(cfg, tmp_path / "pack")
    assert {"teacher.npz", "teacher-texts.json.xz"} <= set(sizes)
    pack = read_pack(tmp_path / "pack")
    assert pack.teacher is not None and set(pack.teacher.roles) == set(first)
    np.testing.assert_allclose(pack.teacher.roles[first[0]], row, atol=1e-3)
    assert main(["train", "pack-run", str(tmp_path / "pack"), "--parts", str(tmp_path / "parts"),
                 "--work", str(tmp_path / "work"), "--device", "cpu", "--max-steps", "1",
                 "--distil-weight", "0.5"]) == 0
    assert json.loads((tmp_path / "work" / "config.json").read_text(encoding="utf-8"))["distil_weight"] == 0.5


def test_teacher_weight_needs_a_starting_model(tiny_run):
    from models.training.trainer import TrainConfig, train

    _, tmp, _, _ = tiny_run
    cfg = TrainConfig(data=[f"jsonl:{tmp / 'train.jsonl'}"], dev=[f"jsonl:{tmp / 'dev.jsonl'}"],
                      out=str(tmp / "teacher"), max_steps=1, teacher_weight=1.0, threads=2)
    with pytest.raises(ModelError, match="--init or --init-bundle"):
        train(cfg)


def test_training_pack_trains_elsewhere_and_merges_back(tiny_run, tmp_path, monkeypatch, capsys):
    """write_pack -> (the GPU machine) read_pack + train(pack=...) + write_trained_parts -> pack-merge here:
    the merged checkpoint labels as the packed run's own checkpoint does (fp16 parts), and a damaged
    pack is one clear line."""
    import lzma

    import models.training.pack as pack_module
    from core.errors import DatasetError
    from models.training.pack import checkpoint_from_parts, read_pack, write_pack, write_trained_parts
    from models.training.trainer import TrainConfig, train

    _, tmp, _, dev = tiny_run
    cfg = TrainConfig(data=[f"jsonl:{tmp / 'train.jsonl'}"], dev=[f"jsonl:{tmp / 'dev.jsonl'}"],
                      out=str(tmp_path / "unused"), max_steps=2, epochs=1, batch_size=16, max_length=32,
                      threads=2)
    sizes = write_pack(cfg, tmp_path / "pack")
    assert {"pack.json", "data.json.xz", "start.pt", "base/config.json", "base/tokenizer.json"} <= set(sizes)
    pack = read_pack(tmp_path / "pack")
    assert pack.documents[cfg.data[0]][0].sentences == json.loads(
        (tmp / "train.jsonl").read_text(encoding="utf-8").splitlines()[0])["sentences"]
    pack.config.out = str(tmp_path / "remote")
    result = train(pack.config, pack=pack)
    monkeypatch.setattr(pack_module, "PART_BYTES", 4_000_000)  # several parts, as 15 MB would give for 0.9.0
    parts = write_trained_parts(result.checkpoint, tmp_path / "parts", "A")
    assert len(parts) > 1
    merged = checkpoint_from_parts(tmp_path / "pack", parts, tmp_path / "merged.pt")
    from models.training.base import resolve_base_dir

    # The remote checkpoint names the pack's base folder, which has no weights: read it with the real base.
    remote = _checkpoint_predictions(result.checkpoint, dev, resolve_base_dir(None))
    here = _checkpoint_predictions(merged, dev)
    assert np.mean([a == b for a, b in zip(remote, here)]) >= 0.95 and len(here) == len(remote) > 20
    with pytest.raises(ModelError, match="parts"):
        checkpoint_from_parts(tmp_path / "pack", parts[:1], tmp_path / "short.pt")
    # The same through the commands: pack-run (one step, overriding the pack's seed) and pack-merge.
    from app.cli import main

    assert main(["train", "pack-run", str(tmp_path / "pack"), "--parts", str(tmp_path / "cli-parts"),
                 "--name", "B", "--work", str(tmp_path / "cli-work"), "--device", "cpu", "--max-steps", "1",
                 "--seed", "7"]) == 0
    cli_parts = sorted((tmp_path / "cli-parts").glob("B-part*.pt"))
    assert cli_parts and (tmp_path / "cli-parts" / "B-history.jsonl").is_file()
    assert json.loads((tmp_path / "cli-work" / "config.json").read_text(encoding="utf-8"))["seed"] == 7
    assert main(["train", "pack-merge", str(tmp_path / "pack"), *map(str, cli_parts),
                 "--out", str(tmp_path / "cli.pt")]) == 0
    assert (tmp_path / "cli.pt").is_file()
    # A pack written without --distil has no teacher rows for --distil-weight to weigh: one clear line.
    assert main(["train", "pack-run", str(tmp_path / "pack"), "--parts", str(tmp_path / "cli-parts2"),
                 "--device", "cpu", "--max-steps", "1", "--distil-weight", "1"]) != 0
    assert "no teacher rows" in capsys.readouterr().err
    damaged_part = tmp_path / "damaged-part0.pt"
    damaged_part.write_bytes(b"not a torch file")
    with pytest.raises(ModelError, match="cannot merge"):
        checkpoint_from_parts(tmp_path / "pack", [damaged_part], tmp_path / "damaged.pt")
    (tmp_path / "pack" / "start.pt").write_bytes(b"\x80\x04 damaged")
    with pytest.raises(DatasetError, match=r"cannot read training pack .*start\.pt"):
        read_pack(tmp_path / "pack")
    (tmp_path / "pack" / "data.json.xz").write_bytes(lzma.compress(b"{not json"))
    with pytest.raises(DatasetError, match="cannot read training pack"):
        read_pack(tmp_path / "pack")
