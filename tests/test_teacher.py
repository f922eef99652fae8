"""The teacher (models/training/teacher.py): its base weights survive the int8 trip, it learns from teacher
data and writes soft labels that seeds and runs average, bad files get one clear error, and the
contextual function head learns from its probabilities alone (distillation)."""

from __future__ import annotations

import copy
import json
import lzma
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow

WORDS = ["we", "propose", "found", "little", "known", "method", "result", "introduction", "previous", "none"]


def _tiny_base(folder: Path, seed: int = 0) -> Path:
    """A 2-layer BERT with a word-level tokenizer that encodes pairs like the real ones."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel
    from transformers import BertConfig, BertModel

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    vocab = {t: i for i, t in enumerate([*specials, *WORDS, ":"])}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    torch.manual_seed(seed)
    BertModel(BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=64),
              add_pooling_layer=False).save_pretrained(str(folder))
    return folder


def _write_data(folder: Path, train: int = 160, dev: int = 40) -> Path:
    """Two functions told apart by one word; the role by the section kind, read in the pair."""
    rows = {}
    for name, count in (("train", train), ("annotated-dev", dev), ("dev5", dev)):
        rows[name] = [[("we propose method" if i % 2 else "little known result"),
                       "method" if i % 2 else "introduction", "previous", "method" if i % 2 else "background",
                       i % 2] for i in range(count)]
        rows[name] += [["previous none", "method", "", "", -1]]  # context only
    payload = {"format": 1, "functions": ["gap", "proposal"], "roles": ["background", "method"], "sets": rows}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "teacher-data.json.xz").write_bytes(lzma.compress(json.dumps(payload).encode()))
    return folder


def test_base_weights_survive_the_int8_trip(tmp_path) -> None:
    from safetensors.torch import load_file

    from models.training.teacher import int8_weights, weights_from_int8

    base = _tiny_base(tmp_path / "base")
    counts = int8_weights(base / "model.safetensors", tmp_path / "model.int8.safetensors")
    original = load_file(str(base / "model.safetensors"))
    back = weights_from_int8(tmp_path / "model.int8.safetensors")
    assert counts["tensors"] == len(original) and counts["matrices"] > 0
    assert set(back) == set(original)
    for name, value in original.items():
        if value.dim() == 2:  # within half a step of its row's scale, plus the scale's fp16 rounding × 127
            step = value.abs().amax(dim=1, keepdim=True) / 127
            assert bool(((back[name] - value).abs() <= step * 0.57 + 1e-6).all()), name
        else:
            assert torch.allclose(back[name], value.float(), atol=1e-2), name


def test_the_teacher_learns_and_writes_soft_labels_that_runs_average(tmp_path) -> None:
    from models.training.teacher import (
        INT8_FILE,
        SOFT_FILE,
        TeacherConfig,
        int8_weights,
        merge_teachers,
        read_soft_labels,
        run_teacher,
    )

    base = _tiny_base(tmp_path / "base")
    travelled = tmp_path / "travelled"  # as it reaches the GPU machine: int8 weights, no safetensors
    travelled.mkdir()
    for name in ("config.json", "tokenizer.json"):
        (travelled / name).write_bytes((base / name).read_bytes())
    int8_weights(base / "model.safetensors", travelled / INT8_FILE)
    data = _write_data(tmp_path / "data")
    cfg = TeacherConfig(epochs=3, seeds=2, batch_size=16, lr_encoder=1e-3, lr_head=1e-2, device="cpu")
    result = run_teacher(data, travelled, tmp_path / "a", cfg, log=lambda _m: None)
    assert [c["seed"] for c in result.chosen] == [0, 1] and len(result.history) == 6
    assert result.averaged["annotated-dev"]["functions"] >= 0.95
    assert result.averaged["dev5"]["roles"] >= 0.95
    with np.load(tmp_path / "a" / SOFT_FILE) as arrays:
        assert arrays["train_functions"].shape == (161, 2) and arrays["train_roles"].shape == (161, 2)
        np.testing.assert_allclose(arrays["train_functions"].astype(np.float32).sum(1), 1.0, atol=2e-3)
    soft = read_soft_labels(data, tmp_path / "a" / SOFT_FILE, ["gap", "proposal"])
    assert soft["we propose method"].argmax() == 1 and soft["little known result"].argmax() == 0
    assert "previous none" in soft  # context sentences are taught too
    swapped = read_soft_labels(data, tmp_path / "a" / SOFT_FILE, ["proposal", "gap"])  # the student's order
    np.testing.assert_allclose(swapped["we propose method"], soft["we propose method"][::-1], atol=1e-6)
    roles = read_soft_labels(data, tmp_path / "a" / SOFT_FILE, ["method", "background"], "roles")
    assert roles["we propose method"].argmax() == 0

    one = TeacherConfig(epochs=1, seeds=1, first_seed=5, batch_size=16, device="cpu")
    run_teacher(data, travelled, tmp_path / "b", one, log=lambda _m: None)
    merge_teachers(data, [tmp_path / "a", tmp_path / "b"], tmp_path / "m")
    with np.load(tmp_path / "a" / SOFT_FILE) as a, np.load(tmp_path / "b" / SOFT_FILE) as b, \
            np.load(tmp_path / "m" / SOFT_FILE) as m:
        expected = (2 * a["dev5_functions"].astype(np.float32) + b["dev5_functions"].astype(np.float32)) / 3
        np.testing.assert_allclose(m["dev5_functions"].astype(np.float32), expected, atol=2e-3)
    report = json.loads((tmp_path / "m" / "report.json").read_text())
    assert len(report["chosen"]) == 3


def test_bad_teacher_files_get_one_clear_error(tmp_path) -> None:
    from core.errors import DatasetError
    from models.training.teacher import merge_teachers, read_soft_labels, read_teacher_data

    data = _write_data(tmp_path / "data")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "teacher-data.json.xz").write_bytes(b"not xz at all")
    with pytest.raises(DatasetError, match="not readable teacher data"):
        read_teacher_data(tmp_path / "junk")
    with pytest.raises(DatasetError, match="no teacher-data"):
        read_teacher_data(tmp_path)
    wrong = tmp_path / "wrong.npz"
    np.savez_compressed(wrong, train_functions=np.full((3, 2), 0.5, dtype=np.float16))
    with pytest.raises(DatasetError, match="soft labels for 161 sentences"):
        read_soft_labels(data, wrong, ["gap", "proposal"])
    with pytest.raises(DatasetError, match="no function 'aim'"):
        read_soft_labels(data, wrong, ["gap", "aim"])
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "report.json").write_text("{", encoding="utf-8")
    with pytest.raises(DatasetError, match="not a teacher run's output"):
        merge_teachers(data, [tmp_path / "run"], tmp_path / "out")


def test_the_contextual_head_learns_from_the_teachers_probabilities_alone(tmp_path) -> None:
    """Training windows with no hand label at all: the teacher's probabilities are the only supervision,
    and the head learns the task (dev measured on hand labels); without them there is nothing to learn."""
    from models.training.checkpoint import build_net
    from models.training.function_context import (
        FunctionContextConfig,
        FunctionWindow,
        train_function_context_head,
    )
    from models.training.net import FunctionConfig
    from models.vector_cache import FeatureCache

    torch.manual_seed(0)
    net, _ = build_net(None, functions=FunctionConfig(["limitation", "gap-neglected", "aim"], dim=16))
    rng = np.random.default_rng(1)
    directions = {0: rng.normal(size=384) * 3, 1: rng.normal(size=384) * 3}
    texts, vectors, windows, teacher = [], [], [], {}
    for i in range(160):
        target = i % 2
        sentences = [f"s{i}.{j}" for j in range(3)]
        texts += sentences
        vectors += [directions[target] + rng.normal(size=384), rng.normal(size=384),
                    directions[target] + rng.normal(size=384)]
        windows.append(FunctionWindow("other", sentences, [-1, target, -1]))
        # the teacher's probabilities (in the student's order), 0.9 on the right one
        teacher[sentences[1]] = np.array([0.05, 0.9, 0.05] if target else [0.9, 0.05, 0.05], np.float32)
    cache = FeatureCache(tmp_path / "features.npz", "test-model")
    cache.add(texts, np.array(vectors, dtype=np.float32))
    soft = teacher
    unlabelled = [FunctionWindow(w.kind, w.sentences, [-1, -1, -1]) for w in windows[:120]]
    cfg = FunctionContextConfig(epochs=6, lr=3e-3, batch_windows=16, fp32_share=0.0, feature_noise=0.0,
                                teacher_weight=1.0)
    taught = copy.deepcopy(net)
    result = train_function_context_head(taught, unlabelled, windows[120:], cache, cfg, soft=soft)
    assert result.best_dev >= 0.9 and result.counts["train_labelled"] == 0
    assert result.counts["train_taught"] == 120
    with pytest.raises(ValueError):  # no hand label and no teacher: nothing to train on
        train_function_context_head(copy.deepcopy(net), unlabelled, windows[120:], cache, cfg, soft=None)


def test_the_body_head_learns_roles_from_the_teachers_probabilities_alone(tmp_path) -> None:
    """Body runs with no label at all (read as "other" sections, whose kind says nothing): the teacher's
    role probabilities are the only supervision, and the head learns the roles (dev on hand labels)."""
    from models.roles import ROLES
    from models.training.body_roles import BodyConfig, BodyRun, body_accuracy, train_body_head
    from models.training.checkpoint import build_net
    from models.vector_cache import FeatureCache

    torch.manual_seed(0)
    net, _ = build_net(None)
    net.eval()
    rng = np.random.default_rng(2)
    directions = {"background": rng.normal(size=384), "method": rng.normal(size=384)}
    texts, vectors, runs, teacher = [], [], [], {}
    for i in range(80):
        role = "background" if i % 2 else "method"
        sentences = [f"{role} {i}.{j}" for j in range(5)]
        texts += sentences
        vectors += [directions[role] * 3 + rng.normal(size=384) for _ in sentences]
        runs.append(BodyRun(f"doc{i}", "other", sentences, [frozenset({role})] * 5))
        row = np.full(len(ROLES), 0.02, dtype=np.float32)
        row[list(ROLES).index(role)] = 1.0
        teacher.update({s: row / row.sum() for s in sentences})
    cache = FeatureCache(tmp_path / "features.npz", "test-model")
    cache.add(texts, np.array(vectors, dtype=np.float32))
    unlabelled = [BodyRun(r.doc_id, r.kind, r.sentences, [frozenset()] * 5) for r in runs[:60]]
    dev = runs[60:]
    before, _ = body_accuracy(net, dev, cache)
    cfg = BodyConfig(epochs=3, lr=3e-3, batch_runs=8, teacher_weight=1.0)
    result = train_body_head(copy.deepcopy(net), unlabelled, dev, cache, cfg, soft=teacher)
    assert result.best_dev >= 0.9 > before
    with pytest.raises(ValueError):  # no label and no teacher: nothing to train on
        train_body_head(copy.deepcopy(net), unlabelled, dev, cache, cfg, soft=None)


def test_the_encoder_step_reads_the_teachers_rows_where_it_read_the_sentence(tmp_path) -> None:
    """attach_teacher gives a document the teacher's rows (zeros for sentences it never read), collate keeps
    them beside the other documents' zeros, and distil_loss is the cross-entropy over the rows it read."""
    from tokenizers import Tokenizer

    from models.datasets import LabelledDocument
    from models.roles import ROLES
    from models.training.batching import Piece, collate, encode_documents
    from models.training.distil import (
        TeacherTargets,
        attach_teacher,
        distil_loss,
        targets_from_arrays,
        targets_to_arrays,
    )
    from tests.tiny_bundle import WORDS, build_tokenizer

    build_tokenizer(tmp_path / "tokenizer.json")
    tokenizer = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    tokenizer.no_padding()
    words = list(WORDS)
    taught = LabelledDocument("a", [words[0], words[1], words[2]], ["method"] * 3,
                              [frozenset({"method"})] * 3, ["method"] * 3)
    other = LabelledDocument("b", [words[3], words[4]], ["result"] * 2, [frozenset({"result"})] * 2, None)
    corpus = encode_documents([taught, other], tokenizer, "annotated")
    role_row = np.full(len(ROLES), 0.1, np.float32)
    role_row[list(ROLES).index("method")] = 1.0
    role_row /= role_row.sum()
    targets = TeacherTargets({words[0]: np.array([0.2, 0.8], np.float32)},
                             {words[0]: role_row, words[2]: role_row})
    assert attach_teacher(corpus, targets, function_count=2) == 2
    assert corpus[1].teacher_roles is None
    batch = collate([Piece(0, 0, 3), Piece(1, 0, 2)], corpus)
    assert batch.teacher_roles is not None and batch.teacher_functions is not None
    assert batch.teacher_roles.shape == (5, len(ROLES)) and batch.teacher_functions.shape == (5, 2)
    assert batch.teacher_roles.sum(-1).tolist() == pytest.approx([1, 0, 1, 0, 0])
    role_logits = torch.randn(5, len(ROLES))
    function_logits = torch.randn(5, 2)
    expected = (-(torch.from_numpy(role_row) * torch.log_softmax(role_logits[[0, 2]], -1)).sum(-1).mean()
                - (torch.tensor([0.2, 0.8]) * torch.log_softmax(function_logits[0], -1)).sum())
    assert float(distil_loss(role_logits, function_logits, batch)) == pytest.approx(float(expected), rel=1e-5)
    untaught = collate([Piece(1, 0, 2)], corpus)
    assert untaught.teacher_roles is None
    assert float(distil_loss(role_logits[:2], function_logits[:2], untaught)) == 0.0
    texts, arrays = targets_to_arrays(targets)  # the pack's copy
    back = targets_from_arrays(texts, arrays)
    assert set(back.roles) == {words[0], words[2]} and set(back.functions) == {words[0]}
    np.testing.assert_allclose(back.functions[words[0]], [0.2, 0.8], atol=1e-3)


