"""Body head: a second role head for body sections. Abstracts keep the role head's labels exactly;
the body head trains on cached pooled vectors with section-kind partial labels, survives checkpoint,
export and read-back."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow

HIDDEN = 384


@pytest.fixture(scope="module")
def net():
    from models.training.checkpoint import build_net

    torch.manual_seed(0)
    built, _ = build_net(None)
    return built.eval()


def _kinds(*names: str) -> torch.Tensor:
    from models.training.net import section_index

    return torch.tensor([[section_index(n) for n in names]])


def test_abstracts_and_unknown_kinds_keep_the_role_head_body_sections_get_the_body_head(net) -> None:
    import copy

    from models.training.net import is_body_section

    body_net = copy.deepcopy(net)
    body_net.enable_body_head()
    assert body_net.body_head is not None
    with torch.no_grad():
        for param in body_net.body_head.parameters():
            param.add_(torch.randn_like(param) * 0.5)
    pooled = torch.randn(1, 4, HIDDEN)
    kinds = _kinds("abstract", "method", None, "other")
    lengths = torch.tensor([4])
    with torch.no_grad():
        main = net.role_logits(pooled, kinds, lengths, None)
        routed = body_net.role_logits(pooled, kinds, lengths, None)
        body = body_net.body_head(pooled, kinds, lengths, None)
    assert is_body_section(kinds).tolist() == [[False, True, False, True]]
    assert torch.allclose(routed[0, [0, 2]], main[0, [0, 2]])  # abstract, unknown: the role head
    assert torch.allclose(routed[0, [1, 3]], body[0, [1, 3]])  # method, other: the body head
    assert not torch.allclose(routed[0, [1, 3]], main[0, [1, 3]])


def test_no_section_set_lets_other_satisfy_the_loss() -> None:
    """Every set holding "other" would let the partial-label loss call everything "other"."""
    from models.training.body_roles import SECTION_ROLES
    from models.training.net import BODY_SECTION_KINDS

    assert set(SECTION_ROLES) == set(BODY_SECTION_KINDS)
    assert all("other" not in roles for roles in SECTION_ROLES.values())
    assert SECTION_ROLES["method"] == frozenset({"method"})


def test_corpus_runs_group_sections_and_distant_roles_override_the_section(monkeypatch) -> None:
    from models.training import function_corpus
    from models.training.body_roles import SECTION_ROLES, corpus_runs
    from models.training.function_corpus import CorpusSentence

    items = [CorpusSentence("scirex", "p1", "abstract", "An abstract sentence."),
             CorpusSentence("scirex", "p1", "method", "We train on X."),
             CorpusSentence("scirex", "p1", "method", "Results show that X helps."),
             CorpusSentence("scirex", "p1", "unknown", "A sentence under an odd heading."),
             CorpusSentence("scirex", "p2", "method", "We train on Y.")]
    monkeypatch.setattr(function_corpus, "corpus_sentences", lambda source: iter(items))
    runs = corpus_runs("scirex", {("p1", "Results show that X helps."): "result"})
    assert [(r.doc_id, r.kind, len(r.sentences)) for r in runs] == [
        ("p1", "method", 2), ("p1", "other", 1), ("p2", "method", 1)]
    assert runs[0].allowed == [SECTION_ROLES["method"], frozenset({"result"})]
    assert runs[1].allowed == [frozenset()]  # an unnamed section gives no label


def _synthetic_cache(tmp_path, rng):
    """Pooled vectors whose direction says the role: background near one direction, method near
    another; training runs name them only through their sections' kinds."""
    from models.training.body_roles import BodyRun, FeatureCache

    directions = {"background": rng.normal(size=HIDDEN), "method": rng.normal(size=HIDDEN)}
    cache = FeatureCache(tmp_path / "features.npz", "test-model")
    runs: list[BodyRun] = []
    texts: list[str] = []
    vectors: list[np.ndarray] = []
    for i in range(80):
        role = "background" if i % 2 else "method"
        kind = "related-work" if role == "background" else "method"
        sentences = [f"{role} sentence {i}.{j}" for j in range(5)]
        texts += sentences
        vectors += [directions[role] * 3 + rng.normal(size=HIDDEN) for _ in sentences]
        runs.append(BodyRun(f"doc{i}", kind, sentences, [frozenset({role})] * 5))
    cache.add(texts, np.array(vectors, dtype=np.float32))
    return cache, runs


