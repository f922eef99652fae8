"""Corrections in the GUI and "Train on my corrections" (issue 15): correcting a sentence through the
controller (context, model id, replacement), the inspector and the context menus, Alt+1…Alt+6, the JSONL
export/import, and the training dialog with the training function replaced by a fast stand-in run in a
real child process (tests/train_child_fakes.py: refusal, the before/after table, "Use" only when
accepted, the hot swap and its roll back, one job at a time, Cancel killing the child, an error as one
line). No torch training runs here."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QMenu

import app.gui.train_dialog as train_dialog
from app.gui.corrections import CorrectionController
from core.library.corrections import Correction, Corrections
from core.library.library import Library
from core.taxonomy.functions import default_taxonomy
from core.taxonomy.labels import ROLES
from tests.gui_helpers import open_window, own_user_folder
from tests.paper_factory import make_analysis, make_paper

TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path_factory.mktemp("corrections") / "bundle")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return own_user_folder(tmp_path, monkeypatch)


@pytest.fixture
def window(qtbot, bundle: Path, folder: Path) -> Iterator:  # type: ignore[no-untyped-def]
    """The window with make_paper() open and labelled by make_analysis() (model id "tiny@1#abc")."""
    for win in open_window(qtbot, bundle, use_cache=False, load_model_at_start=False):
        paper = make_paper()
        win.session.paper = paper
        win.session.analysis = make_analysis(paper)
        win._update_actions()
        yield win


def stored(folder: Path) -> list[Correction]:
    with Library(folder) as library:
        return Corrections(library.store).all()


def add_role_corrections(folder: Path, n: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with Library(folder) as library:
        table = Corrections(library.store)
        for i in range(n):
            table.add(Correction(doc_id="cd" * 32, text=f"Sentence number {i} of the test.", field="role",
                                 corrected=ROLES[i % len(ROLES)], predicted="other"))


def test_a_correction_keeps_context_and_model_and_is_replaced(qtbot, window, folder) -> None:  # type: ignore[no-untyped-def]
    controller: CorrectionController = window.corrections
    paper = window.session.paper
    controller.correct_role(1, "conclusion")
    (first,) = stored(folder)
    assert (first.doc_id, first.text, first.field) == (paper.sha256, paper.sentences[1].text, "role")
    assert first.corrected == "conclusion" and first.predicted == "objective"  # make_analysis's label
    assert first.context_before == paper.sentences[0].text and first.context_after == paper.sentences[2].text
    assert first.model_id == "tiny@1#abc" and first.section_kind == "abstract" and first.position == 1
    controller.correct_role(2, "result")  # the last of its section: no context after
    assert [c.context_after for c in stored(folder) if c.position == 2] == [""]
    controller.correct_role(1, "method")  # correcting again replaces
    assert [(c.position, c.corrected) for c in stored(folder)] == [(1, "method"), (2, "result")]
    assert controller.corrected_label(1) == "method" and controller.corrected_label(0) is None

    inspector = window.panels["inspector"]
    window.session.select_sentence(1)
    assert inspector.role.text().startswith("method") and "your correction; the model said objective" \
        in inspector.role.text()
    controller.correct_function(1, "main-conclusion")
    assert "your correction" in inspector.function.text()
    assert stored(folder)[-1].field == "function" and stored(folder)[-1].corrected == "main-conclusion"


def test_the_menus_list_the_roles_and_the_functions_of_the_role(qtbot, window, folder) -> None:  # type: ignore[no-untyped-def]
    controller: CorrectionController = window.corrections
    menu = controller.menu(3, window)  # make_analysis: sentence 3 is a method
    roles, functions = [a.menu() for a in menu.actions()]
    assert roles.title() == "Correct &role" and functions.title() == "Correct &function"
    assert [a.text().split("\t")[0] for a in roles.actions()] == list(ROLES)
    assert [a.text().split("\t")[1] for a in roles.actions()] == [f"Alt+{i}" for i in range(1, 7)]
    assert [a.text() for a in functions.actions()] == [f.name for f in default_taxonomy().of_role("method")]
    assert [a.isChecked() for a in roles.actions()] == [r == "method" for r in ROLES]
    roles.actions()[ROLES.index("result")].trigger()
    assert controller.corrected_label(3) == "result"
    again = controller.menu(3, window)  # the functions now follow the corrected role
    assert [a.text() for a in again.actions()[1].menu().actions()] == [
        f.name for f in default_taxonomy().of_role("result")]

    window._page_menu(0, QPoint(10, 10))  # the page view's context menu offers them too
    popups = [m for m in window.findChildren(QMenu) if m.isVisible()]
    assert any("Correct &role" in [a.text() for a in m.actions()] for m in popups)
    for m in popups:
        m.close()

    window.session.select_sentence(0)  # Alt+3: the selected sentence becomes a method
    assert [a.shortcut().toString() for a in window.act_correct_role] == [f"Alt+{i}" for i in range(1, 7)]
    window.act_correct_role[ROLES.index("method")].trigger()
    assert controller.corrected_label(0) == "method"


def test_export_and_import_round_trip(qtbot, window, folder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window.corrections.correct_role(0, "objective")
    window.corrections.correct_function(4, "implementation")
    path = tmp_path / "mine.jsonl"
    assert window.export_corrections(path) == 2
    other = CorrectionController(window.session, library_folder=tmp_path / "another-library")
    assert other.import_from(path) == 2
    assert sorted((c.field, c.corrected, c.context_after) for c in other.all()) == sorted(
        (c.field, c.corrected, c.context_after) for c in stored(folder))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "no label here"}\n', encoding="utf-8")
    assert window.import_corrections(bad) == -1
    assert window.banner.kind == "error" and "bad.jsonl:1" in window.banner.text


def test_the_dialog_refuses_with_too_few_role_corrections(qtbot, window, folder) -> None:  # type: ignore[no-untyped-def]
    add_role_corrections(folder, 5)
    dialog = window.train_dialog()
    assert not dialog.train_button.isEnabled()
    assert "15 more role corrections needed" in dialog.need.text() and dialog.need.isVisibleTo(dialog)
    assert "<b>5</b> role corrections" in dialog.counts.text()
    assert dialog.start() is False and not dialog.running
    add_role_corrections(folder, 20)
    dialog.refresh()
    assert dialog.train_button.isEnabled() and not dialog.need.isVisibleTo(dialog)


def test_an_accepted_run_can_be_used_and_rolled_back(qtbot, window, folder, bundle) -> None:  # type: ignore[no-untyped-def]
    add_role_corrections(folder, 20)
    dialog = window.train_dialog()
    dialog.training_target = "tests.train_child_fakes:accepted"
    with qtbot.waitSignal(dialog.finishedRun, timeout=TIMEOUT_MS) as run:
        assert dialog.start()
    assert run.args[0].accepted
    assert dialog.request is not None and dialog.request.bundle == bundle
    assert len(dialog.request.corrections) == 20
    assert dialog.table.rowCount() == 3 and dialog.table.item(1, 0).text() == "CSAbstruct dev"
    assert (dialog.table.item(0, 1).text(), dialog.table.item(0, 2).text()) == ("40.0 %", "75.0 %")
    assert dialog.use_button.isEnabled() and not dialog.rollback_button.isEnabled()
    out = dialog.out
    assert out is not None and out.parent == Path(window.settings.q.fileName()).parent / "models"
    previous = window.models.options.path
    assert previous == str(bundle)
    dialog.use_button.click()
    assert window.models.options.path == str(out) == window.settings.model_path
    assert window.settings.previous_model_path == str(bundle) and window.act_rollback.isEnabled()
    assert not dialog.use_button.isEnabled() and dialog.rollback_button.isEnabled()
    window.act_rollback.trigger()
    assert window.models.options.path == str(bundle) == window.settings.model_path
    assert out.is_dir() and bundle.is_dir()  # nothing deleted
    assert not window.act_rollback.isEnabled() and not dialog.rollback_button.isEnabled()


def test_a_run_that_is_worse_is_not_offered(qtbot, window, folder, bundle) -> None:  # type: ignore[no-untyped-def]
    add_role_corrections(folder, 20)
    dialog = window.train_dialog()
    dialog.training_target = "tests.train_child_fakes:rejected"
    with qtbot.waitSignal(dialog.finishedRun, timeout=TIMEOUT_MS):
        dialog.start()
    assert dialog.table.item(1, 3).text() == "-4.0"
    assert not dialog.use_button.isEnabled() and dialog.use_new_model() is False
    assert "worse on CSAbstruct dev" in dialog.verdict.text()
    assert window.models.options.path == str(bundle)


def test_one_job_at_a_time_and_cancel_leaves_the_model(qtbot, window, folder, bundle) -> None:  # type: ignore[no-untyped-def]
    add_role_corrections(folder, 20)
    dialog = window.train_dialog()
    dialog.training_target = "tests.train_child_fakes:slow"
    assert dialog.start()
    qtbot.waitUntil(lambda: "s left" in dialog.status.text(), timeout=TIMEOUT_MS)
    pid = int(dialog.status.text().split(" in process ")[1].split(",")[0])
    assert pid != os.getpid()
    assert window.train_dialog() is dialog and dialog.start() is False  # a second request: the same job
    assert window.tracker.labels().count(train_dialog.JOB_LABEL) == 1
    assert dialog.cancel_button.isVisible() and not dialog.train_button.isEnabled()
    out = dialog.out
    with qtbot.waitSignal(dialog.finishedRun, timeout=TIMEOUT_MS) as run:
        dialog.cancel_button.click()
    assert run.args == [None] and "cancelled" in dialog.status.text()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the training process is gone
    assert window.models.options.path == str(bundle) and window.settings.model_path == ""
    assert out is not None and not out.exists() and not dialog.use_button.isEnabled()
    assert not list((out.parent / "work").glob("*.partial"))  # nor its unfinished copy
    qtbot.waitUntil(lambda: dialog.train_button.isEnabled() and not dialog.running, timeout=TIMEOUT_MS)


def test_a_failed_run_says_why_in_one_line(qtbot, window, folder, bundle) -> None:  # type: ignore[no-untyped-def]
    add_role_corrections(folder, 20)
    dialog = window.train_dialog()
    dialog.training_target = "tests.train_child_fakes:crash"
    with qtbot.waitSignal(dialog.finishedRun, timeout=TIMEOUT_MS) as run:
        assert dialog.start()
    out = Path(window.settings.q.fileName()).parent / "models"
    assert run.args == [None]
    assert dialog.status.text() == "Training failed: RuntimeError: out of memory in the export"
    assert not [p for p in out.iterdir() if p.name.startswith("corrections-")]  # nothing installed
    assert not list((out / "work").glob("*.partial")) and window.models.options.path == str(bundle)
    qtbot.waitUntil(lambda: dialog.train_button.isEnabled() and not dialog.running, timeout=TIMEOUT_MS)
