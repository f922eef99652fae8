"""(Mention paragraph, figure caption) pairs for the graphical-abstract caption-text scorer.

A paragraph that says "Figure N" is a free training pair for Figure N's caption; at test time the
paper's abstract plays the paragraph's role. Five sources, each read into :class:`FigurePaper`:

- ``oa-stm``: Elsevier source XML in ``oa_stm_coresc/SourceXML.tar.gz`` (``ce:figure``/``ce:table``
  with ``ce:label``/``ce:caption``; ``ce:cross-ref(s) refid=`` in ``ce:para``), read from the tarball;
- ``pmc-jats``: ``pmc_jats_fulltext/*.nxml`` (``<fig>``/``<table-wrap>``, ``<xref ref-type="fig">``);
- ``s2orc``: ``s2orc_doc2json_samples`` (``ref_entries`` captions, ``body_text[].ref_spans``);
- ``medicat``: ``medicat_sample/sample.jsonl`` (one figure a line, ``s2orc_references`` passages);
- ``pdfs``: ``../pdfs/*.pdf`` through :func:`core.pdf.parse_pdf` (figures and their mentions).

Figure/table references are masked in every paragraph and sentence (:func:`mask_figure_refs`) and
caption labels are stripped (:func:`strip_caption_label`), so no model can match by number. The
split is by paper: a stable hash of ``source:paper_id`` (80/10/10). Standard library only.
"""

from __future__ import annotations

import hashlib
import html.entities
import json
import re
import tarfile
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.pdf.mentions import mentioned_ids

SOURCES = ("oa-stm", "pmc-jats", "s2orc", "medicat", "pdfs")

COUNT_KEYS = ("papers", "figures", "tables", "mentions", "pairs", "papers_with_2plus_figures")
SkipHook = Callable[[str, str, str], None]  # (source, file, reason)


@dataclass(frozen=True)
class FigureRecord:
    figure_id: str  # "fig3" / "tab2" (prefix + printed number; "figS1" for supplementary)
    kind: str  # "figure" | "table"
    number: str  # as printed: "3", "S1"
    caption: str  # caption text without its leading label


@dataclass(frozen=True)
class MentionRecord:
    figure_ids: tuple[str, ...]  # every figure/table id the paragraph mentions, in order
    paragraph: str  # the whole paragraph, figure references masked
    sentences: tuple[str, ...]  # the paragraph's sentences that mention a figure, masked


@dataclass(frozen=True)
class FigurePaper:
    source: str
    paper_id: str
    title: str
    abstract: str
    figures: tuple[FigureRecord, ...]
    mentions: tuple[MentionRecord, ...]

    def figure(self, figure_id: str) -> FigureRecord | None:
        return next((f for f in self.figures if f.figure_id == figure_id), None)

    @property
    def split(self) -> str:
        return paper_split(self.source, self.paper_id)


def paper_split(source: str, paper_id: str) -> str:
    """"train" / "dev" / "test" (80/10/10) from a stable hash of ``source:paper_id``."""
    bucket = int(hashlib.sha1(f"{source}:{paper_id}".encode()).hexdigest()[:8], 16) % 10
    return "test" if bucket == 0 else "dev" if bucket == 1 else "train"


# ---------------------------------------------------------------------------------------------
# Masking and labels

_LABEL = r"(?P<label>Figures?|Figs?\.?|Tables?|Tabs?\.)"
_PREFIX = r"(?:(?P<prefix>Supplementary|Supplemental|Suppl\.|Extended\s+Data|Online)\s+)?"
_PANEL = r"(?:\s*\(\s*[A-Za-z0-9]{1,4}(?:\s*(?:[-–—,]|and)\s*[A-Za-z0-9]{1,4})*\s*\))"
_ARABIC = (r"S?\d{1,3}(?:\.\d{1,2}(?!\d))?(?:[A-Za-z](?![A-Za-z])(?:\s*[-–—/,]\s*[A-Za-z](?![A-Za-z\d]))*)?"
           + _PANEL + r"?")
