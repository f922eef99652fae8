"""A PDF given on the command line, read through the analysis cache the app shares (issue 26.1): its
parsed paper, then its embedded analysis (both views), so `align` and `search --like` encode a paper the
app or an earlier command analysed already not at all."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def cached_pdf(path: Path, ctx: Any) -> tuple[Any, str, Any]:
    """A PDF's paper, sha256 and the user's analysis cache: the paper from the cache when the app (or
    an earlier command) parsed it already; nothing is written before the model has run."""
    from core.cache import AnalysisCache
    from core.labelling.embedded_analysis import cached_pdf_paper

    cache = AnalysisCache()
    paper, sha256 = cached_pdf_paper(path, cache, ctx, save=False, on_note=_print_note)
    return paper, sha256, cache


def _print_note(note: str) -> None:
    """A damaged cache entry, said in one line (it is computed again)."""
    print(f"rhetorica: note: {note}", file=sys.stderr)


def embedded_pdf_analysis(paper: Any, sha256: str, cache: Any, model: Any, ctx: Any) -> Any:
    """The paper's embedded analysis (both views), shared with the app through the analysis cache:
    the encoder runs only when no entry is there (a damaged one is said in one note and recomputed)."""
    from core.labelling.embedded_analysis import embedded_analysis

    found = embedded_analysis(paper, model, cache=cache, sha256=sha256, ctx=ctx)
    if found.note:
        print(f"rhetorica: note: {found.note}", file=sys.stderr)
    return found.analysis
