"""A larger teacher encoder fine-tuned on the hand-annotated corpus, whose soft labels the shipped model's
heads learn from (distillation, issue 24: "distillation from a larger encoder is allowed where it pays").

The shipped encoder (all-MiniLM-L6-v2, 22M) must stay within the speed budget; all-mpnet-base-v2 (110M) does
not, and 2 CPU cores cannot fine-tune it. So the teacher is trained where a GPU is lent, from two folders
that travel there: the base model's folder and a *teacher data* folder written here.

- :func:`write_teacher_data` (here): every sentence of the annotated corpus's train sections (the annotated
  ones with their role and function, the others as context only), and the dev sets the teacher is measured
  on — the corpus's dev sections, gold:dev and the dev set v5, read from the freshly parsed PDFs as the app
  reads them — each with its section kind and the sentence before it. Never a test split.
- :func:`run_teacher` (there): fine-tunes the base encoder with a role and a function classifier on the
  annotated train sentences, the sentence read as a pair with ``"<kind>: <previous sentence>"``; each seed
  keeps the epoch best on the corpus's dev sentences (roles and functions, the mean); the kept epochs'
  probabilities are averaged over seeds and written (``soft.npz``, float16) for every train sentence and
  every dev sentence, with ``report.json`` (each epoch's dev figures).
- :func:`read_soft_labels` (here again): the teacher's function or role probabilities by sentence text,
  what ``rhetorica train function-context --teacher`` and ``rhetorica train body --teacher`` distil from.

JSON and arrays only; nothing is pickled or run.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import math
import random
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import DatasetError
from core.json_shapes import loads

TEACHER_FORMAT = 1
DATA_FILE = "teacher-data.json.xz"
SOFT_FILE = "soft.npz"
INT8_FILE = "model.int8.safetensors"  # the base weights as they travel (int8_weights)
REPORT_FILE = "report.json"
SELECTION_SET = "annotated-dev"  # the set each seed's epoch is chosen on
MAX_DATA_JSON = 1_000_000_000


@dataclass(frozen=True)
class TeacherExample:
    """One sentence as the teacher reads it. ``role`` "" and ``function`` -1: context only / "none"."""

    text: str
    kind: str
    previous: str
    role: str
    function: int


@dataclass
class TeacherData:
    functions: list[str]
    roles: list[str]
    sets: dict[str, list[TeacherExample]]

    def labelled(self, name: str) -> list[TeacherExample]:
        return [e for e in self.sets[name] if e.role]


@dataclass
class TeacherConfig:
    epochs: int = 4
    seeds: int = 1
    batch_size: int = 32
    lr_encoder: float = 3e-5
    lr_head: float = 1e-3
    weight_decay: float = 0.01
    warmup: float = 0.06
    max_length: int = 128
    max_minutes: float = 0.0  # 0: no limit; else no new epoch starts past it
    device: str = "auto"
    first_seed: int = 0


@dataclass
class TeacherResult:
    history: list[dict[str, Any]] = field(default_factory=list)
    chosen: list[dict[str, Any]] = field(default_factory=list)
    averaged: dict[str, dict[str, float]] = field(default_factory=dict)
    seconds: float = 0.0


# ---------------------------------------------------------------- here: the data the teacher reads


def _examples_of_sections(sections: Sequence[Any], index: dict[str, int]) -> list[TeacherExample]:
    out: list[TeacherExample] = []
    for section in sections:
        for i, text in enumerate(section.texts):
            note = section.annotated[i]
            out.append(TeacherExample(text, section.kind, section.texts[i - 1] if i > 0 else "",
                                      note.role if note is not None else "",
                                      index.get(note.function, -1) if note is not None else -1))
    return out


def _examples_of_gold(papers: Sequence[Any], index: dict[str, int]) -> list[TeacherExample]:
    out: list[TeacherExample] = []
    for paper, items in papers:
        for g in items:
            previous = paper.sentences[g.index - 1].text if g.index > 0 else ""
            out.append(TeacherExample(g.text, g.section_kind, previous, g.role, index.get(g.function, -1)))
    return out


def write_teacher_data(out: Path, shared: Path | None = None) -> dict[str, int]:
    """Write ``out/teacher-data.json.xz``; returns the sentences per set."""
    from core.paths import shared_dir
    from core.taxonomy.functions import default_taxonomy
    from models.datasets.annotated_corpus import annotated_sections
    from models.datasets.gold import DEV5_DIR, load_gold_papers

    shared = Path(shared) if shared is not None else shared_dir()
    ids = list(default_taxonomy().ids)
    index = {f: i for i, f in enumerate(ids)}
    sets = {
        "train": _examples_of_sections(annotated_sections("train", shared), index),
        SELECTION_SET: _examples_of_sections(annotated_sections("dev", shared), index),
        "gold-dev": _examples_of_gold(load_gold_papers("dev", shared / "pdfs"), index),
        "dev5": _examples_of_gold(load_gold_papers("dev", shared / "pdfs", DEV5_DIR), index),
    }
    roles = sorted({e.role for examples in sets.values() for e in examples if e.role})
    payload = {"format": TEACHER_FORMAT, "functions": ids, "roles": roles,
               "sets": {name: [[e.text, e.kind, e.previous, e.role, e.function] for e in examples]
                        for name, examples in sets.items()}}
    out.mkdir(parents=True, exist_ok=True)
    (out / DATA_FILE).write_bytes(lzma.compress(json.dumps(payload, ensure_ascii=False).encode("utf-8")))
    return {name: len(examples) for name, examples in sets.items()}


def read_teacher_data(folder: Path) -> TeacherData:
    """The data :func:`write_teacher_data` wrote; one clear error for anything else."""
    path = Path(folder) / DATA_FILE
    if not path.is_file():
        raise DatasetError(f"{folder}: no {DATA_FILE} (write it with 'rhetorica train teacher-data')")
    try:
        with lzma.open(path) as handle:
            raw = handle.read(MAX_DATA_JSON + 1)
        if len(raw) > MAX_DATA_JSON:
            raise DatasetError(f"{path}: larger than any teacher data")
        payload = json.loads(raw)
        if not isinstance(payload, dict):
            raise DatasetError(f"{path}: not readable teacher data (a JSON {type(payload).__name__}, "
                               "not an object)")
        if payload.get("format") != TEACHER_FORMAT:
            raise DatasetError(f"{path}: teacher data format {payload.get('format')!r}, not {TEACHER_FORMAT}")
        functions = [str(f) for f in payload["functions"]]
        roles = [str(r) for r in payload["roles"]]
        sets = {str(name): [TeacherExample(str(t), str(k), str(p), str(r), int(f))
                            for t, k, p, r, f in rows]
                for name, rows in payload["sets"].items()}
    except (lzma.LZMAError, EOFError, json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError,
            ValueError, AttributeError, RecursionError) as exc:
        raise DatasetError(f"{path}: not readable teacher data ({exc})") from exc
    for name, examples in sets.items():
        bad = [e for e in examples if e.function >= len(functions) or (e.role and e.role not in roles)]
        if bad:
            raise DatasetError(f"{path}: set {name} has labels outside the data's own lists")
    if "train" not in sets or SELECTION_SET not in sets:
        raise DatasetError(f"{path}: needs the sets 'train' and '{SELECTION_SET}'")
    return TeacherData(functions, roles, sets)


def merge_teachers(data_dir: Path, runs: Sequence[Path], out: Path) -> dict[str, dict[str, float]]:
    """One teacher from several ``teacher-run`` outputs on the same data: their probabilities averaged,
    each run weighted by the seeds it kept; the merged dev figures written to ``out/report.json``."""
    data = read_teacher_data(data_dir)
    total: dict[str, np.ndarray] = {}
    seeds = 0
    chosen: list[dict[str, Any]] = []
    for run in runs:
        try:
            report = _report(run)
            weight = len(report["chosen"])
            with np.load(Path(run) / SOFT_FILE, allow_pickle=False) as arrays:
                loaded = {k: np.asarray(arrays[k], dtype=np.float32) for k in arrays.files
                          if k != "train_fingerprint"}
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
            raise DatasetError(f"{run}: not a teacher run's output ({exc})") from exc
        if report.get("functions") != data.functions or report.get("roles") != data.roles:
            raise DatasetError(f"{run}: trained on other labels than {data_dir}")
        for name, examples in data.sets.items():
            for what, width in (("roles", len(data.roles)), ("functions", len(data.functions))):
                key = f"{name}_{what}"
                if key not in loaded or loaded[key].shape != (len(examples), width):
                    raise DatasetError(f"{run}: {key} does not match {data_dir}")
                total[key] = total.get(key, 0) + loaded[key] * weight
        seeds += weight
        chosen += report["chosen"]
    if not seeds:
        raise DatasetError("no teacher runs to merge")
    arrays_out = {k: (v / seeds).astype(np.float16) for k, v in total.items()}
    scores = {name: score_set(examples, data.roles, arrays_out[f"{name}_roles"].astype(np.float32),
                              arrays_out[f"{name}_functions"].astype(np.float32))
              for name, examples in data.sets.items() if name != "train"}
    out.mkdir(parents=True, exist_ok=True)
    _save_arrays(out / SOFT_FILE, arrays_out, data)
    (out / REPORT_FILE).write_text(json.dumps({
        "format": TEACHER_FORMAT, "merged_from": [str(r) for r in runs], "roles": data.roles,
        "functions": data.functions, "chosen": chosen, "averaged": scores}, indent=1), encoding="utf-8")
    return scores


def _report(run: Path) -> dict[str, Any]:
    """A teacher run's ``report.json`` as an object (ValueError otherwise: a caller's one line)."""
    report = loads((Path(run) / REPORT_FILE).read_text(encoding="utf-8"))  # ShapeError: too deep
    if not isinstance(report, dict):
        raise ValueError(f"{REPORT_FILE} is not a JSON object")
    return report


def train_fingerprint(data: TeacherData) -> str:
    """The sha1 of the train sentences in order: soft labels are rows in that order, so they are read only
    against the same teacher data (the annotated corpus or the parser changed: write it again)."""
    digest = hashlib.sha1()
    for example in data.sets["train"]:
        digest.update(example.text.encode("utf-8") + b"\n")
    return digest.hexdigest()


def text_keys(texts: Sequence[str]) -> np.ndarray:
    """Each text's key in a soft-label file: the first 8 bytes of its sha1, as an unsigned integer (a hash,
    never the text, so labels of papers that are not open can be committed)."""
    return np.array([int.from_bytes(hashlib.sha1(t.encode("utf-8")).digest()[:8], "big") for t in texts],
                    dtype=np.uint64)


def _save_arrays(path: Path, arrays: dict[str, np.ndarray], data: TeacherData) -> None:
    with path.open("wb") as handle:
        np.savez_compressed(handle, allow_pickle=False, train_fingerprint=np.array(train_fingerprint(data)),
                            train_keys=text_keys([e.text for e in data.sets["train"]]), **arrays)


def export_train_labels(data_dir: Path, run: Path, out: Path) -> dict[str, int]:
    """A teacher run's train-sentence probabilities small enough to commit (``out/soft.npz``: uint8 rows,
    1/255 steps, renormalised when read; no text, only the train data's fingerprint) with its report, so a
    later session distils without training the teacher again."""
    data = read_teacher_data(data_dir)
    try:
        with np.load(Path(run) / SOFT_FILE, allow_pickle=False) as arrays:
            rows = {what: np.asarray(arrays[f"train_{what}"], dtype=np.float32)
                    for what in ("roles", "functions")}
        report = _report(run)
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
        raise DatasetError(f"{run}: not a teacher run's output ({exc})") from exc
    out.mkdir(parents=True, exist_ok=True)
    _save_arrays(out / SOFT_FILE, {f"train_{what}_u8": np.clip(np.round(v * 255), 0, 255).astype(np.uint8)
                                   for what, v in rows.items()}, data)
    (out / REPORT_FILE).write_text(json.dumps({**report, "exported_from": str(run), "rows": "uint8, p * 255"},
                                              indent=1), encoding="utf-8")
    return {"sentences": len(data.sets["train"]), "bytes": (out / SOFT_FILE).stat().st_size}


def read_soft_labels(teacher_data: Path, soft: Path, student_labels: Sequence[str],
                     what: str = "functions") -> dict[str, np.ndarray]:
    """The teacher's probabilities of every train sentence (``what``: "functions" or "roles"), by its
    text (a text met twice: the mean), with their columns in the student's label order (renormalised
    over them), and one clear error when the student has a label the teacher never learnt.

    A file with each row's text key (:func:`text_keys`) is joined to ``teacher_data``'s train sentences by
    them, so it outlives a parser or corpus change: a sentence the teacher never read has no row (the
    student learns it from its own labels alone). An older file without keys is read by position, only
    against the very data it was computed from (its fingerprint)."""
    data = read_teacher_data(teacher_data)
    labels = data.functions if what == "functions" else data.roles
    where = {label: i for i, label in enumerate(labels)}
    missing = [label for label in student_labels if label not in where]
    if missing:
        raise DatasetError(f"{soft}: the teacher has no {what[:-1]} {missing[0]!r} (another taxonomy?)")
    try:
        with np.load(soft, allow_pickle=False) as arrays:
            if f"train_{what}_u8" in arrays.files:  # an exported, committed copy (export_train_labels)
                probs = np.asarray(arrays[f"train_{what}_u8"], dtype=np.float32) / 255.0
            else:
                probs = np.asarray(arrays[f"train_{what}"], dtype=np.float32)
            fingerprint = str(arrays["train_fingerprint"]) if "train_fingerprint" in arrays.files else None
            keys = np.asarray(arrays["train_keys"], dtype=np.uint64) if "train_keys" in arrays.files else None
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
        raise DatasetError(f"{soft}: not a teacher's soft labels ({exc})") from exc
    if probs.ndim != 2 or probs.shape[1] != len(labels) or not np.isfinite(probs).all():
        raise DatasetError(f"{soft}: {probs.shape} soft labels for {len(labels)} {what} (written from other "
                           "teacher data?)")
    probs = probs[:, [where[label] for label in student_labels]]
    probs = probs / np.maximum(probs.sum(1, keepdims=True), 1e-8)
    train = [e.text for e in data.sets["train"]]
    if keys is not None:
        if keys.shape != (len(probs),):
            raise DatasetError(f"{soft}: {len(keys)} text keys for {len(probs)} rows (a damaged file)")
        rows_of_text = _mean_rows(keys.tolist(), probs)
        return {text: rows_of_text[key] for text, key in zip(train, text_keys(train).tolist(), strict=True)
                if key in rows_of_text}
    if fingerprint is not None and fingerprint != train_fingerprint(data):
        raise DatasetError(f"{soft}: written for other teacher data (the annotated corpus or the parser "
                           "changed since): write the data again and run the teacher on it")
    if len(probs) != len(train):
        raise DatasetError(f"{soft}: {len(probs)} soft labels for {len(train)} sentences (written from "
                           "other teacher data?)")
    return _mean_rows(train, probs)


def _mean_rows(owners: Sequence[Any], rows: np.ndarray) -> dict[Any, np.ndarray]:
    """Each owner's row (a text or its key); an owner met twice: the mean of its rows."""
    sums: dict[Any, np.ndarray] = {}
    counts: dict[Any, int] = {}
    for owner, row in zip(owners, rows, strict=True):
        sums[owner] = sums[owner] + row if owner in sums else row.copy()
        counts[owner] = counts.get(owner, 0) + 1
    return {owner: total / counts[owner] for owner, total in sums.items()}


