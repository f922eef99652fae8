"""``rhetorica eval roles``: role-labelling F1 on a named dataset split, in its own label space."""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from app.commands.lab._evaluation import (
    add_dataset_options,
    command_line,
    load_model_and_documents,
    record_figures,
    test_dedup_indices,
    write_json,
)

if TYPE_CHECKING:  # pragma: no cover
    from models.metrics import ClassificationReport


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "roles",
        help="Role-labelling F1 (micro, macro, per class) on a dataset split.",
        description="Classify every document of the split as one document (its sentences in order; "
        "PMC-Sents-FULL and UCI-AZ rows are single sentences), map each predicted role to the "
        "dataset's own label with models.datasets.to_dataset_label, and score F1 in that "
        "label space. For csabstruct test the test-dedup figure (the abstracts also in train "
        "or dev removed) is reported too.",
    )
    add_dataset_options(parser)
    parser.add_argument("--one-by-one", action="store_true",
                        help="ablation: classify every sentence alone (no document context)")
    parser.add_argument("--head", choices=("roles", "adapter"), default="roles",
                        help="roles: the six-role head mapped to the dataset's labels (default); adapter: "
                        "the bundle's label adapter for this dataset (its own labels, models.adapters)")
    parser.add_argument("--record", action="store_true",
                        help="store the headline figures in the bundle's manifest.json metrics")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.errors import RhetoricaError
    from models.datasets import DATASET_LABELS, to_dataset_label
    from models.metrics import classification_report

    model, docs = load_model_and_documents(args)
    labels = list(DATASET_LABELS[args.data])
    adapter = model.adapter(args.data) if args.head == "adapter" else None
    if adapter is not None and args.one_by_one:
        raise RhetoricaError("--one-by-one is an ablation of the roles head; drop it or use --head roles")

    started = time.perf_counter()
    gold: list[str] = []
    predicted: list[str] = []
    doc_of: list[tuple[str, ...]] = []
    allowed_hits = 0
    for doc in docs:
        if args.one_by_one:
            kinds: Sequence[str | None] = doc.section_kinds or [None] * len(doc.sentences)
            roles = [model.classify_roles([s], None if k is None else [k])[0]
                     for s, k in zip(doc.sentences, kinds, strict=True)]
        else:
            encoding = model.encode_document(doc.sentences, doc.section_kinds)
            roles = encoding.roles
        own = (adapter.predict(encoding.adapter_input, encoding.adapter_probabilities) if adapter is not None
               else [to_dataset_label(args.data, role.label) for role in roles])
        key = tuple(doc.sentences)
        for role, label, allowed, mine in zip(roles, doc.labels, doc.allowed, own, strict=True):
            gold.append(label)
            predicted.append(mine)
            doc_of.append(key)
            allowed_hits += role.label in allowed
    seconds = time.perf_counter() - started

    report = classification_report(gold, predicted, labels)
    results = {
        "data": args.data,
        "split": args.split,
        "model_id": model.model_id,
        "provider": model.provider,
        "threads": args.threads,
        "documents": len(docs),
        "sentences": len(gold),
        "limit": args.limit,
        "one_by_one": args.one_by_one,
        "head": args.head,
        "seconds": round(seconds, 3),
        "sentences_per_second": round(len(gold) / seconds, 1) if seconds > 0 else None,
        "role_in_allowed_set": allowed_hits / len(gold) if gold else 0.0,
        "command": command_line(args, "roles", *(["--one-by-one"] if args.one_by_one else []),
                                *(["--head", "adapter"] if adapter is not None else [])),
        **report.to_dict(),
    }
    keep = test_dedup_indices(args, doc_of)
    dedup_report = None
    if keep is not None:
        dedup_report = classification_report([gold[i] for i in keep], [predicted[i] for i in keep], labels)
        kept = {doc_of[i] for i in keep}
        results["test_dedup"] = {"documents": sum(tuple(d.sentences) in kept for d in docs),
                                 "sentences": len(keep), **dedup_report.to_dict()}

    # Record and write before printing: a reader closing the pipe (`| head`) must not lose them.
    recordable = args.record and args.limit is None and not args.one_by_one
    if recordable:
        data = f"{args.data}:{args.split}"
        tag = "-adapter" if adapter is not None else ""
        entries = {f"{args.data}-{args.split}-f1-micro{tag}": (results["f1_micro"], data),
                   f"{args.data}-{args.split}-f1-macro{tag}": (results["f1_macro"], data)}
        if "test_dedup" in results:
            dedup = f"{args.data}:test-dedup"
            entries[f"{args.data}-test-dedup-f1-micro{tag}"] = (results["test_dedup"]["f1_micro"], dedup)
            entries[f"{args.data}-test-dedup-f1-macro{tag}"] = (results["test_dedup"]["f1_macro"], dedup)
        record_figures(model, entries, results["command"])
    write_json(args, results)

    title = f"{args.data} {args.split}" + (" (label adapter)" if adapter is not None else "")
    print(f"{title}: {len(docs)} documents, {len(gold)} sentences; model {model.model_id} "
          f"({model.provider}, {args.threads} threads), {results['sentences_per_second']} sent/s")
    _print_report(report, title)
    print(f"predicted role inside the label's allowed role set: {results['role_in_allowed_set']:.4f}")
    if dedup_report is not None:
        print()
        _print_report(dedup_report, f"csabstruct test-dedup ({results['test_dedup']['documents']} documents, "
                      f"{results['test_dedup']['sentences']} sentences)")
    if args.record and not recordable:
        print("not recorded: --record needs the whole split (no --limit, no --one-by-one)")
    return 0


def _print_report(report: ClassificationReport, title: str) -> None:
    print(f"{title}: F1-micro {100 * report.f1_micro:.2f}  F1-macro {100 * report.f1_macro:.2f}")
    print(f"  {'label':14}{'P':>8}{'R':>8}{'F1':>8}{'n':>8}")
    for label in report.labels:
        print(f"  {label:14}{100 * report.precision[label]:8.2f}{100 * report.recall[label]:8.2f}"
              f"{100 * report.f1[label]:8.2f}{report.support[label]:8d}")
    width = max(len(x) for x in report.labels)
    print("  confusion (rows gold, columns predicted):")
    print("  " + " " * width + "".join(f"{x[:7]:>8}" for x in report.labels))
    for label, row in zip(report.labels, report.confusion, strict=True):
        print(f"  {label:{width}}" + "".join(f"{v:8d}" for v in row))

