"""Section headings: detection from typography and numbering, canonical kinds, levels."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.document import SectionKind
from core.pdf.lines import Line

# a title starts with a capital, a Greek letter or a one-letter symbol prefix ("k-shell", "β-multiplier");
# Wiley sets a bar between the number and the title ("2.1 | Study Area")
_NUMBERED = re.compile(
    r"^(?P<num>\d{1,2}(?:\.\d{1,2}){0,3})\.?(?:\s*\|)?\s+(?P<title>(?:[A-Z]|[\u0370-\u03ff]|[a-z]-)[^\n]{0,118})$"
)
# appendix subsections ("A.1 Accessing the data") are unambiguous even outside an appendix
_LETTERED_DOTTED = re.compile(r"^(?P<num>[A-H](?:\.\d{1,2}){1,3})\.?\s+(?P<title>[A-Z][^\n]{0,118})$")
_LETTERED = re.compile(r"^(?P<num>[A-H](?:\.\d{1,2}){0,3})\.?\s+(?P<title>[A-Z][^\n]{0,118})$")
# an IEEE subsection set in italics at body size: "A. Cluster Head Election"
_ITALIC_LETTERED = re.compile(r"^[A-H]\.\s+(?P<title>[A-Z][^\n]{2,100})$")
_ROMAN = re.compile(r"^(?P<num>(?:I|II|III|IV|V|VI|VII|VIII|IX|X|XI|XII))\.\s+(?P<title>[A-Z][^\n]{0,118})$")
_REFERENCES = re.compile(
    r"^(?:references?|bibliography|literature cited|works cited|reference list|cited literature)$",
    re.IGNORECASE,
)
_APPENDIX = re.compile(r"^(?:appendix|appendices|supplementary|supplemental|supporting information)\b",
                       re.IGNORECASE)
_ABSTRACT = re.compile(r"^(?:abstract|a b s t r a c t)$", re.IGNORECASE)  # Elsevier sets it letter-spaced
_NOT_HEADING = re.compile(r"^(?:Algorithm|Listing|Procedure|Figure|Fig\.|Table|Example|Definition|Theorem"
                          r"|Lemma"
                          r"|Proof|Corollary|Proposition|Remark|Note|Step|Input|Output|Require|Ensure)\b")
_NUMERIC = re.compile(r"^[(\[]?[-+−±]?\d[\d.,%]*[)\]]?[*†‡]?$")
_RUN_IN = re.compile(r"[:;]\s+[a-z]")
_AFFILIATION = re.compile(r"\b(?:Universit(?:y|ies|é|à|ät)|Department|Dept\.|Institute|Institut"
                          r"|Laborator(?:y|ies)|School of|College|Hospital|Faculty"
                          r"|Research Cent(?:er|re)|Academy)\b")

# "experimental setup", "training details", "evaluation methodology": the set-up of the experiments
_SETUP = (r"(?:experiment(?:al)?|evaluation|training|implementation)"
          r" (?:setup|set-up|settings?|design|details|protocols?|methodology|methods?|procedures?)")
# (pattern, kind) in priority order; the first match in the heading wins
_KIND_RULES: list[tuple[re.Pattern[str], SectionKind]] = [
    (re.compile(r"\babstract\b"), SectionKind.ABSTRACT),
    (re.compile(r"\b(?:related work|previous work|prior work|related research|literature"
                r"|state of the art|related studies)\b"), SectionKind.RELATED_WORK),
    (re.compile(rf"\b{_SETUP}\b"), SectionKind.METHOD),
    (re.compile(r"\b(?:introduction|background|motivation|preliminar(?:y|ies)|overview)\b"),
     SectionKind.INTRODUCTION),
    (re.compile(r"\b(?:conclusions?|concluding|summary|future work|outlook|closing remarks)\b"),
     SectionKind.CONCLUSION),
    (re.compile(r"\b(?:discussions?|analysis|analyses|limitations|error analysis|ablations?)\b"),
     SectionKind.DISCUSSION),
    (re.compile(r"\b(?:results?|experiments?|evaluations?|findings|performance|empirical)\b"),
     SectionKind.RESULT),
    (re.compile(r"\b(?:methods?|methodology|approach|models?|materials|data|datasets?|corpus|corpora"
                r"|setup|implementation|architecture|framework|algorithms?|design|participants"
                r"|patients|procedure|training|system|proposed|task definition|problem"
                r"|formulation|study areas?|study sites?|sampling(?: sites?)?|site descriptions?|measures"
                r"|statistical)\b"), SectionKind.METHOD),
]
_OTHER = re.compile(r"\b(?:acknowledge?ments?|funding|author contributions|competing interests"
                    r"|conflicts? of interest|conflicting interests?|ethics|availability|abbreviations"
                    r"|declarations"
                    r"|additional information|supplementary|supplemental|supporting information"
                    r"|appendix|appendices)\b")


BACK_MATTER = re.compile(
    r"^(?:competing interests?|conflicts? of interests?|authors?[’'] contributions|author contributions"
    r"|acknowledge?ments?|author details|authors? information|additional files?|abbreviations|funding"
    r"|availability of (?:data|supporting data).*|data availability(?: statement)?|ethics approval.*"
    r"|consent for publication"
    r"|declarations?|pre-publication history|endnotes"
    r"|(?:supplementary|supplemental) (?:materials?|information|data|figures)|supporting information)$",
    re.IGNORECASE,
)


# What makes a heading *decisive*: it names a kind of section outright, so a subsection with such
# a heading keeps the kind its own words give (``section_kind``) instead of taking its parent's.
# Either the whole heading is a standard section name, or several joined by "and", "&", "/" or a
# comma ("Results and Discussion", "Conclusions and Future Work"); or it holds a phrase that only
# ever names a kind of section ("Related work on X", "Evaluation schemes and results",
# "Experiment settings", "Limitations of the study", "Motivation and contributions"), or it is
# only the name of the data ("Datasets", "Data description": the set-up). Every other
# heading is topical: a word such as "data", "model", "training", "analysis", "overview",
# "framework", "performance", "evaluation" or "findings" maps it to a kind by the
# ``section_kind`` rules, but only weakly: "Data analysis" under "Methods" is method, "Overview"
# under "Model" is method (not an introduction), "Stratified analyses" under "Results" is result.
_STANDARD_NAME = (r"(?:abstract|introduction|background|motivation|related works?|previous work|prior work"
                  r"|literature review|state of the art|methods?|methodology|materials?|results?|findings"
                  r"|analysis|analyses|discussions?|limitations|conclusions?|concluding remarks|future work"
                  r"|outlook)")
_STANDARD = re.compile(rf"^(?:the )?{_STANDARD_NAME}(?:\s*(?:,|&|/|\band\b)\s*{_STANDARD_NAME})*$")
# a heading that is only the name of the data ("Data", "Datasets", "Data description") describes
# the set-up wherever it stands, like "Experimental setup"
_DATA_NAME = re.compile(r"^(?:the )?data(?:sets?| sets?| description| collection)?$")
_DECISIVE_PHRASE = re.compile(
    r"\b(?:introduction|motivation|related work|previous work|prior work|related research|related studies"
    r"|literature (?:review|survey)|review of (?:the )?literature|state of the art"
    rf"|{_SETUP}|results|discussions?|conclusions?|concluding|future work|closing remarks|limitations"
    r"|error analysis|ablations?)\b")


def _normal(title: str) -> str:
    return " ".join(title.lower().replace("\u2019", "'").split()).strip(" .:;-–—")


def is_standard_heading(title: str) -> bool:
    """Whether a heading (without its number) is a standard section name, or several joined
    ("Introduction", "Materials and Methods", "Results and Discussion")."""
    return bool(_STANDARD.match(_normal(title)))


def is_decisive_heading(title: str) -> bool:
    """Whether a heading (without its number) names its section's kind outright (see above)."""
    text = _normal(title)
    if not text or section_kind(text) is SectionKind.OTHER:
        return False
    return bool(_STANDARD.match(text) or _DATA_NAME.match(text) or _DECISIVE_PHRASE.search(text))


