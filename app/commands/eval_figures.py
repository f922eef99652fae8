"""``rhetorica eval figures``: graphical-abstract suggestion (issue 14), in one command.

1. **Mention matching** (the scorer's own task) on held-out papers of the figure–mention pairs
   (``rhetorica data figure-pairs``; the split is by paper, ``--split test`` by default): for each
   paragraph that mentions a figure (reference masked), rank that paper's figures by the score of
   the paragraph against each caption; accuracy@1 and MRR, for the bundle's scorer (figure head +
   its weight of word overlap), the untrained content view with the same word overlap (what the
   head adds), the untrained content view alone (all-MiniLM-L6-v2 cosine) and "the paper's first
   figure".
2. **The hand-labelled dev set** (``models/datasets/gold_data/graphical-abstract``, 12 shared PDFs):
   MRR of the reader's first choice, MAP of the reader's top 3 and P@1 for "pick the first
   figure", "pick the largest figure", the untrained abstract–caption cosine, the trained scorer
   alone and the fitted combination — leave-one-paper-out, since the weights are fitted on these
   same papers (the in-sample figures are shown beside, labelled so).

Limits: the dev set is twelve papers, labelled by one reader; mention matching is dominated by
OA-STM (88 % of the pairs, biomedical and physical-science papers with many figures each).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from app.commands._options import output_file, write_output


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from app.commands._options import add_model_options

    parser = subparsers.add_parser(
        "figures", help="Graphical-abstract suggestion: mention matching and the hand-labelled dev set.",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="test", choices=("train", "dev", "test"),
                        help="figure–mention pair papers for mention matching (default test)")
    parser.add_argument("--skip-mentions", action="store_true", help="only the dev-set ranking")
    parser.add_argument("--skip-dev-set", action="store_true", help="only mention matching")
    add_model_options(parser)
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the figures here")
    parser.set_defaults(func=run)


def mention_matching(model: Any, split: str) -> dict[str, Any]:
    from models.datasets.figure_gold import gold_pdf_names
    from models.datasets.figure_pairs import SOURCES, read_figure_papers
    from models.figure_matching import matching_set, scorer_report
    from models.figure_scorer import FigureScorer, load_figure_scorer

    papers = [p for source in SOURCES for p in read_figure_papers(source, exclude_pdfs=gold_pdf_names())
              if p.split == split]
    data = matching_set(papers)
    out: dict[str, Any] = {"split": split, "papers": len(data.papers)}
    shipped = load_figure_scorer(model)
    scorers = {"bundle scorer": shipped, "untrained content view": FigureScorer(model)}
    if shipped.lexical_weight:  # how much of the gain is the word overlap, how much the head
        scorers["content view + word overlap"] = FigureScorer(model, lexical_weight=shipped.lexical_weight)
    for name, scorer in scorers.items():
        report = scorer_report(scorer, data)
        out[name] = report.to_dict()
        out["first figure"] = {"accuracy_at_1": round(report.first_figure_accuracy, 4)}
    return out


def dev_set(model: Any) -> dict[str, Any]:
    from models.datasets.figure_gold import gold_papers
    from models.figure_eval import dev_report, gold_cases
    from models.figure_scorer import FigureScorer, load_figure_scorer, ranker_weights

    scorers = {"trained": load_figure_scorer(model), "untrained": FigureScorer(model)}
    cases = gold_cases(gold_papers(), scorers)
    return dev_report(cases, "trained", "untrained", ranker_weights(model))


def run(args: argparse.Namespace) -> int:
    from models.encoder import load_model

    model = load_model(args.model, device=args.device, threads=args.threads)
    started = time.perf_counter()
    result: dict[str, Any] = {"model": model.model_id}
    if not args.skip_mentions:
        result["mention_matching"] = mention_matching(model, args.split)
        _print_mentions(result["mention_matching"])
    if not args.skip_dev_set:
        result["dev_set"] = dev_set(model)
        _print_dev(result["dev_set"])
    result["seconds"] = round(time.perf_counter() - started, 1)
    if args.json is not None:
        write_output(args.json, json.dumps(result, indent=2) + "\n")
    return 0


def _print_mentions(block: dict[str, Any]) -> None:
    print(f"Mention matching, figure–mention pairs {block['split']} split ({block['papers']} papers; "
          f"{block['bundle scorer']['mentions']} mentions, {block['bundle scorer']['mean_candidates']} "
          "candidate figures on average)")
    for name in ("bundle scorer", "content view + word overlap", "untrained content view", "first figure"):
        if name not in block:
            continue
        row = block[name]
        mrr = f"  MRR {row['mrr']:.3f}" if "mrr" in row else ""
        print(f"  {name:<28} accuracy@1 {row['accuracy_at_1']:.3f}{mrr}")


def _print_dev(block: dict[str, Any]) -> None:
    print("Graphical-abstract dev set (12 hand-labelled papers)")
    print(f"  {'method':<58} {'MRR top-1':>9} {'MAP top-3':>9} {'P@1':>6}")
    for name, row in block.items():
        print(f"  {name:<58} {row['mrr_top1']:>9.3f} {row['map_top3']:>9.3f} {row['p_at_1']:>6.3f}")
