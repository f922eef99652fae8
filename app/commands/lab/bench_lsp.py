"""``rhetorica bench lsp``: how fast the language server answers a one-sentence edit.

A real server (``rhetorica lsp`` in a child process, stdio, the shipped or ``--model`` bundle) is
driven by a real client (pygls): it opens a draft (``--input FILE``, a .tex/.md/.txt draft; default:
the bundled sample paper's sections and sentences written as a LaTeX draft, paragraphs of four
sentences), then makes ``--edits`` one-word edits, each in another sentence spread over the draft,
one at a time as incremental ``didChange`` notifications. A sentence's latency is the time from
sending the change to receiving the ``publishDiagnostics`` of that version (the labels, the
section checklist and, with ``--labels both``, one hint per sentence): p50 / p95 / max, against
the 150 ms target. Also: the server's start (process to initialised), the first labelling of the
whole draft, hovers (with suggestions; the first one opens the suggestion sources), and the same
edits through :class:`app.lsp.engine.DraftEngine` in this process (reading, labelling, paragraphs
through the model; wall time and CPU time of all threads, which a loaded machine does not inflate),
so the protocol's share shows. The machine's load average, and the server's CPU seconds against
its wall seconds (well below 1: it waited for the CPU), are reported with it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from app.commands._options import (
    MAX_THREADS,
    as_text,
    bounded_int,
    bundle_path,
    input_file,
    output_file,
    plain_help,
    write_output,
)

TARGET_P95_MS = 150.0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lsp", help="Language server: latency of a one-sentence edit (p50/p95), start, hover.",
        description=plain_help(__doc__))
    parser.add_argument("--input", type=input_file, default=None, metavar="DRAFT",
                        help="a .tex, .md or .txt draft (default: the sample paper as LaTeX)")
    parser.add_argument("--edits", type=bounded_int(2, 100_000), default=60)
    parser.add_argument("--hovers", type=bounded_int(0, 10_000), default=10)
    parser.add_argument("--labels", choices=("inlay", "diagnostics", "both"), default="both",
                        help="the server's label mode (default both: every sentence's hint is published)")
    parser.add_argument("--sources", choices=("all", "corpus", "library", "none"), default="corpus",
                        help="suggestion sources for the hovers (default: the phrase corpus)")
    parser.add_argument("--model", type=as_text(bundle_path), default=None,
                        help="model bundle (default: the shipped one)")
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    parser.add_argument("--seed", type=bounded_int(0, 2**31), default=0)
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT")
    parser.set_defaults(func=run)


# -- the draft -----------------------------------------------------------------------------------
def sample_draft() -> tuple[str, str]:
    """The bundled sample paper as a LaTeX draft: its sections as ``\\section``s, its sentences in
    paragraphs of four (text escaped for LaTeX)."""
    from core.paths import sample_paper_path
    from core.pdf import parse_pdf

    paper = parse_pdf(sample_paper_path())
    lines = ["\\documentclass{article}", "\\begin{document}", ""]
    for section in paper.sections:
        body = paper.sentences[section.first_sentence:section.first_sentence + section.sentence_count]
        if not body:
            continue
        lines += [f"\\section{{{_latex_escape(section.heading or section.kind.value)}}}", ""]
        for start in range(0, len(body), 4):
            lines += [" ".join(_latex_escape(s.text) for s in body[start:start + 4]), ""]
    lines.append("\\end{document}")
    return "\n".join(lines) + "\n", "tex"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in " ".join(text.split()))


def _draft(args: argparse.Namespace) -> tuple[str, str]:
    if args.input is None:
        return sample_draft()
    from app.lsp.drafts import format_of
    from core.errors import RhetoricaError
    from core.fileio import read_text_input

    fmt = format_of(str(args.input))
    if fmt is None:
        raise RhetoricaError(f"{args.input}: not a draft (use a .tex, .md or .txt file)")
    return read_text_input(args.input, "a draft"), fmt


def edit_plan(text: str, fmt: str, count: int, seed: int) -> list[tuple[int, int, str]]:
    """``count`` one-word edits (start, end, new word), each in another sentence, spread over the
    draft, made one after another: each keeps its word's length (so offsets stay valid) and changes
    one letter of it, so every edit changes the text."""
    import random
    import re

    from app.lsp.drafts import read_document
    from core.errors import RhetoricaError

    document = read_document(text, fmt)
    rng = random.Random(seed)
    candidates = []
    for sentence in document.sentences:
        words = [(sentence.start + m.start(), sentence.start + m.end())
                 for m in re.finditer(r"(?<![\\A-Za-z])[a-z]{5,}\b", text[sentence.start:sentence.end])]
        if words:
            candidates.append(words)
    if not candidates:
        raise RhetoricaError("the draft has no sentence with a word to edit")
    plan = []
    current = text
    for n in range(count):
        words = candidates[(n * len(candidates)) // count if count <= len(candidates)
                           else rng.randrange(len(candidates))]
        start, end = rng.choice(words)
        word = list(current[start:end])
        middle = len(word) // 2
        word[middle] = chr((ord(word[middle]) - ord("a") + 1) % 26 + ord("a"))  # another letter
        new = "".join(word)
        plan.append((start, end, new))
        current = current[:start] + new + current[end:]
    return plan


def _percentiles(values: list[float]) -> dict[str, float]:
    import numpy as np

    if not values:
        return {}
    return {"p50": round(float(np.percentile(values, 50)), 1),
            "p95": round(float(np.percentile(values, 95)), 1), "max": round(max(values), 1), "n": len(values)}


# -- the protocol run ----------------------------------------------------------------------------
async def _protocol(args: argparse.Namespace, text: str, fmt: str, plan: list[tuple[int, int, str]],
                    log: Path) -> dict[str, Any]:
    import sys

    from lsprotocol import types

    from app.lsp.client import start_client
    from app.lsp.positions import PositionMap

    command = [sys.executable, "-m", "app", "lsp", "--threads", str(args.threads), "--labels", args.labels,
               "--sources", args.sources, "--log", str(log)]
    if args.model is not None:
        command += ["--model", str(args.model)]
    started = time.perf_counter()
    client = await start_client(command)
    initialised = time.perf_counter()
    uri = Path(f"bench-draft.{fmt}").absolute().as_uri()
    language = {"tex": "latex", "md": "markdown", "txt": "plaintext"}[fmt]
    client.open(uri, text, language, version=1)
    opened = await client.diagnostics_for(uri, 1)
    first_labels = time.perf_counter()
    positions = PositionMap(text)
    latencies = []
    for version, (start, end, word) in enumerate(plan, 2):
        tick = time.perf_counter()
        client.replace(uri, version, positions.position(start), positions.position(end), word)
        await client.diagnostics_for(uri, version)
        latencies.append((time.perf_counter() - tick) * 1000)
        text = text[:start] + word + text[end:]  # same length: the positions stay valid
    hovers = []
    for n in range(args.hovers):
        start, end, _ = plan[(n * len(plan)) // max(1, args.hovers)]
        line, character = positions.position(start)
        tick = time.perf_counter()
        hover = await client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), types.Position(line, character)))
        found = hover is not None and "Suggestions" in str(getattr(hover.contents, "value", ""))
        hovers.append(((time.perf_counter() - tick) * 1000, found))
    await client.stop_server()
    server_ms, spliced = _server_log(log, len(plan) + 1)
    return {
        "server_edit_ms": _percentiles(server_ms),  # the server's own labelling time per edit (its log)
        "server_edits_spliced": spliced,
        "seconds_to_initialised": round(initialised - started, 3),
        "seconds_first_labels": round(first_labels - initialised, 3),
        "diagnostics_published": len(opened.diagnostics),
        "edit_latency_ms": _percentiles(latencies),
        "first_hover_ms": round(hovers[0][0], 1) if hovers else None,
        "hover_latency_ms": _percentiles([ms for ms, _ in hovers[1:]]),
        "hovers_with_suggestions": sum(found for _, found in hovers),
        "server_messages": client.messages,
    }


def _server_log(log: Path, last_version: int) -> tuple[list[float], int]:
    """The server's time per labelled edit (versions 2 to ``last_version``, "in all … ms" in its log)
    and how many of them were spliced."""
    import re

    times, spliced = [], 0
    line = re.compile(r" v(\d+) \((spliced|whole)\): .* in all ([\d.]+) ms")
    for found in line.finditer(log.read_text(encoding="utf-8", errors="replace")):
        if 2 <= int(found.group(1)) <= last_version:
            times.append(float(found.group(3)))
            spliced += found.group(2) == "spliced"
    return times, spliced


def _in_process(args: argparse.Namespace, text: str, fmt: str,
                plan: list[tuple[int, int, str]]) -> dict[str, Any]:
    from app.lsp.drafts import read_document
    from app.lsp.engine import DraftEngine
    from models.encoder import load_model

    engine = DraftEngine(load_model(args.model, device="cpu", threads=args.threads))
    first = engine.label(text, fmt)
    if first.error:
        from core.errors import RhetoricaError

        raise RhetoricaError(f"the draft cannot be read: {first.error}")
    assert first.run is not None and first.document is not None
    totals, cpu, reading, whole, relabelled, spliced = [], [], [], [], [], 0
    previous = first
    for start, end, word in plan:
        text = text[:start] + word + text[end:]
        tick, cpu_tick = time.perf_counter(), time.process_time()
        labelled = engine.label(text, fmt, previous=previous)
        totals.append((time.perf_counter() - tick) * 1000)
        cpu.append((time.process_time() - cpu_tick) * 1000)  # all threads (onnxruntime's too)
        reading.append(labelled.read_seconds * 1000)
        tick = time.perf_counter()
        read_document(text, fmt)
        whole.append((time.perf_counter() - tick) * 1000)
        assert labelled.run is not None
        relabelled.append(labelled.run.relabelled)
        spliced += labelled.spliced
        previous = labelled
    return {
        "sentences": len(first.document.sentences), "paragraphs": first.run.paragraphs,
        "headings": len(first.document.headings), "reader": first.document.reader,
        "first_label_seconds": round(first.run.seconds, 3),
        "edit_ms": _percentiles(totals), "edit_cpu_ms": _percentiles(cpu), "read_ms": _percentiles(reading),
        "edits_spliced": spliced, "whole_read_ms": _percentiles(whole),
        "paragraphs_through_model_per_edit": {"mean": round(sum(relabelled) / len(relabelled), 2),
                                              "max": max(relabelled)},
    }


def run(args: argparse.Namespace) -> int:
    import asyncio
    import os
    import tempfile

    try:
        import pygls  # noqa: F401
    except ImportError:
        from core.errors import RhetoricaError

        raise RhetoricaError("the language server needs pygls: pip install 'rhetorica[lsp]'") from None
    text, fmt = _draft(args)
    plan = edit_plan(text, fmt, args.edits, args.seed)
    load_before = os.getloadavg()
    engine = _in_process(args, text, fmt, plan)
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:
        protocol = asyncio.run(_protocol(args, text, fmt, plan, Path(work) / "server.log"))
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    # The server's CPU seconds over the wall seconds of its run: well below 1 while it waited for
    # the CPU (a loaded machine), not only for the client.
    protocol["server_cpu_seconds"] = round(cpu, 2)
    protocol["server_wall_seconds"] = round(wall, 2)
    p95 = protocol["edit_latency_ms"].get("p95", float("inf"))
    report: dict[str, Any] = {
        "draft": str(args.input) if args.input else "sample paper as LaTeX (rhetorica bench lsp)",
        "format": fmt, "characters": len(text), **{k: engine.pop(k) for k in ("sentences", "paragraphs",
                                                                                "headings", "reader")},
        "threads": args.threads, "labels": args.labels, "edits": len(plan),
        "protocol": protocol, "in_process": engine,
        "target_p95_ms": TARGET_P95_MS, "target_met": p95 < TARGET_P95_MS,
        "load_average": {"before": [round(x, 2) for x in load_before],
                         "after": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()},
        "command": "rhetorica bench lsp " + " ".join(
            f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()
            if k not in ("func", "command", "bench_command", "json") and v is not None),
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    if args.json is not None:
        write_output(args.json, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return 0