_ROMAN = r"[IVX]{1,5}(?![A-Za-z\d])"
_SEP = r"\s*(?:,\s*and|,\s*or|[-–—,&]|to|and|or)\s*"
_REF = re.compile(
    r"\b" + _PREFIX + _LABEL + r"\s*(?P<list>" + _ARABIC + r"(?:" + _SEP + _ARABIC + r")*"
    + r"|" + _ROMAN + r"(?:" + _SEP + _ROMAN + r")*)",
    re.IGNORECASE,
)
_CAPTION_LABEL = re.compile(
    r"^\s*(?:(?:Supplementary|Supplemental|Extended\s+Data)\s+)?"
    r"(?:Figures?|Figs?\.?|Tables?|Tabs?\.|Schemes?|Charts?|Plates?)\s*"
    r"(?:S?\d{1,3}(?:\.\d{1,2})?[A-Za-z]?|[IVX]{1,5})(?![A-Za-z])\s*[.:|\-–—)]*\s*",
    re.IGNORECASE,
)
_LABEL_NUMBER = re.compile(
    r"^\s*(?:(?:Supplementary|Supplemental|Extended\s+Data)\s+)?(?P<label>Figures?|Figs?\.?|Tables?|Tabs?\.)"
    r"\s*(?P<num>S?\d{1,3}|[IVX]{1,5})(?![\dA-Za-z])?",
    re.IGNORECASE,
)
_MASK_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)$")


def mask_figure_refs(text: str) -> str:
    """'as shown in Fig. 3b and Table 2' -> 'as shown in the figure and the table': numbers never leak."""

    def replace(match: re.Match[str]) -> str:
        label = match.group("label").lower()
        kind = "table" if label.startswith("tab") else "figure"
        items = set(re.findall(r"S?\d{1,3}(?:\.\d+)?|\b[IVX]{1,5}\b", match.group("list"), re.IGNORECASE))
        plural = label.rstrip(".").endswith("s") or len(items) > 1
        words = ("supplementary " if match.group("prefix") else "") + kind + ("s" if plural else "")
        article = "The" if _MASK_SENTENCE_START.search(text[: match.start()]) else "the"
        return f"{article} {words}"

    return _REF.sub(replace, text)


def strip_caption_label(caption: str) -> str:
    """'Figure 3: Overview of ...' / 'Fig. 3. ...' / 'Table 2 | ...' -> 'Overview of ...'."""
    caption = " ".join(caption.split())
    stripped = _CAPTION_LABEL.sub("", caption, count=1)
    return stripped.strip()


def label_number(label: str) -> tuple[str, str] | None:
    """('figure' | 'table', printed number) of a label like "Fig. 3", "Table S2", "TABLE IV"."""
    match = _LABEL_NUMBER.match(label)
    if match is None:
        return None
    kind = "table" if match.group("label").lower().startswith("tab") else "figure"
    number = match.group("num")
    number = number.upper() if number[0] in "sS" or not number[0].isdigit() else number
    return kind, number


def clean_caption(caption: str) -> str:
    """The caption as stored: leading label stripped, and any figure reference left inside it masked
    (grobid captions like "Fig. 6(a) illustrates ..." would otherwise leak the number)."""
    return mask_figure_refs(strip_caption_label(caption))


def figure_id(kind: str, number: str) -> str:
    return ("tab" if kind == "table" else "fig") + number


def _norm(text: str) -> str:
    return " ".join(text.split())