def test_the_body_head_learns_from_section_labels_and_the_cache_round_trips(net, tmp_path) -> None:
    import copy

    from models.training.body_roles import BodyConfig, BodyRun, FeatureCache, body_accuracy, train_body_head

    rng = np.random.default_rng(0)
    cache, runs = _synthetic_cache(tmp_path, rng)
    cache.save()
    again = FeatureCache(tmp_path / "features.npz", "test-model")
    assert np.array_equal(again.of(runs[3].sentences), cache.of(runs[3].sentences))
    assert FeatureCache(tmp_path / "features.npz", "another-model").rows == {}  # other model: empty
    train, dev = runs[:60], [BodyRun(r.doc_id, "other", r.sentences, r.allowed) for r in runs[60:]]
    body_net = copy.deepcopy(net)
    before, labelled = body_accuracy(body_net, dev, cache)
    assert labelled == 100
    result = train_body_head(body_net, train, dev, cache, BodyConfig(epochs=3, lr=3e-3, batch_runs=8))
    assert result.best_dev > before and result.best_dev >= 0.9
    assert result.history[0]["dev"] == before and len(result.history) == 4
    # The role head did not move: abstracts are labelled as before.
    pooled = torch.from_numpy(cache.of(runs[0].sentences)).unsqueeze(0)
    kinds = _kinds(*["abstract"] * 5)
    with torch.no_grad():
        assert torch.allclose(body_net.role_logits(pooled, kinds, torch.tensor([5]), None),
                              net.role_logits(pooled, kinds, torch.tensor([5]), None))


def test_body_heads_from_several_seeds_start_alike_and_are_read_as_one(net, tmp_path) -> None:
    import copy

    from models.training.body_roles import BodyConfig, BodyRun, body_accuracy, train_body_head
    from models.training.net import HeadEnsemble, head_members

    rng = np.random.default_rng(3)
    cache, runs = _synthetic_cache(tmp_path, rng)
    train, dev = runs[:60], [BodyRun(r.doc_id, "other", r.sentences, r.allowed) for r in runs[60:]]
    body_net = copy.deepcopy(net)
    body_net.enable_body_head()
    assert body_net.body_head is not None
    start = copy.deepcopy(body_net.body_head)
    result = train_body_head(body_net, train, dev, cache,
                             BodyConfig(epochs=2, lr=3e-3, batch_runs=8, members=3))
    ensemble = body_net.body_head
    assert isinstance(ensemble, HeadEnsemble) and head_members(ensemble) == 3
    members = list(ensemble.members)
    assert not torch.equal(members[0].classifier.weight, members[1].classifier.weight)  # own seeds
    # each member's epoch 0 is the same start: the history's first row per member scores alike
    firsts = [row["dev"] for row in result.history if row["epoch"] == 0]
    assert len(firsts) == 3 and len(set(firsts)) == 1
    assert firsts[0] == body_accuracy(_with_body(net, start), dev, cache)[0]
    assert result.best_dev == pytest.approx(body_accuracy(body_net, dev, cache)[0])
    with pytest.raises(ValueError):  # members are trained from one head, not from an ensemble
        train_body_head(body_net, train, dev, cache, BodyConfig(epochs=1, members=2))


def _with_body(net, head):
    import copy

    with_head = copy.deepcopy(net)
    with_head.body_head = copy.deepcopy(head)
    return with_head