def is_other_heading(heading: str) -> bool:
    """Back matter and similar headings that stay "other" (never inherit a parent's kind)."""
    return bool(_OTHER.search(heading.lower()))


def section_kind(title: str) -> SectionKind:
    """Canonical kind of a heading (without its number)."""
    text = title.lower().strip()
    if _OTHER.search(text):
        return SectionKind.OTHER
    best: tuple[int, SectionKind] | None = None
    for pattern, kind in _KIND_RULES:
        m = pattern.search(text)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), kind)
    return best[1] if best else SectionKind.OTHER


def is_references(title: str) -> bool:
    return bool(_REFERENCES.match(title.strip().rstrip(":.").strip()))


def is_appendix(title: str, number: str) -> bool:
    """"Appendix ...", "Supplementary ...", or a lettered heading ("A Details", "B.1 Data"),
    but not a reference entry that starts with initials ("I. D. Melamed. 2001. ...")."""
    if re.search(r"\b(?:19|20)\d\d\b", title):
        return False
    return bool(_APPENDIX.match(title)) or bool(re.fullmatch(r"[A-H](?:\.\d{1,2})*", number))


def is_abstract_heading(text: str) -> bool:
    return bool(_ABSTRACT.match(text.strip().rstrip(":.—-– ").strip()))


