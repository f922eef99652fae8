"""Training packs: one ``rhetorica train roles`` run's inputs in a folder, to train where the data is not.

A GPU machine lent for minutes has neither the shared data nor the base model's weights, and what travels
to it is limited (there: 64 MiB in, files of at most 16 MB back). :func:`write_pack` reads here what the
run would read — its datasets and function data as this machine reads them, and the starting net
(``--init`` / ``--init-bundle`` with its content fork) — and writes them compactly:

- ``pack.json``: the run's configuration and the starting net's shape (heads, adapters, fork);
- ``data.json.xz``: the documents of every ``--data`` / ``--dev`` spec and the function data, as JSON;
- ``start.pt``: the starting net's weights in fp16 (read back with ``weights_only=True``), without the
  content fork's frozen copies (no loss reads them while training with a fork);
- ``base/``: the base model's ``config.json`` and tokenizer (the encoder is built from the config).

``rhetorica train pack-run`` trains from it (:func:`read_pack`, ``trainer.train(..., pack=...)``) and writes
the trained weights in parts of at most :data:`PART_BYTES` (:func:`write_trained_parts`);
``rhetorica train pack-merge`` rebuilds the full checkpoint here from the starting model and those parts
(:func:`checkpoint_from_parts`), ready for ``rhetorica export``. Nothing in a pack is pickled or run:
JSON and tensors only.
"""

from __future__ import annotations

import json
import lzma
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from core.errors import DatasetError, ModelError
from core.fileio import atomic_write_bytes
from models.datasets import LabelledDocument
from models.training.checkpoint import net_of_shape
from models.training.distil import TeacherTargets, targets_from_arrays, targets_to_arrays
from models.training.net import FunctionConfig, HeadConfig, RhetoricaNet, head_members
from models.training.trainer import FunctionData, TrainConfig, distil_targets, read_inputs, starting_net

PACK_FORMAT = 1
PART_BYTES = 15_000_000  # a file coming back from the GPU machine may hold 16 MB
BASE_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
              "vocab.txt")
# The weights a run trains (the content fork's copies and the embeddings stay as they started).
TRAINED_PREFIXES = ("encoder.encoder.layer.", "head.", "body_head.", "function_head.", "adapters.",
                    "function_context_head.")
MAX_PACK_JSON = 2_000_000_000  # decompressed data.json: far above any real pack, below absurd


@dataclass
class TrainingPack:
    """A pack read back: the run's configuration, its inputs, and the starting net's shape and weights."""

    folder: Path
    config: TrainConfig
    documents: dict[str, list[LabelledDocument]]
    function_data: FunctionData
    shape: dict[str, Any]
    state: dict[str, torch.Tensor]
    teacher: TeacherTargets | None = None  # a distilling run's teacher probabilities (teacher.npz)

    def starting_net(self) -> tuple[RhetoricaNet, Path, set[str]]:
        """The starting net on this machine (the encoder built from the base config; the fork's content
        copies stand in as the branch's own layers, which no training loss reads), the base folder
        (config and tokenizer), and the section kinds its role head learnt."""
        from transformers import AutoConfig, AutoModel

        base = self.folder / "base"
        encoder = AutoModel.from_config(AutoConfig.from_pretrained(str(base), local_files_only=True))
        functions = FunctionConfig(**self.shape["functions"]) if self.shape.get("functions") else None
        net = net_of_shape(encoder, HeadConfig(**self.shape["head"]), functions,
                           int(self.shape["content_fork"]), self.shape)
        state = net.state_dict()
        unknown = [k for k in self.state if k not in state]
        if unknown:
            raise ModelError(f"{self.folder}: start.pt has weights the net does not ({unknown[0]}, …)")
        for key, value in self.state.items():
            state[key] = value.float() if value.is_floating_point() else value
        for key in [k for k in state if k.startswith("content_layers.")]:
            state[key] = state["encoder.encoder.layer." + key.split(".", 1)[1]].clone()
        net.load_state_dict(state)
        return net, base, set(self.shape.get("trained_section_kinds", []))


