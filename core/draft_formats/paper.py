"""A parsed draft as a :class:`core.document.Paper` (no pages), for the analysis and alignment that
take papers: each heading a section with its kind and level, the sentences in reading order."""

from __future__ import annotations

import hashlib

from core.document import Paper, Section, SectionKind, Sentence
from core.draft_formats.types import ParsedDraft


def draft_sha256(draft: ParsedDraft) -> str:
    """A hash of the draft's text and of every file it includes (a changed \\input changes it)."""
    digest = hashlib.sha256(draft.source.encode("utf-8"))
    for key in sorted(draft.files):
        digest.update(b"\0" + key.encode("utf-8") + b"\0" + draft.files[key].encode("utf-8"))
    return digest.hexdigest()


def paper_from_draft(draft: ParsedDraft, *, title: str = "", source: str = "") -> Paper:
    """The draft as a paper: sentences before the first heading have no section
    (``section_index`` -1: the model sees no section kind), every heading is a section (empty ones
    too, so the outline is kept)."""
    from core.pdf.headings import split_number

    paper = Paper(title=draft.title or title, source_path=source, sha256=draft_sha256(draft), page_sizes=[])
    top = min(draft.heading_levels, default=1)
    for index, (_, title, kind) in enumerate(draft.headings):
        number, bare = split_number(title)
        level = draft.heading_levels[index] - top + 1 if index < len(draft.heading_levels) else 1
        paper.sections.append(Section(bare or title, SectionKind(kind or "other"), level=level,
                                      number=number))
    for index, (sentence, heading) in enumerate(zip(draft.sentences, draft.sentence_headings, strict=True)):
        if heading >= 0:
            section = paper.sections[heading]
            if section.sentence_count == 0:
                section.first_sentence = index
            section.sentence_count += 1
        paper.sentences.append(Sentence(f"s{index}", sentence.text, heading, index, []))
    following = len(paper.sentences)
    for section in reversed(paper.sections):  # an empty section starts where the next one does
        if section.sentence_count == 0:
            section.first_sentence = following
        following = section.first_sentence
    return paper
