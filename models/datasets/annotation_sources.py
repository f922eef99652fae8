"""Full papers for hand annotation (issue 24): one reader per source, each giving a paper's abstract and
body as (heading path, section kind, sentences), with the paper's field and whether its text may be
quoted in committed files.

| source | papers | field | text in committed files |
|---|---|---|---|
| ``oa-stm`` | Elsevier OA full texts (source XML, headings kept) | its domain (10) | yes: CC BY 4.0 |
| ``unarxive`` | arXiv full texts (sections, paragraphs) | its discipline | yes: CC BY / BY-SA / CC0 |
| ``pmc-jats`` | PMC OA articles (JATS) | biomedical | yes: CC BY |
| ``scirex`` | ML full texts, SciREX **train** split | computer science | no (arXiv licences) |
| ``pdfs2`` | ``../shared/pdfs2`` parsed by Rhetorica (its boundaries) | manifest | tier ``open`` only |
| ``arxiv-abs`` | arXiv abstracts | computer science | yes: CC0 |
| ``csabstruct`` | CSAbstruct **train** abstracts | computer science | yes: Apache-2.0 |

Test splits never appear: CSAbstruct and SciREX are read from their train files; the gold set's papers
live in ``../shared/pdfs`` (not read here); the pdfs2 papers chosen for the new gold test are kept out
of the training batches by :mod:`models.datasets.annotation`.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import tarfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path

from models.datasets.documents import data_root


@dataclass
class SourceSection:
    heading: str  # "Results › Yield" (the path of headings, top level first)
    kind: str  # core.document.SectionKind value of the top-level heading ("abstract" for the abstract)
    sentences: list[str]
    first_sentence: int = -1  # parsed PDFs: index of the first sentence in ``Paper.sentences``


@dataclass
class SourcePaper:
    source: str
    paper_id: str
    field: str
    open_text: bool  # may its sentences be quoted in committed files?
    title: str = ""
    sections: list[SourceSection] = dc_field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.source}:{self.paper_id}"


COARSE_FIELDS = {
    "computer science": "computer science",
    "biomedical": "biomedical/life", "biomedical/life": "biomedical/life", "biology": "biomedical/life",
    "medicine": "biomedical/life", "quantitative biology": "biomedical/life",
    "agriculture": "biomedical/life",
    "physics": "physical/engineering", "astronomy": "physical/engineering",
    "chemistry": "physical/engineering",
    "materials science": "physical/engineering", "engineering": "physical/engineering",
    "earth science": "physical/engineering", "physical/engineering": "physical/engineering",
    "electrical engineering and systems science": "physical/engineering",
    "mathematics": "mathematics", "statistics": "mathematics",
}


def coarse_field(field_name: str) -> str:
    """One of five fields for reporting (computer science, biomedical/life, physical/engineering,
    mathematics, social/other) from a source's own field or domain name."""
    return COARSE_FIELDS.get(field_name.strip().lower(), "social/other")


def _kind(heading: str) -> str:
    from core.pdf.headings import is_abstract_heading, section_kind

    if not heading:
        return "other"
    return "abstract" if is_abstract_heading(heading) else str(section_kind(heading).value)


def kinds_by_place(headings: list[str], kinds: list[str]) -> list[str]:
    """The body sections' kinds with the parser's rule for topical headings applied
    (``core.pdf.outline.kinds_by_place``): a section whose top-level heading ("QUILL › Syntax") names
    no kind takes one from its place between the top-level sections of a main kind around it, so the
    training corpus reads sections as the app does. ``headings`` are heading paths joined by " › "; a
    section whose own kind is not "other" (a decisive subsection heading, the abstract) keeps it."""
    from core.document import SectionKind
    from core.pdf.outline import keeps_other
    from core.pdf.outline import kinds_by_place as by_place

    tops: list[str] = []  # the top-level headings in order
    group: list[int] = []  # each section's place in ``tops``
    for heading in headings:
        top = heading.split(" › ")[0]
        if not tops or tops[-1] != top:
            tops.append(top)
        group.append(len(tops) - 1)
    own = [_kind(top) for top in tops]
    named = [top != "(no heading)" and kind != "abstract" for top, kind in zip(tops, own, strict=True)]
    placed = by_place([SectionKind(kind) if ok else SectionKind.OTHER
                       for kind, ok in zip(own, named, strict=True)],
                      [ok and not keeps_other(top) for top, ok in zip(tops, named, strict=True)])
    return [placed[g].value if kind == "other" else kind for g, kind in zip(group, kinds, strict=True)]


def _place_kinds(paper: SourcePaper) -> SourcePaper:
    for section, kind in zip(paper.sections, kinds_by_place([s.heading for s in paper.sections],
                                                             [s.kind for s in paper.sections]), strict=True):
        section.kind = kind
    return paper


