"""pymupdf work that runs in a child process (see :mod:`core.procjobs`; no Qt in this module).

The GUI process calls pymupdf only on its UI thread (page rendering, text selection); parsing and
figure crops run here, in a child, so no two threads ever use MuPDF at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from core.jobs import JobContext, ensure_context
from core.procjobs import BackgroundProcessError, iter_in_process

if TYPE_CHECKING:  # pragma: no cover
    from core.cache import AnalysisCache
    from core.document import Paper

CHUNK = 100  # sentences per message: small pickles keep the GUI's receiving thread off the GIL


def parse_to_dict(ctx: JobContext, path: str) -> Iterator[tuple[str, Any]]:  # child side
    """Parse and stream the paper back in small pieces: the header, then sentence chunks."""
    from core.pdf import parse_pdf

    data = parse_pdf(path, ctx).to_dict()
    sentences = data.pop("sentences")
    yield "paper", data
    for start in range(0, len(sentences), CHUNK):
        yield "sentences", sentences[start:start + CHUNK]


def figure_pngs(ctx: JobContext, path: str, figures: list[dict[str, Any]], zoom: float
                ) -> Iterator[tuple[int, bytes | None]]:  # child side
    from core.document import Figure
    from core.pdf import render_figure_png

    for i, data in enumerate(figures):
        ctx.progress(i, len(figures), f"figure {i + 1} of {len(figures)}")
        try:
            png = render_figure_png(path, Figure.from_dict(data), zoom=zoom)
        except Exception:  # one bad crop must not lose the others
            png = None
        yield i, png


def parse_isolated(ctx: JobContext | None, path: str) -> Any:
    """``core.pdf.parse_pdf(path)`` run in a child process; returns the :class:`Paper`."""
    from core.document import Paper, Sentence
    from core.errors import CorruptPdfError

    data: dict[str, Any] = {}
    sentences: list[Any] = []
    try:
        for kind, value in iter_in_process(ensure_context(ctx), "app.gui.pdf_jobs:parse_to_dict", path):
            if kind == "item":
                what, payload = value
                if what == "paper":
                    data = payload
                else:
                    sentences.extend(Sentence.from_dict(s) for s in payload)
    except BackgroundProcessError as error:
        raise CorruptPdfError(path, f"the PDF reader failed on this file ({error})") from error
    data["sentences"] = []
    paper = Paper.from_dict(data)
    paper.sentences = sentences
    return paper


def figure_pngs_isolated(ctx: JobContext | None, path: str, figures: list[Any], zoom: float = 1.0
                         ) -> Iterator[tuple[int, bytes | None]]:
    """Yield ``(figure index, PNG bytes or None)``, rendered in a child process."""
    dicts = [f.to_dict() for f in figures]
    target = "app.gui.pdf_jobs:figure_pngs"
    for kind, value in iter_in_process(ensure_context(ctx), target, path, dicts, zoom):
        if kind == "item":
            yield value


def parse_cached(ctx: JobContext, path: str, cache: AnalysisCache | None) -> tuple[Paper, str, bool]:
    """The parsed paper of ``path`` from the cache (keyed by its sha256 and the parser version) or
    parsed in a child process (pymupdf is not thread-safe) and cached: ``(paper, sha256, from the cache)``."""
    from core.labelling.embedded_analysis import cached_pdf_paper

    parsed: list[bool] = []

    def parse(pdf: object, job: JobContext | None) -> Paper:
        parsed.append(True)
        paper: Paper = parse_isolated(job, str(pdf))
        return paper

    paper, sha = cached_pdf_paper(path, cache, ctx, parse=parse)
    ctx.check()
    paper.source_path = path
    return paper, sha, not parsed
