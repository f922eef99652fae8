"""The phrase corpus's extra text: permissively licensed sentences that ship unlabelled beside the
labelled pack (``resources/corpus-extra``) and are labelled on the user's machine on first use
(:mod:`core.library.corpus_growth`).

Why a second file: labels and int8 function vectors cost about 130 bytes a sentence in git (the pack
``resources/corpus`` is 15 MB for 79k sentences); the text alone, xz-compressed, about 40. Shipping
the rest as text keeps the repository small and needs no network on the user's machine.

A folder written by :func:`write_extra` (``rhetorica corpus extra``):

- ``papers.jsonl.xz``: one paper per line ``[paper_id, dataset, title, licence, sections]``, each
  section ``[heading, section_kind, [sentence, ...]]``; sentences already filtered by the pack's
  filter (:class:`core.library.pack.PackFilter`), whitespace-normalised, each wording once and none
  that the base pack holds already;
- ``ATTRIBUTION.txt``: every paper under a licence that asks for attribution (CC BY), with its
  id, authors, title and licence, and what was changed;
- ``manifest.json``: format, counts per source with licences, the sha256 of ``papers.jsonl.xz``
  (checked before use) and the base pack it was deduplicated against.

Reading it runs no code: it is JSON in an xz stream, checked line by line.
"""

from __future__ import annotations

import gzip
import json
import lzma
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.jobs import JobContext, ensure_context
from core.library.pack import MANIFEST, SENTENCES, PackFilter, PaperInput, file_sha256
from core.library.store import LibraryError

EXTRA_FORMAT = "rhetorica-corpus-extra"
EXTRA_VERSION = 1
EXTRA_PAPERS = "papers.jsonl.xz"
ATTRIBUTION = "ATTRIBUTION.txt"
CHANGES = ("Changes: the text was split into sentences; sentences with formulas or TeX math were left out; "
           "citation, figure and table markers are written [citation], [figure], [table]; whitespace was "
           "normalised. Role and function labels and vectors are computed by Rhetorica's model.")
XZ_PRESET = 9 | lzma.PRESET_EXTREME  # slow to write once, fast to read: the file ships in git


@dataclass(frozen=True)
class ExtraSection:
    heading: str
    kind: str  # a core.document.SectionKind value
    sentences: list[str]


@dataclass
class ExtraPaper:
    """A paper of the extra text; it is a :class:`core.library.pack.PaperInput`, so
    :func:`core.library.pack.build_pack` labels it as it labels the shipped sources."""

    paper_id: str
    dataset: str
    title: str
    licence: str
    sections: list[ExtraSection] = field(default_factory=list)

    def sentence_count(self) -> int:
        return sum(len(s.sentences) for s in self.sections)


def wording_key(text: str) -> str:
    """Two sentences with the same key are the same wording (the pack's rule: case and spacing
    ignored)."""
    return " ".join(text.lower().split())


def pack_wordings(pack: Path) -> set[str]:
    """The wording keys of every sentence of the pack in ``pack``."""
    from core.library.pack import is_pack

    if not is_pack(pack):
        raise LibraryError(f"{pack}: not a phrase-corpus pack (no {MANIFEST})")
    try:
        with gzip.open(pack / SENTENCES, "rt", encoding="utf-8") as handle:
            return {wording_key(str(json.loads(line)[2])) for line in handle if line.strip()}
    except (OSError, ValueError, IndexError, TypeError, EOFError) as error:
        raise LibraryError(f"{pack}: damaged phrase-corpus pack ({error})") from None


def write_extra(folder: str | Path, papers: Iterable[PaperInput], base: Path | None = None,
                keep: PackFilter | None = None, command: str = "",
                ctx: JobContext | None = None) -> dict[str, Any]:
    """Write the extra text of ``papers`` to ``folder``: sentences ``keep`` accepts, each wording
    once, none already in the pack ``base``. The manifest is written last (it marks the folder)."""
    ctx = ensure_context(ctx)
    keep = keep or PackFilter()
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).unlink(missing_ok=True)
    seen = pack_wordings(base) if base is not None else set()
    base_sentences = len(seen)
    counts: dict[str, dict[str, Any]] = {}
    tmp = out / f"{EXTRA_PAPERS}.tmp"
    try:
        credits = _write_papers(tmp, papers, keep, seen, counts, ctx)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    total_papers = sum(entry["papers"] for entry in counts.values())
    total_sentences = sum(entry["sentences"] for entry in counts.values())
    tmp.replace(out / EXTRA_PAPERS)
    _write_attribution(out, credits)
    manifest = {"format": EXTRA_FORMAT, "version": EXTRA_VERSION, "command": command,
                "filter": {"min_words": keep.min_words, "max_words": keep.max_words, "unique_wording": True},
                "deduplicated_against": ({"sentences": base_sentences,
                                          "sentences_sha256": file_sha256(base / SENTENCES)}
                                         if base is not None else None),
                "sources": counts, "papers": total_papers, "sentences": total_sentences,
                "data_sha256": file_sha256(out / EXTRA_PAPERS)}
    (out / f"{MANIFEST}.tmp").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                         encoding="utf-8")
    (out / f"{MANIFEST}.tmp").replace(out / MANIFEST)
    return manifest