def _exported_teacher(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    """A tiny teacher trained on the toy data, its run in ``tmp_path/run`` and its export in
    ``tmp_path/export``: the data folder and the export's counts."""
    from models.training.teacher import TeacherConfig, export_train_labels, run_teacher

    base = _tiny_base(tmp_path / "base")
    data = _write_data(tmp_path / "data")
    run_teacher(data, base, tmp_path / "run", TeacherConfig(epochs=1, batch_size=16, lr_encoder=1e-3,
                                                           lr_head=1e-2, device="cpu"), log=lambda _m: None)
    return data, export_train_labels(data, tmp_path / "run", tmp_path / "export")


def test_an_exported_teacher_is_read_only_against_the_same_data(tmp_path) -> None:
    from core.errors import DatasetError
    from models.training.teacher import SOFT_FILE, read_soft_labels

    data, counts = _exported_teacher(tmp_path)
    assert counts["sentences"] == 161 and (tmp_path / "export" / "report.json").is_file()
    full = read_soft_labels(data, tmp_path / "run" / SOFT_FILE, ["gap", "proposal"])
    small = read_soft_labels(data, tmp_path / "export" / SOFT_FILE, ["gap", "proposal"])
    assert set(small) == set(full)
    for text, row in full.items():
        np.testing.assert_allclose(small[text], row, atol=0.01)
    # an older export without text keys is read by position, only against the very same data
    with np.load(tmp_path / "export" / SOFT_FILE, allow_pickle=False) as arrays:
        old = {k: arrays[k] for k in arrays.files if k != "train_keys"}
    np.savez_compressed(tmp_path / "old.npz", allow_pickle=False, **old)
    assert set(read_soft_labels(data, tmp_path / "old.npz", ["gap", "proposal"])) == set(full)
    changed = _write_data(tmp_path / "changed", train=150)  # the corpus changed since: other rows
    with pytest.raises(DatasetError, match="other teacher data"):
        read_soft_labels(changed, tmp_path / "old.npz", ["gap", "proposal"])


def test_teacher_labels_outlive_a_parser_change(tmp_path) -> None:
    """Keyed by each text's hash, an export still teaches the sentences a later parse makes again; a
    sentence it never read (split differently, new) gets no row, and nothing is matched by position."""
    from models.training.teacher import SOFT_FILE, read_soft_labels

    data, _counts = _exported_teacher(tmp_path)
    before = read_soft_labels(data, tmp_path / "export" / SOFT_FILE, ["gap", "proposal"])
    payload = json.loads(lzma.decompress((data / "teacher-data.json.xz").read_bytes()))
    kept = [row for row in payload["sets"]["train"] if row[0] != "little known result"]
    payload["sets"]["train"] = [["a sentence the parser now makes", "method", "", "method", 1], *kept]
    (tmp_path / "changed").mkdir()
    (tmp_path / "changed" / "teacher-data.json.xz").write_bytes(lzma.compress(json.dumps(payload).encode()))
    after = read_soft_labels(tmp_path / "changed", tmp_path / "export" / SOFT_FILE, ["gap", "proposal"])
    assert set(after) == {"we propose method", "previous none"}
    np.testing.assert_allclose(after["we propose method"], before["we propose method"], atol=1e-6)


def test_the_committed_teacher_labels_have_their_shape() -> None:
    """models/datasets/teacher/soft.npz (session 24): one row per train sentence of its teacher data."""
    root = Path(__file__).resolve().parents[1] / "models" / "datasets" / "teacher"
    report = json.loads((root / "report.json").read_text(encoding="utf-8"))
    with np.load(root / "soft.npz", allow_pickle=False) as arrays:
        roles, functions = arrays["train_roles_u8"], arrays["train_functions_u8"]
        assert len(str(arrays["train_fingerprint"])) == 40
        assert arrays["train_keys"].shape == (43668,) and arrays["train_keys"].dtype == np.uint64
    assert roles.shape == (43668, len(report["roles"]))
    assert functions.shape == (43668, len(report["functions"]))
    assert roles.dtype == np.uint8 and abs(float(roles.sum(1).mean()) - 255) < 3


def test_a_teacher_file_of_the_wrong_kind_gets_one_clear_error(tmp_path) -> None:
    """Hostile test D, problem 12: a teacher-data list was an AttributeError, a soft.npz that is not a
    zip a zipfile.BadZipFile (neither an OSError nor a ValueError)."""
    from core.errors import DatasetError, ModelError
    from models.adapters import ADAPTERS_FILE, load_adapters
    from models.training.teacher import (
        export_train_labels,
        merge_teachers,
        read_soft_labels,
        read_teacher_data,
    )

    data = _write_data(tmp_path / "data")
    (tmp_path / "list").mkdir()
    (tmp_path / "list" / "teacher-data.json.xz").write_bytes(lzma.compress(b"[1, 2]"))
    with pytest.raises(DatasetError, match=r"not readable teacher data .*not an object"):
        read_teacher_data(tmp_path / "list")
    run = tmp_path / "run"
    run.mkdir()
    report = {"chosen": [0], "roles": [], "functions": []}
    (run / "report.json").write_text(json.dumps(report), encoding="utf-8")
    (run / "soft.npz").write_bytes(b"not a zip file at all")
    with pytest.raises(DatasetError, match="not a teacher run's output"):
        merge_teachers(data, [run], tmp_path / "out")
    with pytest.raises(DatasetError, match="not a teacher run's output"):
        export_train_labels(data, run, tmp_path / "out2")
    with pytest.raises(DatasetError, match="not a teacher's soft labels"):
        read_soft_labels(data, run / "soft.npz", ["gap", "proposal"])
    (run / "report.json").write_text("[1]", encoding="utf-8")
    np.savez_compressed(run / "soft.npz", train_roles=np.zeros((2, 2)), train_functions=np.zeros((2, 2)))
    with pytest.raises(DatasetError, match=r"not a teacher run's output .*not a JSON object"):
        export_train_labels(data, run, tmp_path / "out3")
    (tmp_path / ADAPTERS_FILE).write_bytes(b"not a zip file at all")
    with pytest.raises(ModelError, match="cannot read label adapters"):
        load_adapters(tmp_path, {"pmc": {"labels": ["a"], "file": ADAPTERS_FILE}})
