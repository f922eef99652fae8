"""Title and authors from the first page."""

from __future__ import annotations

import itertools
import re

from core.pdf.lines import Line
from core.pdf.textmap import clean_text, join_lines

_VENUE = re.compile(
    r"proceedings|journal|conference|volume|vol\.|issn|doi|arxiv|https?:|www\.|©|\(c\)|copyright"
    r"|research article|open access|original article|review article|received|accepted|published"
    r"|licen[cs]e|preprint|workshop|transactions|letters|submitted|editor|correspondence",
    re.IGNORECASE,
)
_AFFILIATION = re.compile(
    r"universit|institut|department|dept\.|school|college|laborator|centre|center|faculty|hospital"
    r"|corporation|inc\.|ltd|gmbh|research|foundation|academy|@|\.edu|\.com|\.org|street|road"
    r"|usa\b|u\.s\.a|china|germany|france|japan|india|italy|canada|kingdom|spain|correspond"
    r"|group\b|\blab\b|team\b|processing|intelligence|science|engineering|computer|microsoft|google|\bibm\b",
    re.IGNORECASE,
)
_NOISE = re.compile(r"[\d∗*†‡§¶⋆♠♣♥♦#,]+$|^[\d∗*†‡§¶⋆♠♣♥♦#]+")


_JOURNAL_CUE = re.compile(
    r"\b(?:journal|letters|reports|science|sciences|review|reviews|research|communications|advances"
    r"|frontiers|annals|bulletin|today|medicine|chemistry|physics|materials)\b",
    re.IGNORECASE,
)


def _masthead(title: list[Line], candidates: list[Line], body_size: float, running: list[str]) -> bool:
    """A journal's name set large at the top of page 1 (MDPI's "sensors", Elsevier's "Applied Surface
    Science"): one line of one to three capitalised words (or one word in lower case, as MDPI's logos), no
    digits, with a real title below it (a line of four or more words set larger than the body), and either
    a single word, a journal-name word, or the same name in the running head or foot of a later page."""
    if len(title) != 1:
        return False
    text = clean_text(title[0].text).strip(" .,:")
    words = text.split()
    if not 1 <= len(words) <= 3 or any(c.isdigit() for c in text):
        return False
    lower_logo = len(words) == 1 and text.isalpha() and text.islower()  # MDPI's "sensors", "entropy"
    capitalised = all(w[:1].isupper() or w in {"&", "of", "and", "the", "in", "for"} for w in words)
    if not (lower_logo or capitalised):
        return False
    below = [ln for ln in candidates if ln.y0 > title[0].y1 and len(ln.text.split()) >= 4
             and ln.size >= 1.15 * body_size]
    if not below:
        return False
    key = text.lower()
    in_running = any(re.search(r"(?:^|\W)" + re.escape(key) + r"(?:\W|$)", r.lower()) for r in running)
    return len(words) == 1 or bool(_JOURNAL_CUE.search(text)) or in_running


def find_title(lines: list[Line], page_height: float, body_size: float,
               running: list[str] | None = None) -> list[Line]:
    """The title lines of the first page: the largest font near the top that is not a venue header
    (nor a journal's name set as a masthead; ``running`` holds the running heads and feet of the
    later pages, where a journal's name repeats)."""
    candidates = [
        ln for ln in lines
        if "furniture" not in ln.tags
        and ln.y0 < 0.55 * page_height
        and sum(c.isalpha() for c in ln.text) >= 3
        and not _VENUE.search(ln.text)
    ]
    title = _pick_title(candidates, page_height, body_size)
    if _masthead(title, candidates, body_size, running or []):
        title[0].tags.add("furniture")  # page furniture, not a heading of the body
        title = _pick_title([ln for ln in candidates if ln is not title[0]], page_height, body_size)
    return title


