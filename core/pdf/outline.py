"""Heading levels and section kinds once all headings of a paper are known."""

from __future__ import annotations

from core.document import SectionKind
from core.pdf.headings import BACK_MATTER, is_other_heading
from core.pdf.paragraphs import BuiltSection


def settle_levels_and_kinds(built: list[BuiltSection]) -> None:
    """Levels of unnumbered headings (by type size and style) and kinds inherited by subsections."""
    # levels for unnumbered headings: by font size against numbered top-level headings
    top_sizes = [b.size for b in built if b.number and b.level == 1 and b.size]
    top_size = sorted(top_sizes)[len(top_sizes) // 2] if top_sizes else 0.0
    for b in built:
        if (not b.number and top_size and b.size and b.size < top_size - 0.6
                and b.kind is not SectionKind.ABSTRACT and not BACK_MATTER.match(b.heading)):
            b.level = 2
    if not top_sizes:
        _levels_by_style(built)
    else:
        for b in built:
            if not b.number and BACK_MATTER.match(b.heading):
                b.level = 1  # numbered papers: acknowledgements etc. are top level whatever their type
    # subsections inherit their parent's kind when their own is "other"
    stack: list[BuiltSection] = []
    for b in built:
        while stack and stack[-1].level >= b.level:
            stack.pop()
        if b.kind is SectionKind.OTHER and stack and b.level > 1 and not is_other_heading(b.heading):
            b.kind = stack[-1].kind
        stack.append(b)


_MAIN_KINDS = {SectionKind.INTRODUCTION, SectionKind.METHOD, SectionKind.RESULT, SectionKind.DISCUSSION,
               SectionKind.CONCLUSION, SectionKind.RELATED_WORK}


def _levels_by_style(built: list[BuiltSection]) -> None:
    """Unnumbered papers: headings set smaller than the main ones ("Introduction", "Methods"),
    or in mixed case where the main ones are in capitals, are subsections."""
    main = [b for b in built if b.kind in _MAIN_KINDS and not b.number and b.size]
    if not main:
        return
    sizes = sorted(b.size for b in main)
    top_size = sizes[len(sizes) // 2]
    top_caps = sum(1 for b in main if b.heading.isupper()) > len(main) / 2
    for b in built:
        if b.number or b.kind is SectionKind.ABSTRACT or not b.size:
            continue
        smaller = b.size < top_size - 0.5 and not BACK_MATTER.match(b.heading)
        if smaller or (top_caps and not b.heading.isupper() and b.size <= top_size + 0.3):
            b.level = max(b.level, 2)
        elif b.size >= top_size - 0.5 and b.level > 1 and (b.heading.isupper() or not top_caps):
            b.level = 1
