"""Plumbing shared by ``rhetorica eval roles`` and ``rhetorica eval retrieval``.

Imports of numpy, onnxruntime and the dataset readers stay inside the functions, so the
command modules that import this one keep the CLI's start-up fast.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from app.commands._options import bounded_int, output_file, write_output

if TYPE_CHECKING:  # pragma: no cover
    from models.datasets.documents import LabelledDocument
    from models.encoder import EncoderModel

DATASETS = ("csabstruct", "pmc-sents-full", "pubmedqa", "nicta-piboso", "sciarg", "sciarg-fine", "uci-az")


def add_dataset_options(parser: argparse.ArgumentParser, extra: tuple[str, ...] = ()) -> None:
    """``--data`` (the named datasets and ``extra`` ones), ``--split``, the model options, ``--limit N``
    and ``--json OUT``."""
    from app.commands._options import add_model_options

    parser.add_argument("--data", choices=(*DATASETS, *extra), default="csabstruct",
                        help="dataset (default csabstruct)")
    parser.add_argument("--split", default="test", help="dataset split (default test)")
    add_model_options(parser)
    parser.add_argument("--limit", type=bounded_int(1, 100_000_000), default=None, metavar="N",
                        help="only the first N documents")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the figures here")


def load_model_and_documents(args: argparse.Namespace) -> tuple[EncoderModel, list[LabelledDocument]]:
    """The model bundle named by ``--model`` and the split's documents (first ``--limit``)."""
    from models.datasets import load_dataset
    from models.encoder import load_model

    model = load_model(args.model, device=args.device, threads=args.threads)
    docs = load_dataset(args.data, args.split)
    if args.limit is not None:
        docs = docs[: args.limit]
    return model, docs


def test_dedup_indices(args: argparse.Namespace, doc_of: Sequence[tuple[str, ...]]) -> list[int] | None:
    """For CSAbstruct test: indices of the sentences whose abstract is also in ``test-dedup``
    (matched by their sentences: CSAbstruct's abstract_id is 0 on every row); else None."""
    if args.data != "csabstruct" or args.split != "test":
        return None
    from models.datasets import load_dataset

    dedup = {tuple(d.sentences) for d in load_dataset("csabstruct", "test-dedup")}
    return [i for i, key in enumerate(doc_of) if key in dedup]


def command_line(args: argparse.Namespace, what: str, *flags: str) -> str:
    """The command line that reproduces the figures (``flags`` are extra switches that were on)."""
    parts = ["rhetorica", "eval", what, "--data", args.data, "--split", args.split]
    if args.model is not None:
        parts += ["--model", str(args.model)]
    if args.limit is not None:
        parts += ["--limit", str(args.limit)]
    return " ".join([*parts, *flags])


def record_figures(model: EncoderModel, entries: dict[str, tuple[float, str]], command: str) -> None:
    """Store ``name -> (value, data)`` in the bundle's manifest metrics, with the command."""
    from models.bundle import record_metrics

    record_metrics(model.bundle_dir, {
        name: {"value": round(value, 4), "data": data, "command": command}
        for name, (value, data) in entries.items()})
    print(f"recorded {len(entries)} metrics in {model.bundle_dir / 'manifest.json'}")


def write_json(args: argparse.Namespace, results: dict[str, Any]) -> None:
    if args.json is not None:
        write_output(args.json, json.dumps(results, indent=2) + "\n")