def write_pack(cfg: TrainConfig, out: Path, shared: Path | None = None) -> dict[str, int]:
    """Write ``cfg``'s run as a pack in ``out``; returns each file's size in bytes."""
    documents, function_data = read_inputs(cfg, shared)
    net, base_dir, starting_kinds = starting_net(cfg, function_data[0])
    if net.has_functions and not net.content_fork and cfg.content_weight > 0:
        raise ModelError("a pack carries no base weights, so a run with functions needs a content fork "
                         "(--content-fork) or --content-weight 0")
    out.mkdir(parents=True, exist_ok=True)
    (out / "base").mkdir(exist_ok=True)
    for name in BASE_FILES:
        if (base_dir / name).is_file():
            shutil.copy(base_dir / name, out / "base" / name)
    shape = {"head": asdict(net.head_config),
             "functions": asdict(net.function_config) if net.function_config is not None else None,
             "content_fork": net.content_fork, "body_head": head_members(net.body_head),
             "function_context_head": head_members(net.function_context_head),
             "adapters": net.adapter_labels(), "trained_section_kinds": sorted(starting_kinds)}
    # The config keeps --init / --init-bundle as written here: the GPU machine never reads them (the pack
    # holds the net), pack-merge reads them here again.
    _write_json(out / "pack.json", {"format": PACK_FORMAT, "config": cfg.to_dict(), "shape": shape})
    fconfig, fdocs, fids, dev_texts, dev_functions = function_data
    data = {"documents": {spec: [_doc_json(d) for d in docs] for spec, docs in documents.items()},
            "functions": {"config": asdict(fconfig) if fconfig is not None else None,
                          "documents": [_doc_json(d) for d in fdocs], "ids": fids,
                          "dev_texts": dev_texts, "dev_functions": dev_functions}}
    atomic_write_bytes(out / "data.json.xz", lzma.compress(json.dumps(data).encode("utf-8"), preset=6),
                       "the pack's data")
    state = {k: (v.half() if v.is_floating_point() else v) for k, v in net.state_dict().items()
             if not k.startswith("content_layers.")}
    torch.save(state, out / "start.pt")
    targets = distil_targets(cfg, fconfig, None)
    if targets is not None:  # the teacher's rows travel too: texts in JSON, probabilities in float16
        texts, arrays = targets_to_arrays(targets)
        atomic_write_bytes(out / "teacher-texts.json.xz", lzma.compress(json.dumps(texts).encode("utf-8")),
                           "the pack's teacher texts")
        with (out / "teacher.npz").open("wb") as handle:
            np.savez_compressed(handle, allow_pickle=False, **arrays)
    return {str(p.relative_to(out)): p.stat().st_size for p in sorted(out.rglob("*")) if p.is_file()}


