"""The draft pane against the faults of hostile report G: an unreadable autosaved draft at start (#1), a
file changed on disk or saved in part (writeback's ChangedOnDisk / PartlySaved), "Save draft as…" into odd
places (#4, #13), typed text whose autosave failed at close (#5), a path too long (#7), Stop and quit
during a long read, and a text too long for the pane (#9, #10), a stale "Opened X" note (#11), and the
words of the summary and of Stop (#13)."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from core.drafts import DraftStore
from tests.gui_helpers import TIMEOUT_MS, model_bundle, open_window, wait_released

A_TEXT = "# Introduction\n\nWe study how authors write.\n"
EDIT = "Our aim is to help.\n"
SLEEPY = "tests.test_gui_draft_faults:sleepy_read"


def sleepy_read(_ctx: object, _path: Path, _max_chars: int) -> None:  # runs in the child process
    time.sleep(120)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model_bundle(tmp_path_factory)


@pytest.fixture
def a(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    path = tmp_path / "a.md"
    path.write_text(A_TEXT, encoding="utf-8")
    return path


def open_and_wait(qtbot, draft, path: Path | str) -> bool:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(draft.files.openFinished, timeout=TIMEOUT_MS) as done:
        draft.open_draft(str(path))
    return bool(done.args[0])


def labelled(qtbot, draft) -> None:  # type: ignore[no-untyped-def]
    """Wait for the labelling round that is due now (the model is loaded after the first)."""
    with qtbot.waitSignal(draft.labelled, timeout=TIMEOUT_MS):
        pass


def readers() -> list[multiprocessing.Process]:
    return [p for p in multiprocessing.active_children() if p.name == f"rhetorica:{SLEEPY}"]


# -- #1: the autosaved draft cannot be read at start ------------------------------------------------
def test_a_saved_draft_that_is_not_utf8_opens_the_pane_with_what_could_be_read(  # type: ignore[no-untyped-def]
        qtbot, bundle: Path, a: Path) -> None:
    store = DraftStore()
    store.root.mkdir(parents=True)
    store.path().write_bytes(b"Caf\xe9 notes typed before.")
    store.save_link(a, A_TEXT)  # what was recovered is not its file's text: it is not linked
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        [aside] = list(store.root.glob("current.unreadable-*.txt"))
        line = draft.status.text()
        assert line.startswith(f"The saved draft could not be read as UTF-8 text; it was kept as {aside}")
        assert draft.text == "Caf\ufffd notes typed before." and draft.opened is None
        assert store.load_link() is None
        draft.set_text(draft.text + " More.")
        draft.save_now()
        assert aside.read_bytes() == b"Caf\xe9 notes typed before."


def test_a_saved_draft_that_is_a_folder_starts_an_empty_pane(qtbot, bundle: Path, a: Path) -> None:  # type: ignore[no-untyped-def]
    store = DraftStore()
    store.path().mkdir(parents=True)
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        assert draft.status.text() == f"The saved draft {store.path()} is a folder, not a text; the pane " \
                                      "starts empty"
        assert draft.text == ""
        draft.set_text("Typed.")
        draft.save_now()  # fails: one line
        assert draft.status.text() == f"Cannot write {store.path()}: it is a folder"


# -- writeback's follow-ups -------------------------------------------------------------------------
@pytest.mark.parametrize("answer", ["cancel", "overwrite", "save_as"])
def test_a_file_changed_on_disk_is_asked_about(qtbot, bundle: Path, a: Path, answer: str) -> None:  # type: ignore[no-untyped-def]
    theirs = A_TEXT + "A paragraph a collaborator added.\n"
    copy = a.parent / "copy.md"
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        assert open_and_wait(qtbot, draft, a)
        draft.set_text(A_TEXT + EDIT)
        a.write_text(theirs, encoding="utf-8")
        asked: list[str] = []
        draft.files._ask_changed_on_disk = lambda message, asked=asked: asked.append(message) or answer
        draft.files._ask_save_path = lambda suggested: str(copy)
        saved = draft.save_draft()
        assert asked == ["a.md changed on disk since it was opened; reopen it or Save as… (your edits are "
                         "still in the pane)"]
        if answer == "cancel":
            assert not saved and a.read_text(encoding="utf-8") == theirs and draft.files.unsaved
            assert draft.status.text() == f"Not saved: {asked[0]}"
        elif answer == "overwrite":
            assert saved and a.read_text(encoding="utf-8") == A_TEXT + EDIT and not draft.files.unsaved
        else:
            assert saved and copy.read_text(encoding="utf-8") == A_TEXT + EDIT
            assert a.read_text(encoding="utf-8") == theirs and draft.opened.path == copy


def test_a_save_that_wrote_some_files_says_so_and_the_pane_stays_unsaved(  # type: ignore[no-untyped-def]
        qtbot, bundle: Path, a: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import core.draft_formats.writeback as writeback

    def partly(draft, edited, *, overwrite=False):  # type: ignore[no-untyped-def]
        a.write_text(A_TEXT + "Half of it.\n", encoding="utf-8")
        raise writeback.PartlySaved("saved a.md; not saved sec.md: disk full (your edits are still in the "
                                    "pane)", [a], [a.parent / "sec.md"])

    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        assert open_and_wait(qtbot, draft, a)
        draft.set_text(A_TEXT + EDIT)
        monkeypatch.setattr(writeback, "save_edits", partly)
        assert not draft.save_draft()
        assert draft.status.text() == ("Saved a.md; not saved sec.md: disk full (your edits are still in the "
                                       "pane)")
        assert draft.text == A_TEXT + EDIT and draft.files.unsaved
        assert draft.opened.plain == A_TEXT + "Half of it.\n"  # read again: the next save starts from it


def test_saving_a_crlf_file_keeps_the_cursor_and_the_undo(qtbot, bundle: Path, a: Path) -> None:  # type: ignore[no-untyped-def]
    a.write_bytes(A_TEXT.replace("\n", "\r\n").encode("utf-8"))
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        assert open_and_wait(qtbot, draft, a)
        draft.editor.moveCursor(draft.editor.textCursor().MoveOperation.End)
        draft.editor.insertPlainText(EDIT)
        assert draft.save_draft()
        assert a.read_bytes() == (A_TEXT + EDIT).replace("\n", "\r\n").encode("utf-8")
        assert draft.editor.textCursor().position() == len(A_TEXT + EDIT)  # not reset by setPlainText
        assert draft.editor.document().isUndoAvailable() and not draft.files.unsaved


# -- #4, #13: "Save draft as…" into odd places ------------------------------------------------------
def test_save_as_asks_before_replacing_the_renamed_file_and_refuses_odd_places(  # type: ignore[no-untyped-def]
        qtbot, bundle: Path, a: Path) -> None:
    folder = a.parent
    paper = folder / "paper.md"
    paper.write_text("Existing notes.\n", encoding="utf-8")
    fifo = folder / "fifo.txt"
    os.mkfifo(fifo)
    dev_null_md = os.path.lexists("/dev/null.md")  # (a file an older version left there stays)
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        draft.set_text("New typed text.")
        for name in ("paper.tex", "paper.docx", "paper"):  # the renamed paper.md exists: No (conftest)
            assert not draft.save_draft_as(str(folder / name))
            assert draft.status.text() == ("Not saved: paper.md exists (drafts are saved as .md or .txt; "
                                           "choose another name)")
        assert paper.read_text(encoding="utf-8") == "Existing notes.\n"
        asked: list[str] = []
        draft.files._ask_replace = lambda question, asked=asked: asked.append(question) or True
        assert draft.save_draft_as(str(folder / "paper.tex"))
        assert asked == ["paper.md exists: replace it? Drafts are saved as .md or .txt, so paper.tex is "
                         "saved as paper.md."]
        assert paper.read_text(encoding="utf-8") == "New typed text."
        not_a_file = "is not a regular file (a device or a pipe?); choose another name"
        refused = {
            "/dev/null": f"Not saved: /dev/null {not_a_file}",
            str(fifo): f"Not saved: {fifo} {not_a_file}",
            str(folder / "no" / "x.md"): f"Not saved: the folder {folder / 'no'} does not exist",
            str(folder): f"Not saved: {folder} is a folder; choose a file name",
        }
        for target, line in refused.items():
            assert not draft.save_draft_as(target)
            assert draft.status.text() == line
        assert os.path.lexists("/dev/null.md") == dev_null_md and fifo.is_fifo()
        assert not (folder / "no").exists()
        if Path("/proc/self").is_dir():  # the line names the target, not a temporary file
            assert not draft.save_draft_as("/proc/self/x.md")
            assert draft.status.text() == "Not saved: cannot write /proc/self/x.md: No such file or directory"


# -- #5: typed text whose autosave failed ------------------------------------------------------------
def test_typed_text_whose_autosave_failed_is_asked_about_on_closing(  # type: ignore[no-untyped-def]
        qtbot, bundle: Path, a: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.fileio import ReadOnlyError

    def read_only(self, text, name="current"):  # type: ignore[no-untyped-def]
        raise ReadOnlyError("cannot save the draft 'current': the folder is read-only")

    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        asked: list[str] = []
        draft.files._ask_unsaved = lambda question, asked=asked: asked.append(question) or "cancel"
        monkeypatch.setattr(DraftStore, "save", read_only)
        draft.set_text("A paragraph typed while the folder is read-only.")  # its autosave is pending
        assert not window.close() and window.isVisible()  # the close's flush fails: asked, Cancel
        assert asked == ["Save the draft in the pane before closing? The autosave failed: cannot save the "
                         "draft 'current': the folder is read-only."]
        draft.files._ask_unsaved = lambda question: "discard"
        assert window.close()


# -- #7: a path too long ----------------------------------------------------------------------------
def test_a_path_too_long_is_one_short_line_and_leaves_the_recent_list(  # type: ignore[no-untyped-def]
        qtbot, bundle: Path, a: Path) -> None:
    long = str(a.parent / ("x" * 5000 + ".md"))
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        draft.recent.add(long)
        assert not open_and_wait(qtbot, draft, long)
        line = draft.status.text()
        assert line.endswith(": cannot be read (File name too long)") and "…" in line and len(line) < 200
        assert draft.recent.load() == []


# -- #9, #10: Stop and quit end a long read at once; a text too long for the pane --------------------
def test_stop_ends_a_read_in_a_child_process_at_once(  # type: ignore[no-untyped-def]
        qtbot, bundle: Path, a: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.gui.panels.draft_reading as reading

    monkeypatch.setattr(reading, "CHILD_READ", SLEEPY)
    big = a.parent / "big.docx"
    big.write_bytes(b"PK not really")
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        window.docks["draft"].show()
        draft.open_draft(str(big))
        qtbot.waitUntil(lambda: bool(readers()), timeout=TIMEOUT_MS)
        worker = draft.files.op.worker
        qtbot.waitUntil(lambda d=draft: d.status.cancel_button.toolTip() == "Stop reading big.docx")
        draft.status.cancel_button.click()
        wait_released(qtbot, worker, timeout=10_000)  # the child is ended: no two-minute wait
        assert readers() == [] and draft.opened is None
        assert open_and_wait(qtbot, draft, a) and draft.text == A_TEXT
        draft.open_draft(str(big))
        qtbot.waitUntil(lambda: bool(readers()), timeout=TIMEOUT_MS)
        worker = draft.files.op.worker
        assert window.close()  # quitting ends the read too
        wait_released(qtbot, worker, timeout=10_000)
        assert readers() == []


def test_a_docx_or_tex_is_read_in_a_child_process(qtbot, bundle: Path, a: Path) -> None:  # type: ignore[no-untyped-def]
    from app.gui.panels.draft_reading import CHILD_READ, small_text
    from core.draft_formats import read_draft
    from core.procjobs import run_in_process

    main = Path(__file__).parent / "fixtures" / "drafts" / "latex_paper" / "main.tex"
    assert small_text(a) and not small_text(main) and small_text(a.parent / "gone.docx")
    assert run_in_process(None, CHILD_READ, main, 8_000_000) == read_draft(main)  # the result pickles


def test_a_text_too_long_for_the_pane_is_refused(  # type: ignore[no-untyped-def]
        qtbot, bundle: Path, a: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.gui.panels.draft_reading as reading

    monkeypatch.setattr(reading, "PANE_CHARS", 20)
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        assert not open_and_wait(qtbot, draft, a)
        assert draft.status.text() == (f"{a}: is too long for the draft pane ({len(A_TEXT)} characters; at "
                                       "most 20)")
        assert draft.text == "" and draft.opened is None


# -- #11: a note belongs to its text; "Opened X" stays in sight while it is labelled ----------------
def test_an_opened_note_is_dropped_when_the_text_is_replaced(qtbot, bundle: Path, a: Path) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        window.docks["draft"].show()
        assert open_and_wait(qtbot, draft, a)
        draft.set_text("A completely new typed paragraph. Nothing was opened here.")
        labelled(qtbot, draft)
        assert draft.status.text().startswith("2 sentences: ")  # not "Opened a.md … — 2 sentences"
        assert open_and_wait(qtbot, draft, a)
        draft.editor.moveCursor(draft.editor.textCursor().MoveOperation.End)
        qtbot.keyClicks(draft.editor, "Typed.")  # an edit of the opened text keeps what the open said
        labelled(qtbot, draft)
        assert draft.status.text().startswith("Opened a.md (Markdown): 1 sentence — 2 sentences: ")


def test_opened_stays_in_sight_while_the_draft_is_labelled(  # type: ignore[no-untyped-def]
        qtbot, bundle: Path, a: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.gui.status_line import StatusLine

    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        window.docks["draft"].show()
        draft.set_text("We load the model first.")
        labelled(qtbot, draft)
        shown: list[str] = []
        line = draft.status
        monkeypatch.setattr(line, "set_text", lambda text, shown=shown, line=line: (
            shown.append(text), StatusLine.set_text(line, text)))
        assert open_and_wait(qtbot, draft, a)
        labelled(qtbot, draft)
        during = [t for t in shown[shown.index("Opened a.md (Markdown): 1 sentence") + 1:-1] if t]
        assert during and all(t.startswith("Opened a.md (Markdown): 1 sentence — labelling") for t in during)
        assert "labelling 1 draft sentence…" in during[-1]
        assert shown[-1].startswith("Opened a.md (Markdown): 1 sentence — 1 sentence: ")


# -- #13: the words ---------------------------------------------------------------------------------
def test_one_sentence_is_singular() -> None:
    from app.gui.panels.draft_text import labelled_summary
    from core.taxonomy.labels import RolePrediction

    sure = RolePrediction("method", {"method": 0.9, "result": 0.1})
    assert labelled_summary([((0, 5), sure)]) == "1 sentence: 1 method"


def test_stop_says_what_it_stops(qtbot, bundle: Path, a: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import core.draft_formats

    release, read = threading.Event(), core.draft_formats.read_draft
    monkeypatch.setattr(core.draft_formats, "read_draft", lambda path: (release.wait(30), read(path))[1])
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        window.docks["draft"].show()
        def tip_is(tip: str, button=draft.status.cancel_button) -> None:  # type: ignore[no-untyped-def]
            qtbot.waitUntil(lambda: button.toolTip() == tip, timeout=TIMEOUT_MS)

        draft.open_draft(str(a))
        tip_is("Stop reading a.md")
        draft.set_text("Typed while it is read.")
        draft.label_now()
        tip_is("Stop reading a.md and labelling")
        release.set()
        qtbot.waitUntil(lambda d=draft: not d.files.op.busy and not d.op.busy, timeout=TIMEOUT_MS)
        draft.label_now()
        tip_is("Stop labelling")