def _split(text: str) -> list[str]:
    from core.text.sentences import split_sentence_texts

    return [s for s in split_sentence_texts(" ".join(text.split())) if len(s.split()) >= 2]


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


_SKIP_XML = frozenset({"float-anchor", "display", "formula", "display-formula", "table-wrap", "fig", "figure",
                       "table", "xref-group", "disp-formula", "list"})


def _is_citation(element: ET.Element, name: str) -> bool:
    """An Elsevier ``ce:cross-ref(s)`` to the bibliography or a JATS ``xref`` of type ``bibr``."""
    if name == "xref":
        return element.get("ref-type") == "bibr"
    return name in {"cross-ref", "cross-refs"} and (element.get("refid") or "").lower().startswith("bib")


def _xml_text(element: ET.Element) -> str:
    parts: list[str] = []

    def walk(node: ET.Element) -> None:
        if node.text:
            parts.append(node.text)
        for child in node:
            name = _local(child.tag)
            if _is_citation(child, name):
                parts.append("[CITATION]")
            elif name in _SKIP_XML:
                parts.append(" ")
            else:
                walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(element)
    text = " ".join("".join(parts).split())
    text = re.sub(r"(?:\[CITATION\][\s,;–-]*){2,}", "[CITATION] ", text)
    return re.sub(r"\(\s*\[CITATION\]\s*\)", "[CITATION]", text).strip()


