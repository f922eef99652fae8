"""Train on the author's corrections (issue 15): ``rhetorica train corrections`` and the GUI's dialog.

Starting from a bundle, the role heads (the role head for abstracts and unknown sections, the body
head for body sections; both read the encoder's pooled vectors, so the encoder and every sentence
graph stay as they are) are trained on

* the role corrections, each as a run [sentence before, the sentence, sentence after] with the
  label on the middle one, repeated ``correction_repeats`` times, and
* standard training data so the model does not forget: CSAbstruct train abstracts (role head) and
  PMC-Sents-FULL dev-fit sentences (body head), a seeded sample,

for a fixed number of epochs (nothing is chosen on the evaluation data). A quarter of the corrections
(by a hash of the sentence) is held out. Before and after, the heads are measured on the held-out
corrections and on the standard dev sets (CSAbstruct dev, the hand-labelled gold papers' dev split);
the new bundle is *accepted* only when it is not worse on the dev sets by more than ``tolerance``
points. Too few corrections is refused with how many more are needed. The bundle is exported with the
source bundle's sentence graphs unchanged and its figure head, none detector, role prior and role
temperatures carried over (:func:`carry_function_side`), in a hidden folder renamed to ``out`` when whole.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from core.errors import RhetoricaError
from core.jobs import JobContext, ensure_context
from core.library.corrections import MIN_ROLE_CORRECTIONS, Correction
from models.training.body_roles import (
    BodyRun,
    _windows,
    body_accuracy,
    dataset_runs,
    fill_cache,
    gold_runs,
    role_batch_loss,
)
from models.training.head_loop import HeadLoopConfig, fit_head, train_only
from models.training.net import BODY_SECTION_KINDS
from models.vector_cache import FeatureCache


class TooFewCorrections(RhetoricaError):
    """Fewer role corrections than a training run needs."""


@dataclass
class CorrectionTrainingConfig:
    # Chosen on the acceptance gate's dev sets with 50 SciARG corrections (the first setting tried,
    # lr 3e-4 x 6 epochs x 4 repeats with half the standard data, lost 3-4 dev points; docs/reliability.md).
    epochs: int = 4
    lr: float = 1e-4
    batch_runs: int = 16
    correction_repeats: int = 2
    abstracts: int = 600  # CSAbstruct train abstracts mixed in
    body_documents: int = 300  # PMC-Sents-FULL dev-fit documents mixed in
    holdout_share: float = 0.25
    tolerance: float = 0.5  # dev points the new heads may lose and still be accepted
    min_corrections: int = MIN_ROLE_CORRECTIONS
    dev_abstracts: int | None = None  # None: all of CSAbstruct dev
    seed: int = 0


@dataclass
class CorrectionReport:
    corrections: dict[str, int]
    before: dict[str, float]
    after: dict[str, float]
    accepted: bool
    reason: str
    seconds_per_step: float
    steps: int
    seconds: dict[str, float] = field(default_factory=dict)
    history: list[dict[str, float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def held_out(correction: Correction, share: float) -> bool:
    """Stable choice of the held-out corrections (by the sentence's text)."""
    digest = hashlib.sha1(correction.text.encode("utf-8")).hexdigest()[:8]
    return int(digest, 16) / 0xFFFFFFFF < share


def correction_runs(corrections: Sequence[Correction]) -> list[BodyRun]:
    """Each role correction as [before, sentence, after] with only the sentence labelled."""
    runs = []
    for c in corrections:
        if c.field != "role":
            continue
        sentences = [s for s in (c.context_before, c.text, c.context_after) if s.strip()]
        allowed = [frozenset({c.corrected}) if s == c.text else frozenset() for s in sentences]
        runs.append(BodyRun(c.doc_id, c.section_kind or "unknown", sentences, allowed, "corrections"))
    return runs


def need_enough(corrections: Sequence[Correction], minimum: int) -> None:
    roles = sum(1 for c in corrections if c.field == "role")
    if roles < minimum:
        raise TooFewCorrections(
            f"{roles} role correction{'s' if roles != 1 else ''} so far: training needs at least {minimum} "
            f"(correct {minimum - roles} more sentences' roles first; function corrections are kept but "
            "not yet trained on)")


def train_role_heads(net: Any, runs: Sequence[BodyRun], cache: FeatureCache,
                     cfg: CorrectionTrainingConfig,
                     ctx: JobContext | None = None) -> tuple[list[dict[str, float]], float, int]:
    """Train the role head and the body head (when the net has one) on ``runs``; everything else is
    frozen. Returns (history, seconds per step, steps)."""

    def role_heads() -> nn.ModuleList:
        heads = [h for h in (net.head, net.body_head) if h is not None]
        train_only(net, *heads)
        return nn.ModuleList(heads)

    def loss(_heads: nn.ModuleList, batch: list[BodyRun], _rng: random.Random) -> torch.Tensor:
        return role_batch_loss(net, batch, cache)

    windows = [w for w in _windows(runs, 64) if any(w.allowed)]
    loop = HeadLoopConfig(epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_runs, seed=cfg.seed)
    fit = fit_head(role_heads, loss, windows, loop, ctx=ctx)
    net.eval()
    return fit.history(loss_digits=4), fit.seconds / fit.steps, fit.steps


def _measure(net: Any, sets: Mapping[str, Sequence[BodyRun]], cache: FeatureCache) -> dict[str, float]:
    return {name: round(100 * body_accuracy(net, runs, cache)[0], 2) for name, runs in sets.items() if runs}


@dataclass
class CorrectionJob:
    bundle: Path
    corrections: list[Correction]
    work: Path
    out: Path
    version: str = ""
    command: str = ""
    config: CorrectionTrainingConfig = field(default_factory=CorrectionTrainingConfig)
    threads: int | None = 2
    export: bool = True
    extra_sets: dict[str, list[BodyRun]] = field(default_factory=dict)  # measured, never a gate


def train_on_corrections(job: CorrectionJob, ctx: JobContext | None = None) -> CorrectionReport:
    """The whole run of the module docstring; writes the bundle to ``job.out`` when ``job.export``."""
    from models.bundle import read_manifest
    from models.encoder import load_model
    from models.training.from_bundle import net_from_bundle

    ctx = ensure_context(ctx)
    cfg = job.config
    need_enough(job.corrections, cfg.min_corrections)
    started = time.monotonic()
    if job.threads:
        torch.set_num_threads(max(1, job.threads))
    roles = [c for c in job.corrections if c.field == "role"]
    test = [c for c in roles if held_out(c, cfg.holdout_share)]
    train = [c for c in roles if not held_out(c, cfg.holdout_share)]
    if not test:  # very few corrections: still hold one out
        test, train = roles[-1:], roles[:-1]
    ctx.progress(0, 1, "reading the standard training data")
    standard = [*_abstract_runs("csabstruct:train", cfg.abstracts, cfg.seed),
                *dataset_runs("pmc-sents-full:dev-fit", cfg.body_documents, cfg.seed)]
    train_runs = [*correction_runs(train) * cfg.correction_repeats, *standard]
    dev_sets = {"held-out corrections": correction_runs(test),
                "CSAbstruct dev": _abstract_runs("csabstruct:dev", cfg.dev_abstracts, cfg.seed),
                "gold papers dev (body sections)": gold_runs("dev"), **job.extra_sets}
    model = load_model(job.bundle, device="cpu", threads=job.threads)
    cache = FeatureCache(job.work / "features.npz", model.model_id)
    texts = [t for r in [*train_runs, *[r for s in dev_sets.values() for r in s]] for t in r.sentences]
    fill_cache(cache, model, texts, ctx.child(0.0, 0.3))
    seconds = {"encoding": round(time.monotonic() - started, 1)}
    net, base_dir = net_from_bundle(job.bundle)
    before = _measure(net, dev_sets, cache)
    mark = time.monotonic()
    history, per_step, steps = train_role_heads(net, train_runs, cache, cfg, ctx.child(0.3, 0.8))
    seconds["training"] = round(time.monotonic() - mark, 1)
    after = _measure(net, dev_sets, cache)
    gates = ("CSAbstruct dev", "gold papers dev (body sections)")
    worse = [k for k in gates if k in after and after[k] < before[k] - cfg.tolerance]
    accepted = not worse
    reason = ("not worse on the dev sets" if accepted else
              "worse on " + ", ".join(f"{k} ({before[k]} -> {after[k]})" for k in worse))
    counts = {"role": len(roles), "function": sum(1 for c in job.corrections if c.field == "function"),
              "trained_on": len(train), "held_out": len(test)}
    report = CorrectionReport(counts, before, after, accepted, reason, round(per_step, 4), steps, seconds,
                              history)
    if job.export:
        mark = time.monotonic()
        _export(net, base_dir, job, report, read_manifest(job.bundle), ctx.child(0.8, 1.0))
        seconds["export"] = round(time.monotonic() - mark, 1)
    seconds["total"] = round(time.monotonic() - started, 1)
    return report


def _abstract_runs(spec: str, limit: int | None, seed: int) -> list[BodyRun]:
    """A labelled abstract dataset as runs of kind "abstract" (the role head's)."""
    runs = dataset_runs(spec, limit, seed)
    return [BodyRun(r.doc_id, "abstract", r.sentences, r.allowed, spec) for r in runs]


def _export(net: Any, base_dir: Path, job: CorrectionJob, report: CorrectionReport, manifest: Any,
            ctx: JobContext) -> None:
    """The trained heads as a bundle beside the source bundle's sentence graphs and figure head."""
    from models.training.bundle_out import staged_bundle
    from models.training.checkpoint import save_checkpoint
    from models.training.figure_head import carry_figure_head
    from models.training.pipeline import export_checkpoint

    context = dict(manifest.context)
    checkpoint = job.work / "corrections.pt"
    record = {"from_bundle": str(job.bundle), "corrections": report.corrections, "before": report.before,
              "after": report.after, "accepted": report.accepted, "config": asdict(job.config)}
    body = dict(context.get("body_head", {}))
    # The role head keeps the kinds it was trained on (others stay tied to "unknown" at export).
    main_kinds = sorted(set(context.get("section_kinds_trained", ["abstract"])) - set(BODY_SECTION_KINDS)
                        - set(body.get("section_kinds", [])))
    save_checkpoint(checkpoint, net, base_dir, {
        "trained_section_kinds": main_kinds or ["abstract"],
        "body_head": {k: v for k, v in body.items() if k != "section_kinds"},
        "corrections": record,
        "config": {"command": job.command,
                   "data": ["corrections", "csabstruct:train", "pmc-sents-full:dev-fit"]}})
    version = job.version or f"{manifest.version}+corrections.{time.strftime('%Y%m%d%H%M%S')}"
    # Every step writes into a hidden sibling folder that becomes job.out only once the bundle is whole.
    with staged_bundle(job.out) as stage:
        export_checkpoint(checkpoint, stage, parity_data="csabstruct:dev", name=manifest.name,
                          version=version, command=job.command, reuse_sentence_graphs=job.bundle,
                          extra_training={"corrections": record}, ctx=ctx)
        carry_figure_head(job.bundle, stage)
        carry_function_side(job.bundle, stage)


def carry_function_side(source: Path, out: Path) -> list[str]:
    """Copy into bundle ``out`` (exported with ``--reuse-sentence-graphs source``) what ``source`` uses
    beside its graphs to label functions and to calibrate roles: the none detector (its file and
    record), the role prior and the role temperatures (``context.role_calibration``, marked as the
    source's: the role heads were trained since). Only the role heads are trained on corrections, so
    the new bundle then labels functions as its source did. Returns what was carried."""
    from models.bundle import verify_bundle, write_manifest
    from models.none_detector import NONE_DETECTOR_FILE

    origin = verify_bundle(source)
    manifest = verify_bundle(out)
    context = dict(manifest.context)
    functions = dict(context.get("functions", {}))
    source_functions = dict(origin.context.get("functions", {}))
    files = list(manifest.files)
    carried = []
    if functions and source_functions:
        detector = source_functions.get("none_detector")
        if isinstance(detector, dict) and detector.get("file", NONE_DETECTOR_FILE) == NONE_DETECTOR_FILE:
            shutil.copy2(source / NONE_DETECTOR_FILE, out / NONE_DETECTOR_FILE)
            files.append(NONE_DETECTOR_FILE)
            functions["none_detector"] = detector
            carried.append("none_detector")
        if "role_prior" in source_functions:
            functions["role_prior"] = source_functions["role_prior"]
            carried.append("role_prior")
        context["functions"] = functions
    calibration = origin.context.get("role_calibration")
    if isinstance(calibration, dict) and calibration:
        context["role_calibration"] = {
            **calibration, "note": f"the temperatures of {origin.name}@{origin.version}, whose role heads "
                                   "these were trained from on corrections (not refitted; "
                                   "'rhetorica train calibrate-roles' refits them)"}
        carried.append("role_calibration")
    if carried:
        context["carried_from_source"] = {"bundle": f"{origin.name}@{origin.version}", "records": carried}
        manifest.context = context
        write_manifest(out, manifest, tuple(dict.fromkeys(files)), made=True)
    return carried