@dataclass
class HeadingMatch:
    number: str
    title: str
    level: int
    styled: bool = True  # bold, larger or capitals (plain numbered headings are False)


def split_number(text: str, *, allow_letters: bool = False) -> tuple[str, str]:
    """("3.1", "Data") for "3.1 Data"; ("", text) when unnumbered."""
    for pattern in (_NUMBERED, _ROMAN, _LETTERED_DOTTED, *((_LETTERED,) if allow_letters else ())):
        m = pattern.match(text)
        if m:
            num = m.group("num")
            if pattern is _NUMBERED and int(num.split(".")[0]) > 30:
                continue
            return num, m.group("title").strip()
    return "", text.strip()


def level_of(number: str) -> int:
    return number.count(".") + 1 if number else 1


def _letters(text: str) -> int:
    return sum(1 for c in text if c.isalpha())


def looks_like_heading(
    line: Line,
    body_size: float,
    *,
    next_line: Line | None,
    prev_line: Line | None = None,
    body_font: str = "",
    allow_letters: bool = False,
) -> HeadingMatch | None:
    """A heading match for a line in the body flow, or None.

    Headings are short, start with a capital (after an optional number), do not
    end like a sentence, and stand out by weight, size or capitals; numbered
    ones may be plain when they are short.  Captions, table cells (removed
    before), equations and list items fail these tests.
    """
    text = line.text.strip()
    if not (2 <= len(text) <= 120) or _letters(text) < 3:
        return None
    if any(sym in text for sym in ("=", "≤", "≥", "∑", "∈", "http", "@")):
        return None
    if text.endswith((",", ";", "-", "–", "(")):
        return None
    number, title = split_number(text, allow_letters=allow_letters)
    if number and line.page <= 1 and "," in title and _AFFILIATION.search(title):
        return None  # a numbered affiliation: "2 Department of Plant Sciences, Oklahoma State University"
    words = title.split()
    if _NOT_HEADING.match(title) or title.endswith("?"):
        return None
    if sum(1 for w in words if _NUMERIC.match(w)) >= 2:  # a table row
        return None
    if len(words) >= 2 and sum(1 for w in words if sum(c.isalpha() for c in w) <= 2) >= 0.6 * len(words):
        return None  # "T T S", "A P A S": figure labels
    if _RUN_IN.search(title):  # "Statistical: uses one or more ..." is a list item
        return None
    if re.search(r"\s\d{1,3}$", title) and line.gaps and line.gaps[-1] >= len(line.text) - 4:
        return None  # a table-of-contents entry with its page number
    if re.search(r"\.{4,}|(?:\.\s){4,}", title):  # dotted leaders
        return None
    if len(words) > 14 or (not title[:1].isupper() and not title[:1].isdigit()
                           and not (number and re.match(r"[\u0370-\u03ff]|[a-z]-", title))):
        return None
    if _letters(title) < 3:
        return None
    bigger = line.size >= body_size * 1.08
    bold = line.bold >= 0.7
    caps = title.upper() == title and _letters(title) >= 4
    # Small capitals (IEEE "I. INTRODUCTION"): the letters are set smaller than the body, the initials at
    # body size, so the line stands as tall as a body line.
    small_caps = caps and line.size >= body_size * 0.7 and line.height >= body_size * 0.97
    back_matter = bold and not number and bool(BACK_MATTER.match(title.rstrip(".:").strip()))
    if line.size < body_size * 0.9 and not (bold and caps) and not small_caps and not back_matter:
        return None  # (back-matter headings set small and bold, as Wiley's, are headings)
    ends_sentence = title.endswith(".") and not caps
    if ends_sentence and len(words) > 4:
        return None
    if title.endswith(":") and not (bold or caps):
        return None
    styled = bold or bigger or caps or (bool(number) and line.italic >= 0.9)
    if bold and _bold_then_plain(line):
        return None  # run-in paragraph title ("Composition function performance Since the ...")
    if bold and not number and prev_line is not None and _continues_bold_paragraph(line, prev_line):
        return None  # a line of a paragraph set in bold (an IEEE abstract), not a heading
    if not number and is_italic_lettered(line):  # the letter is not kept: lettered numbers mark appendices
        return HeadingMatch("", title[2:].rstrip(":").strip(), 2, True)
    if not styled and not number and body_font and _distinct_font_heading(line, title, body_font, prev_line,
                                                                           next_line):
        return HeadingMatch("", title.rstrip(".:").strip(), 2, True)
    if number:
        if not styled:
            # plain numbered line: only if short and followed by a normal line
            if len(words) > 8 or ends_sentence or title[-1:] in ".:":
                return None
            if next_line is None or next_line.bold >= 0.7:
                return None
            # a numbered list item that wraps ("1. It will lead to significantly greater improvements in" /
            # "mobility at discharge …"): it ends on a joining word, or the next line goes on in lower case
            if words[-1].lower() in _JOINING_WORDS or next_line.text.lstrip()[:1].islower():
                return None
        return HeadingMatch(number, title.rstrip(".:").strip(), level_of(number), styled)
    if not styled:
        return None
    if len(words) > 10:
        return None
    # a bold first line of a paragraph that simply continues (run-in heading) is not a heading
    return HeadingMatch("", title.rstrip(".:").strip(), 1)


