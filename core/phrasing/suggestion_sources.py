"""Where suggestions come from, opened once, searched once (issue 26.2): the use case that
``rhetorica suggest`` and the GUI's Suggestions panel share.

- :func:`source_folders`: the phrase corpus and the user's library that hold sentences (a library
  whose database has gone may be kept too, so that the search can say so);
- :func:`opened_sources`: the folders opened as :class:`core.phrasing.suggest.Source` (closed on exit); a
  phrase-corpus pack (read-only, slow to open) is opened once per process and kept in :data:`PACKS`;
  a library that cannot be read is left out (:attr:`OpenSources.left_out`) while another source answers;
- :func:`search`: :func:`core.phrasing.suggest.suggest` over them; a library that fails during the search
  is left out the same way; a failure that a library built with another model explains says so; each
  library suggestion whose paper was added from a PDF gets that PDF's path (``source["path"]``) from
  the paper record the title was read from (the library is read once per paper, not twice);
- :func:`find_suggestions`: open, search, close, in one call (a background job's body: SQLite
  connections belong to the thread that opened them).

Its callers: ``rhetorica suggest``, the GUI's Suggestions panel, the language server
(``app.lsp.engine``: sources opened once and kept until its settings name others) and
``rhetorica bench suggest``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import RhetoricaError
from core.jobs import JobContext, ensure_context
from core.library.store import LibraryError
from core.model_api import RoleModel

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from core.labelling.sentence_context import SentenceContext
    from core.library.store import PaperRecord, SentenceRecord
    from core.phrasing.query_reading import QueryReading
    from core.phrasing.suggest import SentenceSource, Source, SuggestionResult, Templater

SourceFolders = list[tuple[str, Path]]  # (kind: "corpus" | "library", folder)
KINDS = ("corpus", "library")


def source_folders(which: str = "all", corpus: Path | None = None, library: Path | None = None, *,
                   with_traces: bool = False) -> SourceFolders:
    """The phrase corpus and the library (``which``: "corpus", "library" or "all"; default folders
    from ``core.paths``) that hold sentences; never created here. ``with_traces``: a library whose
    database is gone but which leaves traces counts too (the search then says what happened)."""
    from core.library.store import library_traces
    from core.paths import corpus_dir, library_dir
    from core.phrasing.suggest import has_sentences

    wanted = [("corpus", corpus or corpus_dir()), ("library", library or library_dir())]
    return [(kind, folder) for kind, folder in wanted if which in (kind, "all") and (
        has_sentences(folder) or (with_traces and kind == "library" and bool(library_traces(folder))))]


def available_templater() -> Templater | None:
    """The formulaic-span extractor (``core.phrasing.templates.template_of``), or None when its lexicon is not
    there (suggestions then come without templates)."""
    from core.phrasing.templates import default_lexicon_path, template_of

    return template_of if default_lexicon_path().is_file() else None


# how to get something to suggest from (NoSources's message; the language server's note)
ADD_SOURCES = ("build the phrase corpus with 'rhetorica corpus build' or add papers with "
               "'rhetorica library add PDF…'")


class NoSources(RhetoricaError):
    """There is no phrase corpus or library to suggest from."""

    def __init__(self) -> None:
        super().__init__(f"nothing to suggest from: {ADD_SOURCES}")


@dataclass(frozen=True)
class SuggestionRequest:
    """One search: the sentence, how many suggestions, and the filters on them."""

    text: str
    k: int = 10
    function: str | None = None  # only suggestions with this function id
    section_kind: str | None = None  # only suggestions from this section kind (not the query's own)
    context: SentenceContext | None = None  # what the query is labelled with (None: alone)
    reading: QueryReading | None = None  # the query already read (a sentence of the open paper's analysis)


class PackCache:
    """Phrase-corpus packs opened once per (kind, folder, manifest version, model) and kept: they are
    read-only and thread-safe, and reading one takes a while (10^5 sentences). A newer build of a
    pack replaces the older one (closed)."""

    def __init__(self) -> None:
        self._packs: dict[tuple[str, str, int, str], Source] = {}
        self._lock = threading.Lock()

    def open(self, kind: str, folder: Path, model: RoleModel) -> Source:
        from core.library.pack import MANIFEST
        from core.phrasing.suggest import open_source

        key = (kind, str(folder), (folder / MANIFEST).stat().st_mtime_ns, model.model_id)
        with self._lock:
            if key not in self._packs:
                for old in [k for k in self._packs if k[:2] == key[:2]]:
                    self._packs.pop(old).library.close()
                self._packs[key] = open_source(kind, folder, model)  # refuses a pack of another model
            return self._packs[key]


PACKS = PackCache()


class RememberedPapers:
    """A source that remembers the paper records it was asked for (``core.phrasing.suggest`` reads each
    suggestion's paper for its title; the PDF path is then taken from the same record)."""

    def __init__(self, inner: SentenceSource) -> None:
        self.inner = inner
        self.duplicate_view = inner.duplicate_view
        self.papers: dict[str, PaperRecord | None] = {}

    def search(self, view: str, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.inner.search(view, query, k)

    def sentences(self, ids: Sequence[int]) -> list[SentenceRecord]:
        return self.inner.sentences(ids)

    def vectors_of(self, ids: Sequence[int], view: str) -> np.ndarray:
        return self.inner.vectors_of(ids, view)

    def paper(self, paper_id: str) -> PaperRecord | None:
        if paper_id not in self.papers:
            self.papers[paper_id] = self.inner.paper(paper_id)
        return self.papers[paper_id]

    def close(self) -> None:
        self.inner.close()


@dataclass
class OpenSources:
    """The opened sources, and the libraries left out because they cannot be read."""

    sources: list[Source]
    left_out: list[LibraryError] = field(default_factory=list)

    def notices(self) -> list[str]:
        """What the libraries repaired by themselves while they were read (one line each)."""
        from core.library.library import Library

        return [notice for source in self.sources if isinstance(source.library, RememberedPapers)
                and isinstance(source.library.inner, Library) for notice in source.library.inner.notices]


@contextmanager
def opened_sources(folders: Sequence[tuple[str, Path]], model: RoleModel, ctx: JobContext | None = None,
                   packs: PackCache = PACKS) -> Iterator[OpenSources]:
    """``folders`` opened (libraries closed on exit, packs kept in ``packs``). A library that cannot be
    opened is left out when another folder is there to answer; alone, its error is raised."""
    from core.library.pack import is_pack
    from core.phrasing.suggest import Source, open_source

    ctx = ensure_context(ctx)
    opened = OpenSources([])
    with ExitStack() as stack:
        for kind, folder in folders:
            ctx.check()
            try:
                if is_pack(folder):
                    source = packs.open(kind, folder, model)
                else:
                    source = open_source(kind, folder, model)
                    stack.callback(source.library.close)
            except LibraryError as error:
                if kind != "library" or len(folders) == 1:
                    raise
                opened.left_out.append(error)
                continue
            opened.sources.append(Source(kind, RememberedPapers(source.library)))
        yield opened


def search(opened: OpenSources, request: SuggestionRequest, model: RoleModel,
           templater: Templater | None = None) -> SuggestionResult:
    """The suggestions for ``request`` from the opened sources, with each library PDF's path. A
    library that fails while the phrase corpus is there is left out (``opened.left_out``) and the
    search runs again without it."""
    try:
        result = _suggest(request, model, opened.sources, templater)
    except LibraryError as error:
        rest = [source for source in opened.sources if source.kind != "library"]
        if not rest or len(rest) == len(opened.sources):
            raise
        opened.left_out.append(error)
        opened.sources = rest
        result = _suggest(request, model, rest, templater)
    attach_paths(result, opened.sources)
    return result


@dataclass
class Found:
    """A search's answer, the libraries left out of it and what the libraries repaired by themselves."""

    result: SuggestionResult
    left_out: list[LibraryError] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def find_suggestions(ctx: JobContext, request: SuggestionRequest, model: RoleModel,
                     folders: Sequence[tuple[str, Path]], templater: Templater | None) -> Found:
    """Open the sources in this thread, search them, close the libraries (:class:`NoSources` when
    ``folders`` is empty)."""
    if not folders:
        raise NoSources()
    with opened_sources(folders, model, ctx) as opened:
        ctx.check()
        ctx.progress(0, 1, "finding phrasing suggestions")
        result = search(opened, request, model, templater)
        ctx.progress(1, 1, f"{len(result.suggestions)} suggestions")
        return Found(result, list(opened.left_out), opened.notices())


def _suggest(request: SuggestionRequest, model: RoleModel, sources: Sequence[Source],
             templater: Templater | None) -> SuggestionResult:
    """``core.phrasing.suggest.suggest``; a failure that a library of another model explains says so."""
    from core.phrasing.suggest import suggest

    try:
        return suggest(request.text, model, sources, request.k, function=request.function,
                       section_kind=request.section_kind, templater=templater, context=request.context,
                       reading=request.reading)
    except LibraryError:
        raise
    except Exception as error:
        raise model_mismatch(sources, model) or error from error


def attach_paths(result: SuggestionResult, sources: Sequence[Source]) -> None:
    """Give each library suggestion whose paper was added from a PDF that PDF's path
    (``source["path"]``), from the paper records the search read (no second read of the library)."""
    remembered = [source.library for source in sources
                  if source.kind == "library" and isinstance(source.library, RememberedPapers)]
    for item in result.suggestions:
        if item.source.get("kind") != "library":
            continue
        paper_id = item.source.get("paper_id", "")
        for library in remembered:
            paper = library.papers.get(paper_id)
            if paper is not None:
                if paper.kind == "pdf" and paper.source:
                    item.source["path"] = paper.source
                break


def model_mismatch(sources: Sequence[Source], model: RoleModel) -> RhetoricaError | None:
    """A clear error when a library was built with other models than ``model`` (its vectors do not
    compare with the query's), else None. (A pack checks its model itself when it is opened.)"""
    from core.library.library import Library

    for source in sources:
        library = source.library.inner if isinstance(source.library, RememberedPapers) else source.library
        if not isinstance(library, Library):
            continue
        try:
            built_with = sorted(library.store.stats().models)
        except LibraryError:
            continue
        if built_with and model.model_id not in built_with:
            return RhetoricaError(f"the {source.kind} was built with {', '.join(built_with)}, not with the "
                                  f"current model {model.model_id}: choose that model (File › Settings, or "
                                  "--model), or add the papers again with this one")
    return None