# ---------------------------------------------------------------- the base weights' journey


def int8_weights(source: Path, out: Path) -> dict[str, int]:
    """A base model's weights for the trip to the GPU machine at a quarter of their fp32 size: every matrix
    as int8 with one fp16 scale per row (symmetric), everything else fp16. Fine-tuning starts from them
    (the rounding is far below what the first steps move). Returns the tensor counts."""
    import torch
    from safetensors.torch import load_file, save_file

    state = load_file(str(source))
    packed: dict[str, torch.Tensor] = {}
    matrices = 0
    for name, value in state.items():
        if value.is_floating_point() and value.dim() == 2:
            scale = value.float().abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / 127.0
            packed[f"{name}.int8"] = torch.round(value.float() / scale).clamp(-127, 127).to(torch.int8)
            packed[f"{name}.scale"] = scale.to(torch.float16)
            matrices += 1
        else:
            packed[name] = value.half() if value.is_floating_point() else value
    save_file({k: v.contiguous() for k, v in packed.items()}, str(out), metadata={"format": "int8-rows"})
    return {"matrices": matrices, "tensors": len(state)}


def weights_from_int8(path: Path) -> dict[str, Any]:
    """:func:`int8_weights`' file as an fp32 state dict."""
    import torch
    from safetensors.torch import load_file

    packed = load_file(str(path))
    state: dict[str, torch.Tensor] = {}
    for name, value in packed.items():
        if name.endswith(".int8"):
            stem = name[: -len(".int8")]
            state[stem] = value.float() * packed[f"{stem}.scale"].float()
        elif not name.endswith(".scale"):
            state[name] = value.float() if value.is_floating_point() else value
    return state