def is_italic_lettered(line: Line) -> bool:
    """An IEEE subsection heading: "A. Cluster Head Election" alone on its line, all in
    italics at body size, not ending like a sentence."""
    text = line.text.strip()
    return (line.italic >= 0.9 and bool(_ITALIC_LETTERED.match(text)) and not text.endswith(".")
            and len(text.split()) <= 13)


def _continues_bold_paragraph(line: Line, prev_line: Line) -> bool:
    """The line sits right under a long line of the same bold face and size, in the same column: the
    next line of a bold paragraph (a heading stands apart from the text above it)."""
    return (prev_line.page == line.page and prev_line.bold >= 0.7
            and abs(prev_line.size - line.size) < 0.5
            and 0 <= line.y0 - prev_line.y1 < 0.5 * line.size
            and abs(prev_line.x0 - line.x0) < 1.5 * line.size
            and len(prev_line.text.split()) >= 6)


def _bold_then_plain(line: Line) -> bool:
    """A bold title followed by plain running text on the same line (a run-in paragraph title).
    A plain acronym inside a bold heading ("Type Checking with HMM-T") does not count."""
    seen_bold = False
    plain: list[str] = []
    for a, b, bold, _italic in line.runs:
        if bold:
            seen_bold = True
        elif seen_bold:
            plain.append(line.text[a:b])
    words = " ".join(plain).split()
    return len(words) >= 2 and any(w[:1].islower() for w in words)


def _distinct_font_heading(line: Line, title: str, body_font: str, prev_line: Line | None,
                            next_line: Line | None) -> bool:
    """A short stand-alone line in a font other than the body font, followed by body text or by a
    lower heading of the same kind (BMC-style subheadings whose bold or italic face is only visible in
    the font file: "Outcome measures" / "Primary outcome" / "The primary outcome measure is…")."""
    if line.font == body_font or 0.5 <= line.italic < 0.9 or next_line is None or len(line.runs) != 1:
        return False
    if not _short_title(title):
        return False
    if next_line.page != line.page or next_line.y0 < line.y1 - 1:
        return False
    if not next_line.text.lstrip()[:1].isupper() and not next_line.text.lstrip()[:1].isdigit():
        return False  # the sentence goes on: "… runs PDF2TextParser" / "(using pdfplumber) to extract …"
    if next_line.font != body_font and not is_distinct_title_line(next_line, body_font):
        return False
    centered = (abs((line.x0 + line.x1) / 2 - (next_line.x0 + next_line.x1) / 2) < 15
                and line.width < 0.6 * next_line.width)
    if next_line.y0 - line.y1 > 1.2 * line.size or (abs(next_line.x0 - line.x0) > 12 and not centered):
        return False
    # no gap above: part of a paragraph (unless the line above is itself a heading)
    return not (prev_line is not None and prev_line.page == line.page
                and 0 <= line.y0 - prev_line.y1 < 0.3 * line.size and abs(prev_line.x0 - line.x0) < 40
                and prev_line.bold < 0.7 and prev_line.size <= line.size * 1.1
                and not is_distinct_title_line(prev_line, body_font))


