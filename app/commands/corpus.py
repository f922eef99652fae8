"""``rhetorica corpus build|stats``: the default phrase corpus (a pack: core.library.pack)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from app.commands._options import MAX_THREADS, as_text, bounded_int, bundle_path, path_arg, progress_line


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "corpus", help="Build or describe the default phrase corpus.",
        description="The phrase corpus that suggestions draw on besides your library: real sentences "
        "from permissively licensed papers (CSAbstruct, SciTLDR, PubMedQA, OA-STM), each "
        "with its source, labelled and embedded by the model.")
    commands = parser.add_subparsers(dest="corpus_command", required=True)
    build = commands.add_parser(
        "build", help="Rebuild the phrase corpus from the shared data folder (reproducible).",
        description="Read the permissive sources in ../shared/data, keep sentences of 5-80 words (each "
        "wording once), label them with the model in their sections and store their function-view "
        "vectors (int8) in a pack.")
    build.add_argument("--out", type=path_arg, default=None,
                       help="pack folder (default: resources/corpus, the one the app ships)")
    build.add_argument("--source", action="append", default=None,
                       help="phrase source (repeatable; default the shipped ones: csabstruct, scitldr, "
                       "pubmedqa, oa-stm; scirex too for a local corpus)")
    build.add_argument("--max-papers", type=bounded_int(1, 100_000_000), default=None,
                       help="papers per source (for trials)")
    build.add_argument("--model", type=as_text(bundle_path), default=None,
                       help="model bundle (default: the shipped one)")
    build.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    build.add_argument("--quiet", action="store_true")
    build.set_defaults(func=run_build)
    stats = commands.add_parser("stats", help="What the phrase corpus holds.")
    stats.add_argument("--corpus", type=path_arg, default=None, help="pack folder (default: the shipped one)")
    stats.set_defaults(func=run_stats)


def run_build(args: argparse.Namespace) -> int:
    from itertools import islice

    from app.commands._options import check_output_folder
    from core.jobs import JobContext
    from core.library.pack import build_pack, file_sha256
    from core.paths import resources_dir
    from models.datasets.phrase_sources import SHIPPED_SOURCES, PhrasePaper, phrase_papers
    from models.encoder import load_model

    sources = args.source or list(SHIPPED_SOURCES)
    out = args.out or resources_dir() / "corpus"
    check_output_folder(out, "--out")
    model = load_model(args.model, device="cpu", threads=args.threads)
    started = time.monotonic()

    def papers() -> Iterator[PhrasePaper]:
        for source in sources:
            yield from islice(phrase_papers(source), args.max_papers)

    manifest = {"model_id": model.model_id, "model_sha256": file_sha256(model.bundle_dir / "model.onnx"),
                "command": shlex.join(["rhetorica", *sys.argv[1:]]),
                "filter": {"min_words": 5, "max_words": 80, "unique_wording": True}}
    record = build_pack(papers(), model, out, manifest, ctx=JobContext(progress_line(args.quiet)))
    size = sum(p.stat().st_size for p in Path(out).iterdir() if p.is_file())
    print(json.dumps({"pack": str(out), "papers": record["papers"], "sentences": record["sentences"],
                      "megabytes": round(size / 1e6, 1),
                      "minutes": round((time.monotonic() - started) / 60, 1),
                      "sources": record["sources"]}, indent=2))
    return 0


def run_stats(args: argparse.Namespace) -> int:
    from collections import Counter

    from app.commands._options import check_input_folder
    from core.library.pack import PackCorpus
    from core.paths import corpus_dir

    if args.corpus is not None:
        check_input_folder(args.corpus, "a phrase-corpus folder")
    corpus = PackCorpus(args.corpus or corpus_dir())
    records = corpus.sentences(range(len(corpus)))
    print(json.dumps({"folder": str(corpus.folder), "model_id": corpus.manifest.get("model_id"),
                      "papers": len(corpus.papers), "sentences": len(corpus),
                      "load_seconds": round(corpus.load_seconds, 2),
                      "sources": corpus.manifest.get("sources", {}),
                      "roles": dict(Counter(r.role for r in records).most_common()),
                      "top_functions": dict(Counter(r.function for r in records
                                                    if r.function).most_common(15))},
                     indent=2))
    return 0