def _xml_sections(container: ET.Element, section_tag: str, title_tag: str, para_tags: frozenset[str],
                  path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """(heading path, paragraph text) in document order."""
    current = path
    for child in container:
        name = _local(child.tag)
        if name == title_tag:
            current = (*path[:-1], _xml_text(child)) if path else (_xml_text(child),)
        elif name == section_tag:
            title = next((_xml_text(c) for c in child if _local(c.tag) == title_tag), "")
            yield from _xml_sections(child, section_tag, title_tag, para_tags, (*path, title))
        elif name in para_tags:
            yield current, _xml_text(child)
        elif name not in _SKIP_XML:
            yield from _xml_sections(child, section_tag, title_tag, para_tags, current)


def _paper_from_paragraphs(paper: SourcePaper, abstract: list[str],
                           paragraphs: Iterator[tuple[tuple[str, ...], str]]) -> SourcePaper:
    if abstract:
        paper.sections.append(SourceSection("Abstract", "abstract", abstract))
    for path, text in paragraphs:
        heading = " › ".join(p for p in path if p) or "(no heading)"
        top = next((p for p in path if p), "")
        kind = _kind(top)
        if kind in {"other", "unknown"}:  # a decisive subsection heading wins over an unmapped parent
            sub = next((_kind(p) for p in path[1:] if p and _kind(p) not in {"other", "unknown"}), kind)
            kind = sub
        sentences = _split(text)
        if not sentences:
            continue
        if paper.sections and paper.sections[-1].heading == heading:
            paper.sections[-1].sentences.extend(sentences)
        else:
            paper.sections.append(SourceSection(heading, kind, sentences))
    return _place_kinds(paper)


def read_oa_stm(root: Path) -> Iterator[SourcePaper]:
    from models.datasets.figure_pairs import parse_xml

    folder = root / "oa_stm_coresc"
    domains = dict(line.split("\t", 1) for line in
                   (folder / "fileCategories.txt").read_text(encoding="utf-8").splitlines() if "\t" in line)
    titles = {}
    for line in (folder / "titlesList.txt").read_text(encoding="utf-8").splitlines():
        name, _, title = line.partition(" ")
        titles[name.removesuffix(".txt")] = title.strip()
    with tarfile.open(folder / "SourceXML.tar.gz") as tar:
        members = sorted((m for m in tar.getmembers() if m.isfile() and m.name.endswith(".norm-xml")),
                         key=lambda m: m.name)
        for member in members:
            handle = tar.extractfile(member)
            if handle is None:
                continue
            doc_id = Path(member.name).name.removesuffix(".norm-xml")
            xml = parse_xml(handle.read().decode("utf-8", "replace"))
            abstract_el = next((e for e in xml.iter() if _local(e.tag) == "abstract"
                                and e.get("class", "author") == "author"), None)
            abstract = [s for p in (abstract_el.iter() if abstract_el is not None else [])
                        if _local(p.tag) == "simple-para" for s in _split(_xml_text(p))]
            sections = next((e for e in xml.iter() if _local(e.tag) == "sections"), None)
            paper = SourcePaper("oa-stm", doc_id, domains.get(doc_id, "unknown").strip(), True,
                                titles.get(doc_id, ""))
            if sections is None:
                continue
            yield _paper_from_paragraphs(paper, abstract, _xml_sections(
                sections, "section", "section-title", frozenset({"para"})))


def read_pmc_jats(root: Path) -> Iterator[SourcePaper]:
    from models.datasets.figure_pairs import parse_xml

    for path in sorted((root / "pmc_jats_fulltext").glob("*.nxml")):
        xml = parse_xml(path.read_text(encoding="utf-8", errors="replace"))
        abstract_el = next((e for e in xml.iter() if _local(e.tag) == "abstract"), None)
        abstract = [s for p in (abstract_el.iter() if abstract_el is not None else [])
                    if _local(p.tag) == "p" for s in _split(_xml_text(p))]
        body = next((e for e in xml.iter() if _local(e.tag) == "body"), None)
        title_el = next((e for e in xml.iter() if _local(e.tag) == "article-title"), None)
        if body is None:
            continue
        paper = SourcePaper("pmc-jats", path.stem, "biomedical", True,
                            _xml_text(title_el) if title_el is not None else "")
        yield _paper_from_paragraphs(paper, abstract, _xml_sections(body, "sec", "title", frozenset({"p"})))


_UNARXIVE_MARKER = re.compile(r"\{\{(cite|figure|table|formula|url|footnote):[^}]*\}\}")


def _unarxive_text(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        return {"cite": "[CITATION]", "figure": "[FIGURE]", "table": "[TABLE]", "formula": "[FORMULA]",
                "url": "[URL]", "footnote": ""}[match.group(1)]

    return _UNARXIVE_MARKER.sub(replace, text)


def read_unarxive(root: Path) -> Iterator[SourcePaper]:
    with gzip.open(root / "unarxive_sample" / "papers.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            abstract = _split(_unarxive_text(str((row.get("abstract") or {}).get("text", ""))))
            paper = SourcePaper("unarxive", str(row["paper_id"]), str(row.get("discipline", "unknown")), True,
                                " ".join(str(row.get("metadata", {}).get("title", "")).split()))
            paragraphs = ((((str(p.get("section") or ""),)), _unarxive_text(str(p.get("text", ""))))
                          for p in row.get("body_text", []))
            yield _paper_from_paragraphs(paper, abstract, paragraphs)


def read_scirex(root: Path) -> Iterator[SourcePaper]:
    from models.datasets.scirex import scirex_sections

    paper: SourcePaper | None = None
    for section in scirex_sections(root):
        if paper is None or paper.paper_id != section.doc_id:
            if paper is not None:
                yield _place_kinds(paper)
            paper = SourcePaper("scirex", section.doc_id, "computer science", False)
        sentences = [s for s in section.sentences() if len(s.split()) >= 2]
        if section.number == 0:
            paper.title = " ".join(sentences)
            continue
        heading = section.heading or "(no heading)"
        paper.sections.append(SourceSection(heading, _kind(heading), sentences))
    if paper is not None:
        yield _place_kinds(paper)


def pdfs2_manifest(shared: Path) -> list[dict[str, str]]:
    with (shared / "pdfs2" / "manifest.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def read_pdf_paper(path: Path, field_name: str, open_text: bool, source: str = "pdfs2") -> SourcePaper:
    from core.pdf import parse_pdf

    parsed = parse_pdf(path)
    paper = SourcePaper(source, path.stem, field_name, open_text, parsed.title)
    for section in parsed.sections:
        sentences = [s.text for s in parsed.sentences[section.first_sentence:
                                                      section.first_sentence + section.sentence_count]]
        if sentences:
            paper.sections.append(SourceSection(section.heading or "(no heading)", str(section.kind.value),
                                                sentences, section.first_sentence))
    return paper


def read_pdfs2(shared: Path, names: set[str] | None = None) -> Iterator[SourcePaper]:
    from core.errors import RhetoricaError

    for row in pdfs2_manifest(shared):
        stem = row["file"].removesuffix(".pdf")
        if names is not None and stem not in names:
            continue
        try:
            yield read_pdf_paper(shared / "pdfs2" / row["file"], row["field"], row["tier"] == "open")
        except RhetoricaError:
            continue


def read_arxiv_abstracts(root: Path, limit: int) -> Iterator[SourcePaper]:
    folder = root / "arxiv_abstracts"
    path = next(iter(sorted(folder.glob("*.jsonl*"))), None)
    if path is None:
        return
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for count, line in enumerate(handle):
            if count >= limit:
                return
            row = json.loads(line)
            paper = SourcePaper("arxiv-abs", str(row.get("id", count)), "computer science", True,
                                " ".join(str(row.get("title", "")).split()))
            sentences = _split(str(row.get("abstract", "")))
            if sentences:
                paper.sections.append(SourceSection("Abstract", "abstract", sentences))
                yield paper


def read_csabstruct_train(root: Path, limit: int) -> Iterator[SourcePaper]:
    with (root / "csabstruct" / "train.jsonl").open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if number >= limit:
                return
            row = json.loads(line)
            yield SourcePaper("csabstruct", f"train-{number}", "computer science", True, "",
                              [SourceSection("Abstract", "abstract", [str(s) for s in row["sentences"]])])


def shared_root(shared: Path | None) -> Path:
    return data_root(shared)
