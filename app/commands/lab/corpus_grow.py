"""``rhetorica corpus extra|grow``: the phrase corpus's shipped extra text and growing the default
corpus from it (``core.library.corpus_extra``, ``core.library.corpus_growth``).

``corpus extra`` (the lab's step, run once per release) writes ``resources/corpus-extra`` from the
permissive sources that ship as text (arXiv abstracts, CC0; unarXive papers under CC BY 4.0 / CC0),
deduplicated against the shipped pack. ``corpus grow`` labels it with the model on the user's machine
and joins it with the shipped pack in the user data folder: what the app does in the background on
first use, here in the foreground with progress (Ctrl-C stops it; running it again resumes).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from app.commands._options import MAX_THREADS, as_text, bounded_int, bundle_path, path_arg, progress_line


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """The ``extra`` and ``grow`` subcommands of ``rhetorica corpus``."""
    extra = commands.add_parser(
        "extra", help="Write the phrase corpus's extra text (shipped unlabelled, labelled on first use).",
        description="Read the permissive sources that ship as text (default: arxiv, unarxive) from "
        "../shared/data, keep sentences of 5-80 words that the shipped pack does not hold (each wording "
        "once) and write them xz-compressed with their ids, titles and licences.")
    extra.add_argument("--out", type=path_arg, default=None,
                       help="folder (default: resources/corpus-extra, the one the app ships)")
    extra.add_argument("--source", action="append", default=None,
                       help="phrase source (repeatable; default: arxiv, unarxive)")
    extra.add_argument("--base", type=path_arg, default=None,
                       help="the labelled pack to deduplicate against (default: resources/corpus)")
    extra.add_argument("--max-papers", type=bounded_int(1, 100_000_000), default=None,
                       help="papers per source (for trials)")
    extra.add_argument("--quiet", action="store_true")
    extra.set_defaults(func=run_extra)
    grow = commands.add_parser(
        "grow", help="Grow the default phrase corpus now (what the app does in the background).",
        description="Label and embed the shipped extra text with the model and join it with the shipped "
        "pack into the phrase corpus of the user data folder. Resumable: parts already labelled are "
        "kept (Ctrl-C, then run it again). --status only says where it stands.")
    grow.add_argument("--status", action="store_true", help="print the state and exit (labels nothing)")
    grow.add_argument("--base", type=path_arg, default=None, help="shipped pack (default: resources/corpus)")
    grow.add_argument("--extra", type=path_arg, default=None,
                      help="extra text (default: resources/corpus-extra)")
    grow.add_argument("--model", type=as_text(bundle_path), default=None,
                      help="model bundle (default: the shipped one)")
    grow.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    grow.add_argument("--quiet", action="store_true")
    grow.set_defaults(func=run_grow)


def run_extra(args: argparse.Namespace) -> int:
    from itertools import islice

    from app.commands._options import check_input_folder, check_output_folder
    from core.jobs import JobContext
    from core.library.corpus_extra import write_extra
    from core.paths import resources_dir
    from models.datasets.phrase_sources import EXTRA_SOURCES, PhrasePaper, phrase_papers

    sources = args.source or list(EXTRA_SOURCES)
    out = args.out or resources_dir() / "corpus-extra"
    base = args.base or resources_dir() / "corpus"
    check_input_folder(base, "a phrase-corpus folder")
    check_output_folder(out, "--out")
    started = time.monotonic()

    def papers() -> Iterator[PhrasePaper]:
        for source in sources:
            yield from islice(phrase_papers(source), args.max_papers)

    manifest = write_extra(out, papers(), base=base, command=shlex.join(["rhetorica", *sys.argv[1:]]),
                           ctx=JobContext(progress_line(args.quiet)))
    size = (Path(out) / "papers.jsonl.xz").stat().st_size
    print(json.dumps({"folder": str(out), "papers": manifest["papers"], "sentences": manifest["sentences"],
                      "megabytes": round(size / 1e6, 2),
                      "minutes": round((time.monotonic() - started) / 60, 1), "sources": manifest["sources"]},
                     indent=2))
    return 0


def run_grow(args: argparse.Namespace) -> int:
    from core.jobs import JobContext
    from core.library.corpus_growth import GrowthPaths, grow_corpus, growth_status
    from core.library.pack import file_sha256

    paths = GrowthPaths.default(args.base, args.extra)
    status = growth_status(paths)
    if args.status:
        print(json.dumps(status.to_dict(), indent=2))
        return 0
    from models.encoder import load_model

    model = load_model(args.model, device="cpu", threads=args.threads)
    started = time.monotonic()
    result = grow_corpus(model, file_sha256(model.bundle_dir / "model.onnx"),
                         JobContext(progress_line(args.quiet)), paths,
                         command=shlex.join(["rhetorica", *sys.argv[1:]]))
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    print(json.dumps({"folder": str(result.folder), "state_before": status.state,
                      "sentences": result.manifest.get("sentences"), "papers": result.manifest.get("papers"),
                      "parts_labelled": result.shards_labelled, "parts_reused": result.shards_reused,
                      "sentences_labelled": result.sentences_labelled,
                      "minutes": round((time.monotonic() - started) / 60, 1),
                      "sources": result.manifest.get("sources", {}), "notes": result.notes}, indent=2))
    return 0