@pytest.mark.parametrize("members", [1, 2])
def test_a_body_head_survives_checkpoint_export_and_read_back(net, tmp_path, members) -> None:
    import copy

    import onnxruntime as ort

    from models.training.base import resolve_base_dir
    from models.training.checkpoint import load_checkpoint, save_checkpoint
    from models.training.export import ExportOptions, export_bundle
    from models.training.from_bundle import net_from_bundle
    from models.training.net import head_members, section_index

    body_net = copy.deepcopy(net)
    body_net.enable_body_head(members)
    assert body_net.body_head is not None
    with torch.no_grad():  # as after training: no two weights equal (the exporter merges equal ones)
        for param in [*body_net.head.parameters(), *body_net.body_head.parameters()]:
            param.add_(torch.randn_like(param) * 0.05)
    base = resolve_base_dir(None)
    save_checkpoint(tmp_path / "best.pt", body_net, base, {"body_head": {"test": True}})
    loaded, _, meta = load_checkpoint(tmp_path / "best.pt")
    assert loaded.body_head is not None and meta["body_head"] == {"test": True}
    documents = [["We study parsing.", "We train a model.", "It works well."]] * 4
    # int8, as shipped (an untrained-like head's near-ties flip under int8: parity recorded, not enforced)
    manifest = export_bundle(loaded, base, tmp_path / "bundle",
                             ExportOptions(parity_sentences=12, body_head={"test": True},
                                           enforce_parity=False, training={"command": "the encoder's run"}),
                             documents)
    assert manifest.context["body_head"]["test"] is True
    assert manifest.context["body_head"]["members"] == members
    assert "method" in manifest.context["section_kinds_trained"]
    back, _ = net_from_bundle(tmp_path / "bundle")
    assert head_members(back.body_head) == members == head_members(loaded.body_head)
    if members == 2:  # a damaged count is one clear error, never a million heads
        import json
        import shutil

        from core.errors import ModelError

        damaged = tmp_path / "damaged"
        shutil.copytree(tmp_path / "bundle", damaged)
        record = json.loads((damaged / "manifest.json").read_text(encoding="utf-8"))
        record["context"]["body_head"]["members"] = 10**6
        (damaged / "manifest.json").write_text(json.dumps(record), encoding="utf-8")
        with pytest.raises(ModelError, match="member count"):
            net_from_bundle(damaged)
    assert back.body_head is not None
    for key, value in loaded.body_head.state_dict().items():
        assert torch.allclose(back.body_head.state_dict()[key], value, atol=2e-3), key  # int8 weights
    session = ort.InferenceSession(str(tmp_path / "bundle" / "roles.onnx"),
                                   providers=["CPUExecutionProvider"])
    pooled = np.random.default_rng(1).normal(size=(2, HIDDEN)).astype(np.float32)
    kinds = np.array([section_index("abstract"), section_index("method")], dtype=np.int64)
    (graph,) = session.run(["role_logits"], {"pooled": pooled, "section_kind": kinds})
    with torch.no_grad():
        reference = loaded.role_logits(torch.from_numpy(pooled)[None], torch.from_numpy(kinds)[None],
                                       torch.tensor([2]), None)[0].numpy()
        main_only = loaded.head(torch.from_numpy(pooled)[None], torch.from_numpy(kinds)[None],
                                torch.tensor([2]), None)[0].numpy()
    # int8 graph: close to the routed reference, and the method row is the body head's, not the role head's
    assert np.abs(graph - reference).max() < 0.5
    assert np.abs(graph[1] - reference[1]).max() < np.abs(graph[1] - main_only[1]).max()
    assert "role_agreement_body_head" in manifest.context["parity"]["int8"]

    # A new body head on the same encoder: the sentence graphs ship unchanged, the role graph is new.
    with torch.no_grad():
        for param in loaded.body_head.parameters():
            param.add_(torch.randn_like(param) * 0.05)
    again = export_bundle(loaded, base, tmp_path / "bundle2",
                          ExportOptions(parity_sentences=12, enforce_parity=False,
                                        reuse_sentence_graphs=tmp_path / "bundle"), documents)
    first, second = tmp_path / "bundle", tmp_path / "bundle2"
    assert (second / "model.onnx").read_bytes() == (first / "model.onnx").read_bytes()
    assert (second / "roles.onnx").read_bytes() != (first / "roles.onnx").read_bytes()
    assert again.context["parity"]["int8"]["mean_cosine"] > 0.98  # the reused graph was parity-checked
    # The record of the step that trained the sentence graphs travels with them.
    from models.bundle import read_manifest

    earlier = read_manifest(first)
    assert again.training["sentence_graphs_from"] == {"model": f"{earlier.name}@{earlier.version}",
                                                      "training": {"command": "the encoder's run"}}


