"""Two more figure–mention sources for the caption–text scorer (issue 25), beside ``figure_pairs``'s five.

- ``unarxive``: ``unarxive_sample/papers.jsonl.gz`` (46 arXiv papers, math/physics/astro/q-fin/eess/cs).
  unarXive resolves no figure reference in running text ("Fig. REF shows ..."); what it keeps is a
  ``{{figure:<id>}}`` marker where each figure float sits in the LaTeX source, and authors place a float
  right after the paragraph that first cites it. So a paragraph that cites a figure ("Fig. REF") is
  paired with the figures whose markers sit in it, or, when it holds none, in the next paragraph if
  that one cites nothing itself. These labels are a heuristic (a paragraph may cite an earlier figure
  too): training pairs, never an evaluation.
- ``pdfs2``: the 52 papers of ``../pdfs2`` parsed by Rhetorica (:func:`core.pdf.parse_pdf`), their own
  "Figure N" mentions (``figure_pairs.paper_from_pdf``). Only mentions and captions are read, never
  the graphical-abstract labels of ``gold_data/graphical-abstract``.

Both split by paper like the others (a stable hash of ``source:paper_id``, :func:`figure_pairs.paper_split`),
so the papers ``rhetorica eval figures`` scores never train. References are masked and caption labels
stripped as everywhere else.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from core.text.sentences import split_sentence_texts
from models.datasets.figure_pairs import (
    SOURCES,
    FigurePaper,
    FigureRecord,
    MentionRecord,
    SkipHook,
    _merge_mentions,
    _skip,
    clean_caption,
    default_root,
    mask_figure_refs,
    paper_from_pdf,
    read_figure_papers,
)

EXTRA_SOURCES = ("unarxive", "pdfs2")
ALL_SOURCES = (*SOURCES, *EXTRA_SOURCES)
UNARXIVE_FILE = Path("unarxive_sample") / "papers.jsonl.gz"

_MARKER = re.compile(r"\{\{(?P<kind>figure|table):(?P<id>[^}]+)\}\}")
_OTHER_MARKER = re.compile(r"\{\{(?:formula|cite|[a-z]+):[^}]*\}\}")
# "Fig. REF", "Figures REF and REF", "Table REF (c)": unarXive's unresolved references
_REF = re.compile(
    r"\b(?P<label>Figures?|Figs?\.?|Tables?|Tabs?\.)\s*REF(?:\s*\(\w{1,3}\))?"
    r"(?P<more>(?:\s*(?:,\s*and|,|and|[-–—&]|to)\s*REF(?:\s*\(\w{1,3}\))?)*)",
    re.IGNORECASE,
)
_NO_CAPTION = "NO_CAPTION"
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)$")


def _cited_kinds(text: str) -> set[str]:
    return {"table" if m.group("label").lower().startswith("tab") else "figure" for m in _REF.finditer(text)}


def mask_unarxive(text: str) -> str:
    """A unarXive paragraph as the other sources give it: "Fig. REF" -> "the figure", markers dropped."""

    def replace(match: re.Match[str]) -> str:
        kind = "table" if match.group("label").lower().startswith("tab") else "figure"
        plural = match.group("label").rstrip(".").lower().endswith("s") or bool(match.group("more"))
        article = "The" if _SENTENCE_START.search(text[: match.start()]) else "the"
        return f"{article} {kind}" + ("s" if plural else "")

    text = " ".join(text.split())
    text = _REF.sub(replace, text)
    text = _OTHER_MARKER.sub(" ", _MARKER.sub(" ", text))
    text = re.sub(r"\b(?:Figs?\.|Figures?)\s+(?=[.,;:)])", "the figure ", text)  # "of Fig. ." left over
    text = re.sub(r"\s*\bREF\b", "", text)  # "Eqn. REF", "Sec. REF": unresolved, nothing to keep
    text = re.sub(r"\s+(?=[.,;:)])", "", " ".join(text.split()))
    return mask_figure_refs(text)  # a few printed "Fig. 3" too


def parse_unarxive(row: dict[str, Any]) -> FigurePaper:
    """One unarXive paper (a ``papers.jsonl.gz`` row); figures numbered by where their floats sit."""
    entries = row.get("ref_entries") or {}
    body = [str(p.get("text") or "") for p in row.get("body_text") or []]
    records: dict[str, FigureRecord] = {}
    counts = {"figure": 0, "table": 0}
    for text in body:
        for match in _MARKER.finditer(text):
            key, kind = match.group("id"), match.group("kind")
            entry = entries.get(key) or {}
            caption = str(entry.get("caption") or "")
            if key in records or not caption.strip() or caption.strip() == _NO_CAPTION:
                continue
            counts[kind] += 1
            number = str(counts[kind])
            cleaned = clean_caption(mask_unarxive(caption))
            if cleaned:
                prefix = "tab" if kind == "table" else "fig"
                records[key] = FigureRecord(prefix + number, kind, number, cleaned)
    mentions: list[MentionRecord] = []
    for i, text in enumerate(body):
        cited = _cited_kinds(text)
        if not cited:
            continue
        placed = [m for m in _MARKER.finditer(text) if m.group("id") in records]
        if not placed and i + 1 < len(body) and not _cited_kinds(body[i + 1]):
            placed = [m for m in _MARKER.finditer(body[i + 1]) if m.group("id") in records]
        ids = tuple(dict.fromkeys(records[m.group("id")].figure_id for m in placed
                                  if m.group("kind") in cited))
        paragraph = mask_unarxive(text)
        if not ids or not paragraph:
            continue
        sentences = tuple(mask_unarxive(s) for s in split_sentence_texts(" ".join(text.split()))
                          if _REF.search(s))
        mentions.append(MentionRecord(ids, paragraph, sentences or (paragraph,)))
    metadata = row.get("metadata") or {}
    abstract = row.get("abstract") or {}
    abstract_text = str(abstract.get("text") if isinstance(abstract, dict) else abstract or "")
    title = " ".join(str(metadata.get("title") or "").split())
    return FigurePaper("unarxive", str(row.get("paper_id") or ""), title, mask_unarxive(abstract_text),
                       tuple(records.values()), _merge_mentions(mentions))


def _read_unarxive(root: Path, on_skip: SkipHook | None, limit: int | None) -> Iterator[FigurePaper]:
    path = root / UNARXIVE_FILE
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as error:
        _skip(on_skip, "unarxive", path.name, str(error))
        return
    count = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip() or (limit is not None and count >= limit):
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("a line is not a JSON object")
            paper = parse_unarxive(row)
        except (ValueError, TypeError, AttributeError) as error:
            _skip(on_skip, "unarxive", f"{path.name}:{number}", str(error))
            continue
        count += 1
        yield paper


def _read_pdfs2(root: Path, exclude_pdfs: Collection[str], on_skip: SkipHook | None,
                limit: int | None) -> Iterator[FigurePaper]:
    from core.pdf import parse_pdf

    excluded = {Path(name).name for name in exclude_pdfs}
    count = 0
    for path in sorted((root.parent / "pdfs2").glob("*.pdf")):
        if path.name in excluded or (limit is not None and count >= limit):
            continue
        try:
            paper = paper_from_pdf(parse_pdf(path), path.stem)
        except Exception as error:  # a damaged PDF must not stop the build
            _skip(on_skip, "pdfs2", path.name, f"{type(error).__name__}: {error}")
            continue
        count += 1
        yield dataclasses.replace(paper, source="pdfs2")


def pdfs2_fields(root: Path | None = None) -> dict[str, str]:
    """pdfs2 paper id (file stem) -> short field name (biomedical, CS, physical, social), from its
    manifest (empty when it cannot be read)."""
    import csv

    from models.datasets.figure_gold import FIELD_NAMES

    root = Path(root) if root is not None else default_root()
    path = root.parent / "pdfs2" / "manifest.csv"
    try:
        rows = list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))
    except (OSError, UnicodeDecodeError, csv.Error):
        return {}
    return {Path(str(r["file"])).stem: FIELD_NAMES.get(str(r.get("field") or ""), str(r.get("field") or ""))
            for r in rows if r.get("file")}


def read_source_papers(source: str, *, root: Path | None = None, exclude_pdfs: Collection[str] = (),
                       on_skip: SkipHook | None = None, limit: int | None = None) -> Iterator[FigurePaper]:
    """The papers of any source of :data:`ALL_SOURCES` (the five of ``figure_pairs`` are read there);
    arguments as :func:`figure_pairs.read_figure_papers`."""
    if source in SOURCES:
        yield from read_figure_papers(source, root=root, exclude_pdfs=exclude_pdfs, on_skip=on_skip,
                                      limit=limit)
        return
    if source not in EXTRA_SOURCES:
        raise ValueError(f"unknown figure-pair source {source!r} (one of {', '.join(ALL_SOURCES)})")
    root = Path(root) if root is not None else default_root()
    if source == "unarxive":
        yield from _read_unarxive(root, on_skip, limit)
    else:
        yield from _read_pdfs2(root, exclude_pdfs, on_skip, limit)
