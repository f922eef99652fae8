"""The draft pane after a restart: the restored text is linked again to the file it came from (the draft
store's link) when that file has not changed, so edits made before the restart are unsaved changes that
"Save draft" writes back; a file that changed, went or cannot be read, and a damaged link, leave it
unlinked with one line. File › "Restore the text replaced by the last open" puts back the "before-open"
copy an open's Discard kept."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from core.drafts import DraftStore, text_digest
from tests.gui_helpers import DRAFT_A, DRAFT_B, TIMEOUT_MS, model_bundle, open_window, two_draft_files

A_TEXT, B_TEXT = DRAFT_A, DRAFT_B
EDIT = "Our aim is to help.\n"
RESTORE = "Res&tore the text replaced by the last open"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model_bundle(tmp_path_factory)


@pytest.fixture
def drafts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    return two_draft_files(tmp_path, monkeypatch)


def open_and_wait(qtbot, draft, path: Path) -> bool:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(draft.files.openFinished, timeout=TIMEOUT_MS) as done:
        draft.open_draft(str(path))
    return bool(done.args[0])


def edit_and_quit(qtbot, bundle: Path, path: Path, edit: str = EDIT) -> None:  # type: ignore[no-untyped-def]
    """A session that opens ``path``, appends ``edit`` and ends with it autosaved, not saved to the file."""
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        assert open_and_wait(qtbot, draft, path)
        draft.set_text(draft.text + edit)
        draft.save_now()  # the autosave; then the app is killed (the close is answered Discard)


def restored(qtbot, draft) -> None:  # type: ignore[no-untyped-def]
    """Wait until the restored text's file has been read again (or was never read)."""
    qtbot.waitUntil(lambda: not draft.files.reading, timeout=TIMEOUT_MS)


def test_after_a_restart_the_edits_are_the_files_again_and_save_writes_them_back(  # type: ignore[no-untyped-def]
        qtbot, bundle: Path, drafts: tuple[Path, Path]) -> None:
    a, _ = drafts
    edit_and_quit(qtbot, bundle, a)
    assert DraftStore().load_link() is not None
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        qtbot.waitUntil(lambda d=draft: d.opened is not None, timeout=TIMEOUT_MS)
        assert draft.opened.path == a and draft.text == A_TEXT + EDIT  # the restored text is kept
        assert draft.files.unsaved
        # kept before the labelling's lines ("Loading the model…" may come first on a busy machine)
        restored = "Draft restored, linked to a.md (unsaved changes)"
        qtbot.waitUntil(lambda d=draft, r=restored: r in d.status.text(), timeout=TIMEOUT_MS)
        assert draft.save_draft()
        assert a.read_text(encoding="utf-8") == A_TEXT + EDIT and not draft.files.unsaved


def test_a_restored_file_without_edits_is_not_unsaved(qtbot, bundle: Path,  # type: ignore[no-untyped-def]
                                                      drafts: tuple[Path, Path]) -> None:
    a, _ = drafts
    a.write_text("# Aim\n\nA\u00a0no-break space the editor shows as a space.\n", encoding="utf-8")
    edit_and_quit(qtbot, bundle, a, edit="")
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        qtbot.waitUntil(lambda d=draft: d.opened is not None, timeout=TIMEOUT_MS)
        assert not draft.files.unsaved
        qtbot.waitUntil(lambda d=draft: "Draft restored, linked to a.md" in d.status.text(),
                        timeout=TIMEOUT_MS)
        assert "unsaved" not in draft.status.text()


@pytest.mark.parametrize(("change", "why"), [
    (lambda a: a.write_text(B_TEXT, encoding="utf-8"), "it changed on disk since"),
    (lambda a: a.unlink(), "it is gone"),
    (lambda a: (a.unlink(), a.mkdir()), "it is not a file"),
    (lambda a: a.write_bytes(b"\xff\xfe not utf-8"), "UTF-16 text"),
])
def test_a_file_that_changed_went_or_cannot_be_read_leaves_the_text_unlinked(  # type: ignore[no-untyped-def]
        qtbot, bundle: Path, drafts: tuple[Path, Path], change, why: str) -> None:
    a, _ = drafts
    edit_and_quit(qtbot, bundle, a)
    change(a)
    before = a.read_bytes() if a.is_file() else None
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        qtbot.waitUntil(lambda d=draft: "not linked" in d.status.text(), timeout=TIMEOUT_MS)
        line = draft.status.text()
        assert line.startswith("The restored text is not linked to a.md: ") and why in line
        assert line.split(" — ")[1] == "Save draft as… or reopen it" and "\n" not in line
        assert draft.opened is None and draft.text == A_TEXT + EDIT and draft.files.unsaved
        assert DraftStore().load_link() is None  # forgotten: the next start says nothing more
        draft.files._ask_save_path = lambda suggested: ""  # "Save draft" can only ask for a new file
        assert not draft.save_draft()
        assert (a.read_bytes() if a.is_file() else None) == before


