"""The ONNX encoder on a tiny bundle, checked against a numpy reference of its graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.errors import ModelError
from models import ROLES, load_model
from models.encoder import EncoderModel, softmax, window_plan
from tests.tiny_bundle import make_tiny_bundle, reference_outputs

SENTENCES = [
    "We propose a new method for parsing scientific text.",
    "Results show that it works well",
    "previous work has studied this problem",
    "zzz qqq",  # all unknown words
    "our goal is to improve accuracy on two datasets and to show that the approach is simple and fast",
    "in conclusion",
    "",
]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("tiny") / "bundle", max_length=12, window=8)


@pytest.fixture(scope="module")
def model(bundle: Path) -> EncoderModel:
    return load_model(bundle, device="cpu", threads=1)


def test_load(model: EncoderModel, bundle: Path) -> None:
    assert model.provider == "CPUExecutionProvider"
    assert model.model_id.startswith("tiny-test@0.0.1#") and len(model.model_id.split("#")[1]) == 12
    assert model.manifest.labels == list(ROLES)
    assert model.load_seconds > 0  # measured (how fast is `rhetorica bench encode`'s business)
    again = load_model(bundle, device="auto", threads=1)
    assert again.model_id == model.model_id
    assert again.provider in ("CPUExecutionProvider", "CUDAExecutionProvider")


def test_model_id_changes_with_the_files(tmp_path: Path, model: EncoderModel) -> None:
    other = load_model(make_tiny_bundle(tmp_path / "b", seed=8), device="cpu", threads=1)
    assert other.model_id != model.model_id


def test_tokenizer_truncates_and_ignores_saved_fixed_padding(model: EncoderModel) -> None:
    ids = model.tokenize(SENTENCES)
    assert len(ids[4]) == 12  # truncated to manifest max_length
    assert len(ids[1]) == 8  # not padded to the file's fixed 128
    assert ids[6] == [2, 3]  # empty sentence: [CLS] [SEP]


def test_a_run_on_text_of_megabytes_is_cut_before_it_is_tokenized(model: EncoderModel, monkeypatch) -> None:
    from models.encoder import MAX_TOKENIZED_CHARS

    seen: list[int] = []
    encode_batch = model.tokenizer.encode_batch

    class Spy:
        def encode_batch(self, texts: list[str]) -> list:
            seen.extend(len(t) for t in texts)
            return encode_batch(texts)

    monkeypatch.setattr(model, "tokenizer", Spy())
    huge = "word " * 2_000_000  # 10 MB: the tokenizer's memory grows with the whole text
    ids = model.tokenize([huge, "A short one."])
    assert seen == [MAX_TOKENIZED_CHARS, len("A short one.")]
    assert len(ids[0]) == model.manifest.max_length


def test_embed_matches_reference_and_restores_order(model: EncoderModel) -> None:
    emb = model.embed(SENTENCES, batch_size=2)  # several length-sorted batches
    assert emb.shape == (len(SENTENCES), 8) and emb.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    ref, _ = reference_outputs(SENTENCES, [8] * len(SENTENCES))
    np.testing.assert_allclose(emb, ref, atol=1e-5)
    # Same result one by one (padding does not leak) and in reversed order.
    singles = np.concatenate([model.embed([s]) for s in SENTENCES])
    np.testing.assert_allclose(emb, singles, atol=1e-5)
    np.testing.assert_allclose(model.embed(SENTENCES[::-1], batch_size=3)[::-1], emb, atol=1e-5)


def test_embed_empty(model: EncoderModel) -> None:
    assert model.embed([]).shape == (0, 8)
    assert model.classify_roles([]) == []


def test_classify_one_sentence(model: EncoderModel) -> None:
    (prediction,) = model.classify_roles([SENTENCES[0]])
    _, logits = reference_outputs([SENTENCES[0]], [8])
    probabilities = softmax(logits)[0]
    assert prediction.label == ROLES[int(probabilities.argmax())]
    assert list(prediction.probabilities) == list(ROLES)
    assert sum(prediction.probabilities.values()) == pytest.approx(1.0, abs=1e-5)
    assert prediction.confidence == pytest.approx(float(probabilities.max()), abs=1e-5)


def test_classify_uses_document_context_and_section_kinds(model: EncoderModel) -> None:
    doc = SENTENCES[:3]
    alone = model.role_probabilities(doc[1:2])
    in_doc = model.role_probabilities(doc)[1]
    assert not np.allclose(alone[0], in_doc, atol=1e-3)  # neighbours matter in this graph
    kinds = ["abstract", "method", "no-such-kind"]
    _, logits = reference_outputs(doc, [0, 3, 8])
    np.testing.assert_allclose(model.role_probabilities(doc, kinds), softmax(logits), atol=1e-5)
    # One kind for the whole document.
    _, logits = reference_outputs(doc, [4, 4, 4])
    np.testing.assert_allclose(model.role_probabilities(doc, "result"), softmax(logits), atol=1e-5)
    with pytest.raises(ValueError):
        model.classify_roles(doc, ["abstract"])


def test_long_document_windows_keep_context(model: EncoderModel) -> None:
    rng = np.random.default_rng(1)
    text = "we propose a method results show previous work our goal in conclusion fast"
    words = text.split()
    doc = [" ".join(rng.choice(words, size=rng.integers(1, 9))) for _ in range(45)]
    kinds = list(rng.choice(["abstract", "introduction", "method", "result"], size=45))
    index = {"abstract": 0, "introduction": 1, "method": 3, "result": 4}
    # Window 8 here: 45 sentences go through 10 overlapping windows; the graph looks one
    # sentence each way, so kept (central) predictions must equal one run over the whole.
    ref_emb, ref_logits = reference_outputs(doc, [index[k] for k in kinds])
    encoding = model.encode_document(doc, kinds)
    np.testing.assert_allclose(encoding.probabilities, softmax(ref_logits), atol=1e-5)
    np.testing.assert_allclose(encoding.embeddings, ref_emb, atol=1e-5)
    roles = model.classify_roles(doc, kinds)
    assert [r.label for r in roles] == [ROLES[i] for i in ref_logits.argmax(axis=1)]


@pytest.mark.parametrize("n", [1, 8, 9, 16, 17, 45, 64, 65, 200])
@pytest.mark.parametrize("window", [4, 8, 64])
def test_window_plan_covers_each_sentence_once_with_context(n: int, window: int) -> None:
    plan = window_plan(n, window)
    kept = [i for _, _, a, b in plan for i in range(a, b)]
    assert kept == list(range(n))
    margin = window // 4
    for start, end, a, b in plan:
        assert 0 <= start <= a <= b <= end <= n and end - start == min(n, window)
        if a > 0:
            assert a - start >= margin
        if b < n:
            assert end - b >= margin


def test_threads_and_device_errors(bundle: Path) -> None:
    with pytest.raises(ModelError, match="threads"):
        load_model(bundle, threads=0)
    with pytest.raises(ModelError, match="unknown device"):
        load_model(bundle, device="tpu")
    import onnxruntime as ort

    if "CUDAExecutionProvider" not in ort.get_available_providers():
        with pytest.raises(ModelError, match="cuda"):
            load_model(bundle, device="cuda")


def test_broken_onnx_is_a_model_error(tmp_path: Path) -> None:
    from models.bundle import read_manifest, write_manifest

    bundle = make_tiny_bundle(tmp_path / "b")
    (bundle / "model.onnx").write_bytes(b"not an onnx file")
    write_manifest(bundle, read_manifest(bundle))  # hashes right, content wrong
    with pytest.raises(ModelError, match="cannot load"):
        load_model(bundle)


def test_altered_bundle_refuses_to_load(tmp_path: Path) -> None:
    bundle = make_tiny_bundle(tmp_path / "b")
    with open(bundle / "tokenizer.json", "a") as handle:
        handle.write(" ")
    with pytest.raises(ModelError, match="altered"):
        load_model(bundle)


def test_a_fresh_load_is_complete_and_correct(bundle: Path, model: EncoderModel) -> None:
    """A second, independent load gives the same model and the graph's exact outputs (load speed is
    measured by `rhetorica bench encode`, docs/benchmarks.md, not asserted here)."""
    fresh = load_model(bundle, threads=1)
    assert fresh is not model and fresh.model_id == model.model_id
    assert fresh.manifest == model.manifest and fresh.embedding_dim == 8
    ref_emb, ref_logits = reference_outputs(SENTENCES, [8] * len(SENTENCES))
    encoding = fresh.encode_document(SENTENCES)
    np.testing.assert_allclose(encoding.embeddings, ref_emb, atol=1e-5)
    np.testing.assert_allclose(encoding.probabilities, softmax(ref_logits), atol=1e-5)


class _FakeSession:
    """Stands in for an onnxruntime-gpu session on a machine without a GPU (CUDA silently dropped)."""

    real_class: type | None = None

    def __init__(self, path: str, options: object, providers: list[str]) -> None:
        self.requested = providers
        assert _FakeSession.real_class is not None
        self._real = _FakeSession.real_class(path, options, providers=["CPUExecutionProvider"])

    def get_providers(self) -> list[str]:
        return ["CPUExecutionProvider"]

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._real, name)


def test_cuda_listed_but_unusable(bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime as ort

    _FakeSession.real_class = ort.InferenceSession
    monkeypatch.setattr(ort, "get_available_providers",
                        lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    monkeypatch.setattr(ort, "InferenceSession", _FakeSession)
    monkeypatch.setattr(ort, "set_default_logger_severity", lambda level: None)
    model = load_model(bundle, device="auto")  # falls back quietly, reports what really runs
    assert model.provider == "CPUExecutionProvider"
    assert model.session.requested == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    with pytest.raises(ModelError, match="CUDA could not be initialised"):
        load_model(bundle, device="cuda")


def test_manifest_must_match_the_graph(tmp_path: Path) -> None:
    from models.bundle import read_manifest, write_manifest

    bundle = make_tiny_bundle(tmp_path / "b")
    manifest = read_manifest(bundle)
    manifest.embedding_dim = 16
    write_manifest(bundle, manifest)
    with pytest.raises(ModelError, match="'sentence_embedding' has width 8 but the manifest says 16"):
        load_model(bundle)


def test_function_outputs_views_and_threshold(tmp_path: Path) -> None:
    """A bundle with a function head: both views, top-3 functions, 'none' below the threshold."""
    from core.taxonomy.labels import NO_FUNCTION
    from models import load_model
    from tests.tiny_bundle import FUNCTION_DIM, FUNCTIONS, make_tiny_bundle, reference_function_outputs

    sentences = ["we propose a new method", "results show that it works well",
                 "previous work has studied this"]
    model = load_model(make_tiny_bundle(tmp_path / "f", functions=True, function_threshold=0.3), threads=1)
    assert model.has_functions and model.function_ids == FUNCTIONS
    embedding, logits = reference_function_outputs(sentences)
    assert np.allclose(model.embed(sentences, view="function"), embedding, atol=1e-5)
    assert model.embed(sentences, view="function").shape == (3, FUNCTION_DIM)
    assert model.embed(sentences).shape == model.embed(sentences, view="content").shape == (3, 8)
    probabilities = np.exp(logits - logits.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    for prediction, row in zip(model.classify_functions(sentences), probabilities, strict=True):
        order = np.argsort(-row)[:3]
        assert [f for f, _ in prediction.top] == [FUNCTIONS[i] for i in order]
        assert [p for _, p in prediction.top] == pytest.approx(row[order].tolist(), abs=1e-5)
        assert prediction.label == (FUNCTIONS[order[0]] if row[order[0]] >= 0.3 else NO_FUNCTION)
    plain = load_model(make_tiny_bundle(tmp_path / "p"), threads=1)
    assert not plain.has_functions and plain.encode_document(sentences).functions is None
    assert np.allclose(plain.embed(sentences, view="function"), plain.embed(sentences))  # one embedding
    with pytest.raises(ModelError, match="no function head"):
        plain.classify_functions(sentences)


def test_the_shipped_int8_model_reads_a_sentence_the_same_whatever_shares_its_run() -> None:
    """Dynamic int8 quantisation scales a whole run's activations at once, so a batched sentence would
    depend on its neighbours in the batch: the shipped graph reads one sentence per run, several runs at
    once on single-thread sessions, and gives the same numbers on one worker as on two."""
    from core.paths import resources_dir

    shipped = resources_dir() / "models" / "default"
    if not (shipped / "manifest.json").is_file():
        pytest.skip("no shipped model in this checkout")
    model = load_model(shipped, device="cpu", threads=2)
    assert model.manifest.quantization.startswith("int8-dynamic")
    assert model.sentence_batch == 1 and model.workers == 2
    alone = SENTENCES[4]
    others = [s * 3 for s in SENTENCES[:4]] + ["x " * 60, "A short one.", "Another of about that size."]
    for view in ("content", "function"):
        np.testing.assert_array_equal(model.embed([alone], view=view)[0],
                                      model.embed([*others, alone], view=view)[-1])
    by_itself = model.encode_documents([([alone], "method")], with_function_vectors=True)[0]
    among = model.encode_documents([(others, None), ([alone], "method")], with_function_vectors=True)[1]
    np.testing.assert_array_equal(by_itself.probabilities, among.probabilities)
    np.testing.assert_array_equal(by_itself.function_vectors, among.function_vectors)  # type: ignore[arg-type]
    staged = model.encode_documents_staged([(others, None), ([alone], "method")])
    one_worker = load_model(shipped, device="cpu", threads=1)
    assert one_worker.workers == 1
    sequential = one_worker.encode_documents_staged([(others, None), ([alone], "method")])
    np.testing.assert_array_equal(staged.content(), sequential.content())
    np.testing.assert_array_equal(staged.encodings[0].probabilities, sequential.encodings[0].probabilities)


def test_a_float_graph_still_batches(model: EncoderModel) -> None:
    assert model.manifest.quantization == "none" and model.sentence_batch > 1 and model.workers == 1


def test_batches_on_several_threads_come_back_in_the_callers_order(model: EncoderModel) -> None:
    sequential = model.embed(SENTENCES, batch_size=2)
    model.workers = 3
    try:
        np.testing.assert_array_equal(model.embed(SENTENCES, batch_size=2), sequential)
        np.testing.assert_allclose(model.embed(SENTENCES[::-1], batch_size=1)[::-1], sequential, atol=1e-5)
    finally:
        model.workers = 1
