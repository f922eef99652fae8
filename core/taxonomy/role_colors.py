"""The role colours (Okabe–Ito, colour-blind safe) as hex strings, shared by the GUI's overlay
(``app.gui.palette``) and the annotated-PDF export (``core.pdf.annotate``); no Qt."""

from __future__ import annotations

#: Okabe & Ito (2008) colours, one per role; readable under a multiply-blended highlight.
DEFAULT_ROLE_COLORS: dict[str, str] = {
    "background": "#56B4E9",  # sky blue
    "objective": "#CC79A7",   # reddish purple
    "method": "#F0E442",      # yellow
    "result": "#D55E00",      # vermillion
    "conclusion": "#009E73",  # bluish green
    "other": "#999999",       # grey
}
UNLABELLED_COLOR = "#BBBBBB"


def hex_to_rgb(value: str) -> tuple[float, float, float]:
    """``#RRGGBB`` (or ``RRGGBB``) as three floats in 0..1; ``ValueError`` for anything else."""
    text = value.strip().lstrip("#")
    if len(text) != 6 or any(c not in "0123456789abcdefABCDEF" for c in text):
        raise ValueError(f"not a #RRGGBB colour: {value!r}")
    return tuple(int(text[i:i + 2], 16) / 255.0 for i in (0, 2, 4))  # type: ignore[return-value]