def is_distinct_title_line(line: Line, body_font: str) -> bool:
    """A line that could be a distinct-font heading by its own words and face (one style run, short)."""
    return line.font != body_font and len(line.runs) == 1 and _short_title(line.text.strip())


_INITIAL = re.compile(r"[A-Z]\.(?:-?[A-Z]\.)*,?")
_TITLE_CHARS = re.compile(r"[^\W_]|[\s\-–’'/&,().]")


def _short_title(title: str) -> bool:
    """One to nine words, a capital first, no closing punctuation, and only the characters of words
    (no code: "R> unusual <- subset(devi, resid > 1.5)")."""
    words = title.split()
    return (1 <= len(words) <= 9 and title[-1:] not in ".,;:" and title[:1].isupper()
            and all(_TITLE_CHARS.match(c) for c in title)
            # not a list of names ("A. Blondel, G. Bonneaud"), nor an address ("Niels Bohr Institute, DK-2100
            # Copenhagen, Denmark")
            and sum(1 for w in words if _INITIAL.fullmatch(w)) < 2 and title.count(",") < 2)


def plausible_next(number: str, last: str | None, *, strict: bool = False) -> bool:
    """Whether a numbered heading can follow the previous one ("2.4" -> "2.5", "3", "3.1", "2.4.1")."""
    if not number or not number[0].isdigit():
        return True
    parts = [int(p) for p in number.split(".")]
    if last is None or not last[:1].isdigit():
        return last is None and parts[0] <= 3 and all(p == 1 for p in parts[1:])
    prev = [int(p) for p in last.split(".")]
    if parts[: len(prev)] == prev and len(parts) == len(prev) + 1 and parts[-1] == 1:
        return True
    for k in range(min(len(parts), len(prev))):
        steps = (prev[k] + 1,) if strict else (prev[k] + 1, prev[k] + 2)
        if (parts[:k] == prev[:k] and parts[k] in steps
                and all(p == 1 for p in parts[k + 1:])):
            return True
    return False


_RUN_IN_NUMBER = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+")


def run_in_heading(
    line: Line, next_line: Line | None, *, wide: bool = True
) -> tuple[str, str, int, int] | None:
    """A numbered run-in heading ("2.1. High-degree centrality. In this method ...").

    Returns (number, title, lines used for the title (1 or 2), offset of the body text in
    the last of them), or None.
    """
    m = _RUN_IN_NUMBER.match(line.text)
    if not m:
        return None
    start = m.end()
    k = next((k for k, r in enumerate(line.runs) if r[0] <= start + 1 and r[1] > start and r[2]), None)
    if k is None and "." in m.group(1):
        k = next((k for k, r in enumerate(line.runs) if r[0] <= start + 1 and r[1] > start and r[3]), None)
        if k is not None:
            return _italic_run_in(line, next_line if wide else None, m.group(1), start, line.runs[k][1])
    if k is None:
        # the bold title may open with a short symbol in another font: "3.2. CN(1,2) of seeds ..."
        k = next((k for k, r in enumerate(line.runs) if r[2] and start < r[0] <= start + 10), None)
        if k is None or any(r[2] for r in line.runs if r[1] <= start) or \
                any(c.islower() for c in line.text[start:line.runs[k][0]].split("(")[0][1:]):
            return None
    end = line.runs[k][1]
    runs = line.runs
    while k + 1 < len(runs):  # bridge short math/digit runs inside a bold title: "CN(1,2) of seeds"
        a, b, bold, _it = runs[k + 1]
        if bold:
            end = b
            k += 1
        elif k + 2 < len(runs) and runs[k + 2][2] and (b - a) <= 5 and line.text[end:a].strip() == "" \
                and not any(c.isalpha() and c.islower() for c in line.text[a:b] if len(line.text[a:b]) > 3):
            end = runs[k + 2][1]
            k += 2
        else:
            break
    text = line.text
    if end >= len(text.rstrip()) - 1:
        # the bold title goes on to the next line (only when this line is full)
        if not wide or next_line is None or not next_line.runs:
            return None
        if not next_line.runs[0][2] or next_line.runs[0][0] > 1:
            return None
        end2 = next_line.runs[0][1]
        nt = next_line.text
        if not (nt[end2 - 1: end2] == "." or nt[end2: end2 + 1] == "."):
            return None
        title = f"{text[start:].strip()} {nt[:end2].strip()}".rstrip(". ")
        body = end2 + 1 if nt[end2: end2 + 1] == "." else end2
        if len(title.split()) > 20:
            return None
        return m.group(1), title, 2, body
    if not (text[end - 1: end] == "." or text[end: end + 1] == "."):
        return None
    title = text[start:end].rstrip(". ")
    if (not title[:1].isupper() and not title[:1].isalpha()) or len(title.split()) > 14:
        return None
    body = end + 1 if text[end: end + 1] == "." else end
    return m.group(1), title, 1, body


