"""``rhetorica bench draft``: what a resting cursor costs in a long draft (the draft pane's UI thread).

600 ms after the cursor stops, the draft pane publishes the sentence at the cursor with its heading and
neighbours (``core.drafts.context_in_draft``) for the Suggestions panel. This command builds a plain-text
draft of ``--sentences`` sentences (the bundled sample paper's sections and sentences, repeated, in
paragraphs of four under their headings), then times that lookup at ``--positions`` cursor positions
spread over the draft (p50 / max, against the GUI's 100 ms goal for a UI-thread pause), beside splitting
the whole draft once (``core.drafts.draft_sections``: what each lookup cost before it read only a stretch
around the cursor).
With ``--word-paragraphs N`` it also writes the same sentences as a Word draft of N paragraphs (headings in
Word's heading styles, in a temporary folder) and times reading it (``core.draft_formats.read_draft``), as
the draft pane's background read does.
"""

from __future__ import annotations

import argparse
import json
import time

from app.commands._options import as_text, bounded_int, output_file, plain_help, write_output

TARGET_MS = 100.0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "draft", help="Draft pane: the cost of finding the sentence at a resting cursor in a long draft.",
        description=plain_help(__doc__))
    parser.add_argument("--sentences", type=bounded_int(10, 200_000), default=5000,
                        help="sentences in the draft (default 5000)")
    parser.add_argument("--positions", type=bounded_int(1, 10_000), default=40,
                        help="cursor positions timed (default 40)")
    parser.add_argument("--word-paragraphs", type=bounded_int(0, 100_000), default=0, metavar="N",
                        help="also time reading a Word draft of N paragraphs (default 0: not)")
    parser.add_argument("--json", type=as_text(output_file), default=None, metavar="OUT")
    parser.set_defaults(func=run)


def long_draft(sentences: int) -> str:
    """A plain-text draft of ``sentences`` sentences: the sample paper's sections as heading lines and
    their sentences in paragraphs of four, repeated until there are enough."""
    from core.paths import sample_paper_path
    from core.pdf import parse_pdf

    paper = parse_pdf(sample_paper_path())
    blocks: list[str] = []
    count = 0
    while count < sentences:
        for section in paper.sections:
            body = [s.text for s in paper.sentences[section.first_sentence:
                                                    section.first_sentence + section.sentence_count]]
            body = body[:sentences - count]
            if not body:
                continue
            blocks.append(f"# {' '.join((section.heading or section.kind.value).split())}")
            blocks += [" ".join(" ".join(s.split()) for s in body[k:k + 4]) for k in range(0, len(body), 4)]
            count += len(body)
    return "\n\n".join(blocks) + "\n"


def word_reading_seconds(text: str, paragraphs: int) -> tuple[int, float]:
    """(paragraphs written, seconds to read them back) for a Word draft of the first ``paragraphs``
    blocks of ``text`` ("# " lines as Heading 1), written in a temporary folder."""
    import tempfile
    from pathlib import Path

    import docx

    from core.draft_formats import read_draft

    blocks = [block for block in text.split("\n\n") if block.strip()][:paragraphs]
    document = docx.Document()
    for block in blocks:
        if block.startswith("# "):
            document.add_heading(block[2:], level=1)
        else:
            document.add_paragraph(block)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "draft.docx"
        document.save(str(path))
        started = time.perf_counter()
        read_draft(path)
        return len(blocks), time.perf_counter() - started


def run(args: argparse.Namespace) -> int:
    import statistics

    from core.drafts import context_in_draft, draft_sections

    text = long_draft(args.sentences)
    started = time.perf_counter()
    found = len(draft_sections(text))
    whole_ms = (time.perf_counter() - started) * 1000
    times: list[float] = []
    for k in range(args.positions):
        position = (k * 7919 + len(text) // 3) % (len(text) + 1)
        started = time.perf_counter()
        context_in_draft(text, position)
        times.append((time.perf_counter() - started) * 1000)
    result = {"sentences": found, "characters": len(text), "positions": args.positions,
              "cursor_context_ms": {"p50": round(statistics.median(times), 2), "max": round(max(times), 2)},
              "whole_draft_split_ms": round(whole_ms, 2), "target_ms": TARGET_MS,
              "meets_target": max(times) < TARGET_MS}
    print(f"draft of {found} sentences ({len(text):,} characters)")
    print(f"sentence at a resting cursor, with context: p50 {result['cursor_context_ms']['p50']} ms, "
          f"max {result['cursor_context_ms']['max']} ms (target < {TARGET_MS:.0f} ms)")
    print(f"splitting the whole draft once: {whole_ms:.0f} ms")
    if args.word_paragraphs:
        written, seconds = word_reading_seconds(text, args.word_paragraphs)
        result["word_draft"] = {"paragraphs": written, "read_s": round(seconds, 3)}
        print(f"reading it as a Word draft of {written} paragraphs: {seconds:.2f} s")
    if args.json:
        write_output(args.json, json.dumps(result, indent=2) + "\n")
    return 0