def damaged_links(tmp_path: Path) -> list[tuple[object, str]]:
    """(what to put at the link's place, the line then said): text or JSON of the wrong shape, a folder, a
    device, and well-formed links to a folder and to a device."""
    digest = text_digest(A_TEXT)
    damaged = [b"\x00\x01garbage{", "path = a.md", json.dumps(["/a.md", digest]),
               json.dumps({"path": 3, "digest": digest}), json.dumps({"path": "a.md", "digest": digest}),
               json.dumps({"path": str(tmp_path / "a.md")}),
               json.dumps({"path": "/a\u0000.md", "digest": digest}),
               "[" * 50_000, " " * 200_000, "mkdir", "/dev/zero"]
    not_files = [json.dumps({"path": str(tmp_path), "digest": digest}),
                 json.dumps({"path": "/dev/zero", "digest": digest})]
    return ([(what, "The draft's link to its file is damaged (") for what in damaged]
            + [(what, "The restored text is not linked to ") for what in not_files])


def put_link(store: DraftStore, what: object) -> None:
    store.root.mkdir(parents=True, exist_ok=True)
    link = store.link_path()
    if what == "mkdir":
        link.mkdir()
    elif what == "/dev/zero":
        os.symlink("/dev/zero", link)
    elif isinstance(what, bytes):
        link.write_bytes(what)
    else:
        link.write_text(str(what), encoding="utf-8")


def test_a_damaged_link_is_ignored_with_one_line(qtbot, bundle: Path,  # type: ignore[no-untyped-def]
                                                 drafts: tuple[Path, Path], tmp_path: Path) -> None:
    for what, said in damaged_links(tmp_path):
        store = DraftStore()
        store.save("Typed before a crash.")
        put_link(store, what)
        for window in open_window(qtbot, bundle):
            draft = window.panels["draft"]
            restored(qtbot, draft)
            line = draft.status.text()
            assert draft.opened is None and draft.text == "Typed before a crash.", what
            assert line.startswith(said) and "\n" not in line, (what, line)
            assert not os.path.lexists(store.link_path()) or store.link_path().is_dir(), what
        if store.link_path().is_dir():  # a folder is not removed: each start ignores it again
            store.link_path().rmdir()


def test_opening_saving_as_and_typed_text_keep_the_link_right(qtbot, bundle: Path,  # type: ignore[no-untyped-def]
                                                              drafts: tuple[Path, Path],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = drafts
    store = DraftStore()
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        assert open_and_wait(qtbot, draft, a)
        assert store.load_link().path == a and store.load() == A_TEXT  # the text is saved with its link
        assert open_and_wait(qtbot, draft, b)
        assert store.load_link().path == b and store.load_link().digest == text_digest(B_TEXT)
        target = a.parent / "copy.md"
        assert draft.save_draft_as(str(target))
        assert store.load_link().path == target
        draft.files.opened = None  # typed text (as after a read that was stopped): the autosave unlinks it
        draft.set_text("Typed into the pane.")
        draft.save_now()
        assert store.load_link() is None
    # a link with no restored text is forgotten at the next start
    store.save("")
    store.save_link(a, A_TEXT)
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        assert draft.opened is None and store.load_link() is None


def test_typing_while_the_restored_files_read_is_stopped_unlinks_it(  # type: ignore[no-untyped-def]
        qtbot, bundle: Path, drafts: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    import core.draft_formats

    a, _ = drafts
    edit_and_quit(qtbot, bundle, a)
    release, read = threading.Event(), core.draft_formats.read_draft
    monkeypatch.setattr(core.draft_formats, "read_draft", lambda path: (release.wait(30), read(path))[1])
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        assert draft.files.reading == "a.md"
        draft.status.cancel_button.click()
        release.set()
        draft.set_text("A new text, typed.")
        draft.save_now()
        assert DraftStore().load_link() is None and draft.opened is None


def test_restore_the_text_replaced_by_the_last_open(qtbot, bundle: Path,  # type: ignore[no-untyped-def]
                                                    drafts: tuple[Path, Path]) -> None:
    a, _ = drafts
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        action = next(x for x in window.menuBar().actions()[0].menu().actions() if x.text() == RESTORE)
        assert not action.isEnabled()  # nothing replaced yet
        draft.set_text("My typed notes.")
        assert open_and_wait(qtbot, draft, a)  # Discard (conftest): the notes are kept
        assert action.isEnabled()
        draft.set_text(A_TEXT + EDIT)
        asked: list[str] = []
        draft.files._ask_unsaved = lambda q, asked=asked: asked.append(q) or "cancel"
        action.trigger()
        assert asked == ["Save changes to a.md before restoring the text replaced by the last open?"]
        assert draft.text == A_TEXT + EDIT and draft.opened.path == a
        assert draft.status.text().startswith("Not restored: the draft in the pane is unchanged")
        draft.files._ask_unsaved = lambda q: "discard"
        action.trigger()
        assert draft.text == "My typed notes." and draft.opened is None and draft.files.unsaved
        assert DraftStore().load("before-open") == A_TEXT + EDIT  # what Discard dropped, in turn
        assert DraftStore().load_link() is None and a.read_text(encoding="utf-8") == A_TEXT
        assert draft.status.text().startswith("Restored the text replaced by the last open")
