"""``rhetorica eval retrieval``: functional sentence retrieval (P@1, MAP@R) on a dataset split."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands._options import input_file
from app.commands.lab._evaluation import (
    add_dataset_options,
    command_line,
    load_model_and_documents,
    record_figures,
    test_dedup_indices,
    write_json,
)

if TYPE_CHECKING:  # pragma: no cover
    from models.encoder import EncoderModel

LABELS_LIMIT = 4_000_000_000  # bytes: checked in blocks, never read whole by the check


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "retrieval",
        help="P@1 and MAP@R of sentence embeddings (each sentence queries all others).",
        description="Embed every sentence of the split; each one queries all the others by cosine "
        "similarity and a hit is a sentence with the same gold label (the dataset's own labels). "
        "P@1 and MAP@R as in Musgrave et al. 2020, the protocol of Sugimoto & Aizawa 2022 on "
        "CSAbstruct. For csabstruct test the test-dedup figure is reported too. --data gold uses the "
        "hand-labelled full-paper gold sentences that have a communicative function, and their "
        "function labels; --data labels --labels FILE the rows of a function-label file (e.g. the "
        "unseen functions of 'rhetorica data open-set').",
    )
    add_dataset_options(parser, extra=("gold", "labels"))
    parser.add_argument("--labels", type=input_file, default=None, metavar="FILE",
                        help="with --data labels: function labels (JSON Lines) to retrieve among")
    parser.add_argument("--unseen-of", type=input_file, default=None, metavar="SPLIT",
                        help="keep only sentences of the functions a split-N.json of 'rhetorica data "
                        "open-set' holds out (the open-set test)")
    parser.add_argument("--view", choices=("content", "function"), default="content",
                        help="which embedding of the bundle (default content; function needs a bundle "
                        "with a function head, others have one embedding for both)")
    parser.add_argument("--record", action="store_true",
                        help="store the headline figures in the bundle's manifest.json metrics")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from models.metrics import retrieval_report

    if args.data in ("gold", "labels"):
        model, sentences, labels = _gold_functions(args) if args.data == "gold" else _labelled_functions(args)
        if args.unseen_of is not None:
            sentences, labels = _unseen_only(args.unseen_of, sentences, labels)
        doc_of: list[tuple[str, ...]] = [(s,) for s in sentences]
        document_count = len(sentences)  # each sentence stands alone
    else:
        model, docs = load_model_and_documents(args)
        sentences = [s for d in docs for s in d.sentences]
        labels = [x for d in docs for x in d.labels]
        doc_of = [tuple(d.sentences) for d in docs for _ in d.sentences]
        document_count = len(docs)

    view_flag = [] if args.view == "content" else ["--view", args.view]
    view_flag += ["--labels", str(args.labels)] if args.data == "labels" else []
    view_flag += ["--unseen-of", str(args.unseen_of)] if args.unseen_of is not None else []
    started = time.perf_counter()
    embeddings = model.embed(sentences, view=args.view)
    seconds = time.perf_counter() - started
    report = retrieval_report(embeddings, labels)
    results = {
        "data": args.data,
        "split": args.split,
        "model_id": model.model_id,
        "provider": model.provider,
        "view": args.view,
        "labels": "function" if args.data in ("gold", "labels") else "dataset",
        **({"labels_file": str(args.labels)} if args.data == "labels" else {}),
        **({"unseen_of": str(args.unseen_of)} if args.unseen_of is not None else {}),
        "documents": document_count,
        "sentences": len(sentences),
        "limit": args.limit,
        "embed_seconds": round(seconds, 3),
        "command": command_line(args, "retrieval", *view_flag),
        **report.to_dict(),
    }
    keep = test_dedup_indices(args, doc_of)
    sub = None
    if keep is not None:
        sub = retrieval_report(embeddings[keep], [labels[i] for i in keep])
        results["test_dedup"] = {"sentences": len(keep), **sub.to_dict()}

    # Record and write before printing: a reader closing the pipe (`| head`) must not lose them.
    if args.record and args.limit is None:
        tag = "-function-view" if args.view == "function" else ""
        entries = {f"{args.data}-{args.split}-p@1{tag}": (report.precision_at_1, f"{args.data}:{args.split}"),
                   f"{args.data}-{args.split}-map@r{tag}": (report.map_at_r, f"{args.data}:{args.split}")}
        if sub is not None:
            entries[f"{args.data}-test-dedup-p@1{tag}"] = (sub.precision_at_1, f"{args.data}:test-dedup")
            entries[f"{args.data}-test-dedup-map@r{tag}"] = (sub.map_at_r, f"{args.data}:test-dedup")
        record_figures(model, entries, results["command"])
    write_json(args, results)

    print(f"{args.data} {args.split}: {len(sentences)} sentences from {document_count} documents; "
          f"model {model.model_id} ({model.provider}), {args.view} view; embedded in {seconds:.1f} s")
    print(f"  P@1 {report.precision_at_1:.4f}  MAP@R {report.map_at_r:.4f}  ({report.queries} queries)")
    if sub is not None and keep is not None:
        print(f"  test-dedup ({len(keep)} sentences): P@1 {sub.precision_at_1:.4f}  "
              f"MAP@R {sub.map_at_r:.4f}")
    if args.record and args.limit is not None:
        print("not recorded: --record needs the whole split (no --limit)")
    return 0



def _gold_functions(args: argparse.Namespace) -> tuple[EncoderModel, list[str], list[str]]:
    """The bundle, and the gold split's sentences that have a function, with their functions."""
    from core.paths import shared_dir
    from core.taxonomy.labels import NO_FUNCTION
    from models.datasets.gold import load_gold
    from models.encoder import load_model

    items = [g for g in load_gold(args.split, shared_dir() / "pdfs") if g.function != NO_FUNCTION]
    if args.limit is not None:
        items = items[: args.limit]
    model = load_model(args.model, device=args.device, threads=args.threads)
    return model, [g.text for g in items], [g.function for g in items]


def _labelled_functions(args: argparse.Namespace) -> tuple[EncoderModel, list[str], list[str]]:
    """The bundle, and the sentences and functions of a function-label file (``--labels``)."""
    from core.errors import DatasetError
    from core.fileio import check_text_file
    from models.encoder import load_model
    from models.training.function_labels import read_function_rows

    if args.labels is None:
        raise DatasetError("--data labels needs --labels FILE (a function-label file)")
    check_text_file(args.labels, "function labels (JSON Lines)", max_bytes=LABELS_LIMIT)
    rows = read_function_rows([args.labels])
    if not rows:
        raise DatasetError(f"{args.labels}: no function-label rows (write them with 'rhetorica data "
                           "functions')")
    if args.limit is not None:
        rows = rows[: args.limit]
    model = load_model(args.model, device=args.device, threads=args.threads)
    return model, [str(r["text"]) for r in rows], [str(r["function"]) for r in rows]


def _unseen_only(split_file: Path, sentences: list[str], labels: list[str]) -> tuple[list[str], list[str]]:
    """The sentences whose function the open-set split holds out (its "unseen" list)."""
    from core.errors import DatasetError
    from core.fileio import read_text_input

    try:
        text = read_text_input(split_file, "a split file of 'rhetorica data open-set'")
        unseen = set(json.loads(text)["unseen"])
    except (ValueError, KeyError, TypeError) as error:
        raise DatasetError(f"{split_file}: not a split file of 'rhetorica data open-set' ({error})") from None
    keep = [i for i, label in enumerate(labels) if label in unseen]
    return [sentences[i] for i in keep], [labels[i] for i in keep]
