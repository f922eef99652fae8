"""One embedded analysis per paper: load it from the cache or compute it once (no Qt).

The embedded analysis (:func:`core.labelling.analysis.label_paper` then ``.embed()``) holds everything the
features read of a paper: roles, functions, both views of every sentence, and the content view of
its title and caption sentences. The GUI session owns one per open paper, and the panels and the
library read it; the CLI's ``analyze`` reads and writes the same cache entry. It is keyed by the
paper's sha256, the parser version and the model id (:class:`core.cache.AnalysisCache`); a damaged
entry is computed again and :attr:`EmbeddedAnalysis.note` says so in one line.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.jobs import JobContext, ensure_context

if TYPE_CHECKING:  # pragma: no cover
    from core.cache import AnalysisCache
    from core.document import Paper
    from core.labelling.analysis import LabelledPaper, PaperAnalysis
    from core.model_api import RoleModel


@dataclass(frozen=True)
class EmbeddedAnalysis:
    """A paper's embedded analysis, whether it came from the cache, and a note (a damaged entry)."""

    analysis: PaperAnalysis
    from_cache: bool
    note: str = ""


def cached_analysis(paper: Paper, model_id: str, cache: AnalysisCache | None, sha256: str = "",
                    *, need_vectors: bool = True) -> tuple[PaperAnalysis | None, str]:
    """The cached analysis (with its vectors when ``need_vectors``) or None, and the note of a
    damaged entry ("" when there was none)."""
    if cache is None:
        return None, ""
    found = cache.read_analysis(paper, model_id, sha256 or paper.sha256, need_vectors=need_vectors)
    return found.analysis, found.note


def store_analysis(paper: Paper, analysis: PaperAnalysis, cache: AnalysisCache | None,
                   sha256: str = "") -> None:
    """Save ``analysis`` in the cache and drop the paper's entries of older parsers and models; a cache
    that cannot be written (full disk, read-only folder) is skipped: it only makes reopening slower."""
    if cache is None:
        return
    sha = sha256 or paper.sha256
    with contextlib.suppress(OSError):  # StorageError is an OSError too
        cache.save_analysis(paper, analysis, sha)
        cache.prune(sha, paper.parser_version, analysis.model_id)


def start_embedded_analysis(paper: Paper, model: RoleModel, ctx: JobContext | None = None) -> LabelledPaper:
    """The labels now (:func:`core.labelling.analysis.label_paper`); ``.embed(ctx)`` finishes the vectors."""
    from core.labelling.analysis import label_paper

    return label_paper(paper, model, ctx)


def cached_pdf_paper(path: str | Path, cache: AnalysisCache | None, ctx: JobContext | None = None, *,
                     parse: Callable[[Path, JobContext | None], Paper] | None = None,
                     save: bool = True, on_note: Callable[[str], None] | None = None) -> tuple[Paper, str]:
    """A PDF's parsed paper and its sha256: from ``cache`` (keyed by the sha256 and the parser version)
    when it holds it, else parsed (``parse``, default :func:`core.pdf.parse_pdf` in this process) and
    cached (``save``; a cache that cannot be written is skipped). ``on_note`` gets the one line saying
    that the cached entry was damaged (it is parsed again)."""
    from core.fileio import file_sha256
    from core.pdf import PARSER_VERSION

    path = Path(path)
    sha = file_sha256(path)
    if cache is not None:
        found = cache.read_paper(sha, PARSER_VERSION, path.name)
        if found.note and on_note is not None:
            on_note(found.note)
        if found.paper is not None:
            found.paper.source_path = str(path)
            return found.paper, sha
    if parse is None:
        from core.pdf import parse_pdf

        parse = parse_pdf
    paper = parse(path, ctx)
    if cache is not None and save:
        with contextlib.suppress(OSError):
            cache.save_paper(paper, sha)
    return paper, sha


def embedded_pdf(path: str | Path, model: RoleModel, *, cache: AnalysisCache | None = None,
                 ctx: JobContext | None = None) -> tuple[Paper, EmbeddedAnalysis]:
    """A PDF's paper and embedded analysis, both from the cache when they are there (the CLI's
    ``search --like``, ``align`` and ``library add`` can share the app's entries this way)."""
    paper, sha = cached_pdf_paper(path, cache, ctx)
    return paper, embedded_analysis(paper, model, cache=cache, sha256=sha, ctx=ctx)


def embedded_analysis(paper: Paper, model: RoleModel, *, cache: AnalysisCache | None = None,
                      sha256: str = "", ctx: JobContext | None = None) -> EmbeddedAnalysis:
    """The paper's embedded analysis: from the cache when it is there whole, else computed (the
    sentence graph runs once over every text) and cached."""
    ctx = ensure_context(ctx)
    found, note = cached_analysis(paper, model.model_id, cache, sha256)
    if found is not None:
        return EmbeddedAnalysis(found, True)
    analysis = start_embedded_analysis(paper, model, ctx).embed(ctx)
    store_analysis(paper, analysis, cache, sha256)
    return EmbeddedAnalysis(analysis, False, note)


__all__ = ["EmbeddedAnalysis", "cached_analysis", "cached_pdf_paper", "embedded_analysis", "embedded_pdf",
           "start_embedded_analysis", "store_analysis"]
