"""``rhetorica eval figures``: graphical-abstract suggestion (issue 14), in one command.

1. **Mention matching** (the scorer's own task) on held-out papers of the figure–mention pairs
   (``rhetorica data figure-pairs``; the split is by paper, ``--split test`` by default): for each
   paragraph that mentions a figure (reference masked), rank that paper's figures by the score of
   the paragraph against each caption; accuracy@1 and MRR, for the bundle's scorer (figure head +
   its weight of word overlap), the untrained content view with the same word overlap (what the
   head adds), the untrained content view alone (all-MiniLM-L6-v2 cosine) and "the paper's first
   figure".
2. **The hand-labelled dev set** (``models/datasets/gold_data/graphical-abstract``: v1, 12 shared
   PDFs, and v2, the 52 papers of ``../shared/pdfs2`` in four fields; ``--gold`` picks): MRR of the
   reader's first choice, MAP of the reader's top 3 and P@1, overall and per field (biomedical, CS,
   physical, social; v1 counts as CS), for "pick the first figure", the caption–text scorer alone,
   the previous ranker (issue 14) and the ranker of issue 25 — leave-one-paper-out (each paper ranked
   with weights fitted on the others), since the weights are fitted on these same papers: the shipped
   fit (every configuration averaged over bootstrap resamples of the other papers, session 23), the
   plain average, the older nested choice (one configuration chosen inside, on the others) and each
   configuration on its own. The bundle's own weights are shown in-sample, labelled so.
   ``--save-ranker`` fits the ranker on every paper of the chosen set and writes it into the bundle.
   ``--json`` also holds each paper's held-out ranking under the shipped fit (the rank of the reader's
   choice, the top-3 average precision); ``--compare-to`` an earlier such file lists the papers that
   moved (a parser or feature change, read paper by paper).

Limits: the dev set is 64 papers labelled by language-model annotators (agreement in the README);
the features were shaped looking at these papers, so even the leave-one-paper-out figures are
somewhat optimistic. Mention matching is dominated by OA-STM (88 % of the pairs).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from app.commands._options import output_file, write_output

GOLD_CHOICES = {"all": ("v1", "v2"), "v2": ("v2",), "v1": ("v1",)}
# models.datasets.figure_pairs.SOURCES / figure_sources.ALL_SOURCES, not imported here (they load the PDF
# parser, which "--help" must not pay for; a test checks they agree)
EVAL_SOURCES = ("oa-stm", "pmc-jats", "s2orc", "medicat", "pdfs")
ALL_SOURCES = (*EVAL_SOURCES, "unarxive", "pdfs2")


def _sources(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    unknown = [n for n in names if n not in ALL_SOURCES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown source(s) {', '.join(unknown) or '(none)'}: "
                                         f"use {', '.join(ALL_SOURCES)}")
    return names


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from app.commands._options import add_model_options

    parser = subparsers.add_parser(
        "figures", help="Graphical-abstract suggestion: mention matching and the hand-labelled dev set.",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="test", choices=("train", "dev", "test"),
                        help="figure–mention pair papers for mention matching (default test)")
    parser.add_argument("--sources", default=",".join(EVAL_SOURCES), type=_sources, metavar="S,S",
                        help="figure-pair sources whose --split papers mention matching scores, "
                             f"comma-separated (default {','.join(EVAL_SOURCES)}: the set of the 0.591 of "
                             "session 9; also: unarxive, pdfs2 — unarXive's labels are a heuristic, see "
                             "models/datasets/figure_sources.py)")
    parser.add_argument("--skip-mentions", action="store_true", help="only the dev-set ranking")
    parser.add_argument("--skip-dev-set", action="store_true", help="only mention matching")
    parser.add_argument("--gold", default="all", choices=tuple(GOLD_CHOICES),
                        help="graphical-abstract dev set: v1 + v2 (all, default), v2 (52 papers of four "
                             "fields) or v1 (12 papers)")
    parser.add_argument("--save-ranker", action="store_true",
                        help="fit the ranker on every paper of --gold and write its weights into the model "
                             "bundle's manifest (context.figures.ranker; files and model id stay the same)")
    add_model_options(parser)
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the figures here (with each dev paper's rank of the reader's "
                             "choice under the shipped fit)")
    parser.add_argument("--compare-to", type=Path, default=None, metavar="EARLIER_JSON",
                        help="list the dev papers whose rank of the reader's choice (or whose top-3 average "
                             "precision) differs from an earlier run's --json (a parser or feature change "
                             "read paper by paper)")
    parser.set_defaults(func=run)


def mention_matching(model: Any, split: str, sources: tuple[str, ...] = EVAL_SOURCES) -> dict[str, Any]:
    from models.datasets.figure_gold import gold_pdf_names
    from models.datasets.figure_sources import pdfs2_fields, read_source_papers
    from models.figure_matching import matching_set, scorer_report
    from models.figure_scorer import FigureScorer, load_figure_scorer

    papers = [p for source in sources for p in read_source_papers(source, exclude_pdfs=gold_pdf_names())
              if p.split == split]
    data = matching_set(papers)
    out: dict[str, Any] = {"split": split, "sources": list(sources), "papers": len(data.papers)}
    shipped = load_figure_scorer(model)
    scorers = {"bundle scorer": shipped, "untrained content view": FigureScorer(model)}
    if shipped.lexical_weight:  # how much of the gain is the word overlap, how much the head
        scorers["content view + word overlap"] = FigureScorer(model, lexical_weight=shipped.lexical_weight)
    for name, scorer in scorers.items():
        report = scorer_report(scorer, data)
        out[name] = report.to_dict()
        out["first figure"] = {"accuracy_at_1": round(report.first_figure_accuracy, 4)}
    # the bundle scorer per source, and per field for the pdfs2 papers
    groups: dict[str, list[Any]] = {}
    fields = pdfs2_fields() if "pdfs2" in sources else {}
    for paper in papers:
        groups.setdefault(paper.source, []).append(paper)
        if paper.source == "pdfs2":
            groups.setdefault(f"pdfs2 {fields.get(paper.paper_id, 'unknown')}", []).append(paper)
    if len(groups) > 1:
        reports = {name: (len(group), scorer_report(shipped, matching_set(group)))
                   for name, group in sorted(groups.items())}
        out["by_source"] = {name: {"papers": count, **report.to_dict()}
                            for name, (count, report) in reports.items() if report.mentions}
    return out


def dev_set(model: Any, gold: str = "all", save_ranker: bool = False, command: str = "") -> dict[str, Any]:
    from models.datasets.figure_gold import gold_papers
    from models.figure_eval import (
        bagged_fit,
        dev_report,
        gold_cases,
        held_out_rankings,
        paper_ranks,
        ranker_record,
        write_ranker,
    )
    from models.figure_scorer import load_figure_scorer, ranker_weights

    sets = GOLD_CHOICES[gold]
    cases = gold_cases(gold_papers(sets=sets), load_figure_scorer(model))
    shipped = held_out_rankings(cases, bagged_fit)
    out: dict[str, Any] = {"gold": "+".join(sets),
                           "methods": dev_report(cases, ranker_weights(model), shipped=shipped),
                           "papers": paper_ranks(shipped, cases)}
    if save_ranker:
        weights, record = ranker_record([c.labelled() for c in cases],
                                        f"graphical-abstract dev set {'+'.join(sets)}", command)
        write_ranker(model.bundle_dir, weights, record)
        out["saved_ranker"] = {"bundle": str(model.bundle_dir), "weights": weights, **record}
    return out


def run(args: argparse.Namespace) -> int:
    from models.encoder import load_model

    earlier = _earlier_papers(args.compare_to) if args.compare_to is not None else None
    model = load_model(args.model, device=args.device, threads=args.threads)
    started = time.perf_counter()
    result: dict[str, Any] = {"model": model.model_id}
    if not args.skip_mentions:
        result["mention_matching"] = mention_matching(model, args.split, args.sources)
        _print_mentions(result["mention_matching"])
    if not args.skip_dev_set:
        command = "rhetorica " + " ".join(sys.argv[1:])
        result["dev_set"] = dev_set(model, args.gold, args.save_ranker, command)
        _print_dev(result["dev_set"])
        if earlier is not None:
            _print_changes(earlier, result["dev_set"]["papers"], args.compare_to)
    result["seconds"] = round(time.perf_counter() - started, 1)
    if args.json is not None:
        write_output(args.json, json.dumps(result, indent=2) + "\n")
    return 0


def _print_mentions(block: dict[str, Any]) -> None:
    print(f"Mention matching, figure–mention pairs {block['split']} split of {','.join(block['sources'])} "
          f"({block['papers']} papers; "
          f"{block['bundle scorer']['mentions']} mentions, {block['bundle scorer']['mean_candidates']} "
          "candidate figures on average)")
    for name in ("bundle scorer", "content view + word overlap", "untrained content view", "first figure"):
        if name not in block:
            continue
        row = block[name]
        mrr = f"  MRR {row['mrr']:.3f}" if "mrr" in row else ""
        print(f"  {name:<28} accuracy@1 {row['accuracy_at_1']:.3f}{mrr}")
    for name, row in block.get("by_source", {}).items():
        print(f"    bundle scorer, {name:<22} accuracy@1 {row['accuracy_at_1']:.3f}  MRR {row['mrr']:.3f}  "
              f"({row['papers']} papers, {row['mentions']} mentions)")


def _print_dev(block: dict[str, Any]) -> None:
    methods = block["methods"]
    groups = list(next(iter(methods.values())))
    counts = next(iter(methods.values()))
    print(f"Graphical-abstract dev set {block['gold']} (papers with two or more figures: "
          + ", ".join(f"{g} {counts[g]['papers']}" for g in groups) + ")")
    print("  MRR of the reader's top-1 / MAP of the top 3 / P@1")
    width = max(44, *(len(name) for name in methods))
    print(f"  {'method':<{width}}" + "".join(f"{g:>21}" for g in groups))
    for name, row in methods.items():
        cells = "".join(f"{row[g]['mrr_top1']:>7.3f}{row[g]['map_top3']:>7.3f}{row[g]['p_at_1']:>7.3f}"
                        for g in groups)
        print(f"  {name:<{width}}{cells}")
    if "saved_ranker" in block:
        saved = block["saved_ranker"]
        rounds = saved["procedure"]["bootstrap_rounds"]
        print(f"Saved the ranker (every configuration averaged over {rounds} resamples) "
              f"into {saved['bundle']}")


def _earlier_papers(path: Path) -> dict[str, dict[str, Any]]:
    """The per-paper block of an earlier ``--json`` (one clear error for anything else)."""
    from core.errors import RhetoricaError
    from core.fileio import read_text_input

    text = read_text_input(path, "an earlier --json of 'rhetorica eval figures'", max_bytes=50_000_000)
    try:
        papers = json.loads(text)["dev_set"]["papers"]
        return {str(name): {"reciprocal_rank": float(row["reciprocal_rank"]),
                            "average_precision": float(row["average_precision"]), "field": str(row["field"])}
                for name, row in papers.items()}
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RhetoricaError(f"{path}: not the --json of an earlier 'rhetorica eval figures' run with "
                             f"its dev set ({type(exc).__name__})") from None


def _print_changes(earlier: dict[str, dict[str, Any]], now: dict[str, dict[str, Any]], path: Path) -> None:
    moved = [(name, earlier[name], row) for name, row in sorted(now.items()) if name in earlier
             and (earlier[name]["reciprocal_rank"] != row["reciprocal_rank"]
                  or earlier[name]["average_precision"] != row["average_precision"])]
    only = sorted(set(now) ^ set(earlier))
    print(f"Against {path}: {len(moved)} of {len(now)} papers move"
          + (f"; in one run only: {', '.join(only)}" if only else ""))
    for name, before, row in moved:
        print(f"  {name:<44} {row['field']:<10} reader's choice 1/RR {before['reciprocal_rank']:.3f} → "
              f"{row['reciprocal_rank']:.3f}  AP@3 {before['average_precision']:.3f} → "
              f"{row['average_precision']:.3f}")
