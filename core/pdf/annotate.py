"""The open paper as a PDF with its role colours as real highlight annotations (issue 27.4).

One highlight annotation per labelled sentence and page (its quads are the sentence's rectangles on
that page), coloured with the role's colour (``core.taxonomy.role_colors``), its note (``/Contents``)
carrying the role and the communicative function in the GUI's words (:func:`highlight_note`), its
author (``/T``) :data:`ANNOTATION_AUTHOR` and its subject the role. Only annotations are added: no
page content changes, so any reader can hide or delete them, and :func:`remove_role_highlights` takes
them all out again. The source PDF is never written; the copy is written atomically (``core.fileio``),
and a source that is not the PDF the analysis was made from (another sha256) is refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.document import PageRect, Paper
from core.errors import CorruptPdfError, EncryptedPdfError, MissingFileError, NotAPdfError, RhetoricaError
from core.exporting.label_words import function_words, role_words
from core.fileio import StorageError, atomic_write_with, file_sha256
from core.jobs import JobContext, ensure_context
from core.taxonomy.labels import FunctionPrediction, RolePrediction
from core.taxonomy.role_colors import DEFAULT_ROLE_COLORS, UNLABELLED_COLOR, hex_to_rgb

if TYPE_CHECKING:  # pragma: no cover
    from core.labelling.analysis import PaperAnalysis

ANNOTATION_AUTHOR = "Rhetorica"
HIGHLIGHT_OPACITY = 0.45  # multiply-blended: text stays readable under the darker colours


class AnnotateError(RhetoricaError):
    """The annotated PDF cannot be made (one line a user can act on)."""


@dataclass(frozen=True)
class AnnotatedPdf:
    """What was written: ``highlights`` annotations for ``sentences`` labelled sentences; ``skipped``
    sentences had no rectangle on the page (a draft's, or text the parser could not place)."""

    path: Path
    highlights: int
    sentences: int
    skipped: int


def highlight_note(role: RolePrediction, function: FunctionPrediction | None = None) -> str:
    """The note a highlight carries, one fact a line, worded as the GUI words it
    (``core.exporting.label_words``): "Role: method 81%" or "Role: uncertain: objective 39% or
    background 39%"; "Function: Stating the aim 70%" or, below the bundle's threshold, "Function: no
    clear function (uncertain: A 13% or B 10%)"; no function line without a function head."""
    lines = [f"Role: {role_words(role)}"]
    if function is not None:
        lines.append(f"Function: {function_words(function)}")
    lines.append(f"Labelled by {ANNOTATION_AUTHOR}")
    return "\n".join(lines)


def _rects_by_page(rects: list[PageRect]) -> dict[int, list[PageRect]]:
    pages: dict[int, list[PageRect]] = {}
    for rect in rects:
        if rect.x1 > rect.x0 and rect.y1 > rect.y0:
            pages.setdefault(rect.page, []).append(rect)
    return pages


def _open_source(source: Path, paper: Paper) -> Any:
    import pymupdf

    if not source.is_file():
        raise MissingFileError(str(source), "no such file")
    if paper.sha256 and file_sha256(source) != paper.sha256:
        raise AnnotateError(f"{source}: is not the PDF this analysis was made from (its sha256 differs)")
    try:
        doc = pymupdf.open(source)
    except Exception as error:  # pymupdf raises its own types for damaged files
        raise NotAPdfError(str(source), f"cannot be opened as a PDF ({type(error).__name__})") from None
    if not doc.is_pdf:
        doc.close()
        raise NotAPdfError(str(source), "is not a PDF")
    if doc.needs_pass:
        doc.close()
        raise EncryptedPdfError(str(source), "is password-protected: remove the password and try again")
    return doc


def _colour(role: str, colors: Mapping[str, str]) -> tuple[float, float, float]:
    try:
        return hex_to_rgb(colors.get(role) or DEFAULT_ROLE_COLORS.get(role, UNLABELLED_COLOR))
    except ValueError:
        return hex_to_rgb(DEFAULT_ROLE_COLORS.get(role, UNLABELLED_COLOR))


def annotate_pdf(source: str | os.PathLike[str], paper: Paper, analysis: PaperAnalysis,
                 out: str | os.PathLike[str], *, colors: Mapping[str, str] | None = None,
                 ctx: JobContext | None = None) -> AnnotatedPdf:
    """Write ``source`` with one highlight per labelled sentence and page to ``out`` (atomically)."""
    import pymupdf

    ctx = ensure_context(ctx)
    source, out = Path(source), Path(out)
    if len(analysis.roles) != len(paper.sentences):
        raise AnnotateError(f"the analysis has {len(analysis.roles)} labels for "
                            f"{len(paper.sentences)} sentences")
    if out.exists() and source.exists() and os.path.samefile(out, source):
        raise AnnotateError(f"{out}: is the PDF itself; write the annotated copy to another file")
    colors = dict(colors or {})
    doc = _open_source(source, paper)
    try:
        highlights = skipped = 0
        total = len(paper.sentences)
        for sentence, role in zip(paper.sentences, analysis.roles):
            if sentence.index % 50 == 0:
                ctx.check()
                ctx.progress(sentence.index, total, "Adding highlights")
            pages = _rects_by_page(sentence.rects)
            pages = {p: rects for p, rects in pages.items() if 0 <= p < doc.page_count}
            if not pages:
                skipped += 1
                continue
            function = analysis.functions[sentence.index] if analysis.functions is not None else None
            note = highlight_note(role, function)
            colour = _colour(role.label, colors)
            for page_index, rects in sorted(pages.items()):
                page = doc[page_index]
                # sentence rectangles are in the page as displayed; annotations want unrotated points
                matrix = page.derotation_matrix
                quads = [(pymupdf.Rect(r.x0, r.y0, r.x1, r.y1) * matrix).quad for r in rects]
                annot = page.add_highlight_annot(quads=quads)
                annot.set_colors(stroke=colour)
                annot.set_opacity(HIGHLIGHT_OPACITY)
                annot.set_info(content=note, title=ANNOTATION_AUTHOR, subject=role.label)
                annot.update()
                highlights += 1
        ctx.check()
        ctx.progress(total, total, "Saving the annotated PDF")
        _save(doc, out, "the annotated PDF")
    except RuntimeError as error:  # pymupdf's failures on a damaged page
        raise CorruptPdfError(str(source), f"cannot be annotated ({' '.join(str(error).split())[:120]})") \
            from None
    finally:
        doc.close()
    return AnnotatedPdf(out, highlights, total - skipped, skipped)


def _save(doc: Any, out: Path, what: str) -> None:
    """``doc`` written to ``out`` atomically; a path that cannot be written is one line."""
    try:
        atomic_write_with(out, lambda tmp: doc.save(tmp, garbage=1, deflate=True), what)
    except StorageError:
        raise
    except OSError as error:
        raise AnnotateError(f"cannot write {out}: {error.strerror or error}") from None


def remove_role_highlights(path: str | os.PathLike[str], out: str | os.PathLike[str]) -> int:
    """Write ``path`` without the highlights :func:`annotate_pdf` added (other annotations stay) to
    ``out``; the number removed."""
    import pymupdf

    doc = pymupdf.open(Path(path))
    try:
        removed = 0
        for index in range(doc.page_count):
            page = doc[index]
            for annot in list(page.annots()):
                if annot.type[1] == "Highlight" and annot.info.get("title") == ANNOTATION_AUTHOR:
                    page.delete_annot(annot)
                    removed += 1
        _save(doc, Path(out), "the PDF")
    finally:
        doc.close()
    return removed
