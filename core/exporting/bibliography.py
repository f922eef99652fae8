"""Papers as BibTeX or RIS (issue 27.4): search results and suggestion sources where the paper is known.

A :class:`BibEntry` holds what a library keeps of a paper (title, authors "Last, First" or an
organisation's name, year, DOI; ``core.library.store.PaperMetadata``); :func:`library_entries` reads
them for a list of paper ids. An organisation is written to BibTeX in double braces
(``{{The Team}}``, :func:`is_organisation`), so it is not taken for a first and a last name.
Every value is text from a PDF or a reference manager, never trusted: BibTeX values are braced with
LaTeX's special characters escaped and unbalanced braces impossible; RIS values are one line each
(a newline in a title would start a new tag). No Qt.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from core.library.store import LibraryStore


@dataclass(frozen=True)
class BibEntry:
    """One paper; ``paper_id`` is the library's id (it becomes the BibTeX key when nothing better is
    known); ``note``: where the entry came from (a search result's score, a suggestion's source)."""

    paper_id: str
    title: str
    authors: tuple[str, ...] = ()
    year: int | None = None
    doi: str = ""
    note: str = ""
    keywords: tuple[str, ...] = field(default=())


# -- BibTeX ------------------------------------------------------------------------------------
_BIBTEX_SPECIAL = {
    "\\": r"\textbackslash{}", "{": r"\textbraceleft{}", "}": r"\textbraceright{}",
    "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def bibtex_value(text: str) -> str:
    """``text`` as the inside of a braced BibTeX value: one line, LaTeX's specials escaped; a brace
    becomes ``\\textbraceleft{}`` (BibTeX counts ``\\{`` as a brace too, so a lone one would end
    or swallow the value), so the braces left are always balanced."""
    return "".join(_BIBTEX_SPECIAL.get(char, char) for char in _one_line(text))


# Words that make a name without a comma an organisation's ("The Team", "ATLAS Collaboration").
ORGANISATION_WORDS = frozenset({
    "team", "consortium", "group", "collaboration", "institute", "institution", "society", "committee",
    "organization", "organisation", "association", "network", "project", "council", "foundation",
    "agency", "university", "laboratory", "center", "centre", "department", "ministry", "commission",
    "initiative", "alliance", "federation", "board", "office", "academy", "program", "programme",
    "corporation", "company", "inc", "ltd", "gmbh"})


def is_organisation(name: str) -> bool:
    """Whether an author is an organisation (or goes by one word), to be written as one unit. The
    library keeps a person as "Last, First" (Zotero's two-field creators) and an organisation by its
    name alone (Zotero's single-field ones), so: a name without a comma that is one word, starts with
    "The", or holds a word such as Team, Consortium, Group, Collaboration, Institute or Society."""
    words = _one_line(name).split()
    if not words or "," in name:
        return False
    return len(words) == 1 or words[0].lower() == "the" or \
        any(word.strip(".()&").lower() in ORGANISATION_WORDS for word in words)


def bibtex_author(name: str) -> str:
    """One author inside BibTeX's ``author = {…}``: a person as it is ("Last, First"); an organisation
    (:func:`is_organisation`) in its own braces, ``{The Team}``, so BibTeX neither reads it as
    "Team, The" nor splits it at an "and"."""
    value = bibtex_value(name)
    return "{" + value + "}" if is_organisation(name) else value


def _ascii_word(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^A-Za-z0-9]", "", plain)


def bibtex_key(entry: BibEntry) -> str:
    """``lastnameYEARword`` (ASCII letters and digits only), else one made from the paper id."""
    surname = _ascii_word(entry.authors[0].split(",")[0].split()[-1]) if entry.authors and \
        entry.authors[0].split(",")[0].split() else ""
    words = [_ascii_word(w) for w in entry.title.split()]
    word = next((w for w in words if len(w) > 3), "")
    key = f"{surname.lower()}{entry.year or ''}{word.lower()}"
    if not surname:
        key = _ascii_word(entry.paper_id)[:24] or "paper"
        key = key if key[0].isalpha() else f"paper{key}"
    return key


def _unique_keys(entries: Sequence[BibEntry]) -> list[str]:
    keys, seen = [], dict[str, int]()
    for entry in entries:
        key = bibtex_key(entry)
        count = seen.get(key, 0)
        seen[key] = count + 1
        keys.append(key if count == 0 else f"{key}{chr(ord('a') + count - 1) if count <= 26 else count}")
    return keys


def to_bibtex(entries: Iterable[BibEntry]) -> str:
    """``@article`` entries (``@misc`` without authors or year), keys unique within the file."""
    entries = list(entries)
    blocks = []
    for entry, key in zip(entries, _unique_keys(entries)):
        kind = "article" if entry.authors and entry.year else "misc"
        fields = [("title", "{" + bibtex_value(entry.title) + "}")]  # inner braces keep its capitals
        if entry.authors:
            fields.append(("author", " and ".join(bibtex_author(a) for a in entry.authors)))
        if entry.year:
            fields.append(("year", str(int(entry.year))))
        if entry.doi:
            fields.append(("doi", bibtex_value(entry.doi)))
        if entry.keywords:
            fields.append(("keywords", bibtex_value(", ".join(entry.keywords))))
        if entry.note:
            fields.append(("note", bibtex_value(entry.note)))
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        blocks.append(f"@{kind}{{{key},\n{body}\n}}\n")
    return "\n".join(blocks)


# -- RIS ---------------------------------------------------------------------------------------
def ris_value(text: str) -> str:
    """``text`` as one RIS value: one line (control characters and line breaks become spaces)."""
    cleaned = "".join(" " if unicodedata.category(c)[0] == "C" else c for c in str(text))
    return _one_line(cleaned)


def to_ris(entries: Iterable[BibEntry]) -> str:
    """RIS records (``TY  - JOUR``, ``GEN`` without authors or year), each ending ``ER  -``."""
    lines: list[str] = []
    for entry in entries:
        lines.append(f"TY  - {'JOUR' if entry.authors and entry.year else 'GEN'}")
        lines.append(f"TI  - {ris_value(entry.title)}")
        lines.extend(f"AU  - {ris_value(author)}" for author in entry.authors if ris_value(author))
        if entry.year:
            lines.append(f"PY  - {int(entry.year)}")
        if entry.doi:
            lines.append(f"DO  - {ris_value(entry.doi)}")
        lines.extend(f"KW  - {ris_value(word)}" for word in entry.keywords if ris_value(word))
        if entry.note:
            lines.append(f"N1  - {ris_value(entry.note)}")
        lines.append(f"ID  - {ris_value(entry.paper_id)}")
        lines.append("ER  - ")
        lines.append("")
    return "\r\n".join(lines)  # RIS readers (Zotero, EndNote) expect CRLF


FORMATS = {"bibtex": to_bibtex, "ris": to_ris}


# -- from a library ----------------------------------------------------------------------------
def library_entries(store: LibraryStore, paper_ids: Sequence[str],
                    notes: Sequence[str] | None = None) -> list[BibEntry]:
    """The entries of ``paper_ids`` (in order, each once) from a library store, with their authors,
    year and DOI where the library keeps them; ids not in the library are left out."""
    metadata = store.metadata()
    entries, seen = [], set()
    for position, paper_id in enumerate(paper_ids):
        if paper_id in seen:
            continue
        seen.add(paper_id)
        record = store.paper(paper_id)
        if record is None:
            continue
        meta = metadata.get(paper_id)
        entries.append(BibEntry(
            paper_id=paper_id, title=record.title or paper_id,
            authors=tuple(meta.authors) if meta is not None else (),
            year=meta.year if meta is not None else None, doi=meta.doi if meta is not None else "",
            note=notes[position] if notes is not None and position < len(notes) else ""))
    return entries


def suggestion_entries(store: LibraryStore, sources: Sequence[Mapping[str, str]]) -> list[BibEntry]:
    """The library papers that phrasing suggestions came from (``core.phrasing.suggest.Suggestion.source``
    dicts: kind, paper_id, title, section), each once, best suggestion first; phrase-corpus sources
    are left out (a dataset's abstract is no paper to cite)."""
    ids = [source.get("paper_id", "") for source in sources if source.get("kind") == "library"]
    notes = [f"Rhetorica suggestion source ({source.get('section') or 'any section'})"
             for source in sources if source.get("kind") == "library"]
    return library_entries(store, ids, notes)