# ---------------------------------------------------------------- there: training the teacher


def _encode(tokenizer: Any, examples: Sequence[TeacherExample]) -> list[list[int]]:
    pairs = [(e.text, f"{e.kind}: {e.previous}".strip()) for e in examples]
    return [enc.ids for enc in tokenizer.encode_batch(pairs)]


def _batches(ids: Sequence[list[int]], order: Sequence[int], size: int, pad: int, device: str
             ) -> Any:
    import torch

    for start in range(0, len(order), size):
        chosen = list(order[start : start + size])
        width = max(len(ids[i]) for i in chosen)
        tokens = torch.full((len(chosen), width), pad, dtype=torch.long)
        mask = torch.zeros((len(chosen), width), dtype=torch.long)
        for row, i in enumerate(chosen):
            tokens[row, : len(ids[i])] = torch.tensor(ids[i])
            mask[row, : len(ids[i])] = 1
        yield chosen, tokens.to(device), mask.to(device)


def _teacher_net(base: Path, roles: int, functions: int) -> Any:
    import torch
    from torch import nn
    from transformers import AutoConfig, AutoModel

    has_weights = (base / "model.safetensors").is_file()
    encoder = (AutoModel.from_pretrained(str(base), local_files_only=True, use_safetensors=True)
               if has_weights else AutoModel.from_config(AutoConfig.from_pretrained(str(base),
                                                                                    local_files_only=True)))
    encoder = encoder.float()
    if (base / INT8_FILE).is_file() and not has_weights:
        state = {k: v for k, v in weights_from_int8(base / INT8_FILE).items()
                 if not k.endswith("position_ids")}
        missing, unexpected = encoder.load_state_dict(state, strict=False)
        if unexpected or [k for k in missing if "position_ids" not in k and "pooler" not in k]:
            raise DatasetError(f"{base / INT8_FILE}: weights of another model "
                               f"({(unexpected or missing)[0]}, …)")
    hidden = int(encoder.config.hidden_size)

    class TeacherNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.dropout = nn.Dropout(0.1)
            self.roles = nn.Linear(hidden, roles)
            self.functions = nn.Linear(hidden, functions)

        def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            states = self.encoder(input_ids=tokens, attention_mask=mask).last_hidden_state
            weights = mask.unsqueeze(-1).to(states.dtype)
            pooled = self.dropout((states * weights).sum(1) / weights.sum(1).clamp(min=1.0))
            return self.roles(pooled), self.functions(pooled)

    return TeacherNet()


