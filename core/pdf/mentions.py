"""Body sentences that mention figures and tables ("Figure 3", "Figs. 2 and 3", "Tables 1-3", and in
lower case, as IOP and the Royal Society print them, "figure 3", "fig. 2", "tables 1 and 2")."""

from __future__ import annotations

import re

_MENTION = re.compile(
    r"\b(?P<label>[Ff]igures?|[Ff]igs?\.?|FIGURES?|FIGS?\.?|[Tt]ables?|TABLES?|[Tt]abs?\.)(?P<space>\s*)"
    r"(?P<list>S?\d{1,3}[a-z]?(?:\s*\(\w\))?"
    r"(?:\s*(?:[-–—]|to|and|&|,|,\s*and)\s*S?\d{1,3}[a-z]?(?:\s*\(\w\))?)*)"
)
_ITEM = re.compile(r"(S?)(\d{1,3})[a-z]?|([-–—]|to)")
# IEEE style "TABLE IV", "Fig. II" (capitalised only: "in this figure I show" is no reference)
_ROMAN_MENTION = re.compile(
    r"\b(?P<label>Tables?|TABLES?|Figures?|Figs?\.|FIGURES?|FIG\.)\s+(?P<num>[IVX]{1,5})\b"
)


def _prefix(label: str) -> str:
    return "tab" if label.lower().startswith("tab") else "fig"


def _is_reference(text: str, m: re.Match[str]) -> bool:
    """A capitalised label followed by a number is a reference. In lower case ("figure 2", "fig. 3",
    "table 1") it is too, unless the word runs into the number ("table1": a name) or the number opens
    an enumeration ("… its routing table 2) Route Reply: …", no open parenthesis before it)."""
    if not m.group("label")[0].islower():
        return True
    if not m.group("space") and not m.group("label").endswith("."):
        return False
    before = text[:m.start()]
    return not (text[m.end():m.end() + 1] == ")" and before.count("(") <= before.count(")"))


def mentioned_ids(text: str) -> list[str]:
    """Figure ids ("fig3", "tab2", "figS1", "tabIV") mentioned in ``text``, in order, once each."""
    found: list[tuple[int, str]] = []
    for m in _MENTION.finditer(text):
        if not _is_reference(text, m):
            continue
        prefix = _prefix(m.group("label"))
        numbers: list[tuple[str, int]] = []
        pending_range = False
        for item in _ITEM.finditer(m.group("list")):
            if item.group(3):
                pending_range = True
                continue
            supp, num = item.group(1), int(item.group(2))
            if pending_range and numbers and numbers[-1][0] == supp and 0 < num - numbers[-1][1] <= 20:
                start = numbers[-1][1]
                numbers.extend((supp, k) for k in range(start + 1, num + 1))
            else:
                numbers.append((supp, num))
            pending_range = False
        found.extend((m.start(), f"{prefix}{supp}{num}") for supp, num in numbers)
    for m in _ROMAN_MENTION.finditer(text):
        found.append((m.start(), _prefix(m.group("label")) + m.group("num")))
    out: list[str] = []
    for _pos, fid in sorted(found, key=lambda item: item[0]):
        if fid not in out:
            out.append(fid)
    return out
