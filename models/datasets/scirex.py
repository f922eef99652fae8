"""The ``scirex-sections`` dataset: role labels read off the section headings of full-text papers
(distant supervision).

A sentence in a section headed "Conclusion(s)" (or "Conclusion and future work", "Concluding
remarks", …) is taken to play the *conclusion* role, one under "Related work" the *background*
role.  Those are the two headings whose sections are dominated by one role; "Introduction",
"Experiments" or "Results" mix several and are not used.  The labels are noisy by construction (a
conclusion section also recaps the method), which is why this data only complements the
human-labelled sets: it supplies what they lack, CS-domain conclusion sentences (CSAbstruct files
conclusions under "result").

Documents are whole sections, in reading order, with section kind *unknown*, so the role head
has to learn the role from the sentences themselves rather than from the heading (and section
kinds other than "abstract" stay tied to unknown in the exported model).

Source: SciREX full texts (``../shared/data/scirex_fulltext``, 306 ML papers, Apache-2.0 repo;
the papers' own licences apply to the text: training only, never bundled).  The text is
tokenised ("state - of - the - art , ( i.e. , [ citation ] )"); :func:`detokenise` undoes it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from models.datasets.documents import LabelledDocument, bad_split, need_file

SCIREX_LABELS: tuple[str, ...] = ("related-work", "conclusion")
SCIREX_ROLES: dict[str, str] = {"related-work": "background", "conclusion": "conclusion"}

_HEADINGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?:conclusions?|concluding remarks|summary and conclusions?|discussion and conclusions?|"
                r"conclusions?,? (?:and|&) (?:future (?:work|directions|research)|outlook|discussion|"
                r"limitations))"), "conclusion"),
    (re.compile(r"(?:related (?:work|works|literature|research)|prior work|previous work)"), "related-work"),
)
_NUMBERING = re.compile(r"^(?:[ivx]+|\d+(?:\s*\.\s*\d+)*|[a-h])\s*[.:)]?\s+")
_FLOAT_REF = re.compile(r"\b(Figs?|Figures?|Tables?|Sections?|Sec|Eqs?|Equations?|Appendix)( ?\.)?\s*"
                        r"\[ reference \]")
_BRACKETS = re.compile(r"\s*\[ (?:citation|reference) \]")
_LEADING_CITATION = re.compile(r"^(?:\[ (?:citation|reference) \]\s*)+")
_QUOTED = re.compile(r'" ([^"]*?) "')
_SPACE_BEFORE = re.compile(r" ([,.;:!?%)\]}]|'s\b|n't\b|'re\b|'ve\b|'ll\b|'d\b)")
_SPACE_AFTER = re.compile(r"([(\[{]) ")
_HYPHEN = re.compile(r"(?<=\w) - (?=\w)")
_MIN_WORDS = 4


def heading_label(heading: str | None) -> str | None:
    """The distant label of a section heading ("5 . Conclusions" -> "conclusion"), or None."""
    if not heading:
        return None
    text = _NUMBERING.sub("", " ".join(heading.lower().split()))
    for pattern, label in _HEADINGS:
        if pattern.fullmatch(text):
            return label
    return None


def detokenise(text: str) -> str:
    """Undo SciREX's tokenisation: citations dropped ("[ citation ] show …" at the start becomes
    "Previous work show …"), "Figure [ reference ]" -> "Figure 1", then the spaces around
    punctuation, hyphens, brackets and quotes."""
    text = " ".join(text.split())
    text = _FLOAT_REF.sub(lambda m: f"{m.group(1)}{'.' if m.group(2) else ''} 1", text)
    text = _LEADING_CITATION.sub("Previous work ", text)
    text = _BRACKETS.sub("", text)
    text = _QUOTED.sub(r'"\1"', text)
    text = _HYPHEN.sub("-", _SPACE_AFTER.sub(r"\1", text))
    text = " ".join(text.replace("()", "").split())  # "Centre ( ) ," -> "Centre ,"
    return _SPACE_BEFORE.sub(r"\1", text).strip()


@dataclass(frozen=True)
class ScirexSection:
    """One section of a SciREX full text as stored (tokenised sentences)."""

    doc_id: str  # the paper's id, first 12 characters
    number: int  # position in the paper (0 is the title)
    heading: str | None
    raw_sentences: list[str]

    def sentences(self) -> list[str]:
        """The detokenised sentences of at least ``_MIN_WORDS`` words."""
        cleaned = (detokenise(s) for s in self.raw_sentences)
        return [s for s in cleaned if len(s.split()) >= _MIN_WORDS]


def scirex_sections(root: Path) -> Iterator[ScirexSection]:
    """Every section of the 306 SciREX train full texts under ``root`` (the shared data folder)."""
    path = need_file(root / "scirex_fulltext" / "scirex_train_docs_fulltext.jsonl")
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            paper = json.loads(line)
            for number, section in enumerate(paper["sections"]):
                yield ScirexSection(paper["doc_id"][:12], number, section.get("heading"),
                                    list(section["sentences"]))


def load_scirex_sections(root: Path, split: str) -> list[LabelledDocument]:
    """Sections of SciREX papers whose heading names one role (see :data:`_HEADINGS`)."""
    known = ("train",)
    if split not in known:
        raise bad_split("scirex-sections", split, known)
    docs = []
    for section in scirex_sections(root):
        label = heading_label(section.heading)
        if label is None:
            continue
        sentences = section.sentences()
        if not sentences:
            continue
        allowed = frozenset({SCIREX_ROLES[label]})
        docs.append(LabelledDocument(f"scirex-{section.doc_id}-{section.number}", sentences,
                                     [label] * len(sentences), [allowed] * len(sentences), None))
    return docs