def _warmup_then_linear(steps: int, warmup: float) -> Callable[[int], float]:
    warm = max(1, int(steps * warmup))
    return lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / max(1, steps - warm))


def _predict(net: Any, ids: Sequence[list[int]], cfg: TeacherConfig, pad: int, device: str
             ) -> tuple[np.ndarray, np.ndarray]:
    import torch

    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    role_out = np.zeros((len(ids), net.roles.out_features), dtype=np.float32)
    function_out = np.zeros((len(ids), net.functions.out_features), dtype=np.float32)
    net.eval()
    with torch.no_grad(), torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=device == "cuda"):
        for chosen, tokens, mask in _batches(ids, order, cfg.batch_size * 4, pad, device):
            role_logits, function_logits = net(tokens, mask)
            role_out[chosen] = torch.softmax(role_logits.float(), -1).cpu().numpy()
            function_out[chosen] = torch.softmax(function_logits.float(), -1).cpu().numpy()
    return role_out, function_out


def score_set(examples: Sequence[TeacherExample], roles: Sequence[str], role_probs: np.ndarray,
              function_probs: np.ndarray) -> dict[str, float]:
    """Role accuracy over the labelled sentences; function top-1 over those with a function (what
    ``context_accuracy`` measures for the context head); how many of each."""
    role_right = role_total = fn_right = fn_total = 0
    for e, rp, fp in zip(examples, role_probs, function_probs, strict=True):
        if not e.role:
            continue
        role_total += 1
        role_right += int(roles[int(rp.argmax())] == e.role)
        if e.function >= 0:
            fn_total += 1
            fn_right += int(int(fp.argmax()) == e.function)
    return {"roles": round(role_right / role_total, 5) if role_total else 0.0,
            "functions": round(fn_right / fn_total, 5) if fn_total else 0.0,
            "role_sentences": float(role_total), "function_sentences": float(fn_total)}