def _dedup(ids: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for fid in ids:
        if fid and fid not in out:
            out.append(fid)
    return tuple(out)


def _split_sentences(text: str) -> list[str]:
    try:
        from core.text.sentences import split_sentence_texts
    except ImportError:  # pragma: no cover - the project's splitter is always there
        return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", text) if s]
    return split_sentence_texts(text)


def make_mention(paragraph: str, extra_ids: Iterable[str] = ()) -> MentionRecord | None:
    """A mention from a raw (unmasked) paragraph; ``extra_ids``: ids known from markup."""
    paragraph = _norm(paragraph)
    ids = _dedup([*mentioned_ids(paragraph), *extra_ids])
    if not ids or not paragraph:
        return None
    sentences = _split_sentences(paragraph)
    chosen = [s for s in sentences if mentioned_ids(s)]
    if not chosen:
        chosen = [s for s in sentences if re.search(r"\b(?:fig|table)", s, re.IGNORECASE)] or [paragraph]
    return MentionRecord(ids, mask_figure_refs(paragraph), tuple(mask_figure_refs(s) for s in chosen))


def _merge_mentions(mentions: Iterable[MentionRecord]) -> tuple[MentionRecord, ...]:
    by_text: dict[str, MentionRecord] = {}
    for m in mentions:
        old = by_text.get(m.paragraph)
        by_text[m.paragraph] = m if old is None else MentionRecord(
            _dedup([*old.figure_ids, *m.figure_ids]), m.paragraph, _dedup([*old.sentences, *m.sentences]))
    return tuple(by_text.values())


# ---------------------------------------------------------------------------------------------
# XML helpers

_XML_ENTITIES = {"amp", "lt", "gt", "quot", "apos"}


def parse_xml(text: str) -> ET.Element:
    """Parse XML with ElementTree; on failure drop the DOCTYPE and resolve HTML named entities."""
    try:
        return ET.fromstring(text)
    except ET.ParseError:
        cleaned = re.sub(r"<!DOCTYPE[^>\[]*(?:\[[^\]]*\])?\s*>", "", text, count=1)

        def entity(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in _XML_ENTITIES:
                return match.group(0)
            code = html.entities.name2codepoint.get(name)
            return chr(code) if code is not None else " "

        cleaned = re.sub(r"&([A-Za-z][A-Za-z0-9]*);", entity, cleaned)
        return ET.fromstring(cleaned)


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


_BLOCKS = frozenset({"p", "title", "simple-para", "para", "section-title", "list-item", "label", "sec",
                     "abstract-sec", "caption"})


def _text(element: ET.Element, skip: Collection[str] = ()) -> str:
    """Text of ``element`` without the subtrees whose local tag name is in ``skip`` (tails kept)."""
    parts: list[str] = []

    def walk(node: ET.Element) -> None:
        if node.text:
            parts.append(node.text)
        for child in node:
            if _local(child.tag) not in skip:
                walk(child)
                if _local(child.tag) in _BLOCKS:
                    parts.append(" ")
            if child.tail:
                parts.append(child.tail)

    walk(element)
    return _norm("".join(parts))


def _refids(element: ET.Element, ref_tags: Collection[str], attr: str, skip: Collection[str]) -> list[str]:
    out: list[str] = []

    def walk(node: ET.Element) -> None:
        for child in node:
            name = _local(child.tag)
            if name in skip:
                continue
            if name in ref_tags:
                out.extend((child.get(attr) or "").split())
            walk(child)

    walk(element)
    return out


def _find(root: ET.Element, name: str) -> ET.Element | None:
    return next((e for e in root.iter() if _local(e.tag) == name), None)


def _paragraphs(root: ET.Element, para: str, skip: Collection[str]) -> Iterator[ET.Element]:
    """``para`` elements in document order, outside ``skip`` subtrees, not nested in another."""
    for child in root:
        name = _local(child.tag)
        if name in skip:
            continue
        if name == para:
            yield child
        else:
            yield from _paragraphs(child, para, skip)


def _float_record(label: str, caption: str, default_kind: str) -> FigureRecord | None:
    parsed = label_number(label) or label_number(caption)
    if parsed is None:
        return None
    kind, number = parsed
    if kind != default_kind and label_number(label) is None:
        kind = default_kind
    text = clean_caption(caption)
    if not text:
        return None
    return FigureRecord(figure_id(kind, number), kind, number, text)


def _unique_figures(records: Iterable[FigureRecord]) -> tuple[FigureRecord, ...]:
    seen: dict[str, FigureRecord] = {}
    for record in records:
        seen.setdefault(record.figure_id, record)
    return tuple(seen.values())


def _xml_paper(source: str, paper_id: str, title: str, abstract: str, figures: dict[str, FigureRecord],
               paragraphs: Iterable[tuple[str, list[str]]]) -> FigurePaper:
    mentions = []
    for text, refids in paragraphs:
        extra = [figures[r].figure_id for r in refids if r in figures]
        mention = make_mention(text, extra)
        if mention is not None:
            mentions.append(mention)
    return FigurePaper(source, paper_id, _norm(title), _norm(abstract), _unique_figures(figures.values()),
                       _merge_mentions(mentions))


# ---------------------------------------------------------------------------------------------
# PMC JATS

_JATS_FLOATS = frozenset({"fig", "fig-group", "table-wrap", "table-wrap-group", "supplementary-material",
                          "disp-formula-group", "caption", "table"})


def parse_jats(text: str, paper_id: str) -> FigurePaper:
    """A JATS/NLM article (``.nxml`` text)."""
    root = parse_xml(text)
    title_el = _find(root, "article-title")
    abstracts = [e for e in root.iter() if _local(e.tag) == "abstract"]
    main = [a for a in abstracts if a.get("abstract-type") in (None, "", "abstract")]
    abstract = _text((main or abstracts)[0], skip={"title"}) if abstracts else ""
    figures: dict[str, FigureRecord] = {}
    ordinal = {"figure": 0, "table": 0}
    for element in root.iter():
        name = _local(element.tag)
        if name not in ("fig", "table-wrap"):
            continue
        label_el = next((c for c in element if _local(c.tag) == "label"), None)
        caption_el = next((c for c in element if _local(c.tag) == "caption"), None)
        if caption_el is None:
            continue
        label = _text(label_el) if label_el is not None else ""
        kind = "table" if name == "table-wrap" else "figure"
        ordinal[kind] += 1
        if not label and label_number(_text(caption_el)) is None:  # an unlabelled float: its ordinal
            label = f"{'Table' if kind == 'table' else 'Figure'} {ordinal[kind]}"
        record = _float_record(label, _text(caption_el), kind)
        if record is not None and element.get("id"):
            figures[str(element.get("id"))] = record
    body = _find(root, "body")
    paragraphs: list[tuple[str, list[str]]] = []
    if body is not None:
        for p in _paragraphs(body, "p", _JATS_FLOATS):
            paragraphs.append((_text(p, _JATS_FLOATS), _refids(p, {"xref"}, "rid", _JATS_FLOATS)))
    return _xml_paper("pmc-jats", paper_id, _text(title_el) if title_el is not None else "", abstract,
                      figures, paragraphs)


# ---------------------------------------------------------------------------------------------
# Elsevier (OA-STM source XML)

_ELS_FLOATS = frozenset({"figure", "table", "display", "float-anchor", "caption", "e-component",
                         "textbox", "formula"})


def parse_elsevier(text: str, paper_id: str) -> FigurePaper:
    """An Elsevier ``.norm-xml`` article (ce: namespace)."""
    root = parse_xml(text)
    head = _find(root, "head")
    title_el = _find(head if head is not None else root, "title")
    abstracts = [e for e in root.iter() if _local(e.tag) == "abstract"]
    author = [a for a in abstracts if a.get("class") in (None, "author")]
    abstract = _text(author[0], skip={"section-title"}) if author else ""
    figures: dict[str, FigureRecord] = {}
    for element in root.iter():
        name = _local(element.tag)
        if name not in ("figure", "table") or not element.get("id"):
            continue
        label_el = next((c for c in element if _local(c.tag) == "label"), None)
        caption_el = next((c for c in element if _local(c.tag) == "caption"), None)
        if caption_el is None:
            continue
        label = _text(label_el) if label_el is not None else ""
        record = _float_record(label, _text(caption_el), name)
        if record is not None:
            figures[str(element.get("id"))] = record
    body = _find(root, "body")
    paragraphs: list[tuple[str, list[str]]] = []
    if body is not None:
        for p in _paragraphs(body, "para", _ELS_FLOATS):
            paragraphs.append((_text(p, _ELS_FLOATS),
                               _refids(p, {"cross-ref", "cross-refs"}, "refid", _ELS_FLOATS)))
    return _xml_paper("oa-stm", paper_id, _text(title_el) if title_el is not None else "", abstract,
                      figures, paragraphs)


# ---------------------------------------------------------------------------------------------
# S2ORC JSON (three schema generations)


def parse_s2orc(data: dict[str, Any], paper_id: str) -> FigurePaper:
    """An S2ORC / doc2json paper: ``grobid_parse``/``latex_parse``/``pdf_parse`` or flat."""
    parse: dict[str, Any] = data
    for key in ("latex_parse", "grobid_parse", "pdf_parse"):
        candidate = data.get(key)
        if isinstance(candidate, dict) and candidate.get("body_text"):
            parse = candidate
            break
    metadata = data.get("metadata") or {}
    title = str(metadata.get("title") or data.get("title") or "")
    raw_abstract = parse.get("abstract") or data.get("abstract") or metadata.get("abstract") or ""
    abstract = (" ".join(str(a.get("text", "")) for a in raw_abstract) if isinstance(raw_abstract, list)
                else str(raw_abstract))
    body = parse.get("body_text") or []
    span_texts: dict[str, list[str]] = {}
    for paragraph in body:
        for span in paragraph.get("ref_spans") or []:
            if span.get("ref_id"):
                span_texts.setdefault(str(span["ref_id"]), []).append(str(span.get("text") or ""))
    figures: dict[str, FigureRecord] = {}
    for ref_id, entry in (parse.get("ref_entries") or {}).items():
        kind = "table" if entry.get("type") == "table" or str(ref_id).startswith("TAB") else "figure"
        caption = _norm(str(entry.get("text") or ""))
        record = _float_record(caption, caption, kind) if label_number(caption) else None
        if record is None:  # no printed label: take the number its references use
            ids = [i for t in span_texts.get(str(ref_id), []) for i in mentioned_ids(t)]
            ids = [i for i in ids if i.startswith(figure_id(kind, ""))]
            if ids and strip_caption_label(caption):
                number = ids[0][3:]
                record = FigureRecord(figure_id(kind, number), kind, number, clean_caption(caption))
        if record is not None:
            figures[str(ref_id)] = record
    paragraphs = [(str(p.get("text") or ""), [str(s.get("ref_id")) for s in p.get("ref_spans") or []
                                              if s.get("ref_id")]) for p in body]
    return _xml_paper("s2orc", paper_id, title, abstract, figures, paragraphs)


# ---------------------------------------------------------------------------------------------
# MedICaT


def parse_medicat(lines: Iterable[str]) -> list[FigurePaper]:
    """MedICaT JSONL lines (one figure each) grouped into papers by ``pdf_hash``."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        if line.strip():
            row = json.loads(line)
            grouped.setdefault(str(row.get("pdf_hash", "")), []).append(row)
    papers = []
    for pdf_hash, rows in grouped.items():
        figures: list[FigureRecord] = []
        mentions: list[MentionRecord] = []
        for row in rows:
            key = str(row.get("fig_key") or "")
            parsed = label_number(re.sub(r"(?<=[A-Za-z])(?=\d)", " ", key))
            caption = str(row.get("s2orc_caption") or row.get("s2_caption") or "")
            if parsed is None or not strip_caption_label(caption):
                continue
            kind, number = parsed
            fid = figure_id(kind, number)
            figures.append(FigureRecord(fid, kind, number, clean_caption(caption)))
            for reference in row.get("s2orc_references") or []:
                mention = make_mention(str(reference), [fid])
                if mention is not None:
                    mentions.append(mention)
        papers.append(FigurePaper("medicat", pdf_hash, "", "", _unique_figures(figures),
                                  _merge_mentions(mentions)))
    return papers


# ---------------------------------------------------------------------------------------------
# PDFs through the project's parser


def paper_from_pdf(paper: Any, paper_id: str, window: int = 1) -> FigurePaper:
    """A parsed :class:`core.document.Paper`: each mentioning sentence plus ``window`` neighbours on each
    side within its section (Sentence has no paragraph index), overlapping windows merged."""
    from core.document import SectionKind

    figures = _unique_figures(FigureRecord(f.id, f.kind, f.number, clean_caption(f.caption))
                              for f in paper.figures if strip_caption_label(f.caption))
    linked: dict[int, list[str]] = {}
    for f in paper.figures:
        for sid in f.mentioned_by:
            try:
                linked.setdefault(paper.sentence_by_id(sid).index, []).append(f.id)
            except (KeyError, IndexError, ValueError):
                continue
    mentions: list[MentionRecord] = []
    for section in paper.sections:
        if section.kind is SectionKind.ABSTRACT:
            continue
        sentences = paper.sentences_in(section)
        hits = [k for k, s in enumerate(sentences) if mentioned_ids(s.text) or s.index in linked]
        windows: list[list[int]] = []
        for k in hits:
            lo, hi = max(0, k - window), min(len(sentences), k + window + 1)
            if windows and lo < windows[-1][1]:
                windows[-1][1] = hi
            else:
                windows.append([lo, hi])
        for lo, hi in windows:
            chunk = sentences[lo:hi]
            ids = _dedup(i for s in chunk for i in [*mentioned_ids(s.text), *linked.get(s.index, [])])
            mentioning = [s.text for s in chunk if mentioned_ids(s.text) or s.index in linked]
            paragraph = _norm(" ".join(s.text for s in chunk))
            if ids and paragraph:
                mentions.append(MentionRecord(ids, mask_figure_refs(paragraph),
                                              tuple(mask_figure_refs(_norm(t)) for t in mentioning)))
    abstract = _norm(" ".join(s.text for s in paper.abstract_sentences))
    return FigurePaper("pdfs", paper_id, _norm(paper.title or ""), abstract, figures, tuple(mentions))


# ---------------------------------------------------------------------------------------------
# Readers


def default_root() -> Path:
    """The shared data folder (``SHARED/data``); DatasetError when absent."""
    from models.datasets.documents import data_root

    return data_root(None)


def _skip(on_skip: SkipHook | None, source: str, name: str, reason: str) -> None:
    warnings.warn(f"figure pairs: skipped {source} {name}: {reason}", RuntimeWarning, stacklevel=3)
    if on_skip is not None:
        on_skip(source, name, reason)


def read_figure_papers(source: str, *, root: Path | None = None, exclude_pdfs: Collection[str] = (),
                       on_skip: SkipHook | None = None, limit: int | None = None) -> Iterator[FigurePaper]:
    """The papers of one source. ``root``: the shared data folder (default: the project's shared
    path); PDFs are read from ``root.parent / "pdfs"``. ``exclude_pdfs``: PDF file names to skip (the
    graphical-abstract dev set must not be trained on). A file that fails to parse is skipped with a
    warning (and ``on_skip(source, file, reason)``). ``limit``: at most this many files."""
    if source not in SOURCES:
        raise ValueError(f"unknown figure-pair source {source!r} (one of {', '.join(SOURCES)})")
    root = Path(root) if root is not None else default_root()
    count = 0

    def room() -> bool:
        return limit is None or count < limit

    if source == "pmc-jats":
        for path in sorted((root / "pmc_jats_fulltext").glob("*.nxml")):
            if not room():
                return
            try:
                paper = parse_jats(path.read_text(encoding="utf-8"), path.stem)
            except (ET.ParseError, UnicodeDecodeError, ValueError) as error:
                _skip(on_skip, source, path.name, str(error))
                continue
            count += 1
            yield paper
    elif source == "oa-stm":
        with tarfile.open(root / "oa_stm_coresc" / "SourceXML.tar.gz") as tar:
            for member in sorted((m for m in tar.getmembers() if m.isfile()), key=lambda m: m.name):
                if not member.name.endswith((".xml", ".norm-xml")) or not room():
                    continue
                handle = tar.extractfile(member)
                if handle is None:
                    continue
                stem = Path(member.name).name.split(".")[0]
                try:
                    paper = parse_elsevier(handle.read().decode("utf-8"), stem)
                except (ET.ParseError, UnicodeDecodeError, ValueError) as error:
                    _skip(on_skip, source, member.name, str(error))
                    continue
                count += 1
                yield paper
    elif source == "s2orc":
        folder = root / "s2orc_doc2json_samples"
        for path in [*sorted((folder / "s2orc_json").glob("*.json")), folder / "s2orc_example_paper.json"]:
            if not path.is_file() or not room():
                continue
            try:
                paper = parse_s2orc(json.loads(path.read_text(encoding="utf-8")), path.stem)
            except (ValueError, AttributeError, TypeError) as error:
                _skip(on_skip, source, path.name, str(error))
                continue
            count += 1
            yield paper
    elif source == "medicat":
        path = root / "medicat_sample" / "sample.jsonl"
        try:
            papers = parse_medicat(path.read_text(encoding="utf-8").splitlines())
        except (OSError, ValueError) as error:
            _skip(on_skip, source, path.name, str(error))
            return
        yield from papers[:limit]
    else:  # pdfs
        from core.pdf import parse_pdf

        excluded = {Path(name).name for name in exclude_pdfs}
        for path in sorted((root.parent / "pdfs").glob("*.pdf")):
            if path.name in excluded or not room():
                continue
            try:
                paper = paper_from_pdf(parse_pdf(path), path.stem)
            except Exception as error:  # a damaged PDF must not stop the build
                _skip(on_skip, source, path.name, f"{type(error).__name__}: {error}")
                continue
            count += 1
            yield paper


def iter_pairs(papers: Iterable[FigurePaper]) -> Iterator[tuple[FigurePaper, MentionRecord, FigureRecord]]:
    """One (paper, mention, figure) per figure a mention names that exists in ``paper.figures``."""
    for paper in papers:
        for mention in paper.mentions:
            for fid in mention.figure_ids:
                figure = paper.figure(fid)
                if figure is not None:
                    yield paper, mention, figure


def pair_counts(papers: Iterable[FigurePaper]) -> dict[str, int]:
    """papers, figures, tables, mentions, pairs, papers_with_2plus_figures."""
    counts = dict.fromkeys(COUNT_KEYS, 0)
    for paper in papers:
        n_figures = sum(f.kind == "figure" for f in paper.figures)
        counts["papers"] += 1
        counts["figures"] += n_figures
        counts["tables"] += len(paper.figures) - n_figures
        counts["mentions"] += len(paper.mentions)
        counts["pairs"] += sum(1 for _ in iter_pairs([paper]))
        counts["papers_with_2plus_figures"] += n_figures >= 2
    return counts