def test_a_role_weight_scales_that_roles_sentences_in_the_loss(net, tmp_path) -> None:
    from models.training.body_roles import role_batch_loss

    rng = np.random.default_rng(1)
    cache, runs = _synthetic_cache(tmp_path, rng)
    mixed = [runs[0], runs[1]]  # one method run, one background run
    plain = role_batch_loss(net, mixed, cache)
    assert torch.allclose(role_batch_loss(net, mixed, cache, role_weights={"objective": 5.0}), plain)
    only_method = role_batch_loss(net, [runs[0]], cache)
    only_background = role_batch_loss(net, [runs[1]], cache)
    heavy = role_batch_loss(net, mixed, cache, role_weights={"method": 3.0})
    expected = (3 * only_method + only_background) / 4  # a weighted mean over the labelled sentences
    assert torch.allclose(heavy, expected, atol=1e-5) and not torch.allclose(heavy, plain)


def test_the_role_weight_option_refuses_unknown_roles_and_absurd_weights() -> None:
    import argparse

    from app.commands.lab.train_body import _role_weight

    assert _role_weight("objective=2") == ("objective", 2.0)
    for bad in ("objective", "hypothesis=2", "objective=0", "objective=-1", "objective=1e9", "objective=x"):
        with pytest.raises(argparse.ArgumentTypeError):
            _role_weight(bad)


def test_a_source_weight_repeats_that_sources_annotated_runs_only() -> None:
    import argparse

    from app.commands._options import source_weight
    from models.training.body_roles import BodyRun, weighted_runs

    runs = [BodyRun("annotated-section-pdfs2-p1-2", "method", ["a"], [frozenset({"method"})]),
            BodyRun("annotated-section-oa-stm-p2-1", "method", ["b"], [frozenset({"method"})]),
            BodyRun("pmc-doc-9", "other", ["c"], [frozenset({"result"})])]
    weighted = weighted_runs(runs, {"pdfs2": 3})
    assert [r.doc_id for r in weighted].count("annotated-section-pdfs2-p1-2") == 3 and len(weighted) == 5
    assert weighted_runs(runs, {}) == runs
    assert source_weight("pdfs2=3") == ("pdfs2", 3)
    for bad in ("pdfs2", "pdfs2=0", "=2", "pdfs2=x", "pdfs2=99"):
        with pytest.raises(argparse.ArgumentTypeError):
            source_weight(bad)


def test_a_paper_share_of_zero_reads_no_corpus_source(monkeypatch) -> None:
    """--paper-share 0 keeps none of a source's papers, so the source is not read at all (the shared PDFs
    are all gold or dev papers since session 23, and reading them stops with an error)."""
    from models.training import body_roles

    def refuse(*_args, **_kwargs):
        raise AssertionError("a corpus source was read")

    monkeypatch.setattr(body_roles, "corpus_runs", refuse)
    assert body_roles.training_runs(body_roles.BodyData(sources=["scirex", "pdfs"], paper_share=0.0)) == []
    with pytest.raises(AssertionError, match="was read"):
        body_roles.training_runs(body_roles.BodyData(sources=["pdfs"], paper_share=0.5))
