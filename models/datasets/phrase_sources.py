"""The permissively licensed papers the default phrase corpus is built from (``rhetorica corpus build``).

Only text whose licence allows redistribution inside the product (``../shared/README.md``): every
paper keeps its dataset, id, title and licence so that each suggestion can be attributed (NOTICE).

| source | what | licence |
|---|---|---|
| ``csabstruct`` | CS abstracts (train, dev and test) | Apache-2.0 |
| ``scitldr`` | CS abstracts with titles (all splits) | Apache-2.0 |
| ``pubmedqa`` | biomedical abstracts (the question stands in for the title) | MIT |
| ``oa-stm`` | full texts in ten domains (abstract + body; Elsevier OA) | CC BY 4.0 |
| ``scirex`` | ML full texts by section | Apache-2.0 (the dataset; see below) |
| ``arxiv`` | arXiv abstracts 2018-2026 with titles (cs.CV, cs.AI ...; no cs.CL) | CC0 1.0 (arXiv metadata) |
| ``unarxive`` | full-text arXiv papers (math, physics ...) by section | per paper: CC BY 4.0 / CC0 1.0 |

``scirex`` is not in the shipped pack (:data:`SHIPPED_SOURCES`): its provenance says the papers' own
licences (arXiv's among them) apply to the text, so it is only for a corpus a user builds locally.

``arxiv`` and ``unarxive`` (:data:`EXTRA_SOURCES`) ship as text only (``resources/corpus-extra``,
``rhetorica corpus extra``), labelled on the user's machine on first use (``core.library.corpus_growth``);
their sentences with TeX math (``$...$``) are left out.
``unarxive`` keeps only the papers whose own arXiv licence (``metadata.license``) is CC BY 4.0 or
CC0 1.0 (44 + 1 of the 46; the CC BY-SA one is left out), each with that licence; its body text loses
the sentences with formulas (``{{formula:...}}``: unreadable as phrasing) and has its citation,
figure and table markers written as ``[citation]``, ``[figure]``, ``[table]``.

Pure Python (no model): the builder in ``app/commands/lab/corpus.py`` labels and embeds the papers.
"""

from __future__ import annotations

import gzip
import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from models.datasets.documents import data_root, need_file

LICENCES = {"csabstruct": "Apache-2.0", "scitldr": "Apache-2.0", "pubmedqa": "MIT",
            "oa-stm": "CC BY 4.0", "scirex": "Apache-2.0", "arxiv": "CC0 1.0", "unarxive": "CC BY 4.0"}
PHRASE_SOURCES = tuple(LICENCES)
SHIPPED_SOURCES = ("csabstruct", "scitldr", "pubmedqa", "oa-stm")  # labelled in resources/corpus
EXTRA_SOURCES = ("arxiv", "unarxive")  # shipped as text (resources/corpus-extra), labelled on first use
# unarXive papers by their own arXiv licence: only these may be bundled (no share-alike, no NC)
UNARXIVE_LICENCES = {"http://creativecommons.org/licenses/by/4.0/": "CC BY 4.0",
                     "http://creativecommons.org/publicdomain/zero/1.0/": "CC0 1.0"}


@dataclass
class PhraseSection:
    heading: str
    kind: str  # a core.document.SectionKind value ("abstract", "method", ...)
    sentences: list[str]


@dataclass
class PhrasePaper:
    dataset: str
    paper_id: str
    title: str
    sections: list[PhraseSection] = field(default_factory=list)
    paper_licence: str = ""  # the paper's own licence where it differs within a dataset (unarxive)
    authors: str = ""  # where the source names them (unarxive: CC BY attribution)

    @property
    def licence(self) -> str:
        return self.paper_licence or LICENCES[self.dataset]

    def sentence_count(self) -> int:
        return sum(len(s.sentences) for s in self.sections)


class _Where:
    """The source file and line being read (for one-line errors about a malformed row)."""

    path: Path | None = None
    line = 0


def _rows(path: Path, handle: Iterator[str]) -> Iterator[dict]:
    _Where.path, _Where.line = path, 0
    for _Where.line, line in enumerate(handle, 1):
        if line.strip():
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError(f"a JSON {type(row).__name__}, not an object")
            yield row


