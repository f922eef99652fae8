"""Save and load training checkpoints (weights + the configs needed to rebuild the net)."""

from __future__ import annotations

import io
import json
import pickle
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from core.errors import ModelError
from core.fileio import atomic_write_bytes
from models.training.base import load_encoder, resolve_base_dir
from models.training.net import FunctionConfig, HeadConfig, RhetoricaNet, head_members, member_count

CHECKPOINT_FORMAT = 2  # 2: loads with weights_only=True (metadata as JSON)


def build_net(base: str | Path | None, head: HeadConfig | None = None,
              functions: FunctionConfig | None = None, content_fork: int = 0) -> tuple[RhetoricaNet, Path]:
    """A fresh net on the base encoder (untrained heads; ``content_fork``: see
    :meth:`RhetoricaNet.enable_content_fork`)."""
    base_dir = resolve_base_dir(base)
    return RhetoricaNet(load_encoder(base_dir), head, functions, content_fork), base_dir


def net_of_shape(encoder: Any, head: HeadConfig, functions: FunctionConfig | None, content_fork: int,
                 parts: dict[str, Any]) -> RhetoricaNet:
    """A net of a saved shape around ``encoder``: ``parts`` says (as a checkpoint or a training pack
    records it) whether it has a body head (``body_head``), a contextual function head
    (``function_context_head``) and which label adapters (``adapters``: dataset -> labels). The weights
    are still to load."""
    net = RhetoricaNet(encoder, head, functions, content_fork)
    if parts.get("body_head"):  # True (older files) or the number of members
        net.enable_body_head(member_count(parts["body_head"]))
    if parts.get("function_context_head"):  # True (older files) or the number of members
        net.enable_function_context_head(member_count(parts["function_context_head"]))
    for dataset, labels in dict(parts.get("adapters", {})).items():
        net.add_adapter(dataset, list(labels))
    return net


def save_checkpoint(path: Path, net: RhetoricaNet, base_dir: Path, meta: dict[str, Any]) -> None:
    """Write ``path`` atomically: state dict, head config, base folder, training metadata.

    The checkpoint is serialised in memory, then written to a temporary file, fsynced and renamed
    over ``path``, so a kill at any point leaves the previous checkpoint (or none), never a torn one;
    a full disk raises :class:`core.fileio.DiskFullError` ("disk full while saving the checkpoint …")
    and removes the partial file."""
    functions = asdict(net.function_config) if net.function_config is not None else None
    buffer = io.BytesIO()
    # Only tensors and plain data, so the file loads with ``weights_only=True`` (no pickled objects):
    # configs as JSON-able dicts, the free-form training metadata as one JSON string.
    torch.save({"format": CHECKPOINT_FORMAT, "state_dict": net.state_dict(), "head": asdict(net.head_config),
                "functions": functions, "base_dir": str(base_dir), "adapters": net.adapter_labels(),
                "content_fork": net.content_fork, "body_head": head_members(net.body_head),
                "function_context_head": head_members(net.function_context_head),
                "meta_json": json.dumps(meta, default=str)}, buffer)
    atomic_write_bytes(path, buffer.getbuffer().tobytes(), f"the checkpoint {Path(path).name}",
                       tmp_name=Path(path).name + ".tmp")


def load_checkpoint(path: str | Path, base: str | Path | None = None
                    ) -> tuple[RhetoricaNet, Path, dict[str, Any]]:
    """Rebuild the net from a checkpoint (``base`` overrides the base folder it names)."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"checkpoint not found: {path}")
    data = read_checkpoint_data(path)
    try:
        functions = FunctionConfig(**data["functions"]) if data.get("functions") else None
        head = HeadConfig(**data["head"])
        base_named, fork = str(data["base_dir"]), int(data.get("content_fork", 0))
        for part in ("body_head", "function_context_head"):
            if data.get(part):
                member_count(data[part])
    except (KeyError, TypeError, ValueError) as error:
        raise ModelError(f"cannot read checkpoint {path}: its configuration is not one Rhetorica wrote "
                         f"({type(error).__name__}: {error})") from None
    base_dir = resolve_base_dir(base or base_named)
    encoder = load_encoder(base_dir)
    try:
        net = net_of_shape(encoder, head, functions, fork, data)
        state = dict(data["state_dict"])
        if net.content is None:  # a content fork needs no content head (early fork checkpoints had one)
            state = {k: v for k, v in state.items() if not k.startswith("content.")}
        net.load_state_dict(state)
    except (RuntimeError, ValueError, TypeError, KeyError, AttributeError, IndexError) as error:
        raise ModelError(f"cannot read checkpoint {path}: its weights do not fit its configuration "
                         f"({_first_line(error)})") from None
    return net, base_dir, _meta(data)


def _first_line(error: BaseException, limit: int = 200) -> str:
    """An exception as one short line (torch's state-dict errors span many lines)."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_finite(state: dict[str, Any], path: Path) -> None:
    """One line for a checkpoint whose floating-point weights hold NaN or infinity (a diverged run)."""
    for key, value in state.items():
        if isinstance(value, torch.Tensor) and value.is_floating_point() \
                and not bool(torch.isfinite(value).all()):
            raise ModelError(f"cannot read checkpoint {path}: weight {key} holds NaN or infinite values "
                             "(a diverged run?)")


def read_checkpoint_data(path: Path) -> dict[str, Any]:
    """The checkpoint's contents, read with ``weights_only=True``: tensors and plain data only, so a
    file whose pickle would build other objects (or run code) is refused with one line, never run."""
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ModelError(f"refusing checkpoint {path}: it holds objects other than tensors and plain data "
                         f"({first[:160]}); only checkpoints written by 'rhetorica train' load") from None
    except Exception as error:
        reason = " ".join(str(error).split())[:200] or type(error).__name__
        raise ModelError(f"cannot read checkpoint {path}: {reason}") from None
    if not isinstance(data, dict) or not isinstance(data.get("state_dict"), dict) \
            or not isinstance(data.get("head"), dict):
        raise ModelError(f"cannot read checkpoint {path}: not a Rhetorica training checkpoint")
    return data


def _meta(data: dict[str, Any]) -> dict[str, Any]:
    """The training metadata: a JSON string since checkpoint format 2, a plain dict before."""
    if "meta_json" in data:
        try:
            meta = json.loads(str(data["meta_json"]))
        except (ValueError, RecursionError):
            return {}
        return meta if isinstance(meta, dict) else {}
    return dict(data.get("meta", {}))
