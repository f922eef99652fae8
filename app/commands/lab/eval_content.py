"""``rhetorica eval content``: topical (content) retrieval, several bundles side by side."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

from app.commands._options import bounded_int, input_folder, output_file, write_output

if TYPE_CHECKING:  # numpy and the model load inside the commands (fast CLI start-up)
    import numpy as np

    from core.model_api import RoleModel


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from app.commands._options import add_model_options

    parser = subparsers.add_parser(
        "content",
        help="Content retrieval on SciTLDR: each TLDR looks for its own abstract (Recall@1/5, MRR).",
        description="Known-item search on SciTLDR-A: each paper's first TLDR is a query, every abstract "
        "of the split an item (the mean of its sentences' embeddings, L2-normalised, as the app "
        "embeds a paper); the hit is the paper's own abstract. No role or function label helps, so "
        "it shows whether an embedding kept its topical content. --against runs other bundles "
        "(e.g. the untrained baseline from 'rhetorica export --untrained') in the same run.",
    )
    parser.add_argument("--split", default="test", choices=("train", "dev", "test"))
    add_model_options(parser)
    parser.add_argument("--against", type=input_folder, action="append", default=[], metavar="BUNDLE",
                        help="another bundle to score in the same run (repeatable)")
    parser.add_argument("--view", choices=("content", "function"), default="content",
                        help="embedding view (default content; a bundle without a function head has one "
                        "embedding for both)")
    parser.add_argument("--limit", type=bounded_int(1, 100_000_000), default=None, metavar="N",
                        help="only the first N papers")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the figures here")
    parser.set_defaults(func=run)


def abstract_vectors(model: RoleModel, abstracts: list[list[str]], view: str) -> np.ndarray:
    """One L2-normalised vector per abstract: the mean of its sentences' embeddings."""
    import numpy as np

    from models.encoder import l2_normalise

    flat = [s for sentences in abstracts for s in sentences]
    owner = np.repeat(np.arange(len(abstracts)), [len(s) for s in abstracts])
    vectors = model.embed(flat, view=view)
    sums = np.zeros((len(abstracts), vectors.shape[1]), dtype=np.float64)
    np.add.at(sums, owner, vectors)
    return l2_normalise(sums.astype(np.float32))


def run(args: argparse.Namespace) -> int:
    import json

    from models.datasets.scitldr import load_scitldr
    from models.encoder import load_model
    from models.metrics import ranking_report

    papers = load_scitldr(args.split)
    if args.limit is not None:
        papers = papers[: args.limit]
    rows = []
    for bundle in [args.model, *args.against]:
        model = load_model(bundle, device=args.device, threads=args.threads)
        started = time.perf_counter()
        items = abstract_vectors(model, [p.abstract for p in papers], args.view)
        queries = model.embed([p.tldr for p in papers], view=args.view)
        seconds = time.perf_counter() - started
        report = ranking_report(queries, items)
        rows.append({"model_id": model.model_id, "bundle": str(bundle or "default"),
                     "seconds": round(seconds, 1), **report.to_dict()})
    command = " ".join(["rhetorica", "eval", "content", "--split", args.split,
                        *(["--model", str(args.model)] if args.model else []),
                        *[f"--against {b}" for b in args.against],
                        *(["--view", args.view] if args.view != "content" else []),
                        *(["--limit", str(args.limit)] if args.limit is not None else [])])
    results = {"data": "scitldr", "split": args.split, "papers": len(papers), "command": command,
               "models": rows}
    if args.json is not None:
        write_output(args.json, json.dumps(results, indent=2) + "\n")
    print(f"scitldr {args.split}: {len(papers)} TLDR queries over {len(papers)} abstracts")
    for row in rows:
        print(f"  {row['model_id']:48s} R@1 {row['recall@1']:.4f}  R@5 {row['recall@5']:.4f}  "
              f"MRR {row['mrr']:.4f}  ({row['seconds']} s)")
    return 0
