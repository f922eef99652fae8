"""Heading levels and section kinds once all headings of a paper are known."""

from __future__ import annotations

import re

from core.document import SectionKind
from core.pdf.headings import BACK_MATTER, is_decisive_heading, is_other_heading, is_standard_heading
from core.pdf.paragraphs import BuiltSection

_APPENDIX_START = re.compile(r"^(?:appendix|appendices)\b", re.IGNORECASE)
_LETTERED = re.compile(r"^[A-H](?:\.\d{1,2})*$")


def settle_levels_and_kinds(built: list[BuiltSection]) -> None:
    """Levels of unnumbered headings (by type size and style), then kinds: a topical top-level
    section takes a kind from its place (``positional_kinds``), subsections inherit their parent's
    kind (``inherit_kinds``) and what follows an appendix heading is ``other``."""
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
    positional_kinds(built)
    inherit_kinds(built)
    _appendix_kinds(built)
    _front_matter_kinds(built)


def _front_matter_kinds(built: list[BuiltSection]) -> None:
    """What the parser took for sections before the abstract (a running head, the title, author names
    and affiliations set like headings) is front matter: ``other``, whatever words its "heading" holds
    ("Design and Implementation", a conference's running head)."""
    first = next((n for n, b in enumerate(built) if b.kind is SectionKind.ABSTRACT), 0)
    for b in built[:first]:
        b.kind = SectionKind.OTHER


def _settled_other(b: BuiltSection) -> bool:
    """An ``other`` section that is other by its heading (back matter, appendix), not for want of a cue."""
    return b.kind is SectionKind.OTHER and keeps_other(b.heading, b.number)


def _parent(stack: list[BuiltSection], b: BuiltSection) -> BuiltSection | None:
    """The section ``b`` belongs to: the nearest earlier section of a lower level (``stack``, the
    open sections). A numbered heading belongs only to a section whose number is a prefix of its
    own ("3" or "3.2" for "3.2.1") or to an unnumbered one: "3.1" after "2 Related work" (the
    heading "3" was missed) has no parent."""
    if not b.number[:1].isdigit():
        return stack[-1] if stack else None
    for parent in reversed(stack):
        if not parent.number[:1].isdigit() or b.number.startswith(parent.number + "."):
            return parent
    return None


# (kind of the named top-level section before, kind of the one after) -> kind of a topical section
# between them: the order of a research paper (introduction, method, results, discussion).
_K = SectionKind
_BETWEEN: dict[tuple[SectionKind, SectionKind], SectionKind] = {
    # after the introduction or related work: the approach
    **{(before, after): _K.METHOD for before in (_K.INTRODUCTION, _K.RELATED_WORK)
       for after in (_K.METHOD, _K.RESULT, _K.DISCUSSION, _K.CONCLUSION)},
    **{(_K.METHOD, after): _K.METHOD for after in (_K.METHOD, _K.RESULT)},
    # "Methods", topical findings, then "Discussion" or "Conclusion"
    **{(_K.METHOD, after): _K.RESULT for after in (_K.DISCUSSION, _K.CONCLUSION)},
    **{(_K.RESULT, after): _K.RESULT for after in (_K.RESULT, _K.DISCUSSION, _K.CONCLUSION)},
    # findings, then a late "Related work" (CS papers put it before the conclusion): more findings
    (_K.RESULT, _K.RELATED_WORK): _K.RESULT,
}


def kinds_by_place(kinds: list[SectionKind], open_to_place: list[bool]) -> list[SectionKind]:
    """The kinds of a paper's top-level sections in order, each section marked in ``open_to_place``
    (an ``other`` section for want of a cue in its heading) taking a kind from its place between
    the sections of a main kind around it (``_BETWEEN``); the others are returned as they are."""
    named = [(n, kind) for n, kind in enumerate(kinds) if kind in _MAIN_KINDS]
    out = list(kinds)
    for n, kind in enumerate(kinds):
        if kind is not SectionKind.OTHER or not open_to_place[n]:
            continue
        before = [k for m, k in named if m < n]
        after = [k for m, k in named if m > n]
        if before and after:
            out[n] = _BETWEEN.get((before[-1], after[0]), SectionKind.OTHER)
    return out


