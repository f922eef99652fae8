"""``rhetorica bench train-gui``: does the window stay responsive while it trains on corrections? (issue 15)

The main window (offscreen) opens the sample paper; an isolated library receives N corrections drawn as
in ``rhetorica bench finetune`` (SciARG ACL abstracts the model labels wrongly); Tools › "Train on my
corrections…" then runs the real training job (encoding, training, export with parity check) in its
child process (``app/gui/train_job.py``, issue 26; the GUI process only waits on it and shows its
progress) while a 10 ms timer on the UI thread records its real gaps (``app/gui/latency.py``, as
``rhetorica bench gui`` does). Reports the job's time and the gaps' max, p99 and p95 (target: max < 50 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
from pathlib import Path

from app.commands._options import bounded_float, bounded_int, output_file, plain_help, write_output


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("train-gui", help="UI-thread latency while training on corrections.",
                                   description=plain_help(__doc__),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corrections", type=bounded_int(1, 1_000_000), default=50, metavar="N")
    parser.add_argument("--timeout", type=bounded_float(1.0, 1e6), default=1200.0,
                        help="seconds to wait for the job")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    home = Path(tempfile.mkdtemp(prefix="rhetorica-bench-train-"))
    os.environ["RHETORICA_HOME"] = str(home)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from app.commands.lab.bench_finetune import _share, sciarg_corrections
    from app.gui.bench import training_latency
    from core.library.corrections import Corrections
    from core.library.library import Library
    from core.paths import library_dir
    from models.datasets import load_spec
    from models.encoder import load_model

    docs = [d for d in load_spec("sciarg-fine:train-cl") if _share(d.doc_id) < 0.6]
    candidates = sciarg_corrections(load_model(device="cpu"), docs)
    random.Random(0).shuffle(candidates)
    with Library(library_dir()) as library:
        store = Corrections(library.store)
        for correction in candidates[: args.corrections]:
            store.add(correction)
    result = {"corrections": args.corrections, **training_latency(args.timeout)}
    print(json.dumps(result, indent=2))
    if args.json is not None:
        write_output(args.json, json.dumps(result, indent=2) + "\n")
    return 0 if result["finished"] else 1
