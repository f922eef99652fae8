"""What a paper's own structure shows a sentence does, whatever the model's label says: the one place
the gap report (``core.alignment.align_gaps``) gathers that evidence before it says a paper never makes a
move.

- **a figure or table mention** ("Figure 3 shows", "(Tables 1-3)", ``core.pdf.mentions.mentioned_ids``,
  the same reading that fills a parsed paper's ``Figure.mentioned_by``): the sentence points to a table
  or figure;
- **a heading that names the move** ("Competing interests", "Conflicts of interest", "Funding",
  "Acknowledgments", "Data availability", "Limitations", "Aims", "Objectives", "Ethics approval …",
  "Future work", "Abbreviations"; a joined heading such as "Funding / Acknowledgments" names each):
  every sentence under it makes that move;
- **a formulaic back-matter statement** ("The authors declare no conflict of interest", "We thank …",
  "This work was supported by grant …", "The data are available from …"): it makes its move wherever
  the parser put it (back matter merged into a paper's last section).

A back-matter statement is one statement: when the evidence names back-matter moves and the label is
another one (an ethics approval under "Ethics approval …" labelled as funding, an affiliation line under
"Author details" labelled as funding), the evidence wins over the label (:func:`sentence_functions`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from core.taxonomy.labels import NO_FUNCTION

FIGURE = "pointing-to-figure"
# Statements of the paper as a whole, wherever they sit (the taxonomy's functions for "any" section):
# the gap report says whether a paper makes them, never in which section.
PAPER_LEVEL = frozenset({"acknowledgement", "funding", "availability", "conflict-of-interest",
                         "abbreviation"})
# labels that back-matter evidence can overrule (a statement is one of them, not two unrelated ones) …
_STATEMENTS = PAPER_LEVEL | {"ethics"}
# … except by a move that goes with it (an Acknowledgments section thanks the funders too)
_TOGETHER = frozenset({"acknowledgement", "funding"})

_NUMBER = re.compile(r"^\s*(?:(?:\d{1,2}(?:\.\d{1,2})*|[IVXivx]{1,5}|[A-Za-z](?:\.\d{1,2})*)[.):]?\s+)?")
_PARTS = re.compile(r"\s*(?:,|;|/|&|\band\b)\s*")
# heading (or a part of a joined heading) -> the function it names; "" = back matter that is none of
# the moves (author contributions, affiliations): a back-matter label under it is not believed
_HEADING_PATTERNS = (
    (r"(?:competing|conflicts? of|conflicting|declarations? of(?: competing)?|disclosures? of(?: potential)?"
     r"(?: conflicts? of)?) interests?(?: statement)?|conflicts?(?: of interests?)?|competing financial "
     r"interests?|disclosures?(?: statement)?", "conflict-of-interest"),
    (r"funding(?: information| sources?| statement| details)?|sources? of (?:funding|support)|financial "
     r"(?:support|disclosures?)|grants?(?: support)?", "funding"),
    (r"acknowledge?ments?", "acknowledgement"),
    (r"(?:(?:data|code|software|materials?|resource)(?: and (?:data|code|software|materials?))? "
     r"availability(?: statement)?)|availability(?: of (?:supporting )?(?:data|code|software|materials?)"
     r"(?: and (?:data|code|software|materials?))?)?|data (?:access|sharing)(?: statement)?", "availability"),
    (r"(?:study |our )?limitations?(?: of (?:the|this|our) (?:study|work|approach|analysis|method))?",
     "limitation"),
    (r"future (?:work|directions?|research|perspectives?)|outlook", "future-work"),
    (r"(?:the |study |research )?(?:aims?|objectives?|goals?|purpose)(?: of (?:the|this) "
     r"(?:study|work|paper|research))?", "aim"),
    (r"research questions?", "research-question"),
    (r"hypothes[ie]s", "hypothesis"),
    (r"ethics(?: approval| statement| declarations?| committee)?(?: and consent(?: to participate)?)?"
     r"|ethical (?:approval|statement|considerations?|standards)|(?:informed )?consent(?: to participate)?|"
     r"institutional review board(?: statement)?", "ethics"),
    (r"(?:list of )?abbreviations?|nomenclature|acronyms", "abbreviation"),
    (r"author(?:s['’]?)? (?:contributions?|details|information)|affiliations?|consent for publication|"
     r"publisher['’]?s? note|additional (?:information|files?)|endnotes", ""),
)
_HEADINGS = tuple((re.compile(pattern), function) for pattern, function in _HEADING_PATTERNS)
# formulaic statements of the back matter (searched in the sentence, case-insensitive)
_CUE_PATTERNS = (
    (r"\b(?:competing|conflicts?\s+of|conflicting)\s+interests?\b", "conflict-of-interest"),
    (r"\b(?:funded|supported|sponsored|financed)\s+(?:in\s+part\s+|partly\s+|partially\s+)?by\b[^.]*?"
     r"\b(?:grants?|foundation|council|agency|ministry|programme|program|fund|fellowship|award)\b"
     r"|\bgrants?\s+(?:no\.?|nos\.?|number|numbers|#)|\bfinancial(?:ly)?\s+support"
     r"|\breceived\s+no\s+(?:specific\s+|external\s+)?(?:grant|funding)|\bfunding\s+(?:from|by|was|for this)",
     "funding"),
    (r"\bthank\b|\bthanks\s+(?:are\s+)?(?:also\s+)?due\b|\b(?:special|sincere|many)\s+thanks\b|\bgrateful\b"
     r"|\bgratitude\b|\backnowledges?d?\s+(?:the\s+)?(?:\w+\s+)?(?:support|help|assistance|funding)",
     "acknowledgement"),
    (r"\b(?:publicly|freely|openly)\s+available\b|\bavailable\s+(?:online\s+)?(?:at|from|on)\s+(?:the\s+)?"
     r"(?:https?://|www\.|github|zenodo|figshare|corresponding\s+author)|\bavailable\s+(?:up)?on\s+"
     r"(?:reasonable\s+)?request\b",
     "availability"),
)
_CUES = tuple((re.compile(pattern, re.IGNORECASE), function) for pattern, function in _CUE_PATTERNS)


def heading_functions(heading: str) -> frozenset[str]:
    """The functions a heading names ("Funding / Acknowledgments" → {funding, acknowledgement}); "" in
    the set for back matter that is none of them ("Author contributions"); empty for any other heading."""
    bare = _NUMBER.sub("", heading.strip().lower()).strip(" .:")
    if not bare:
        return frozenset()
    found = {function for pattern, function in _HEADINGS if pattern.fullmatch(bare)}
    if not found:
        found = {function for part in _PARTS.split(bare) if part
                 for pattern, function in _HEADINGS if pattern.fullmatch(part)}
    return frozenset(found)


def text_functions(text: str) -> frozenset[str]:
    """What a sentence's words alone show: a figure or table it mentions, a formulaic back-matter
    statement."""
    from core.pdf.mentions import mentioned_ids  # core.pdf loads PyMuPDF: only when read

    found = {function for pattern, function in _CUES if pattern.search(text)}
    if mentioned_ids(text):
        found.add(FIGURE)
    return frozenset(found)


def sentence_functions(label: str, heading: Iterable[str], words: Iterable[str], *,
                       first: bool = True) -> frozenset[str]:
    """The functions a sentence does: its clear ``label`` (not "none", not ""), what its ``words`` show
    and, for the ``first`` sentence under its heading, what the ``heading`` names (a section making a
    move is one piece of evidence, not one per sentence: the parser may have merged a reference list
    into an "Abbreviations" section); a back-matter label that the back-matter evidence contradicts is
    dropped (see the module docstring)."""
    heading, words = frozenset(heading), frozenset(words)
    doing = set(words | (heading - {""} if first else frozenset()))
    statements = (heading | words) & (_STATEMENTS | {""})
    if label in _TOGETHER and statements & _TOGETHER:
        statements = statements | _TOGETHER
    clear = label not in ("", NO_FUNCTION)
    if clear and not (label in _STATEMENTS and statements and label not in statements):
        doing.add(label)
    return frozenset(doing)


def side_functions(sentences: Iterable[tuple[str, str, str]]) -> tuple[list[frozenset[str]], int]:
    """What each sentence of a text does, from its (text, heading, clear label or "") in reading order:
    :func:`sentence_functions` of each; and how many sentences the structure gave evidence for."""
    doing: list[frozenset[str]] = []
    evidenced = 0
    previous: str | None = None
    for text, heading, label in sentences:
        named, words = heading_functions(heading), text_functions(text)
        first = heading != previous
        previous = heading
        evidenced += bool(words or (first and named - {""}))
        doing.append(sentence_functions(label, named, words, first=first))
    return doing, evidenced
