"""The figure chosen as each paper's graphical abstract, remembered in the settings by the paper's sha256
(``AppSettings.graphical_abstract``), and found again among a new ranking's candidates."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.gui.settings import AppSettings

if TYPE_CHECKING:  # pragma: no cover
    from core.document import Paper
    from core.figures.figure_rank import FigureRanking, RankedFigure


def chosen_figure_id(choice: dict[str, str] | None, ranking: FigureRanking | None) -> str:
    """The remembered choice (``{"id", "kind", "number"}``) among the ranked candidates ("" = none): by id,
    else by its printed label (the parser numbered the figures again)."""
    ranked = ranking.figures if ranking is not None else []
    if not choice:
        return ""
    found = next((f for f in ranked if f.figure_id == choice.get("id")), None) or next(
        (f for f in ranked if f.kind == choice.get("kind") and f.number == choice.get("number")), None)
    return found.figure_id if found is not None else ""


class RememberedChoice:
    """Reads and writes the remembered choice (the settings are opened when first needed)."""

    def __init__(self, settings: AppSettings | None = None) -> None:
        self._settings = settings

    @property
    def settings(self) -> AppSettings:
        if self._settings is None:
            self._settings = AppSettings()
        return self._settings

    def chosen_id(self, paper: Paper | None, ranking: FigureRanking | None) -> str:
        """The figure remembered for ``paper`` that is among ``ranking``'s candidates ("" = none)."""
        return chosen_figure_id(self.settings.graphical_abstract(paper.sha256) if paper else None, ranking)

    def remember(self, paper: Paper, ranked: RankedFigure) -> None:
        self.settings.set_graphical_abstract(paper.sha256, {"id": ranked.figure_id, "kind": ranked.kind,
                                                            "number": ranked.number})
        self.settings.sync()