def _kept_sections(paper: PaperInput, keep: PackFilter, seen: set[str]) -> list[list[Any]]:
    """``[heading, kind, sentences]`` of each section with a sentence ``keep`` accepts that is not
    in ``seen`` (which then holds it)."""
    sections = []
    for section in paper.sections:
        texts = []
        for text in section.sentences:
            text = " ".join(str(text).split())
            if keep.keeps(text) and wording_key(text) not in seen:
                seen.add(wording_key(text))
                texts.append(text)
        if texts:
            sections.append([section.heading, section.kind, texts])
    return sections


def _write_papers(path: Path, papers: Iterable[PaperInput], keep: PackFilter, seen: set[str],
                  counts: dict[str, dict[str, Any]], ctx: JobContext) -> list[str]:
    """Write the kept papers to ``path`` (xz JSON lines), counting them per source in ``counts``;
    returns the attribution lines of those under a CC BY licence."""
    credits: list[str] = []
    kept_sentences = 0
    with lzma.open(path, "wb", preset=XZ_PRESET) as handle:
        for done, paper in enumerate(papers, 1):
            if done % 500 == 0:
                ctx.progress(done, 0, f"{done} papers, {kept_sentences} sentences kept")
            sections = _kept_sections(paper, keep, seen)
            if not sections:
                continue
            row = [paper.paper_id, paper.dataset, paper.title, paper.licence, sections]
            handle.write((json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
            kept = sum(len(s[2]) for s in sections)
            kept_sentences += kept
            entry = counts.setdefault(paper.dataset, {"licences": [], "papers": 0, "sentences": 0})
            if paper.licence not in entry["licences"]:
                entry["licences"].append(paper.licence)
            entry["papers"] += 1
            entry["sentences"] += kept
            if paper.licence.startswith("CC BY"):
                authors = str(getattr(paper, "authors", "") or "authors not recorded")
                credits.append(f"{paper.paper_id} ({paper.dataset}, {paper.licence}): {authors}. "
                               f"\"{paper.title}\".")
    return credits


def _write_attribution(out: Path, credits: list[str]) -> None:
    path = out / ATTRIBUTION
    if not credits:
        path.unlink(missing_ok=True)
        return
    path.write_text("Papers quoted in papers.jsonl.xz under a licence that requires attribution\n"
                    f"(one per line: id, source, licence, authors, title).\n{CHANGES}\n\n"
                    + "\n".join(credits) + "\n", encoding="utf-8")


def is_extra(folder: str | Path) -> bool:
    return (Path(folder) / MANIFEST).is_file() and (Path(folder) / EXTRA_PAPERS).is_file()


def read_extra_manifest(folder: str | Path) -> dict[str, Any]:
    """The manifest of the extra text in ``folder``; a one-line :class:`LibraryError` when it is not
    one or is damaged."""
    folder = Path(folder)
    if not is_extra(folder):
        raise LibraryError(f"{folder}: no phrase-corpus extra text ({MANIFEST} and {EXTRA_PAPERS})")
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise LibraryError(f"{folder}: damaged phrase-corpus extra text ({error})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != EXTRA_FORMAT:
        raise LibraryError(f"{folder}: {MANIFEST} is not a phrase-corpus extra-text manifest")
    if manifest.get("version") != EXTRA_VERSION:
        raise LibraryError(f"{folder}: extra text version {manifest.get('version')!r}; this Rhetorica "
                           f"reads version {EXTRA_VERSION}")
    return manifest


def verify_extra(folder: str | Path) -> dict[str, Any]:
    """The manifest, once the data file's sha256 matches it (a truncated or altered file is refused
    before any labelling starts)."""
    manifest = read_extra_manifest(folder)
    if file_sha256(Path(folder) / EXTRA_PAPERS) != manifest.get("data_sha256"):
        raise LibraryError(f"{folder}: {EXTRA_PAPERS} does not match its manifest (damaged or replaced)")
    return manifest


def _paper(row: Any, where: str) -> ExtraPaper:
    try:
        paper_id, dataset, title, licence, sections = row
        parts = [ExtraSection(str(heading), str(kind), [str(s) for s in sentences])
                 for heading, kind, sentences in sections]
        if not all(isinstance(s, list) for _, _, s in sections):
            raise ValueError("sentences are not a list")
    except (TypeError, ValueError) as error:
        raise LibraryError(f"{where}: not an extra-text paper ({error})") from None
    return ExtraPaper(str(paper_id), str(dataset), str(title), str(licence), parts)


def iter_extra(folder: str | Path) -> Iterator[ExtraPaper]:
    """The papers of the extra text in ``folder``, in file order (read as a stream)."""
    path = Path(folder) / EXTRA_PAPERS
    try:
        with lzma.open(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    yield _paper(json.loads(line), f"{path}, line {number}")
    except (OSError, lzma.LZMAError, EOFError, ValueError) as error:
        if isinstance(error, LibraryError):
            raise
        raise LibraryError(f"{path}: damaged phrase-corpus extra text ({error})") from None

