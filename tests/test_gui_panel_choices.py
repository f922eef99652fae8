"""Hostile test K, problem 8: the choices made in panels were forgotten on restart: Outline's and the
profile's "Show", the three Suggestions filters, the Search facet and count, the Alignment function
weight, Graphical abstract's "Include tables", and the roles hidden in the legend. They are now saved with
the window's settings when it closes (:mod:`app.gui.panel_choices`); a damaged value gives the default."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from app.gui.panel_choices import HIDDEN_ROLES
from app.gui.settings import AppSettings
from tests.gui_helpers import open_window, own_user_folder


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own_user_folder(tmp_path, monkeypatch)


def _choices(window) -> dict[str, object]:  # type: ignore[no-untyped-def]
    panels = window.panels
    suggestions = panels["suggestions"]
    return {"outline": panels["outline"].mode.currentText(), "profile": panels["profile"].mode.currentText(),
            "function": suggestions.function.currentText(), "section": suggestions.section.currentText(),
            "source": suggestions.source.currentText(), "facet": panels["search"].facet.currentText(),
            "top": panels["search"].k.value(), "weight": panels["alignment"].weight.value(),
            "tables": panels["graphical_abstract"].include_tables.isChecked(),
            "hidden": [r for r in window.palette_.colors() if not window.palette_.is_visible(r)]}


def _choose(window) -> None:  # type: ignore[no-untyped-def]
    panels = window.panels
    panels["outline"].mode.setCurrentText("functions")
    panels["profile"].mode.setCurrentText("functions")
    suggestions = panels["suggestions"]
    for combo in (suggestions.function, suggestions.section, suggestions.source):
        combo.setCurrentIndex(combo.count() - 1)
    panels["search"].facet.setCurrentIndex(2)
    panels["search"].k.setValue(7)
    panels["alignment"].weight.setValue(0.3)
    panels["graphical_abstract"].include_tables.setChecked(True)
    window.legend.buttons["method"].setChecked(False)


def test_the_choices_made_in_panels_come_back(qtbot) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, None, load_model_at_start=False):
        defaults = _choices(window)
        _choose(window)
        chosen = _choices(window)
    assert all(chosen[key] != defaults[key] for key in chosen)
    for window in open_window(qtbot, None, load_model_at_start=False):
        assert _choices(window) == chosen
        assert not window.legend.buttons["method"].isChecked()
        assert window.panels["alignment"].function_weight == pytest.approx(0.3)


def test_damaged_choices_give_the_defaults(qtbot) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, None, load_model_at_start=False):
        defaults = _choices(window)
    settings = AppSettings()
    for key, junk in (("outline/show", "everything"), ("profile/show", "\x00"), ("suggestions/function", 7),
                      ("suggestions/section", "nowhere"), ("suggestions/source", ""),
                      ("search/facet", "Colour"), ("search/top", "lots"),
                      ("alignment/function_weight", "7.5"),
                      ("graphical_abstract/include_tables", "perhaps")):
        settings.q.setValue(f"panels/{key}", junk)
    settings.q.setValue(HIDDEN_ROLES, "{not json")
    settings.sync()
    for window in open_window(qtbot, None, load_model_at_start=False):
        assert _choices(window) == defaults
