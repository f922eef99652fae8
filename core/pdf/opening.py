"""Opening and validating a PDF: typed errors for every kind of bad input."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pymupdf

from core.errors import (
    CorruptPdfError,
    EncryptedPdfError,
    MissingFileError,
    NotAPdfError,
    RhetoricaError,
    ScannedPdfError,
    TooLargeError,
)

# MuPDF prints repair messages ("MuPDF error: syntax error ...") on stderr; problems reach the
# user as typed errors instead, so keep the terminal clean.
pymupdf.TOOLS.mupdf_display_errors(False)
pymupdf.TOOLS.mupdf_display_warnings(False)

SCAN_CHECK_PAGES = 5
MIN_CHARS_PER_PAGE = 40  # fewer visible characters than this over the first pages: no text layer

_SIGNATURES = {
    b"PK\x03\x04": "a ZIP archive or Office document (.docx/.pptx/.xlsx)",
    b"\xd0\xcf\x11\xe0": "an old Microsoft Office document",
    b"{\\rtf": "an RTF document",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"<!DOC": "an HTML page",
    b"<html": "an HTML page",
    b"%!PS": "a PostScript file",
}


def _check_header(path: Path) -> None:
    name = str(path)
    if not path.exists():
        raise MissingFileError(name, "no such file")
    if path.is_dir():
        raise NotAPdfError(name, "is a folder, not a PDF file")
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            head = handle.read(1024)
    except OSError as error:
        raise NotAPdfError(name, f"cannot be read ({error.strerror or error})") from None
    if size == 0:
        raise NotAPdfError(name, "is empty (0 bytes), not a PDF")
    if b"%PDF-" not in head:
        for sig, what in _SIGNATURES.items():
            if head.startswith(sig):
                raise NotAPdfError(name, f"is {what}, not a PDF")
        raise NotAPdfError(name, "is not a PDF (no %PDF header)")


_PDF_SYNTAX = re.compile(rb"\bendobj\b|\bxref\b|\btrailer\b|\bstartxref\b|\d+\s+\d+\s+obj\b")
_TAIL_CHUNK = 1 << 20


def _tail_has_eof(path: Path) -> bool:
    """Whether the file's last ``%%EOF`` is followed by no more PDF: a download cut short ends without one
    (or inside an update written after it), while bytes appended after a complete file (an e-mail
    footer, padding) are not PDF syntax."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        end = size
        while end > 0:
            start = max(0, end - _TAIL_CHUNK)
            handle.seek(start)
            chunk = handle.read(end - start + 5)  # overlap, so a marker across the boundary is found
            at = chunk.rfind(b"%%EOF")
            if at >= 0:
                handle.seek(start + at + 5)
                return _PDF_SYNTAX.search(handle.read()) is None
            end = start
    return False


def _open_document(path: Path) -> pymupdf.Document:
    """MuPDF opens a file by its name as UTF-8, so a name that is not UTF-8 (its bytes kept as surrogates,
    e.g. ``abc\\udcff.pdf``) fails there as if the file were damaged: such a file is opened from its bytes."""
    name = str(path)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return pymupdf.open(stream=path.read_bytes(), filetype="pdf")
    return pymupdf.open(name, filetype="pdf")


def open_pdf(path: str | os.PathLike[str], *, max_pages: int | None = None,
             check_text: bool = True) -> pymupdf.Document:
    """Open ``path`` as a readable PDF with a text layer, or raise a typed error.

    ``check_text=False`` skips the scan check (for rendering a file that was parsed before).
    """
    path = Path(path)
    name = str(path)
    _check_header(path)
    try:
        doc = _open_document(path)
    except OSError as error:
        raise NotAPdfError(name, f"cannot be read ({error.strerror or error})") from None
    except Exception as error:  # pymupdf raises plain RuntimeError/FileDataError subclasses
        raise CorruptPdfError(name, f"is damaged and cannot be opened ({_short(error)})") from None
    try:
        if doc.needs_pass:
            raise EncryptedPdfError(name, "is password-protected: remove the password and try again")
        if doc.page_count == 0:
            raise CorruptPdfError(name, "is damaged: no pages could be read")
        if doc.is_repaired and not _tail_has_eof(path):
            raise CorruptPdfError(name, "is truncated or damaged (file ends early): download it again")
        if max_pages is not None and doc.page_count > max_pages:
            raise TooLargeError(name, f"has {doc.page_count} pages, more than the limit of {max_pages}")
        if check_text:
            _check_text_layer(doc, name)
    except RhetoricaError:
        doc.close()
        raise
    except Exception as error:  # a damaged page tree: doc.page_count raises "Invalid number of pages"
        doc.close()
        raise CorruptPdfError(name, f"is damaged and cannot be read ({_short(error)})") from None
    except BaseException:
        doc.close()
        raise
    return doc


def _check_text_layer(doc: pymupdf.Document, name: str) -> None:
    n = min(SCAN_CHECK_PAGES, doc.page_count)
    chars = 0
    images = 0
    for i in range(n):
        try:
            page = doc.load_page(i)
            text = page.get_text("text")
            images += len(page.get_images(full=False))
        except Exception as error:
            reason = f"is damaged: page {i + 1} cannot be read ({_short(error)})"
            raise CorruptPdfError(name, reason) from None
        chars += sum(1 for c in text if not c.isspace())
    if chars < MIN_CHARS_PER_PAGE * n:
        if doc.is_repaired:
            raise CorruptPdfError(name, "is damaged: its pages could not be read (repair failed)")
        if images:
            raise ScannedPdfError(name, "has no text layer (scanned pages): run OCR on it first")
        raise ScannedPdfError(name, "has no extractable text (blank pages?): run OCR on it first")


def _short(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text[:120]
