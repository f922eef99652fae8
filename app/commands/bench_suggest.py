"""``rhetorica bench suggest``: how soon suggestions are usable on a fresh start, and how fast they come.

Measured in one fresh process, as the app meets them: loading the model bundle, opening the phrase
corpus (and the library when given), then the first query (cold), then ``--queries`` more one at a
time (p50 / p95 / max), each a full :func:`core.suggest.suggest` call (query labelling and
embedding, search, filters, MMR, templates). Queries are the sentences of the bundled sample paper
(or ``--input FILE``, one per line), never the corpus's own sentences.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "suggest", help="Phrasing suggestions: time to first suggestion on a fresh start, latency per query.",
        description=__doc__)
    parser.add_argument("--corpus", type=Path, default=None, help="phrase corpus (default: the shipped one)")
    parser.add_argument("--library", type=Path, default=None, help="also search this library folder")
    parser.add_argument("--input", type=Path, default=None, help="query sentences, one per line")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--model", default=None, help="model bundle (default: the shipped one)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None, metavar="OUT")
    parser.set_defaults(func=run)


def _queries(args: argparse.Namespace) -> list[str]:
    if args.input is not None:
        lines = [line.strip() for line in args.input.read_text(encoding="utf-8").splitlines()]
        return [line for line in lines if line][: args.queries]
    from core.paths import sample_paper_path
    from core.pdf import parse_pdf

    paper = parse_pdf(sample_paper_path())
    body = [s.text for s in paper.sentences if 6 <= len(s.text.split()) <= 60]
    step = max(1, len(body) // max(1, args.queries))
    return body[::step][: args.queries]


def run(args: argparse.Namespace) -> int:
    import numpy as np

    queries = _queries(args)  # parsed before the clock starts: the app has the paper open already
    started = time.perf_counter()
    from core.paths import corpus_dir
    from core.suggest import open_source, suggest
    from models.encoder import load_model

    model = load_model(args.model, device="cpu", threads=args.threads)
    loaded_model = time.perf_counter()
    sources = [open_source("corpus", args.corpus or corpus_dir(), model)]
    if args.library is not None:
        sources.append(open_source("library", args.library, model))
    opened = time.perf_counter()
    templater = _templater()
    first = suggest(queries[0], model, sources, args.k, templater=templater)
    first_done = time.perf_counter()
    latencies = []
    counts = [len(first.suggestions)]
    for query in queries[1:]:
        tick = time.perf_counter()
        result = suggest(query, model, sources, args.k, templater=templater)
        latencies.append(time.perf_counter() - tick)
        counts.append(len(result.suggestions))
    sizes = {s.kind: _sentence_count(s.library) for s in sources}
    report: dict[str, Any] = {
        "corpus": str(args.corpus or corpus_dir()),
        "sources": sizes,
        "model_id": model.model_id,
        "threads": args.threads,
        "seconds_to_model": round(loaded_model - started, 3),
        "seconds_to_open_sources": round(opened - loaded_model, 3),
        "seconds_first_query": round(first_done - opened, 3),
        "seconds_to_first_suggestions": round(first_done - started, 3),
        "queries": len(queries),
        "latency_ms": ({"p50": round(float(np.percentile(latencies, 50)) * 1000, 1),
                        "p95": round(float(np.percentile(latencies, 95)) * 1000, 1),
                        "max": round(max(latencies) * 1000, 1)} if latencies else {}),
        "mean_suggestions": round(float(np.mean(counts)), 2),
        "command": "rhetorica bench suggest " + " ".join(
            f"{'-k' if k == 'k' else '--' + k.replace('_', '-')} {v}" for k, v in vars(args).items()
            if k not in ("func", "command", "bench_command", "json") and v is not None),
    }
    for source in sources:
        source.library.close()
    print(json.dumps(report, indent=2))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


def _sentence_count(source: Any) -> int:
    store = getattr(source, "store", None)  # a library; a pack knows its length
    return int(store.sentence_count()) if store is not None else len(source)


def _templater() -> Any:
    from core.templates import template_of

    return template_of
