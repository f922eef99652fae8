"""Opening a draft file over unsaved text, in the background (hostile test E, problems 1, 2 and 5): the
author is asked "Save changes to X before opening Y?" (Save / Discard / Cancel) after the file has been
read; the read runs in a worker with "Reading Y…", a bar and Stop while the pane stays editable; closing
the window with edits to an opened file asks the same; a line said while a labelling round is due
survives that round's summary."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from core.drafts import DraftStore
from tests.gui_helpers import (
    DRAFT_A,
    DRAFT_B,
    TIMEOUT_MS,
    model_bundle,
    open_window,
    two_draft_files,
    wait_released,
)

A_TEXT, B_TEXT = DRAFT_A, DRAFT_B


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model_bundle(tmp_path_factory)


@pytest.fixture
def drafts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    return two_draft_files(tmp_path, monkeypatch)


def answering(draft, answer: str) -> list[str]:  # type: ignore[no-untyped-def]
    """Answer every "Save … before …?" with ``answer``; the questions asked."""
    asked: list[str] = []

    def ask(question: str) -> str:
        asked.append(question)
        return answer

    draft.files._ask_unsaved = ask
    return asked


def open_and_wait(qtbot, draft, path: Path) -> bool:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(draft.files.openFinished, timeout=TIMEOUT_MS) as done:
        draft.open_draft(str(path))
    return bool(done.args[0])


def slow_reads(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, list[bool]]:
    """Reads wait for the returned event; the list says, per read, whether it ran off the UI thread."""
    import core.draft_formats

    release, off_ui = threading.Event(), []
    read = core.draft_formats.read_draft

    def slow(path: Path) -> object:
        off_ui.append(threading.current_thread() is not threading.main_thread())
        release.wait(30)
        return read(path)

    monkeypatch.setattr(core.draft_formats, "read_draft", slow)
    return release, off_ui


def test_opening_over_unsaved_edits_asks_save_discard_or_cancel(qtbot, bundle: Path,  # type: ignore[no-untyped-def]
                                                               drafts: tuple[Path, Path]) -> None:
    a, b = drafts
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        asked = answering(draft, "cancel")
        assert open_and_wait(qtbot, draft, a) and asked == []  # an empty pane: nothing to ask
        assert open_and_wait(qtbot, draft, b) and asked == []  # the pane holds a.md as it is
        assert open_and_wait(qtbot, draft, a) and draft.text == A_TEXT
        draft.set_text(A_TEXT + "Our aim is to help.\n")
        # Cancel: everything stays as it was
        assert not open_and_wait(qtbot, draft, b)
        assert asked == ["Save changes to a.md before opening b.md?"]
        assert draft.text == A_TEXT + "Our aim is to help.\n" and draft.opened.path == a
        assert draft.status.text() == "Not opened b.md: the draft in the pane is unchanged"
        assert a.read_text(encoding="utf-8") == A_TEXT
        # Save: a.md is written, then b.md opens
        answering(draft, "save")
        assert open_and_wait(qtbot, draft, b)
        assert a.read_text(encoding="utf-8") == A_TEXT + "Our aim is to help.\n"
        assert draft.text == B_TEXT and draft.opened.path == b
        # Discard: b.md is untouched, the edit is kept in the draft store
        draft.set_text(B_TEXT + "It fell later.\n")
        answering(draft, "discard")
        assert open_and_wait(qtbot, draft, a)
        assert b.read_text(encoding="utf-8") == B_TEXT
        assert DraftStore().load("before-open") == B_TEXT + "It fell later.\n"
        assert draft.opened.path == a


def test_typed_text_is_asked_about_and_a_cancelled_save_opens_nothing(qtbot, bundle: Path,  # type: ignore[no-untyped-def]
                                                                     drafts: tuple[Path, Path]) -> None:
    a, _ = drafts
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        draft.set_text("   \n")  # blank: nothing to keep, nothing asked
        asked = answering(draft, "save")
        draft.files._ask_save_path = lambda suggested: ""  # the author cancels "Save draft as…"
        assert open_and_wait(qtbot, draft, a) and asked == []
        draft.files.opened = None
        draft.set_text("My typed notes.")
        assert not open_and_wait(qtbot, draft, a)
        assert asked == ["Save the draft in the pane before opening a.md?"]
        assert draft.text == "My typed notes." and draft.opened is None


def test_a_draft_is_read_in_the_background_and_the_pane_stays_editable(  # type: ignore[no-untyped-def]
        qtbot, bundle: Path, drafts: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = drafts
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        window.docks["draft"].show()
        asked = answering(draft, "cancel")
        assert open_and_wait(qtbot, draft, a)
        release, off_ui = slow_reads(monkeypatch)
        with qtbot.waitSignal(draft.files.openFinished, timeout=TIMEOUT_MS) as done:
            draft.open_draft(str(b))
            qtbot.waitUntil(lambda o=off_ui: o == [True])  # read in a worker: the UI thread goes on
            assert draft.status.text() == "Reading b.md…"
            qtbot.waitUntil(draft.status.progress.isVisible)  # a moving bar
            assert draft.status.cancel_button.isVisible()
            draft.editor.setFocus()
            draft.editor.moveCursor(draft.editor.textCursor().MoveOperation.End)
            qtbot.keyClicks(draft.editor, "Typed meanwhile.")
            with qtbot.waitSignal(draft.labelled, timeout=TIMEOUT_MS):
                pass  # a labelling round ends while b.md is read: the reading stays in the status
            assert draft.status.text().startswith("Reading b.md… — ")
            assert draft.status.progress.isVisible()
            release.set()
        # what was typed while the file was read is asked about like any edit
        assert done.args == [False] and asked == ["Save changes to a.md before opening b.md?"]
        assert draft.text == A_TEXT + "Typed meanwhile."
        answering(draft, "discard")  # the window closes at the end of the test


def test_stop_drops_a_read_in_progress(qtbot, bundle: Path, drafts: tuple[Path, Path],  # type: ignore[no-untyped-def]
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = drafts
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        window.docks["draft"].show()
        answering(draft, "cancel")
        assert open_and_wait(qtbot, draft, a)
        release, off_ui = slow_reads(monkeypatch)
        finished: list[bool] = []
        draft.files.openFinished.connect(finished.append)
        draft.open_draft(str(b))
        qtbot.waitUntil(lambda o=off_ui: o == [True])
        worker = draft.files.op.worker
        assert draft.files.reading == "b.md"
        draft.status.cancel_button.click()
        assert draft.status.text() == "Cancelled."
        assert draft.files.reading == ""
        release.set()
        wait_released(qtbot, worker)
        assert finished == [] and draft.opened.path == a and draft.text == A_TEXT


def test_closing_the_window_asks_about_edits_to_an_opened_file(qtbot, bundle: Path,  # type: ignore[no-untyped-def]
                                                               drafts: tuple[Path, Path]) -> None:
    a, _ = drafts
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        asked = answering(draft, "cancel")
        assert open_and_wait(qtbot, draft, a)
        assert draft.may_close() and asked == []  # no edits: nothing to ask
        draft.set_text(A_TEXT + "Our aim is to help.\n")
        assert not window.close() and window.isVisible()  # Cancel: the window stays
        assert asked == ["Save changes to a.md before closing?"]
        answering(draft, "save")
        assert window.close()
        assert a.read_text(encoding="utf-8") == A_TEXT + "Our aim is to help.\n"


def test_typed_text_is_not_asked_about_on_closing(qtbot, bundle: Path, drafts: tuple[Path, Path]) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        asked = answering(draft, "cancel")
        draft.set_text("Typed, autosaved and restored on the next start.")
        assert window.close() and asked == []
        assert DraftStore().load() == "Typed, autosaved and restored on the next start."


def said_then_labelled(qtbot, draft, say: Callable[[Any], object]) -> str:  # type: ignore[no-untyped-def]
    """The status after the labelling round that was due when ``say(draft)`` ran."""
    with qtbot.waitSignal(draft.labelled, timeout=TIMEOUT_MS):
        say(draft)
    return str(draft.status.text())


def test_a_bad_file_dropped_just_after_typing_stays_in_the_status(qtbot, bundle: Path,  # type: ignore[no-untyped-def]
                                                                 tmp_path: Path,
                                                                 drafts: tuple[Path, Path]) -> None:
    bad = tmp_path / "bad.tex"
    bad.write_text("\\section{Intro}\nUnclosed {group.\n", encoding="utf-8")
    error = f"{bad}, line 2: unbalanced group: this '{{' is never closed"
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        window.docks["draft"].show()
        draft.set_text("We study how authors write.")  # a labelling round is due
        status = said_then_labelled(qtbot, draft, lambda d: open_and_wait(qtbot, d, bad))
        assert status.startswith(f"{error} — 1 sentence: ")
        # the next round's summary is the summary alone: the line does not come back
        status = said_then_labelled(qtbot, draft, lambda d: d.set_text("We study how people write."))
        assert error not in status and status.startswith("1 sentence: ")
        # a blank pane has no summary: the line stays, once
        draft.set_text("")
        status = said_then_labelled(qtbot, draft, lambda d: open_and_wait(qtbot, d, bad))
        assert status == error
        status = said_then_labelled(qtbot, draft, lambda d: d.set_text("We write."))
        assert error not in status
