"""Weighted averages of trained nets of one shape: "model soups" and WiSE-FT interpolation.

Nets fine-tuned from the same start can be averaged weight by weight (Wortsman et al., 2022): the mean of
several seeds' checkpoints (a uniform soup), or a point between the starting net and a fine-tuned one
(WiSE-FT, which keeps the start's behaviour where the fine-tuned net drifts). A source is a checkpoint
written by ``rhetorica train`` or a training pack folder (its ``start.pt``: the net the packed runs started
from, in fp16 and without the content fork's frozen copies). The result is the first checkpoint with its
weights replaced, so it exports like any other (``rhetorica export``).

Floating-point weights become ``sum(w_i * x_i) / sum(w_i)`` in double precision over the sources that hold
them (the frozen copies a pack leaves out come from the checkpoints alone); every other tensor must be the
same in all sources. Nothing read is pickled or run (``weights_only``).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from core.errors import ModelError
from core.fileio import atomic_write_bytes
from models.training.checkpoint import check_finite, read_checkpoint_data
from models.training.pack import starting_weights


@dataclass(frozen=True)
class WeightSource:
    """One net to average: a checkpoint file or a pack folder, with its weight."""

    path: Path
    weight: float


@dataclass(frozen=True)
class AverageReport:
    out: Path
    averaged: int  # floating-point tensors written as a weighted mean
    kept: int  # other tensors (the same in every source)
    sources: tuple[WeightSource, ...]


def parse_sources(paths: list[Path], weights: list[float] | None) -> tuple[WeightSource, ...]:
    """The sources with their weights (all 1 when none are given); one line for a mismatch."""
    if len(paths) < 2:
        raise ModelError("averaging needs at least two sources")
    if weights is None:
        weights = [1.0] * len(paths)
    if len(weights) != len(paths):
        raise ModelError(f"{len(weights)} weights for {len(paths)} sources: give one weight per source")
    if any(not w > 0 for w in weights):
        raise ModelError("every weight must be above 0")
    for path in paths:
        if not Path(path).exists():
            raise ModelError(f"{path}: no such checkpoint or pack folder")
    return tuple(WeightSource(Path(p), float(w)) for p, w in zip(paths, weights))


def average_weights(sources: tuple[WeightSource, ...], out: Path) -> AverageReport:
    """Write the weighted average of ``sources`` to ``out`` (a checkpoint for ``rhetorica export``)."""
    states: list[dict[str, Any]] = []
    template: dict[str, Any] | None = None
    template_path = sources[0].path
    for source in sources:
        if source.path.is_dir():
            states.append(starting_weights(source.path))
        else:
            data = read_checkpoint_data(source.path)
            for key, value in data["state_dict"].items():
                if not isinstance(value, torch.Tensor):
                    raise ModelError(f"cannot read checkpoint {source.path}: weight {key} is not a tensor")
            if template is None:
                template, template_path = data, source.path
            states.append(dict(data["state_dict"]))
        check_finite(states[-1], source.path)
    if template is None:
        raise ModelError("averaging needs at least one checkpoint file (the others may be pack folders)")
    merged = dict(template["state_dict"])
    averaged = kept = 0
    for key, reference in merged.items():
        held = [(state[key], source) for state, source in zip(states, sources) if key in state]
        for value, source in held:
            if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(reference.shape):
                raise ModelError(f"{source.path}: weight {key} has another shape; only nets of one shape "
                                 "average")
        if reference.is_floating_point():
            total = sum(source.weight * value.double() for value, source in held)
            merged[key] = (total / sum(source.weight for _, source in held)).to(reference.dtype)
            averaged += 1
        else:
            if any(not torch.equal(value, reference) for value, _ in held):
                raise ModelError(f"weight {key} is not a float and differs between the sources")
            kept += 1
    unknown = sorted(set().union(*states) - set(merged))
    if unknown:
        raise ModelError(f"a source has weights the first checkpoint has not ({unknown[0]}, …)")
    try:
        meta = json.loads(str(template.get("meta_json", "{}")) or "{}")
    except (ValueError, RecursionError):
        raise ModelError(f"cannot read checkpoint {template_path}: its meta_json is not JSON") from None
    meta = meta if isinstance(meta, dict) else {}
    meta["averaged_from"] = [{"source": str(s.path), "weight": s.weight} for s in sources]
    result = dict(template, state_dict=merged, meta_json=json.dumps(meta, default=str))
    buffer = io.BytesIO()
    torch.save(result, buffer)
    atomic_write_bytes(out, buffer.getbuffer().tobytes(), f"the checkpoint {out.name}",
                       tmp_name=out.name + ".tmp")
    return AverageReport(out, averaged, kept, sources)