def keeps_other(heading: str, number: str = "") -> bool:
    """Whether a section is ``other`` by its heading (back matter, appendix, a lettered appendix
    number), so that neither its place nor a parent gives it another kind."""
    return (is_other_heading(heading) or bool(BACK_MATTER.match(heading))
            or bool(_APPENDIX_START.match(heading)) or bool(_LETTERED.match(number)))


def positional_kinds(built: list[BuiltSection]) -> None:
    """A top-level section whose heading names no kind ("QUILL", "Monitoring schemes for rural
    clinics") takes one from its place between the named top-level sections around it (``_BETWEEN``):
    after the introduction or related work, it is the method; between "Methods" and "Discussion",
    the results; after "Results", more results. A section before the first named one, after the last,
    or between pairs not listed (after "Discussion", say) stays ``other``, as do back matter and
    appendices. Its subsections then inherit the kind (``inherit_kinds``). The corpus readers
    (``models.datasets.annotation_sources``) give their sections kinds by the same rule."""
    top = [b for b in built if b.level == 1]
    kinds = kinds_by_place([b.kind for b in top], [not _settled_other(b) for b in top])
    for b, kind in zip(top, kinds, strict=True):
        b.kind = kind


def inherit_kinds(built: list[BuiltSection]) -> None:
    """A subsection inherits its parent's kind unless its own heading is decisive.

    Decisive (``core.pdf.headings.is_decisive_heading``): the heading is a standard section name
    ("Results", "Materials and Methods", "Discussion") or holds a phrase that only names a kind of
    section ("related work", "experimental setup", "limitations"); such a subsection keeps the kind
    its own words give. Any other heading is topical and takes the parent's (final) kind, even when
    one of its words maps to another kind ("Data analysis", "Overview", "Training" …). Back matter
    and appendix headings stay ``other``. The parent gives nothing when its kind is ``abstract``,
    or ``other`` for want of a cue (a topical top-level heading): then the subsection keeps its
    own kind. The parent of a section comes from the levels: numbers ("3" holds "3.2"), and for
    unnumbered headings the level set from type size and style.
    """
    stack: list[BuiltSection] = []
    for b in built:
        while stack and stack[-1].level >= b.level:
            stack.pop()
        parent = _parent(stack, b)
        if (parent is not None and b.kind is not SectionKind.ABSTRACT and not _settled_other(b)
                and parent.kind is not SectionKind.ABSTRACT
                and (parent.kind is not SectionKind.OTHER or _settled_other(parent))
                and not is_decisive_heading(b.heading)):
            b.kind = parent.kind
        stack.append(b)


def _appendix_kinds(built: list[BuiltSection]) -> None:
    """Everything after an "Appendix" heading or a lettered appendix section ("A", "B.1") is
    ``other`` (the appendices run to the end), up to a digit-numbered or decisive heading."""
    inside = False
    for b in built:
        if b.number[:1].isdigit() or (inside and is_decisive_heading(b.heading)):
            inside = False
        elif b.kind is SectionKind.OTHER and (_APPENDIX_START.match(b.heading) or _LETTERED.match(b.number)):
            inside = True
        elif inside and b.kind is not SectionKind.ABSTRACT:
            b.kind = SectionKind.OTHER


_MAIN_KINDS = {SectionKind.INTRODUCTION, SectionKind.METHOD, SectionKind.RESULT, SectionKind.DISCUSSION,
               SectionKind.CONCLUSION, SectionKind.RELATED_WORK}


def _levels_by_style(built: list[BuiltSection]) -> None:
    """Unnumbered papers: headings set smaller than the main ones ("Introduction", "Methods"),
    or in mixed case where the main ones are in capitals, are subsections. The main headings are
    those that are a standard section name (``is_standard_heading``, of a main kind); only
    when there are fewer than two, any heading of a main kind ("Statistical analysis" would
    otherwise pull the main size down to that of the subsections)."""
    main = [b for b in built if b.kind in _MAIN_KINDS and not b.number and b.size]
    standard = [b for b in main if is_standard_heading(b.heading)]
    if len(standard) >= 2:
        main = standard
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
