"""Suggestions (hostile test I, small issue 6): making a card (its widgets and style sheets) is what costs
the UI thread (selecting a sentence every 150 ms left gaps of 261–282 ms in ``SuggestionCard.__init__``).
A new result refills the cards already listed; of the new rows only the first few get a card at once,
the others one per turn of the event loop (or when asked for); the selected row stays the expanded one,
rows left over go, and each row's buttons act on their own row."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from app.gui.panels.suggestion_cards import BUILT_AT_ONCE
from app.gui.panels.suggestions import SuggestionsPanel
from core.phrasing.suggest import Suggestion, SuggestionResult
from core.phrasing.suggestion_sources import Found
from tests.gui_helpers import show_panel


def _suggestion(text: str, template: str = "") -> Suggestion:
    return Suggestion(text, {"kind": "corpus", "paper_id": "p1", "title": f"About {text}", "section": ""},
                      0.8, "method", "", template=template)


def _found(*texts: str) -> Found:
    return Found(SuggestionResult({"text": "query"}, [_suggestion(t, f"{t} [template]") for t in texts]))


@pytest.fixture
def panel(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SuggestionsPanel]:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    yield from show_panel(qtbot, SuggestionsPanel, tmp_path / "no-model", (700, 600))


def test_a_new_result_refills_the_cards_already_listed(qtbot, panel: SuggestionsPanel) -> None:  # type: ignore[no-untyped-def]
    panel.query_text = "query"
    panel._on_result(_found("first a", "first b", "first c"))
    cards = [panel.card(row) for row in range(3)]
    assert [c.item.text for c in cards if c is not None] == ["first a", "first b", "first c"]
    assert cards[0] is not None and cards[0].expanded and cards[0].template.isVisibleTo(cards[0])
    panel._on_result(_found("second a", "second b", "second c", "second d"))
    again = [panel.card(row) for row in range(4)]
    assert again[:3] == cards  # the same widgets, refilled
    assert [c.item.text for c in again if c is not None] == ["second a", "second b", "second c", "second d"]
    assert again[0] is not None and again[0].expanded and again[0].template.text() == "second a [template]"
    assert not any(c is not None and c.expanded for c in again[1:])
    assert panel.rows() == [c.item for c in again if c is not None]
    gone: list[bool] = []
    assert again[3] is not None
    again[3].destroyed.connect(lambda *_: gone.append(True))
    panel._on_result(_found("third a"))
    assert panel.list.count() == 1 and panel.card(0) is cards[0]
    qtbot.waitUntil(lambda: gone == [True])  # a row left over takes its card with it
    assert panel.rows()[0].text == "third a"


def test_new_rows_get_their_cards_a_few_at_a_time(qtbot, panel: SuggestionsPanel) -> None:  # type: ignore[no-untyped-def]
    panel.query_text = "query"
    texts = [f"sentence {n}" for n in range(8)]
    panel._on_result(_found(*texts))
    built = [panel.list.card(row, build=False) is not None for row in range(8)]
    assert built[:BUILT_AT_ONCE] == [True] * BUILT_AT_ONCE and not all(built)  # the rest come later
    assert [s.text for s in panel.rows()] == texts  # listed already
    first = panel.card(0)
    assert first is not None and first.expanded
    card = panel.card(6)  # asked for: made now
    assert card is not None and card.item.text == "sentence 6" and not card.expanded
    qtbot.waitUntil(lambda: all(panel.list.card(row, build=False) is not None for row in range(8)))
    assert [c.item.text for c in map(panel.card, range(8)) if c is not None] == texts


def test_a_reused_row_s_buttons_act_on_its_row(panel: SuggestionsPanel) -> None:
    panel.query_text = "query"
    panel._on_result(_found("first a", "first b"))
    panel._on_result(_found("second a", "second b"))
    card = panel.card(1)
    assert card is not None
    card.copy_sentence.click()
    assert panel.list.currentRow() == 1
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == "second b"
