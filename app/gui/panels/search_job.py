"""The Search panel's background job (a worker thread: no Qt here): the user's library ranked against
the open paper on one facet (``core.phrasing.search.search_like``), with the PDF each result came from."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.document import Paper
from core.errors import RhetoricaError
from core.jobs import JobContext
from core.model_api import RoleModel

if TYPE_CHECKING:  # pragma: no cover
    from core.labelling.analysis import PaperAnalysis
    from core.phrasing.search import QueryPaper, SearchResult


def library_folder() -> Path:
    """The user's library folder (``core.paths.library_dir``, read at each call)."""
    from core.paths import library_dir

    return library_dir()


class EmptyLibrary(RhetoricaError):
    """The library has no papers (or does not exist yet)."""


@dataclass(frozen=True)
class SearchOutcome:
    """What a search job returns: the query it used, the ranking and, per result, the PDF it came from
    when that file still exists ("" otherwise)."""

    query: QueryPaper
    result: SearchResult
    pdfs: dict[str, str] = field(default_factory=dict)


def _has_papers(folder: Path) -> bool:
    from core.library.library import Library
    from core.library.store import DATABASE_NAME

    if not (folder / DATABASE_NAME).is_file():
        return False
    with Library(folder) as library:
        return bool(library.store.connection.execute("SELECT 1 FROM papers LIMIT 1").fetchone())


def _query(ctx: JobContext, paper: Paper, model: RoleModel, paper_id: str, query: QueryPaper | None,
           analysis: PaperAnalysis | None) -> QueryPaper:
    """The open paper as a query: the one kept from an earlier search, else made from its analysis."""
    from core.labelling.analysis import analyze_paper
    from core.phrasing.search import query_from_analysis

    if query is not None:
        if query.paper_id != (paper_id or paper.source_path):
            # kept from an earlier search, and the paper was added to (or removed from) the library since
            query = dataclasses.replace(query, paper_id=paper_id or paper.source_path)
        return query
    if analysis is None or analysis.embeddings is None:
        ctx.progress(0, 1, "analysing the open paper")
        analysis = analyze_paper(paper, model, ctx, with_embeddings=True)
    ctx.check()
    return query_from_analysis(paper, analysis, paper_id=paper_id)


def search_job(ctx: JobContext, folder: Path, paper: Paper, model: RoleModel, facet: str, k: int,
               query: QueryPaper | None = None, analysis: PaperAnalysis | None = None) -> SearchOutcome:
    """Rank the library in ``folder`` against ``paper`` on ``facet``; ``query``: the paper already
    made a query by an earlier search; ``analysis``: the paper's embedded analysis (the session's),
    else the paper is analysed here. The library is opened and closed here."""
    from core.library.library import Library
    from core.phrasing.search import search_like

    ctx.progress(0, 1, "opening the library")
    if not _has_papers(folder):
        raise EmptyLibrary(f"the library {folder} is empty")
    with Library(folder) as library:  # the open paper is in the library: its id, so it is never listed
        paper_id = paper.sha256 if paper.sha256 and library.store.has_sha256(paper.sha256) else ""
    query = _query(ctx, paper, model, paper_id, query, analysis)
    # a paper with no sentence of the facet's roles is searched with all its sentences (core says so)
    ctx.check()
    ctx.progress(0, 1, "ranking the library's papers")
    with Library(folder) as library:
        result = search_like(library, query, facet, k=k)
        pdfs: dict[str, str] = {}
        for hit in result.results:
            record = library.store.paper(hit.paper_id)
            source = record.source if record is not None and record.kind == "pdf" else ""
            pdfs[hit.paper_id] = source if source and Path(source).is_file() else ""
    ctx.progress(1, 1, f"{len(result.results)} papers")
    return SearchOutcome(query, result, pdfs)
