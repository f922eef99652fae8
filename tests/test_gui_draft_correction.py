"""Draft pane: correcting a draft sentence's role shows on the pane at once; a correction of the same
text in a paper does not touch the draft."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from models.roles import ROLES
from tests.gui_helpers import TIMEOUT_MS, model_bundle, open_window

TEXT = "Previous work has studied citation recommendation. Our goal is to improve accuracy."


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model_bundle(tmp_path_factory)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_a_draft_correction_shows_on_the_pane(qtbot, bundle: Path, home: Path) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        window.docks["draft"].show()
        editor = draft.editor
        with qtbot.waitSignal(draft.labelled, timeout=TIMEOUT_MS):
            editor.insertPlainText(TEXT)
        target = editor.correction_target(TEXT.index("Our goal") + 2)
        assert target is not None and target.text == "Our goal is to improve accuracy."
        other_role = next(r for r in ROLES if r != target.role)
        first = editor.labels[0][1]

        # The same sentence corrected in a paper: the draft keeps the model's role.
        window.corrections.correct(replace(target, doc_id="some-paper"), "role", other_role)
        assert editor.labels[1][1].label == target.role

        window.corrections.correct(target, "role", other_role)
        assert editor.labels[1][1].label == other_role
        assert editor.labels[1][1].probabilities[other_role] == 1.0
        assert editor.labels[0][1] is first  # only the corrected sentence changes
