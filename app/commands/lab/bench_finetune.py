"""``rhetorica bench finetune``: training on corrections, measured (issue 15).

Corrections are drawn from the data the shipped model handles worst: SciARG's ACL abstracts
(``sciarg-fine:train-cl``; its conclusions get 0 % recall). The papers are split by a hash of their
id: 60 % give the corrections (sentences the model labels wrongly, with their gold role and their
neighbours as context), 40 % are held out. For each count (default 50 and 200) the role heads are
trained on that many corrections (all there are when fewer: 157 with the shipped 0.5.0;
``models.training.corrections``) and measured before and after on
the held-out SciARG papers (all their sentences, and their conclusions), the held-out corrections and
the acceptance gate's dev sets (CSAbstruct dev, the gold papers' dev split), with the time per step
and in total on this machine. ``--export`` also writes and parity-checks each bundle (timed).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from pathlib import Path
from typing import Any

from app.commands._options import (
    MAX_THREADS,
    bounded_int,
    input_folder,
    output_file,
    plain_help,
    write_output,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("finetune",
                                   help="Training on corrections: accuracy before/after and time.",
                                   description=plain_help(__doc__),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corrections", type=bounded_int(1, 1_000_000), nargs="+",
                        default=[50, 200], metavar="N")
    parser.add_argument("--model", type=input_folder, default=None, metavar="BUNDLE")
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    parser.add_argument("--export", action="store_true",
                        help="also export each bundle (runs/bench-finetune-N)")
    parser.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=0)
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT")
    parser.set_defaults(func=run)


def _share(doc_id: str) -> float:
    return int(hashlib.sha1(doc_id.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF


def sciarg_corrections(model: Any, docs: list[Any]) -> list[Any]:
    """Every sentence of ``docs`` the model labels wrongly, as a correction with its neighbours."""
    from core.library.corrections import Correction

    out = []
    for doc in docs:
        roles = model.encode_document(doc.sentences, "abstract").roles
        for i, (text, allowed, predicted) in enumerate(zip(doc.sentences, doc.allowed, roles, strict=True)):
            if len(allowed) == 1 and predicted.label not in allowed:
                out.append(Correction(
                    doc_id=doc.doc_id, text=text, field="role", corrected=next(iter(allowed)),
                    predicted=predicted.label, section_kind="abstract", model_id=model.model_id,
                    context_before=doc.sentences[i - 1] if i else "",
                    context_after=doc.sentences[i + 1] if i + 1 < len(doc.sentences) else ""))
    return out


def run(args: argparse.Namespace) -> int:
    from models.bundle import default_bundle_path
    from models.datasets import load_spec
    from models.encoder import load_model
    from models.training.body_roles import BodyRun
    from models.training.corrections import CorrectionJob, train_on_corrections

    bundle = args.model or default_bundle_path()
    docs = load_spec("sciarg-fine:train-cl")
    pool = [d for d in docs if _share(d.doc_id) < 0.6]
    held = [d for d in docs if _share(d.doc_id) >= 0.6]
    model = load_model(bundle, device="cpu", threads=args.threads)
    candidates = sciarg_corrections(model, pool)
    random.Random(args.seed).shuffle(candidates)
    conclusion = frozenset({"conclusion"})
    extra = {
        "SciARG-CL held-out papers": [BodyRun(d.doc_id, "abstract", list(d.sentences), list(d.allowed))
                                      for d in held],
        "SciARG-CL held-out conclusions": [BodyRun(d.doc_id, "abstract", list(d.sentences),
                                                   [a if a == conclusion else frozenset() for a in d.allowed])
                                           for d in held],
    }
    print(f"SciARG-CL: {len(pool)} papers give {len(candidates)} wrongly labelled sentences; "
          f"{len(held)} papers held out", flush=True)
    results: dict[str, Any] = {"model": model.model_id, "pool_papers": len(pool),
                               "held_out_papers": len(held),
                               "candidates": len(candidates), "runs": {}}
    for count in args.corrections:
        if count > len(candidates):
            print(f"{count} corrections asked for, {len(candidates)} available: training on all of them")
            count = len(candidates)
        out = Path("runs") / f"bench-finetune-{count}"
        job = CorrectionJob(bundle=bundle, corrections=candidates[:count],
                            work=Path("runs/bench-finetune-work"),
                            out=out, command=f"rhetorica bench finetune --corrections {count}",
                            threads=args.threads, export=args.export, extra_sets=extra)
        if args.export and out.exists():
            import shutil

            shutil.rmtree(out)
        started = time.perf_counter()
        report = train_on_corrections(job)
        wall = round(time.perf_counter() - started, 1)
        results["runs"][str(count)] = {**report.to_dict(), "wall_seconds": wall}
        print(f"\n{count} corrections ({report.corrections['trained_on']} trained on, "
              f"{report.corrections['held_out']} held out): {report.steps} steps, "
              f"{1000 * report.seconds_per_step:.1f} ms/step, {report.seconds}")
        for name, before in report.before.items():
            print(f"  {name:<36} {before:7.2f} -> {report.after[name]:7.2f}")
        print(f"  accepted: {report.accepted} ({report.reason})", flush=True)
    if args.json is not None:
        write_output(args.json, json.dumps(results, indent=2) + "\n")
    return 0
