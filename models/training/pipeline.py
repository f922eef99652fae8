"""Train -> checkpoint -> bundle, as one call each (used by the CLI and the GUI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.jobs import JobContext, ensure_context
from models.bundle import Manifest, read_manifest
from models.datasets import load_spec, refuse_test_split
from models.training.checkpoint import build_net, load_checkpoint
from models.training.export import ExportOptions, export_bundle
from models.training.trainer import TrainConfig, TrainResult, train


def training_record(meta: dict[str, Any], command: str | None) -> dict[str, Any]:
    """What the manifest's ``training`` field says, from a checkpoint's metadata."""
    config = dict(meta.get("config", {}))
    record: dict[str, Any] = {
        "command": command or config.get("command", ""),
        "data": config.get("data", []),
        "dev": config.get("dev", []),
        "seed": config.get("seed"),
        "best_step": meta.get("step"),
        "dev_f1_micro": meta.get("dev", {}),
        "dev_f1_macro": meta.get("dev_macro", {}),
        "config": config,
    }
    for key in ("steps", "seconds", "checkpoint", "history"):
        if key in meta:
            record[key] = meta[key]
    return record


def export_checkpoint(checkpoint: str | Path, bundle_dir: str | Path, *, quantize: bool = True,
                      parity_data: str = "csabstruct:dev", name: str = "rhetorica-roles",
                      version: str = "0.1.0", command: str | None = None,
                      extra_training: dict[str, Any] | None = None, calibrate: list[str] | None = None,
                      reuse_sentence_graphs: Path | None = None, ctx: JobContext | None = None) -> Manifest:
    """Export a checkpoint to a bundle (quantised unless told otherwise, parity-checked).

    ``calibrate``: dev specs on which a per-role logit bias is fitted and folded into the
    classifier before export (see :mod:`models.training.calibrate`); None or [] = no bias.
    ``reuse_sentence_graphs``: ship that bundle's sentence and content graphs unchanged (a run that
    did not train the encoder); the function head's calibration is then kept as it is.
    """
    ctx = ensure_context(ctx)
    refuse_test_split(parity_data, "the export parity check (--parity-data)")
    for spec in calibrate or []:
        refuse_test_split(spec, "calibration (--calibrate)")
    net, base_dir, meta = load_checkpoint(checkpoint)
    config = meta.get("config", {})
    max_length = int(config.get("max_length", 64))
    parity_docs = [d.sentences for d in load_spec(parity_data)]
    record = training_record(meta, command)
    record.update(extra_training or {})
    if calibrate:
        from models.training.calibrate import apply_bias, dev_logits, fit_bias

        ctx.progress(0, 5, f"fitting per-role logit bias on {', '.join(calibrate)}")
        calibration = fit_bias(dev_logits(net.eval(), calibrate, base_dir, max_length))
        apply_bias(net, calibration.bias)
        record["calibration"] = {"dev": list(calibrate), **calibration.to_dict()}
        ctx.progress(0, 5, f"dev F1-micro {calibration.before} -> {calibration.after}")
    threshold = 0.0
    if net.has_functions and reuse_sentence_graphs is not None:
        # The function head is inside the reused sentence graph: its calibration stays the bundle's.
        functions = dict(read_manifest(reuse_sentence_graphs).context.get("functions", {}))
        threshold = float(functions.get("threshold", 0.0))
        previous = read_manifest(reuse_sentence_graphs).training.get("function_calibration")
        if previous:
            record["function_calibration"] = previous
    elif net.has_functions:
        from models.training.function_threshold import apply_temperature, fit_function_threshold

        ctx.progress(0, 5, "fitting the function head's temperature and 'none' threshold on gold:dev")
        fitted = fit_function_threshold(net, base_dir, max_length)
        apply_temperature(net, fitted.temperature)
        threshold = fitted.threshold
        record["function_calibration"] = fitted.to_dict()
    options = ExportOptions(name=name, version=version, max_length=max_length,
                            quantize=quantize, parity_data=parity_data, function_threshold=threshold,
                            trained_section_kinds=meta.get("trained_section_kinds"),
                            body_head=dict(meta.get("body_head", {})), training=record,
                            function_context=dict(meta.get("function_context", {})),
                            reuse_sentence_graphs=reuse_sentence_graphs)
    return export_bundle(net, base_dir, bundle_dir, options, parity_docs, ctx)


def export_untrained(bundle_dir: str | Path, *, quantize: bool = True, parity_data: str = "csabstruct:dev",
                     base: str | Path | None = None, ctx: JobContext | None = None) -> Manifest:
    """The untrained baseline bundle: the base encoder (all-MiniLM-L6-v2) with a random role head.

    Its embeddings are the base model's (quantised like a shipped bundle), the yardstick that
    ``rhetorica eval content`` and ``eval retrieval`` compare trained bundles with; its role
    logits are noise, so only the embedding parity (mean cosine) is enforced.
    """
    import torch

    refuse_test_split(parity_data, "the export parity check (--parity-data)")
    torch.manual_seed(0)
    net, base_dir = build_net(base)
    parity_docs = [d.sentences for d in load_spec(parity_data)]
    options = ExportOptions(name="baseline-untrained", version="0.1.0", quantize=quantize,
                            parity_data=parity_data, min_agreement=0.0,
                            training={"untrained": True, "command": "rhetorica export --untrained"})
    return export_bundle(net, base_dir, bundle_dir, options, parity_docs, ctx)


def train_bundle(cfg: TrainConfig, bundle_dir: str | Path, *, quantize: bool = True,
                 name: str = "rhetorica-roles", version: str = "0.1.0", command: str | None = None,
                 calibrate: bool = True, ctx: JobContext | None = None) -> tuple[TrainResult, Manifest]:
    """Train with ``cfg`` (checkpoints under ``cfg.out``), then export the best checkpoint."""
    ctx = ensure_context(ctx)
    result = train(cfg, ctx.child(0.0, 0.95))
    parity_data = cfg.dev[0] if cfg.dev else cfg.data[0] if cfg.data else "csabstruct:dev"
    extra = {"steps": result.steps, "seconds": round(result.seconds, 1),
             "history": result.history}
    manifest = export_checkpoint(result.checkpoint, bundle_dir, quantize=quantize, parity_data=parity_data,
                                 name=name, version=version, command=command, extra_training=extra,
                                 calibrate=list(cfg.dev) if calibrate else None, ctx=ctx.child(0.95, 1.0))
    return result, manifest
