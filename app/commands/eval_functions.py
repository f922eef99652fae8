"""``rhetorica eval functions``: roles and communicative functions on the full-paper gold set.

Every gold paper is parsed and analysed whole, as the app does (each section one document with its
kind), and the predictions of the gold sentences are scored: roles overall, per section kind and per
domain; functions when the bundle has a function head; ``--markers`` also scores the distant-label
rule (markers covering the dependency root, spaCy) as a baseline for functions.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

from app.commands._options import output_file, write_output


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from app.commands._options import add_model_options

    parser = subparsers.add_parser(
        "functions",
        help="Roles and functions on the hand-labelled full-paper gold set (per section kind).",
        description="Parse and analyse each gold paper whole, as the app does, then score the gold "
        "sentences: role F1-micro/macro overall, per section kind and per domain; function accuracy "
        "and macro-F1 (over the functions present in the gold; 'none' counts in accuracy) when the "
        "bundle predicts functions. --markers scores the distant-label rule the same way.",
    )
    parser.add_argument("--data", choices=("gold", "gold2"), default="gold",
                        help="gold: the 12 shared PDFs' gold set; gold2: the pdfs2 gold test (issue 24; "
                        "split test only)")
    parser.add_argument("--split", choices=("dev", "test"), default="test")
    add_model_options(parser)
    parser.add_argument("--markers", action="store_true",
                        help="also score the marker rule (spaCy needed) as a function baseline")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the figures here")
    parser.set_defaults(func=run)


def _role_figures(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    from core.labels import ROLES
    from models.metrics import classification_report

    report = classification_report(gold, predicted, ROLES)
    return {"sentences": len(gold), "f1_micro": round(report.f1_micro, 4),
            "f1_macro": round(report.f1_macro, 4),
            "recall": {k: round(v, 4) for k, v in report.recall.items()},
            "support": report.support, "confusion": report.confusion}


def function_figures(gold: Sequence[str], predicted: Sequence[str], ids: Sequence[str]) -> dict[str, Any]:
    """Accuracy over all sentences; macro-F1 over the functions present in the gold; precision
    and coverage of the sentences given a function."""
    from models.metrics import classification_report

    labels = [*ids, "none"]
    report = classification_report(gold, predicted, labels)
    present = sorted({g for g in gold if g != "none"})
    given = [i for i, p in enumerate(predicted) if p != "none"]
    given_right = sum(gold[i] == predicted[i] for i in given)
    return {
        "sentences": len(gold),
        "accuracy": round(report.accuracy, 4),
        "macro_f1": round(sum(report.f1[f] for f in present) / len(present), 4) if present else 0.0,
        "functions_in_gold": len(present),
        "given": len(given),
        "precision_of_given": round(given_right / len(given), 4) if given else 0.0,
        "recall_of_gold_functions": round(
            sum(g == p for g, p in zip(gold, predicted, strict=True) if g != "none")
            / max(1, sum(g != "none" for g in gold)), 4),
    }


def _calibration(gold: Sequence[str], best: Sequence[tuple[str, float]]) -> dict[str, Any]:
    """How far the shown probability of the best function is from its accuracy, on the gold
    sentences that have a function (ECE over 10 bins, and the two means)."""
    from core.labels import NO_FUNCTION
    from models.metrics import expected_calibration_error

    chosen = [(b, g) for b, g in zip(best, gold, strict=True) if g != NO_FUNCTION]
    confidence = [b[1] for b, _ in chosen]
    correct = [b[0] == g for b, g in chosen]
    return {"sentences": len(chosen), "ece": round(expected_calibration_error(confidence, correct), 4),
            "mean_confidence": round(sum(confidence) / len(chosen), 4) if chosen else 0.0,
            "top1_accuracy": round(sum(correct) / len(chosen), 4) if chosen else 0.0}


def _marker_predictions(items: list[Any]) -> list[str]:
    from core.functions import default_taxonomy
    from models.training.function_labels import DistantLabeller, load_parser, parse_sentences

    parsed = list(parse_sentences((i.text for i in items), load_parser()))
    labels, _ = DistantLabeller(default_taxonomy()).label(parsed, [i.section_kind for i in items])
    return [hit.function_id if hit is not None else "none" for hit in labels]


def run(args: argparse.Namespace) -> int:
    import json

    from core.analysis import analyze_paper
    from core.functions import default_taxonomy
    from core.paths import shared_dir
    from models.datasets.gold import load_gold_papers
    from models.encoder import load_model

    model = load_model(args.model, device=args.device, threads=args.threads)
    if args.data == "gold2":
        from core.errors import DatasetError
        from models.datasets.annotated_corpus import GOLD2_DIR

        if args.split != "test":
            raise DatasetError("gold2 has only a test split")
        papers = load_gold_papers("test", shared_dir() / "pdfs2", GOLD2_DIR)
    else:
        papers = load_gold_papers(args.split, shared_dir() / "pdfs")
    started = time.perf_counter()
    items, predicted_roles, predicted_functions = [], [], []
    best_functions: list[tuple[str, float]] = []  # the top candidate and its probability, "none" or not
    has_functions = bool(getattr(model, "has_functions", False))
    for paper, found in papers:
        analysis = analyze_paper(paper, model)
        for item in found:
            items.append(item)
            predicted_roles.append(analysis.roles[item.index].label)
            if analysis.functions is not None:
                prediction = analysis.functions[item.index]
                predicted_functions.append(prediction.label)
                best_functions.append(prediction.top[0] if prediction.top else ("", 0.0))
    seconds = time.perf_counter() - started

    gold_roles = [i.role for i in items]
    results: dict[str, Any] = {
        "data": f"{args.data}:{args.split}", "model_id": model.model_id, "papers": len(papers),
        "sentences": len(items), "seconds": round(seconds, 1),
        "command": " ".join(["rhetorica", "eval", "functions", "--data", args.data, "--split", args.split,
                             *(["--model", str(args.model)] if args.model else []),
                             *(["--markers"] if args.markers else [])]),
        "roles": _role_figures(gold_roles, predicted_roles),
        "roles_by_section_kind": {}, "roles_by_domain": {},
    }
    for key, attribute in (("roles_by_section_kind", "section_kind"), ("roles_by_domain", "domain")):
        for value in sorted({getattr(i, attribute) for i in items}):
            chosen = [n for n, i in enumerate(items) if getattr(i, attribute) == value]
            results[key][value] = _role_figures([gold_roles[n] for n in chosen],
                                                [predicted_roles[n] for n in chosen])
    ids = default_taxonomy().ids
    gold_functions = [i.function for i in items]
    if predicted_functions:
        results["functions"] = function_figures(gold_functions, predicted_functions, ids)
        results["functions"]["calibration"] = _calibration(gold_functions, best_functions)
    if args.markers:
        results["functions_marker_rule"] = function_figures(gold_functions, _marker_predictions(items), ids)
    if args.json is not None:
        write_output(args.json, json.dumps(results, indent=2) + "\n")
    _print(results, has_functions)
    return 0


def _print(results: dict[str, Any], has_functions: bool) -> None:
    roles = results["roles"]
    print(f"{results['data']}: {results['sentences']} sentences from {results['papers']} papers; "
          f"model {results['model_id']} ({results['seconds']} s)")
    print(f"roles: F1-micro {100 * roles['f1_micro']:.2f}  F1-macro {100 * roles['f1_macro']:.2f}")
    for key in ("roles_by_section_kind", "roles_by_domain"):
        for value, figures in results[key].items():
            print(f"  {value:14s} n={figures['sentences']:4d}  F1-micro {100 * figures['f1_micro']:6.2f}")
    print("  role recall: " + ", ".join(f"{k} {100 * v:.1f}" for k, v in roles["recall"].items()))
    titles = (("functions", "functions (model)"), ("functions_marker_rule", "functions (marker rule)"))
    for key, title in titles:
        if key in results:
            f = results[key]
            print(f"{title}: accuracy {100 * f['accuracy']:.2f}  macro-F1 {100 * f['macro_f1']:.2f} "
                  f"({f['functions_in_gold']} functions); {f['given']} given a function, "
                  f"precision {100 * f['precision_of_given']:.1f}, "
                  f"recall {100 * f['recall_of_gold_functions']:.1f}")
            if "calibration" in f:
                c = f["calibration"]
                print(f"  best function's probability: mean {100 * c['mean_confidence']:.1f} against "
                      f"top-1 accuracy {100 * c['top1_accuracy']:.1f} on {c['sentences']} sentences "
                      f"with a function; ECE {c['ece']:.4f}")
    if not has_functions:
        print("functions (model): this bundle has no function head")
