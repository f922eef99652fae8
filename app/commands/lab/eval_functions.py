"""``rhetorica eval functions``: roles and communicative functions on the full-paper gold set.

Every gold paper is parsed and analysed whole, as the app does (each section one document with its
kind), and the predictions of the gold sentences are scored: roles overall, per section kind and per
domain; functions when the bundle has a function head; ``--markers`` also scores the distant-label
rule (markers covering the dependency root, spaCy) as a baseline for functions.

``--isolated`` (issue 24.6) also feeds every gold sentence the way a draft sentence or a suggestion
query reaches the model: alone (no section kind, no neighbours), with its section kind only, with its
neighbours only, and with both (``core.labelling.sentence_context``, the app's query path), beside the normal
whole-section scoring. ``--confidence`` (issue 24.5) prints, per role-confidence threshold, the share
of sentences kept and their accuracy: how ``core.taxonomy.labels.UNCERTAIN_BELOW`` is chosen (on dev only).
``--against BUNDLE`` (session 21) also runs another bundle on the same sentences and reports the model's
accuracy minus that one's, for roles and functions, with a 95 % interval from resampling whole papers
(:func:`models.metrics.paired_difference`): how far a difference between two candidates is from noise.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from app.commands._options import output_file, write_output


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from app.commands._options import add_model_options, bounded_int, input_folder

    parser = subparsers.add_parser(
        "functions",
        help="Roles and functions on the hand-labelled full-paper gold set (per section kind).",
        description="Parse and analyse each gold paper whole, as the app does, then score the gold "
        "sentences: role F1-micro/macro overall, per section kind and per domain; function accuracy "
        "and macro-F1 (over the functions present in the gold; 'none' counts in accuracy) when the "
        "bundle predicts functions. --markers scores the distant-label rule the same way.",
    )
    parser.add_argument("--data", choices=("gold", "gold2", "gold3", "gold4", "annotated", "dev5"),
                        default="gold",
                        help="gold: the 12 shared PDFs' gold set; gold2: the pdfs2 gold test (issue 24; "
                        "split test only); gold3: further body sentences of gold2's papers (session 18; "
                        "split test only); gold4: further ones (session 19; split test only); annotated: "
                        "the annotated corpus's parsed-PDF dev papers read whole (split dev only; 1,514 "
                        "sentences of 10 papers); dev5: the dev set v5, 14 papers no batch or gold set reads "
                        "(session 23; split dev only)")
    parser.add_argument("--split", choices=("dev", "test"), default="test")
    add_model_options(parser)
    parser.add_argument("--markers", action="store_true",
                        help="also score the marker rule (spaCy needed) as a function baseline")
    parser.add_argument("--isolated", action="store_true",
                        help="also score each gold sentence fed alone (no section kind, no neighbours, as "
                        "a draft sentence or suggestion query arrives), with its section kind only, with "
                        "its neighbours only and with both, beside the whole-section scoring")
    parser.add_argument("--neighbours", type=bounded_int(1, 32), default=None, metavar="N",
                        help="with --isolated: sentences taken on each side, within the section (default: "
                        "the query path's core.labelling.sentence_context.QUERY_NEIGHBOURS)")
    parser.add_argument("--confidence", action="store_true",
                        help="print accuracy and coverage of the confident role labels per threshold (how "
                        "core.taxonomy.labels.UNCERTAIN_BELOW is chosen: on --split dev only)")
    parser.add_argument("--against", type=input_folder, default=None, metavar="BUNDLE",
                        help="also run this bundle on the same sentences and report the model's accuracy "
                        "minus its, for roles and functions, with a 95 %% interval from resampling papers")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the figures here")
    parser.set_defaults(func=run)


def _role_figures(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    from core.taxonomy.labels import ROLES
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
    from core.taxonomy.labels import NO_FUNCTION
    from models.metrics import expected_calibration_error

    chosen = [(b, g) for b, g in zip(best, gold, strict=True) if g != NO_FUNCTION]
    confidence = [b[1] for b, _ in chosen]
    correct = [b[0] == g for b, g in chosen]
    return {"sentences": len(chosen), "ece": round(expected_calibration_error(confidence, correct), 4),
            "mean_confidence": round(sum(confidence) / len(chosen), 4) if chosen else 0.0,
            "top1_accuracy": round(sum(correct) / len(chosen), 4) if chosen else 0.0}


def clear_function_figures(gold: Sequence[str], predicted: Sequence[str],
                           clear: Sequence[bool]) -> dict[str, Any]:
    """How the functions shown as clear (``core.taxonomy.labels.function_is_clear``: what the draft
    checklist counts and the exports show plainly) fare against the rest: their share and each side's
    accuracy."""
    right = [g == p for g, p in zip(gold, predicted, strict=True)]
    kept = [r for r, c in zip(right, clear, strict=True) if c]
    rest = [r for r, c in zip(right, clear, strict=True) if not c]
    return {"clear": len(kept), "sentences": len(right),
            "coverage": round(len(kept) / len(right), 4) if right else 0.0,
            "accuracy_clear": round(sum(kept) / len(kept), 4) if kept else 0.0,
            "accuracy_rest": round(sum(rest) / len(rest), 4) if rest else 0.0}


def _marker_predictions(items: list[Any]) -> list[str]:
    from core.taxonomy.functions import default_taxonomy
    from models.training.function_labels import DistantLabeller, load_parser, parse_sentences

    parsed = list(parse_sentences((i.text for i in items), load_parser()))
    labels, _ = DistantLabeller(default_taxonomy()).label(parsed, [i.section_kind for i in items])
    return [hit.function_id if hit is not None else "none" for hit in labels]


ISOLATION_MODES = ("isolated", "kind_only", "neighbours_only", "neighbours_and_kind")
CONFIDENCE_THRESHOLDS = tuple(round(0.25 + 0.05 * k, 2) for k in range(14))  # 0.25 … 0.90
# The rule that picks UNCERTAIN_BELOW from the dev table: the highest threshold that still keeps at
# least MIN_CONFIDENT_SHARE of the sentences confident ("keeping most sentences") and whose uncertain
# sentences are right less than MAX_UNCERTAIN_ACCURACY of the time (more often wrong than right, so
# calling them uncertain is honest).
MIN_CONFIDENT_SHARE = 0.75
MAX_UNCERTAIN_ACCURACY = 0.5


def isolation_contexts(paper: Any, items: Sequence[Any], mode: str, neighbours: int) -> list[Any]:
    """The context each gold sentence is fed in for one ``--isolated`` mode: "isolated" (the sentence
    alone, section kind unknown), "kind_only" (alone with its section kind), "neighbours_only" (up to
    ``neighbours`` sentences a side from its section, kind unknown) or "neighbours_and_kind" (both:
    what the app's query path feeds)."""
    from core.labelling.sentence_context import alone, context_in_paper

    if mode not in ISOLATION_MODES:
        raise ValueError(f"unknown isolation mode {mode!r}")
    out = []
    for item in items:
        if mode == "isolated":
            out.append(alone(item.text))
            continue
        context = context_in_paper(paper, item.index, neighbours if mode != "kind_only" else 0,
                                   with_kind=mode != "neighbours_only")
        out.append(context)
    return out


def _mode_figures(gold_roles: Sequence[str], roles: Sequence[str], in_context_roles: Sequence[str],
                  gold_functions: Sequence[str], functions: Sequence[str] | None,
                  ids: Sequence[str]) -> dict[str, Any]:
    figures = _role_figures(gold_roles, roles)
    out: dict[str, Any] = {
        "role_accuracy": figures["f1_micro"], "role_f1_macro": figures["f1_macro"],
        "role_recall": figures["recall"],
        "role_agrees_with_in_context": round(
            sum(a == b for a, b in zip(roles, in_context_roles, strict=True)) / max(1, len(roles)), 4)}
    if functions is not None:
        f = function_figures(gold_functions, functions, ids)
        out["function_accuracy"] = f["accuracy"]
        out["function_macro_f1"] = f["macro_f1"]
    return out


def confidence_table(confidence: Sequence[float], correct: Sequence[bool],
                     thresholds: Sequence[float] = CONFIDENCE_THRESHOLDS) -> list[dict[str, float]]:
    """Per threshold: the share of sentences whose label's probability is at or above it (coverage),
    the accuracy of those (confident) and of the rest (uncertain)."""
    n = len(confidence)
    rows = []
    for threshold in thresholds:
        kept = [c >= threshold for c in confidence]
        right_kept = sum(k and r for k, r in zip(kept, correct, strict=True))
        right_rest = sum((not k) and r for k, r in zip(kept, correct, strict=True))
        count = sum(kept)
        rows.append({"threshold": threshold, "sentences": n, "confident": count,
                     "coverage": round(count / n, 4) if n else 0.0,
                     "accuracy_confident": round(right_kept / count, 4) if count else 0.0,
                     "accuracy_uncertain": round(right_rest / (n - count), 4) if n - count else 0.0})
    return rows


def choose_threshold(rows: Sequence[dict[str, float]], min_share: float = MIN_CONFIDENT_SHARE,
                     max_uncertain: float = MAX_UNCERTAIN_ACCURACY) -> float:
    """The highest threshold of ``rows`` that keeps at least ``min_share`` of the sentences and sets
    aside some sentences that are right less than ``max_uncertain`` of the time (0.0 when none)."""
    kept = [row["threshold"] for row in rows if row["coverage"] >= min_share
            and row["confident"] < row["sentences"] and row["accuracy_uncertain"] < max_uncertain]
    return max(kept) if kept else 0.0


def _confident_figures(confidence: Sequence[float], correct: Sequence[bool],
                       threshold: float) -> dict[str, Any]:
    (row,) = confidence_table(confidence, correct, (threshold,))
    return row


def run(args: argparse.Namespace) -> int:
    import json

    from core.paths import shared_dir
    from core.taxonomy.functions import default_taxonomy
    from models.datasets.gold import load_gold_papers
    from models.encoder import load_model

    model = load_model(args.model, device=args.device, threads=args.threads)
    if args.data in ("gold2", "gold3", "gold4"):
        from core.errors import DatasetError
        from models.datasets.annotated_corpus import GOLD_TESTS

        if args.split != "test":
            raise DatasetError(f"{args.data} has only a test split")
        papers = load_gold_papers("test", shared_dir() / "pdfs2", GOLD_TESTS[args.data])
    elif args.data == "dev5":
        from core.errors import DatasetError
        from models.datasets.annotated_corpus import DEV5_DIR

        if args.split != "dev":
            raise DatasetError("dev5 has only a dev split")
        papers = load_gold_papers("dev", shared_dir() / "pdfs", DEV5_DIR)
    elif args.data == "annotated":
        from models.datasets.annotated_papers import load_annotated_pdf_papers

        papers = load_annotated_pdf_papers(args.split, shared_dir() / "pdfs2")
    else:
        papers = load_gold_papers(args.split, shared_dir() / "pdfs")
    started = time.perf_counter()
    predictions = _predict(model, papers)
    seconds = time.perf_counter() - started
    items, predicted_roles, predicted_functions = predictions.items, predictions.roles, predictions.functions
    role_confidence, best_functions = predictions.role_confidence, predictions.best_functions
    has_functions = bool(getattr(model, "has_functions", False))

    gold_roles = [i.role for i in items]
    results: dict[str, Any] = {
        "data": f"{args.data}:{args.split}", "model_id": model.model_id, "papers": len(papers),
        "sentences": len(items), "seconds": round(seconds, 1),
        "command": " ".join(["rhetorica", "eval", "functions", "--data", args.data, "--split", args.split,
                             *(["--model", str(args.model)] if args.model else []),
                             *(["--markers"] if args.markers else []),
                             *(["--isolated"] if args.isolated else []),
                             *(["--neighbours", str(args.neighbours)] if args.neighbours else []),
                             *(["--confidence"] if args.confidence else []),
                             *(["--against", str(args.against)] if args.against else [])]),
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
        results["clear_functions"] = clear_function_figures(gold_functions, predicted_functions,
                                                            predictions.clear_functions)
    if args.markers:
        results["functions_marker_rule"] = function_figures(gold_functions, _marker_predictions(items), ids)
    from core.taxonomy.labels import UNCERTAIN_BELOW
    from models.metrics import expected_calibration_error

    role_correct = [g == p for g, p in zip(gold_roles, predicted_roles, strict=True)]
    results["confident_roles"] = _confident_figures(role_confidence, role_correct, UNCERTAIN_BELOW)
    if args.confidence:
        rows = confidence_table(role_confidence, role_correct)
        results["role_confidence"] = {
            "rows": rows,
            "rule": (f"highest threshold keeping >= {MIN_CONFIDENT_SHARE:.0%} of sentences whose "
                     f"uncertain ones are right < {MAX_UNCERTAIN_ACCURACY:.0%} of the time"),
            "calibration": {"ece": round(expected_calibration_error(role_confidence, role_correct), 4),
                            "mean_confidence": round(sum(role_confidence) / max(1, len(role_confidence)), 4),
                            "accuracy": round(sum(role_correct) / max(1, len(role_correct)), 4)},
            "chosen": choose_threshold(rows) if args.split == "dev" else None,
            "in_use": UNCERTAIN_BELOW}
    if args.against is not None:
        other = load_model(args.against, device=args.device, threads=args.threads)
        results["against"] = _against(predictions, _predict(other, papers), other.model_id)
    if args.isolated:
        results["isolation"] = _isolation(model, papers, items, args.neighbours, predicted_roles,
                                          predicted_functions if has_functions else None, ids)
    if args.json is not None:
        write_output(args.json, json.dumps(results, indent=2) + "\n")
    _print(results, has_functions)
    return 0


@dataclass
class _Predictions:
    """One model's reading of the gold sentences, in the order of ``items``."""

    items: list[Any] = field(default_factory=list)
    papers: list[int] = field(default_factory=list)  # each item's paper (its index in the paper list)
    roles: list[str] = field(default_factory=list)
    role_confidence: list[float] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)  # empty when the bundle has no functions
    best_functions: list[tuple[str, float]] = field(default_factory=list)  # top candidate, "none" or not
    clear_functions: list[bool] = field(default_factory=list)  # core.taxonomy.labels.function_is_clear


def _predict(model: Any, papers: Sequence[tuple[Any, Sequence[Any]]]) -> _Predictions:
    """Each paper analysed whole, as the app does; its gold sentences' roles and functions."""
    from core.labelling.analysis import analyze_paper
    from core.taxonomy.labels import function_is_clear

    out = _Predictions()
    for number, (paper, found) in enumerate(papers):
        analysis = analyze_paper(paper, model)
        for item in found:
            out.items.append(item)
            out.papers.append(number)
            out.roles.append(analysis.roles[item.index].label)
            out.role_confidence.append(analysis.roles[item.index].confidence)
            if analysis.functions is not None:
                prediction = analysis.functions[item.index]
                out.functions.append(prediction.label)
                out.best_functions.append(prediction.top[0] if prediction.top else ("", 0.0))
                out.clear_functions.append(function_is_clear(prediction))
    return out


def _against(mine: _Predictions, theirs: _Predictions, their_id: str) -> dict[str, Any]:
    """The model's accuracy minus another bundle's on the same sentences, roles and functions."""
    from dataclasses import asdict

    from models.metrics import paired_difference

    out: dict[str, Any] = {"model_id": their_id}
    gold_roles, gold_functions = [i.role for i in mine.items], [i.function for i in mine.items]
    for key, gold, a, b in (("roles", gold_roles, theirs.roles, mine.roles),
                            ("functions", gold_functions, theirs.functions, mine.functions)):
        if len(a) == len(b) == len(gold):
            out[key] = asdict(paired_difference(mine.papers, [g == p for g, p in zip(gold, a, strict=True)],
                                                [g == p for g, p in zip(gold, b, strict=True)]))
    return out


def _isolation(model: Any, papers: Sequence[tuple[Any, Sequence[Any]]], items: Sequence[Any],
               neighbours: int | None, in_context_roles: Sequence[str],
               in_context_functions: Sequence[str] | None, ids: Sequence[str]) -> dict[str, Any]:
    """Every gold sentence fed in each ``ISOLATION_MODES`` context (one model call per mode), scored
    like the whole-section run (``in_context``)."""
    from core.labelling.sentence_context import QUERY_NEIGHBOURS, label_in_context

    width = neighbours or QUERY_NEIGHBOURS
    gold_roles = [i.role for i in items]
    gold_functions = [i.function for i in items]
    modes: dict[str, Any] = {"in_context": _mode_figures(gold_roles, in_context_roles, in_context_roles,
                                                        gold_functions, in_context_functions, ids)}
    for mode in ISOLATION_MODES:
        contexts = [c for paper, found in papers for c in isolation_contexts(paper, found, mode, width)]
        labels = label_in_context(model, contexts)
        roles = [role.label for role, _ in labels]
        functions = ([f.label if f is not None else "none" for _, f in labels]
                     if in_context_functions is not None else None)
        modes[mode] = _mode_figures(gold_roles, roles, in_context_roles, gold_functions, functions, ids)
        modes[mode]["sentences_fed"] = sum(len(c.sentences()) for c in contexts)
    return {"neighbours": width, "modes": modes}


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
    if "clear_functions" in results:
        c = results["clear_functions"]
        print(f"clear functions (core.taxonomy.labels.function_is_clear): {c['clear']} of {c['sentences']} "
              f"({100 * c['coverage']:.1f} %), accuracy {100 * c['accuracy_clear']:.1f}; "
              f"the rest {100 * c['accuracy_rest']:.1f}")
    c = results["confident_roles"]
    print(f"confident roles (p >= {c['threshold']:.2f}, core.taxonomy.labels.UNCERTAIN_BELOW): "
          f"{c['confident']} of "
          f"{results['sentences']} ({100 * c['coverage']:.1f} %), "
          f"accuracy {100 * c['accuracy_confident']:.1f}; "
          f"the uncertain rest {100 * c['accuracy_uncertain']:.1f}")
    if "role_confidence" in results:
        table = results["role_confidence"]
        cal = table["calibration"]
        print(f"role probability: mean {100 * cal['mean_confidence']:.1f} against accuracy "
              f"{100 * cal['accuracy']:.1f}; ECE {cal['ece']:.4f}")
        print("role confidence threshold: coverage, accuracy of the confident, of the uncertain")
        for row in table["rows"]:
            print(f"  p >= {row['threshold']:.2f}: {row['confident']:4d} ({100 * row['coverage']:5.1f} %)  "
                  f"confident {100 * row['accuracy_confident']:5.1f}  "
                  f"uncertain {100 * row['accuracy_uncertain']:5.1f}")
        if table["chosen"] is not None:
            print(f"  rule ({table['rule']}): {table['chosen']:.2f}; in use: {table['in_use']:.2f}")
        else:
            print("  (a test split: report only, thresholds are chosen on dev; "
                  f"in use: {table['in_use']:.2f})")
    if "against" in results:
        against = results["against"]
        print(f"against {against['model_id']} (this model minus it, the same sentences; interval from "
              "resampling papers):")
        for key in ("roles", "functions"):
            if key in against:
                d = against[key]
                print(f"  {key:9s} {100 * d['b']:.2f} against {100 * d['a']:.2f}: "
                      f"{100 * d['difference']:+.2f} points, {round(100 * d['level'])} % interval "
                      f"{100 * d['low']:+.2f} to {100 * d['high']:+.2f} ({d['groups']} papers); "
                      f"right only here {d['b_only']}, only there {d['a_only']}")
    if "isolation" in results:
        iso = results["isolation"]
        print(f"isolated sentences (neighbours: {iso['neighbours']} a side, within the section):")
        names = {"in_context": "whole section + kind (app)", "isolated": "alone, kind unknown",
                 "kind_only": "alone + section kind", "neighbours_only": "neighbours, kind unknown",
                 "neighbours_and_kind": "neighbours + kind (query)"}
        for mode, f in iso["modes"].items():
            line = (f"  {names.get(mode, mode):28s} role accuracy {100 * f['role_accuracy']:5.1f}  "
                    f"macro-F1 {100 * f['role_f1_macro']:5.1f}  "
                    f"agrees {100 * f['role_agrees_with_in_context']:5.1f}")
            if "function_accuracy" in f:
                line += (f"  function accuracy {100 * f['function_accuracy']:5.1f}  "
                         f"macro-F1 {100 * f['function_macro_f1']:5.1f}")
            print(line)