def _jsonl(path: Path) -> Iterator[dict]:
    with need_file(path).open(encoding="utf-8") as handle:
        yield from _rows(path, handle)


def _sentence_list(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise ValueError("'sentences' is not a list of strings")
    return list(value)


def _csabstruct(root: Path) -> Iterator[PhrasePaper]:
    for split in ("train", "dev", "test"):
        for number, row in enumerate(_jsonl(root / "csabstruct" / f"{split}.jsonl")):
            yield PhrasePaper("csabstruct", f"csabstruct-{split}-{number}", "",
                              [PhraseSection("Abstract", "abstract", _sentence_list(row["sentences"]))])


def _scitldr(root: Path) -> Iterator[PhrasePaper]:
    from models.datasets.scitldr import load_scitldr

    for split in ("train", "dev", "test"):
        for paper in load_scitldr(split, root.parent):
            yield PhrasePaper("scitldr", f"scitldr-{paper.paper_id}", paper.title,
                              [PhraseSection("Abstract", "abstract", list(paper.abstract))])


def _pubmedqa(root: Path) -> Iterator[PhrasePaper]:
    from models.datasets.readers import _split_paragraph

    data = json.loads(need_file(root / "pubmedqa_labeled" / "ori_pqal.json").read_text(encoding="utf-8"))
    for pmid, item in data.items():
        sentences = [s for text in [*item["CONTEXTS"], item["LONG_ANSWER"]] for s in _split_paragraph(text)]
        yield PhrasePaper("pubmedqa", f"pmid-{pmid}", str(item.get("QUESTION", "")),
                          [PhraseSection("Abstract", "abstract", sentences)])


def _oa_stm(root: Path) -> Iterator[PhrasePaper]:
    folder = root / "oa_stm_coresc"
    titles = {}
    for line in need_file(folder / "titlesList.txt").read_text(encoding="utf-8").splitlines():
        name, _, title = line.partition(" ")
        titles[name.removesuffix(".txt")] = title.strip()
    paper: PhrasePaper | None = None
    for row in _jsonl(folder / "coresc_auto_sentences.jsonl"):
        if row["part"] == "title":
            continue
        if paper is None or paper.paper_id != f"oa-stm-{row['doc_id']}":
            if paper is not None:
                yield paper
            title = html.unescape(titles.get(row["doc_id"], ""))
            paper = PhrasePaper("oa-stm", f"oa-stm-{row['doc_id']}", title)
        # The sentence files keep abstract/body, not the body's headings: body sentences are "other".
        kind = "abstract" if row["part"] == "abstract" else "other"
        heading = "Abstract" if kind == "abstract" else "Body"
        if not paper.sections or paper.sections[-1].kind != kind:
            paper.sections.append(PhraseSection(heading, kind, []))
        # The sentence file keeps the XML's character references ("&lt;", "&quot;"): readers see characters.
        paper.sections[-1].sentences.append(html.unescape(str(row["text"])))
    if paper is not None:
        yield paper


def _scirex(root: Path) -> Iterator[PhrasePaper]:
    from core.pdf.headings import section_kind
    from models.datasets.scirex import scirex_sections

    paper: PhrasePaper | None = None
    for section in scirex_sections(root):
        if paper is None or paper.paper_id != f"scirex-{section.doc_id}":
            if paper is not None:
                yield paper
            paper = PhrasePaper("scirex", f"scirex-{section.doc_id}", "")
        sentences = list(section.sentences())
        if section.number == 0:  # the title
            paper.title = " ".join(sentences)
            continue
        heading = section.heading or ""
        paper.sections.append(PhraseSection(heading, section_kind(heading).value if heading else "other",
                                            sentences))
    if paper is not None:
        yield paper


def _gz_jsonl(path: Path) -> Iterator[dict]:
    with gzip.open(need_file(path), "rt", encoding="utf-8") as handle:
        yield from _rows(path, handle)


def _readable(sentence: str) -> bool:
    """Not TeX math (``$...$``) nor an unresolved unarXive marker (a formula): unreadable as phrasing."""
    return bool(sentence.strip()) and "$" not in sentence and "{{" not in sentence


def _arxiv(root: Path) -> Iterator[PhrasePaper]:
    from core.text.sentences import split_sentence_texts

    for row in _gz_jsonl(root / "arxiv_abstracts" / "abstracts.jsonl.gz"):
        sentences = split_sentence_texts(" ".join(str(row["abstract"]).split()))
        yield PhrasePaper("arxiv", str(row["id"]), " ".join(str(row.get("title", "")).split()),
                          [PhraseSection("Abstract", "abstract", [s for s in sentences if _readable(s)])])


_FORMULA = re.compile(r"\{\{formula:[^}]*\}\}")
_MARKERS = re.compile(r"\{\{(cite|figure|table):[^}]*\}\}")


def unarxive_text(text: str) -> str:
    """A paragraph of unarXive body text as a reader sees it: citation, figure and table markers as
    ``[citation]``, ``[figure]``, ``[table]`` (runs of citations as one), whitespace normalised."""
    text = _MARKERS.sub(lambda m: f"[{'citation' if m.group(1) == 'cite' else m.group(1)}]", text)
    text = re.sub(r"\[citation\](?:[\s,;]*\[citation\])+", "[citation]", text)
    return " ".join(text.split())


def _unarxive(root: Path) -> Iterator[PhrasePaper]:
    from core.pdf.headings import section_kind
    from core.text.sentences import split_sentence_texts

    for row in _gz_jsonl(root / "unarxive_sample" / "papers.jsonl.gz"):
        metadata = row.get("metadata") or {}
        licence = UNARXIVE_LICENCES.get(str(metadata.get("license", "")))
        if licence is None:  # share-alike or unknown: not bundled
            continue
        paper = PhrasePaper("unarxive", f"arXiv:{metadata.get('id') or row['paper_id']}",
                            " ".join(str(metadata.get("title", "")).split()), paper_licence=licence,
                            authors=" ".join(str(metadata.get("authors", "")).split()))
        abstract = [s for s in split_sentence_texts(" ".join(str(metadata.get("abstract", "")).split()))
                    if _readable(s)]
        if abstract:
            paper.sections.append(PhraseSection("Abstract", "abstract", abstract))
        for paragraph in row.get("body_text", []):
            heading = " ".join(_FORMULA.sub("", str(paragraph.get("section") or "")).split())
            kind = section_kind(heading).value if heading else "other"
            sentences = [s for s in split_sentence_texts(unarxive_text(str(paragraph.get("text", ""))))
                         if _readable(s)]
            if not sentences:
                continue
            if paper.sections and paper.sections[-1].heading == heading and paper.sections[-1].kind == kind:
                paper.sections[-1].sentences.extend(sentences)
            else:
                paper.sections.append(PhraseSection(heading or "Body", kind, sentences))
        if paper.sections:
            yield paper


READERS = {"csabstruct": _csabstruct, "scitldr": _scitldr, "pubmedqa": _pubmedqa, "oa-stm": _oa_stm,
           "scirex": _scirex, "arxiv": _arxiv, "unarxive": _unarxive}


def phrase_papers(source: str, shared: Path | None = None) -> Iterator[PhrasePaper]:
    """The papers of one phrase source, in a fixed order."""
    from core.errors import DatasetError

    if source not in READERS:
        raise DatasetError(f"unknown phrase source {source!r}; known: {', '.join(PHRASE_SOURCES)}")
    return _located(READERS[source](data_root(shared)))


def _located(papers: Iterator[PhrasePaper]) -> Iterator[PhrasePaper]:
    """``papers``, a malformed source row failing in one line that names its file and line."""
    from core.errors import DatasetError

    _Where.path, _Where.line = None, 0
    try:
        yield from papers
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, EOFError) as error:
        # UnicodeDecodeError and json's errors are ValueErrors
        line = _Where.line + isinstance(error, UnicodeDecodeError)  # that line could not be read
        where = f"{_Where.path}:{line}" if _Where.path else "a source file"
        reason = (f"no {error} field" if isinstance(error, KeyError)
                  else "not UTF-8 text" if isinstance(error, UnicodeDecodeError)
                  else " ".join(str(error).split())[:200] or type(error).__name__)
        raise DatasetError(f"{where}: malformed row ({reason})") from None