def run_teacher(data_dir: Path, base: Path, out: Path, cfg: TeacherConfig,
                log: Callable[[str], None] = print) -> TeacherResult:
    """Train ``cfg.seeds`` teachers, keep each one's best epoch on :data:`SELECTION_SET`, write the mean of
    their probabilities on every set (``out/soft.npz``) and ``out/report.json``."""
    import torch
    from tokenizers import Tokenizer

    from models.training.base import pick_device

    started = time.monotonic()
    data = read_teacher_data(data_dir)
    device = pick_device(cfg.device).type
    tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=cfg.max_length)
    specials = (tokenizer.token_to_id("<pad>"), tokenizer.token_to_id("[PAD]"))
    pad = next((i for i in specials if i is not None), 0)
    role_index = {r: i for i, r in enumerate(data.roles)}
    ids = {name: _encode(tokenizer, examples) for name, examples in data.sets.items()}
    train_rows = [i for i, e in enumerate(data.sets["train"]) if e.role]
    if not train_rows:
        raise DatasetError(f"{data_dir}: no labelled train sentences")
    role_targets = [role_index[data.sets["train"][i].role] for i in range(len(data.sets["train"]))
                    if data.sets["train"][i].role]
    result = TeacherResult()
    sums = {name: (np.zeros((len(v), len(data.roles)), np.float32),
                   np.zeros((len(v), len(data.functions)), np.float32)) for name, v in data.sets.items()}
    kept = 0
    for seed in range(cfg.first_seed, cfg.first_seed + cfg.seeds):
        if cfg.max_minutes and kept and (time.monotonic() - started) / 60 > cfg.max_minutes / 2:
            log(f"seed {seed}: not started (past half of --max-minutes)")
            break
        random.seed(seed)
        torch.manual_seed(seed)
        net = _teacher_net(base, len(data.roles), len(data.functions)).to(device)
        head = [p for n, p in net.named_parameters() if not n.startswith("encoder.")]
        body = [p for n, p in net.named_parameters() if n.startswith("encoder.")]
        optimizer = torch.optim.AdamW([{"params": body, "lr": cfg.lr_encoder},
                                       {"params": head, "lr": cfg.lr_head}], weight_decay=cfg.weight_decay)
        steps = cfg.epochs * math.ceil(len(train_rows) / cfg.batch_size)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, _warmup_then_linear(steps, cfg.warmup))
        best_score = -1.0
        best: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        best_epoch = 0
        for epoch in range(1, cfg.epochs + 1):
            if cfg.max_minutes and (time.monotonic() - started) / 60 > cfg.max_minutes:
                log(f"seed {seed}: stopped before epoch {epoch} (--max-minutes)")
                break
            net.train()
            order = list(range(len(train_rows)))
            random.shuffle(order)
            train_ids = [ids["train"][i] for i in train_rows]
            total = 0.0
            for chosen, tokens, mask in _batches(train_ids, order, cfg.batch_size, pad, device):
                examples = [data.sets["train"][train_rows[i]] for i in chosen]
                role_y = torch.tensor([role_targets[i] for i in chosen], device=device)
                fn_y = torch.tensor([e.function for e in examples], device=device)
                with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=device == "cuda"):
                    role_logits, fn_logits = net(tokens, mask)
                loss = torch.nn.functional.cross_entropy(role_logits.float(), role_y)
                if bool((fn_y >= 0).any()):
                    has = fn_y >= 0
                    loss = loss + torch.nn.functional.cross_entropy(fn_logits.float()[has], fn_y[has])
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                total += float(loss.detach())
            predictions = {name: _predict(net, ids[name], cfg, pad, device)
                           for name in data.sets if name != "train"}
            scores = {name: score_set(data.sets[name], data.roles, *p) for name, p in predictions.items()}
            selection = scores[SELECTION_SET]
            score = (selection["roles"] + selection["functions"]) / 2
            record = {"seed": seed, "epoch": epoch, "loss": round(total, 3),
                      "minutes": round((time.monotonic() - started) / 60, 2),
                      **{f"{n}/{k}": v for n, s in scores.items() for k, v in s.items()
                         if "sentences" not in k}}
            result.history.append(record)
            log(json.dumps(record))
            if score > best_score:
                best_score, best_epoch = score, epoch
                best = {**predictions, "train": _predict(net, ids["train"], cfg, pad, device)}
        if not best:
            break
        kept += 1
        result.chosen.append({"seed": seed, "epoch": best_epoch, "selection": round(best_score, 5)})
        for name, (roles_p, functions_p) in best.items():
            sums[name][0][:] += roles_p
            sums[name][1][:] += functions_p
        del net, optimizer
        if device == "cuda":
            torch.cuda.empty_cache()
    if not kept:
        raise DatasetError("no teacher epoch finished (raise --max-minutes)")
    arrays: dict[str, np.ndarray] = {}
    for name, (roles_p, functions_p) in sums.items():
        arrays[f"{name}_roles"] = (roles_p / kept).astype(np.float16)
        arrays[f"{name}_functions"] = (functions_p / kept).astype(np.float16)
        if name != "train":
            result.averaged[name] = score_set(data.sets[name], data.roles, roles_p / kept, functions_p / kept)
    out.mkdir(parents=True, exist_ok=True)
    _save_arrays(out / SOFT_FILE, arrays, data)
    result.seconds = round(time.monotonic() - started, 1)
    report = {"format": TEACHER_FORMAT, "base": str(base), "config": cfg.__dict__, "roles": data.roles,
              "functions": data.functions, "counts": {n: len(v) for n, v in data.sets.items()},
              "history": result.history, "chosen": result.chosen, "averaged": result.averaged,
              "seconds": result.seconds}
    (out / REPORT_FILE).write_text(json.dumps(report, indent=1), encoding="utf-8")
    return result