def read_pack(folder: Path) -> TrainingPack:
    """A pack written by :func:`write_pack` (one clear line if it is not one)."""
    folder = Path(folder)
    try:
        meta = json.loads((folder / "pack.json").read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or meta.get("format") != PACK_FORMAT:
            raise ValueError(f"not a format-{PACK_FORMAT} training pack")
        with lzma.open(folder / "data.json.xz", "rb") as handle:
            raw = handle.read(MAX_PACK_JSON + 1)
        if len(raw) > MAX_PACK_JSON:
            raise ValueError("data.json.xz is larger than any pack")
        data = json.loads(raw.decode("utf-8"))
        known = set(TrainConfig.__dataclass_fields__)
        config = TrainConfig(**{k: v for k, v in dict(meta["config"]).items() if k in known})
        documents = {str(spec): [_doc_from_json(d) for d in docs] for spec, docs in data["documents"].items()}
        functions = data["functions"]
        fconfig = FunctionConfig(**functions["config"]) if functions.get("config") else None
        function_data: FunctionData = (fconfig, [_doc_from_json(d) for d in functions["documents"]],
                                       [list(map(int, ids)) for ids in functions["ids"]],
                                       [str(t) for t in functions["dev_texts"]],
                                       [int(f) for f in functions["dev_functions"]])
        shape = dict(meta["shape"])
        state = _load_tensors(folder / "start.pt")
        teacher = None
        if (folder / "teacher.npz").is_file():
            with lzma.open(folder / "teacher-texts.json.xz", "rb") as handle:
                texts = json.loads(handle.read(MAX_PACK_JSON + 1).decode("utf-8"))
            with np.load(folder / "teacher.npz", allow_pickle=False) as arrays:
                teacher = targets_from_arrays([str(t) for t in texts], {k: arrays[k] for k in arrays.files})
    except (OSError, ValueError, KeyError, TypeError, lzma.LZMAError) as error:
        reason = " ".join(str(error).split())[:200]
        raise DatasetError(f"cannot read training pack {folder}: {reason}") from None
    return TrainingPack(folder, config, documents, function_data, shape, state, teacher)


def starting_weights(folder: Path) -> dict[str, Any]:
    """The starting net's weights a pack carries (``start.pt``: fp16, without the content fork's frozen
    copies); one line if the folder holds none."""
    try:
        return _load_tensors(Path(folder) / "start.pt")
    except (OSError, ValueError) as error:
        reason = " ".join(str(error).split())[:200]
        raise ModelError(f"cannot read the starting weights of pack {folder}: {reason}") from None


def _load_tensors(path: Path) -> dict[str, Any]:
    """A file of tensors and plain data written by this module (``weights_only``: nothing pickled is
    built or run); ValueError with the reason for anything else."""
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except OSError:
        raise
    except Exception as error:  # torch raises several kinds for a damaged or foreign file
        reason = " ".join(str(error).split())[:160] or type(error).__name__
        raise ValueError(f"{path.name}: {reason}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path.name} holds no dictionary of tensors")
    return data


def write_trained_parts(checkpoint: Path, out: Path, prefix: str) -> list[Path]:
    """The trained weights of ``checkpoint`` (``TRAINED_PREFIXES``) in fp16, in files of at most
    :data:`PART_BYTES`, plus its metadata, as ``<prefix>-part<N>.pt``."""
    data = torch.load(checkpoint, map_location="cpu", weights_only=True)
    trained = {k: v.half() for k, v in data["state_dict"].items()
               if k.startswith(TRAINED_PREFIXES) and v.is_floating_point()}
    parts: list[dict[str, torch.Tensor]] = [{}]
    size = 0
    for key, value in trained.items():
        nbytes = value.numel() * value.element_size()
        if parts[-1] and size + nbytes > PART_BYTES * 0.95:
            parts.append({})
            size = 0
        parts[-1][key] = value
        size += nbytes
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, part in enumerate(parts):
        path = out / f"{prefix}-part{index}.pt"
        torch.save({"weights": part, "meta_json": data.get("meta_json", "{}"), "parts": len(parts)}, path)
        paths.append(path)
    return paths


def checkpoint_from_parts(pack: Path, parts: list[Path], out: Path) -> Path:
    """The full checkpoint of a packed run, here: the pack's starting model (its ``--init`` /
    ``--init-bundle``, read with the base model's own weights, so the content fork's copies are the
    base's again) with the trained parts written over it."""
    from models.training.checkpoint import save_checkpoint

    try:
        meta_pack = json.loads((Path(pack) / "pack.json").read_text(encoding="utf-8"))
        known = set(TrainConfig.__dataclass_fields__)
        cfg = TrainConfig(**{k: v for k, v in dict(meta_pack["config"]).items() if k in known})
        shape = dict(meta_pack["shape"])
        loaded = [_load_tensors(Path(p)) for p in parts]
        expected = {int(part.get("parts", 0)) for part in loaded}
        for part, path in zip(loaded, parts):
            if not isinstance(part.get("weights"), dict):
                raise ValueError(f"{Path(path).name}: a part without weights")
            for key, value in part["weights"].items():
                if not isinstance(value, torch.Tensor) or not value.is_floating_point():
                    raise ValueError(f"{Path(path).name}: weight {key} is not a tensor of numbers")
                if not bool(torch.isfinite(value).all()):
                    raise ValueError(f"{Path(path).name}: weight {key} holds NaN or infinite values")
        meta = json.loads(str(loaded[0].get("meta_json", "{}")) if loaded else "{}")
        if not isinstance(meta, dict):
            raise ValueError(f"{Path(parts[0]).name}: its meta_json is not a JSON object")
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as error:
        reason = " ".join(str(error).split())[:200]
        raise ModelError(f"cannot merge the packed run's parts: {reason}") from None
    if not loaded or expected != {len(loaded)}:
        raise ModelError(f"a packed run's parts: got {len(loaded)} files, they name {sorted(expected)}")
    functions = FunctionConfig(**shape["functions"]) if shape.get("functions") else None
    net, base_dir, _ = starting_net(cfg, functions)
    state = net.state_dict()
    for part in loaded:
        for key, value in dict(part["weights"]).items():
            if key not in state or tuple(state[key].shape) != tuple(value.shape):
                raise ModelError(f"part weight {key} does not fit the pack's starting model")
            state[key] = value.float()
    net.load_state_dict(state)
    save_checkpoint(out, net, base_dir, meta)
    return out


def _doc_json(doc: LabelledDocument) -> dict[str, Any]:
    return {"doc_id": doc.doc_id, "sentences": doc.sentences, "labels": doc.labels,
            "allowed": [sorted(a) for a in doc.allowed], "section_kinds": doc.section_kinds}


def _doc_from_json(row: dict[str, Any]) -> LabelledDocument:
    kinds = row.get("section_kinds")
    return LabelledDocument(str(row["doc_id"]), [str(s) for s in row["sentences"]],
                            [str(x) for x in row["labels"]], [frozenset(map(str, a)) for a in row["allowed"]],
                            [str(k) for k in kinds] if kinds is not None else None)


def _write_json(path: Path, value: Any) -> None:
    atomic_write_bytes(path, json.dumps(value, indent=1).encode("utf-8"), f"the pack's {path.name}")
