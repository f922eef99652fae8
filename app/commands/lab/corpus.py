"""``rhetorica corpus build|stats``: the default phrase corpus (a pack: core.library.pack)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from app.commands._options import (
    MAX_THREADS,
    as_text,
    bounded_int,
    bundle_path,
    path_arg,
    progress_line,
    text_arg,
)
from app.commands.lab.corpus_grow import add_parsers


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
    build.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=None,
                       help="onnxruntime threads per model (default 2 locally, 1 per Ray worker: each "
                       "worker holds one CPU)")
    build.add_argument("--pdf", type=path_arg, action="append", default=[], metavar="PATH",
                       help="PDF files or folders of PDFs to add after the sources (repeatable)")
    build.add_argument("--pdf-licence", type=text_arg, default="unknown",
                       help="the licence recorded for the --pdf papers (default: unknown)")
    build.add_argument("--engine", choices=("local", "ray"), default="local",
                       help="local: this process (default); ray: PDF parsing and labelling spread over "
                       "a Ray cluster (pip install 'rhetorica[scale]'; docs/scale.md)")
    build.add_argument("--address", type=ray_address, default=None, metavar="HOST:PORT",
                       help="the Ray cluster's head (default: start a local Ray for this build)")
    build.add_argument("--workers", type=bounded_int(1, 4096), default=None,
                       help="ray: labelling workers, one model and one CPU each (default: every CPU of "
                       "the cluster; a local Ray gets cores - 1); local: PDF parsing processes "
                       "(default: cores - 1)")
    build.add_argument("--work", type=path_arg, default=None, metavar="DIR",
                       help="folder for the labelled shards (default: .NAME.shards beside the pack; on a "
                       "cluster, storage every node reaches); a re-run after a failure reuses the "
                       "finished ones")
    build.add_argument("--keep-shards", action="store_true",
                       help="keep the shard folder after the pack is written")
    build.add_argument("--shard-sections", type=bounded_int(1, 100_000), default=64,
                       help="sections of kept sentences per shard (one labelling call; packs built "
                       "with different values differ slightly in their vectors)")
    build.add_argument("--quiet", action="store_true")
    build.set_defaults(func=run_build)
    stats = commands.add_parser("stats", help="What the phrase corpus holds.")
    stats.add_argument("--corpus", type=path_arg, default=None, help="pack folder (default: the shipped one)")
    stats.set_defaults(func=run_stats)
    add_parsers(commands)  # corpus extra, corpus grow


def ray_address(text: str) -> str:
    """An argparse ``type=``: a Ray head's HOST:PORT."""
    host, _, port = text.strip().rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or any(c.isspace() for c in host):
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (the Ray head's address, "
                                         "e.g. 10.0.0.1:6379)")
    return text.strip()


def run_build(args: argparse.Namespace) -> int:
    from app.commands._options import check_output_folder
    from core.jobs import JobContext
    from core.library.library import find_pdfs, refuse_bad_paths
    from core.library.pack_format import refuse_foreign_manifest, refuse_other_files
    from core.paths import resources_dir
    from models.corpus_build import CorpusInput, EngineOptions, build_corpus
    from models.datasets.phrase_sources import SHIPPED_SOURCES

    sources = args.source or list(SHIPPED_SOURCES)
    out = Path(args.out or resources_dir() / "corpus")
    check_output_folder(out, "--out")
    check_output_folder(args.work, "--work")
    refuse_foreign_manifest(out, "--out")  # a model bundle there would lose its manifest.json
    refuse_other_files(out, "--out")  # the pack replaces the folder whole
    pdfs, missing = find_pdfs(args.pdf)
    refuse_bad_paths(missing)
    if args.engine == "ray":
        from models.corpus_ray import import_ray

        import_ray()  # one line on how to install it, before any work
    elif args.address is not None:
        from core.errors import RhetoricaError

        raise RhetoricaError("--address goes with --engine ray")
    threads = args.threads or (1 if args.engine == "ray" else 2)
    manifest = {"command": shlex.join(["rhetorica", *sys.argv[1:]]),
                "filter": {"min_words": 5, "max_words": 80, "unique_wording": True}}
    report = build_corpus(CorpusInput(sources, args.max_papers, pdfs, args.pdf_licence), args.model, out,
                          manifest, EngineOptions(args.engine, args.address, args.workers, threads,
                                                  args.work, args.keep_shards, args.shard_sections),
                          ctx=JobContext(progress_line(args.quiet)))
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    for path, reason in report.skipped_pdfs:
        print(f"rhetorica: note: skipped {path}: {reason}", file=sys.stderr)
    record = report.record
    size = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    print(json.dumps({"pack": str(out), "papers": record["papers"], "sentences": record["sentences"],
                      "megabytes": round(size / 1e6, 1), "minutes": round(report.seconds / 60, 1),
                      "engine": report.engine, "workers": report.workers, "shards": report.shards,
                      "shards_reused": report.shards_reused, "shards_retried": report.shards_retried,
                      "skipped_pdfs": len(report.skipped_pdfs), "sources": record["sources"]}, indent=2))
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
