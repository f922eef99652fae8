"""Save and load training checkpoints (weights + the configs needed to rebuild the net)."""

from __future__ import annotations

import io
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from core.errors import ModelError
from core.fileio import atomic_write_bytes
from models.training.base import load_encoder, resolve_base_dir
from models.training.net import FunctionConfig, HeadConfig, RhetoricaNet


def build_net(base: str | Path | None, head: HeadConfig | None = None,
              functions: FunctionConfig | None = None, content_fork: int = 0) -> tuple[RhetoricaNet, Path]:
    """A fresh net on the base encoder (untrained heads; ``content_fork``: see
    :meth:`RhetoricaNet.enable_content_fork`)."""
    base_dir = resolve_base_dir(base)
    return RhetoricaNet(load_encoder(base_dir), head, functions, content_fork), base_dir


def save_checkpoint(path: Path, net: RhetoricaNet, base_dir: Path, meta: dict[str, Any]) -> None:
    """Write ``path`` atomically: state dict, head config, base folder, training metadata.

    The checkpoint is serialised in memory, then written to a temporary file, fsynced and renamed
    over ``path``, so a kill at any point leaves the previous checkpoint (or none), never a torn one;
    a full disk raises :class:`core.fileio.DiskFullError` ("disk full while saving the checkpoint …")
    and removes the partial file."""
    functions = asdict(net.function_config) if net.function_config is not None else None
    buffer = io.BytesIO()
    torch.save({"state_dict": net.state_dict(), "head": asdict(net.head_config), "functions": functions,
                "base_dir": str(base_dir), "adapters": net.adapter_labels(),
                "content_fork": net.content_fork, "body_head": net.body_head is not None,
                "meta": meta}, buffer)
    atomic_write_bytes(path, buffer.getbuffer().tobytes(), f"the checkpoint {Path(path).name}",
                       tmp_name=Path(path).name + ".tmp")


def load_checkpoint(path: str | Path, base: str | Path | None = None
                    ) -> tuple[RhetoricaNet, Path, dict[str, Any]]:
    """Rebuild the net from a checkpoint (``base`` overrides the base folder it names)."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"checkpoint not found: {path}")
    try:
        data = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as error:
        raise ModelError(f"cannot read checkpoint {path}: {error}") from None
    functions = FunctionConfig(**data["functions"]) if data.get("functions") else None
    net, base_dir = build_net(base or data["base_dir"], HeadConfig(**data["head"]), functions,
                              int(data.get("content_fork", 0)))
    if data.get("body_head"):
        net.enable_body_head()
    for dataset, labels in dict(data.get("adapters", {})).items():
        net.add_adapter(dataset, list(labels))
    state = dict(data["state_dict"])
    if net.content is None:  # a content fork needs no content head (early fork checkpoints had one)
        state = {k: v for k, v in state.items() if not k.startswith("content.")}
    net.load_state_dict(state)
    return net, base_dir, dict(data.get("meta", {}))
