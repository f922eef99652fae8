"""Word drafts through python-docx: body paragraphs in order, heading styles ("Heading 1" …, or any
style or paragraph with an outline level, so a localised Word's headings count too) as sections, the
"Title" paragraph as the title; captions, tables and empty paragraphs left out. The extracted text is
Markdown (``#`` heading lines, a blank line between paragraphs) and the sentences' ranges refer to it
(``ParsedDraft.source``): there is no character map into the XML, and saving goes to a new file."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from core.draft_formats.reading import ReadingBuilder, ReadingHeading, assemble_draft
from core.draft_formats.types import ParsedDraft
from core.errors import DraftError

MAX_UNPACKED = 500_000_000  # bytes: a .docx whose parts unpack to more is refused (a zip bomb)
# bytes of word/document.xml (the text and its markup; images are other parts): a 500-page book is about
# 30 MB; 150 MB took minutes and gigabytes to read
MAX_DOCUMENT_XML = 60_000_000
_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_SKIPPED_STYLES = re.compile(r"^(caption|table of figures|toc .*|header|footer|footnote text|bibliography)$",
                             re.IGNORECASE)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _outline_level(element: Any) -> int | None:
    """The ``w:outlineLvl`` of a paragraph's or style's properties (0-based; 9 = body text)."""
    if element is None:
        return None
    found = element.find(f"{_W}pPr/{_W}outlineLvl")
    if found is None:
        return None
    try:
        value = int(found.get(f"{_W}val", "9"))
    except ValueError:
        return None
    return value if value < 9 else None


def style_level(style: Any) -> int | None:
    """The heading level a paragraph style gives (1 = top; None: body text): a "Heading N" name or id, or
    an outline level, on the style or a style it is based on."""
    seen = 0
    while style is not None and seen < 10:  # the style and those it is based on
        match = _HEADING_NAME.match(style.name or "") or _HEADING_NAME.match(style.style_id or "")
        if match:
            return int(match.group(1))
        level = _outline_level(style.element)
        if level is not None:
            return level + 1
        style, seen = style.base_style, seen + 1
    return None


class _Styles:
    """Each paragraph's style name and heading level, looked up once per style: python-docx resolves a
    paragraph's style by scanning every style of the document (a 2,000-paragraph draft took 8 s)."""

    def __init__(self) -> None:
        self._known: dict[str | None, tuple[str, int | None]] = {}

    def of(self, paragraph: Any) -> tuple[str, int | None]:
        """(style name, heading level or None) of ``paragraph``; its own outline level comes first."""
        style_id = paragraph._p.style  # None: the document's default paragraph style
        if style_id not in self._known:
            style = paragraph.style
            self._known[style_id] = (style.name or "" if style is not None else "", style_level(style))
        name, level = self._known[style_id]
        own = _outline_level(paragraph._p)
        return name, own + 1 if own is not None else level


def _check_package(path: Path) -> None:
    """A .docx is a zip of XML parts: refuse a file that is not one, or that unpacks to too much."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            unpacked = sum(info.file_size for info in archive.infolist())
            text_part = "word/document.xml"
            document_xml = archive.getinfo(text_part).file_size if text_part in names else 0
    except OSError as error:
        raise DraftError(f"{path}: cannot be read ({error.strerror or error})") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError):
        raise DraftError(f"{path}: not a Word .docx file (it is not a zip package; a .doc from old Word? "
                         "save it as .docx)") from None
    if "word/document.xml" not in names:
        raise DraftError(f"{path}: a zip file without word/document.xml, so not a Word .docx document")
    if unpacked > MAX_UNPACKED:
        raise DraftError(f"{path}: unpacks to {unpacked // 1_000_000} MB, more than a draft can be "
                         f"({MAX_UNPACKED // 1_000_000} MB); refused")
    if document_xml > MAX_DOCUMENT_XML:
        raise DraftError(f"{path}: its text part unpacks to {document_xml // 1_000_000} MB, more than a "
                         f"draft can be ({MAX_DOCUMENT_XML // 1_000_000} MB); refused")


def docx_paragraphs(path: Path) -> tuple[str | None, list[tuple[int | None, str]]]:
    """(title, [(heading level or None, text)]) of a Word document's body."""
    import docx
    from docx.opc.exceptions import OpcError
    from lxml.etree import LxmlError

    _check_package(path)
    try:
        document = docx.Document(str(path))
        title: str | None = None
        paragraphs: list[tuple[int | None, str]] = []
        styles = _Styles()
        for paragraph in document.paragraphs:
            text = " ".join(paragraph.text.split())
            if not text:
                continue
            name, level = styles.of(paragraph)
            if name.lower() == "title":
                title = title or text
                continue
            if name.lower() == "subtitle" or _SKIPPED_STYLES.match(name or ""):
                continue
            paragraphs.append((level, text))
    except DraftError:
        raise
    except (OpcError, LxmlError, KeyError, ValueError, AttributeError, TypeError, zipfile.BadZipFile,
            EOFError, OSError) as error:
        reason = " ".join(str(error).split())[:120] or type(error).__name__
        raise DraftError(f"{path}: a broken Word .docx file ({reason})") from None
    return title, paragraphs


def parse_docx(path: Path) -> ParsedDraft:
    title, paragraphs = docx_paragraphs(path)
    if not paragraphs:
        raise DraftError(f"{path}: the Word document has no text")
    builder = ReadingBuilder()
    headings: list[tuple[int, int, int, str]] = []  # (start, end, level, title) in the extracted text
    parts: list[str] = []
    length = 0
    for level, text in paragraphs:
        line = f"{'#' * min(level, 6)} {text}" if level is not None else text
        if level is not None:
            headings.append((length, length + len(line), level, text))
        parts.append(line + "\n\n")
        length += len(line) + 2
    extracted = "".join(parts)
    builder.verbatim(extracted, 0, None)
    builder.headings.extend(ReadingHeading(start, end, level, name, start, None)
                            for start, end, level, name in headings)
    return assemble_draft("docx", builder, extracted, title=title)
