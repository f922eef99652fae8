"""Body sentences that mention figures and tables ("Figure 3", "Figs. 2 and 3", "Tables 1-3")."""

from __future__ import annotations

import re

_MENTION = re.compile(
    r"\b(?P<label>Figures?|Figs?\.?|FIGURES?|FIGS?\.?|Tables?|TABLES?|Tabs?\.)\s*"
    r"(?P<list>S?\d{1,3}[a-z]?(?:\s*\(\w\))?"
    r"(?:\s*(?:[-–—]|to|and|&|,|,\s*and)\s*S?\d{1,3}[a-z]?(?:\s*\(\w\))?)*)"
)
_ITEM = re.compile(r"(S?)(\d{1,3})[a-z]?|([-–—]|to)")
# IEEE style "TABLE IV", "Fig. II"
_ROMAN_MENTION = re.compile(
    r"\b(?P<label>Tables?|TABLES?|Figures?|Figs?\.|FIGURES?|FIG\.)\s+(?P<num>[IVX]{1,5})\b"
)


def _prefix(label: str) -> str:
    return "tab" if label.lower().startswith("tab") else "fig"


def mentioned_ids(text: str) -> list[str]:
    """Figure ids ("fig3", "tab2", "figS1", "tabIV") mentioned in ``text``, in order, once each."""
    found: list[tuple[int, str]] = []
    for m in _MENTION.finditer(text):
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