def run_in_title_end(line: Line) -> int | None:
    """Offset of the running text after an unnumbered bold or italic run-in title at the start of a line
    ("Document Representation Our goal is ...", "Papers. We obtain ...", ACM's italic "Completeness The more
    recoverable ..."), or None. Italic words open sentences too ("E. coli K-12 was grown", "In vitro, …"), so
    an italic title must be closed by a full stop or colon, or be in title case."""
    runs = line.runs
    if len(runs) < 2 or not (runs[0][2] or runs[0][3]) or runs[0][0] > 1:
        return None
    end = runs[0][1]
    title = line.text[:end].strip()
    rest = line.text[end:].lstrip(" .:—–-")
    words = title.split()
    if not 1 <= len(words) <= 8 or not title[:1].isupper() or not rest:
        return None
    if _RUN_IN_NUMBER.match(title):
        return None
    ends = title.endswith((".", ":")) or line.text[end:end + 1] in ".:"
    if not ends and not rest[:1].isupper():
        return None  # bold words inside a sentence
    if not runs[0][2] and ((not ends and not _title_case(words)) or _STATEMENT_LABEL.match(title)
                           or not any(sum(c.isalpha() for c in w) >= 3 for w in words)):
        return None  # (italic letters of a formula: "P H ."; "Theorem 1:" says what the sentence is)
    return len(line.text) - len(rest)


def _italic_run_in(line: Line, next_line: Line | None, number: str, start: int,
                   end: int) -> tuple[str, str, int, int] | None:
    """ACM's and Hindawi's italic run-in subheading ("3.1.2 Transactions. A transaction is ..."): a two- or
    three-level number, then an italic title closed by a full stop, on the same line or, when the italic
    title fills a full line, on the next unnumbered one (never a statement label or the italic letters of a
    formula)."""
    text = line.text
    stop = _title_stop(text, start, end)
    used, body = 1, stop + 1
    if stop < 0:
        if next_line is None or end < len(text.rstrip()) or not next_line.runs or not next_line.runs[0][3] \
                or next_line.runs[0][0] > 0 or _RUN_IN_NUMBER.match(next_line.text):
            return None
        nt = next_line.text
        stop = _title_stop(nt, 0, next_line.runs[0][1])
        if stop < 0:
            return None
        first, rest = text[start:].rstrip(), nt[:stop].strip()
        title = f"{first[:-1]}{rest}" if first.endswith("-") and rest[:1].islower() else f"{first} {rest}"
        used, body = 2, stop + 1
    else:
        title = text[start:stop].strip()
    words = title.split()
    if not 1 <= len(words) <= 20 or not title[:1].isupper() or _STATEMENT_LABEL.match(title) \
            or not any(sum(c.isalpha() for c in w) >= 3 for w in words):
        return None
    return number, title, used, body


def _title_stop(text: str, start: int, end: int) -> int:
    """The full stop that closes a title set in the run ``start``-``end`` (or just after it); not a genus's
    initial ("Recovery Rate of C. neoformans."); -1 if none."""
    stop = text.find(".", start, end + 1)
    while stop > 0 and text[stop - 1].isupper() and (stop - 1 == start or text[stop - 2] == " "):
        stop = text.find(".", stop + 1, end + 1)
    return stop


_JOINING_WORDS = frozenset(["a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or",
                            "than", "that", "the", "to", "with", "is", "are", "was", "were", "be"])
_STATEMENT_LABEL = re.compile(r"(?:Theorem|Lemma|Definition|Proposition|Corollary|Proof|Remark|Example|Claim"
                              r"|Conjecture|Assumption|Hypothesis|Problem|Observation|Note)\b")
_MINOR_WORDS = frozenset(["a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or",
                          "the", "to", "vs", "via", "with"])


def _title_case(words: list[str]) -> bool:
    """Every word capitalised but the short joining ones, and no abbreviation ("E. coli")."""
    return all((w[:1].isupper() or w in _MINOR_WORDS) and not w.endswith(".") for w in words)