def _pick_title(candidates: list[Line], page_height: float, body_size: float) -> list[Line]:
    if not candidates:
        return []
    top = max(ln.size for ln in candidates)
    if top < body_size * 1.05:
        # no larger title font: the first bold line near the top, if any
        bold = [ln for ln in candidates if ln.bold >= 0.7 and ln.y0 < 0.35 * page_height]
        if not bold:
            return []
        top = bold[0].size
        seed = min(bold, key=lambda ln: ln.y0)
    else:
        seed = min((ln for ln in candidates if ln.size >= top - 0.01), key=lambda ln: ln.y0)
    title = [seed]
    pool = sorted((ln for ln in candidates if abs(ln.size - seed.size) <= 0.6), key=lambda ln: ln.y0)
    for ln in pool:
        if ln is seed or ln.y0 < seed.y0:
            continue
        last = title[-1]
        if ln.y0 - last.y1 <= 1.3 * seed.size and ln.y0 > last.y0:
            title.append(ln)
        elif ln.y0 > last.y1:
            break
    for ln in sorted(pool, key=lambda ln: -ln.y0):  # lines just above the seed
        if ln.y1 <= seed.y0 and seed.y0 - ln.y1 <= 1.3 * seed.size and ln not in title:
            title.insert(0, ln)
            seed = ln
    return title[:6]


def title_text(lines: list[Line]) -> str:
    return clean_text(join_lines(lines))


def find_authors(lines: list[Line], title: list[Line], stop_y: float, body_size: float) -> list[str]:
    """Best-effort author names: the name-like lines between the title and ``stop_y`` on page 1."""
    if not title:
        return []
    start_y = max(ln.y1 for ln in title)
    names: list[str] = []
    for ln in sorted(lines, key=lambda ln: (ln.y0, ln.x0)):
        if ln.y0 < start_y - 1 or ln.y0 >= stop_y or ln in title or "furniture" in ln.tags:
            continue
        if ln.size < 0.8 * body_size or _VENUE.search(ln.text):
            continue
        if _AFFILIATION.search(ln.text):
            # ACM style: "TAL AUGUST, University of Washington, USA"
            head, _sep, rest = ln.text.partition(",")
            words = head.split()
            if rest and _AFFILIATION.search(rest) and not _AFFILIATION.search(head) and 2 <= len(words) <= 4 \
                    and all(w[:1].isupper() for w in words):
                name = " ".join(_name_case(w) for w in words)
                if name not in names:
                    names.append(name)
                continue
            if names:
                break
            continue
        for name in _split_names(ln):
            if name not in names:
                names.append(name)
        if len(names) >= 40:
            break
    return names


_PARTICLES = {"van", "von", "de", "der", "den", "di", "da", "la", "le", "du", "del", "dos", "das", "y", "bin",
              "al"}


def _name_case(word: str) -> str:
    """"QUIRK" -> "Quirk" (names set in capitals or small caps); initials stay."""
    return word.capitalize() if word.isupper() and len(word) >= 2 and "." not in word else word


def _name_word(word: str) -> bool:
    if word in _PARTICLES:
        return True
    return word[:1].isupper() and all(c.isalpha() or c in "-'’." for c in word)


def _split_names(line: Line) -> list[str]:
    text = line.text
    parts: list[str] = []
    # wide spaces between names set on one line ("Ruifang Ge      Raymond J. Mooney")
    wide: list[int] = []
    prev = -1
    for k, ch in enumerate(text):
        if ch.isspace():
            continue
        if prev >= 0 and k > prev + 1 and line.cx0[k] - line.cx1[prev] > 0.6 * line.size:
            wide.append(prev + 1)
        prev = k
    cuts = sorted({0, *line.gaps, *wide, len(text)})
    for a, b in itertools.pairwise(cuts):
        parts.extend(re.split(r",|;|\band\b|&|\s{2,}", text[a:b]))
    out: list[str] = []
    for part in parts:
        part = clean_text(part)
        part = re.sub(r"(?<=[A-Za-z])[\d∗*†‡§¶⋆♠♣♥♦#α-ωΑ-Ω,]+(?=\s|$)", "", part)
        part = _NOISE.sub("", part).strip(" ,;")
        words = part.split()
        if words and words[0].lower() == "and":
            words = words[1:]
        if not 2 <= len(words) <= 5:
            continue
        if not all(_name_word(w) for w in words):
            continue
        if sum(1 for w in words if w[0].isupper()) < 2:
            continue
        out.append(" ".join(_name_case(w) for w in words))
    return out
