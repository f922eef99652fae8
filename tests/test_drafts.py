"""core.drafts and core.fileio: atomic saves, restore after restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.drafts import DraftStore
from core.fileio import atomic_write_text


def test_save_and_restore(tmp_path: Path) -> None:
    DraftStore(tmp_path).save("We propose X.\nIt works.")
    assert DraftStore(tmp_path).load() == "We propose X.\nIt works."  # a new store, as after a restart
    assert DraftStore(tmp_path).load("other") == ""


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "f.txt"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two")
    assert target.read_text(encoding="utf-8") == "two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.txt"]


def test_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    atomic_write_text(target, "old")

    with pytest.raises(TypeError):
        atomic_write_text(target, 123)  # type: ignore[arg-type]
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_bad_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        DraftStore(tmp_path).path("../escape")


def test_default_root_follows_rhetorica_home(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path))
    assert DraftStore().root == tmp_path / "drafts"


def test_draft_headings_are_not_sentences_and_give_their_kind_to_the_sentences_below() -> None:
    from core.drafts import draft_sentences, heading_of

    text = ("We study citation graphs.\n# Abstract\nWe propose X. It works.\n\n"
            "## Method\nWe train a model.\n2 Results\nAccuracy rises by 3 points.\n")
    found = [(text[a:b], kind) for a, b, kind in draft_sentences(text)]
    assert found == [("We study citation graphs.", None), ("We propose X.", "abstract"),
                     ("It works.", "abstract"), ("We train a model.", "method"),
                     ("Accuracy rises by 3 points.", "result")]
    assert heading_of("# Title of my paper") == (1, "Title of my paper")
    assert heading_of("Results show that it works.") is None  # a sentence, not a heading
    assert [(a, b) for a, b, _ in draft_sentences("No headings. Two sentences.")] == [(0, 12), (13, 27)]


def _whole_text_context(text: str, position: int, width: int):  # type: ignore[no-untyped-def]
    """The cursor's context read off the whole draft's sentences (what context_in_draft must equal)."""
    from core.drafts import draft_sections
    from core.labelling.sentence_context import SentenceContext

    found = draft_sections(text)
    before = [k for k, (start, _, _, _) in enumerate(found) if start <= position]
    if not before:
        return None
    at = before[-1]
    heading = found[at][3]
    same = [k for k in range(len(found)) if found[k][3] == heading]
    near = [k for k in same if abs(k - at) <= width]
    return SentenceContext(text[found[at][0]:found[at][1]],
                           tuple(text[found[k][0]:found[k][1]] for k in near if k < at),
                           tuple(text[found[k][0]:found[k][1]] for k in near if k > at), found[at][2])


def _long_draft(paragraphs: int, blank_lines: bool = True) -> str:
    import random

    rng = random.Random(7)
    words = ["we", "show", "the", "model", "data", "results", "method", "that", "this", "study", "were",
             "Fig.", "2", "et", "al.", "e.g.", "significant"]
    parts: list[str] = []
    for number in range(paragraphs):
        if number % 7 == 0:
            parts.append(rng.choice(["# Methods", "2 Results", "## Data analysis", "Discussion"]))
        sentences = [" ".join(rng.choice(words) for _ in range(rng.randint(4, 20))).capitalize() + "."
                     for _ in range(rng.randint(1, 9))]
        parts.append(" ".join(sentences))
    return ("\n\n" if blank_lines else "\n").join(parts)


@pytest.mark.parametrize("blank_lines", [True, False])
def test_cursor_context_reads_a_stretch_of_a_long_draft_as_the_whole_draft_does(blank_lines: bool,
                                                                                monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The cursor's sentence and neighbours come from a stretch around it (so a pause costs the same in a
    draft of any length), and are those the whole draft's sentences give, blank lines or none."""
    import random

    import core.drafts as drafts

    monkeypatch.setattr(drafts, "CONTEXT_REACH", 300)
    text = _long_draft(120, blank_lines)
    calls: list[int] = []
    split = drafts._sections_in
    monkeypatch.setattr(drafts, "_sections_in",
                        lambda t, h, lo, hi: calls.append(hi - lo) or split(t, h, lo, hi))
    rng = random.Random(1)
    for position in [0, 1, len(text) - 1, len(text)] + [rng.randrange(len(text)) for _ in range(60)]:
        calls.clear()
        assert drafts.context_in_draft(text, position, neighbours=3) == _whole_text_context(text, position, 3)
        assert calls and calls[0] < len(text) / 3  # a stretch was split, not the whole draft


def test_heading_lines_are_cut_out_of_a_span_looking_only_at_the_lines_it_crosses() -> None:
    """``cut_out`` equals cutting every line out in turn, for spans before, across, inside and after
    the lines, touching their edges or not."""
    import random

    from core.text.sentences import cut_out

    def every_line(start: int, end: int, lines: list[tuple[int, int]]) -> list[tuple[int, int]]:
        pieces = [(start, end)]
        for line_start, line_end in lines:
            pieces = [part for a, b in pieces
                      for part in ((a, min(b, line_start)), (max(a, line_end), b)) if part[0] < part[1]]
        return pieces

    rng = random.Random(3)
    for _ in range(2000):
        edges = sorted(rng.sample(range(200), 2 * rng.randint(0, 6)))
        lines = list(zip(edges[::2], edges[1::2], strict=True))
        start = rng.randrange(200)
        end = start + rng.randint(1, 80)
        found = cut_out(start, end, [a for a, _ in lines], [b for _, b in lines])
        assert found == every_line(start, end, lines)


@pytest.mark.parametrize("damage", ["deep", "latin1", "folder", "huge", "object"])
def test_a_damaged_recent_drafts_list_reads_as_empty(tmp_path: Path, damage: str) -> None:
    """Whatever is in the recent drafts' file, the list reads (empty when damaged): the window builds its
    File menu from it at start, so an error here would stop the app from starting."""
    from core.drafts import RecentDrafts

    recent = RecentDrafts(tmp_path)
    if damage == "folder":
        recent.file.mkdir(parents=True)
    else:
        recent.file.parent.mkdir(parents=True, exist_ok=True)
        content = {"deep": b"[" * 100_000, "latin1": '["caf\xe9.md"]'.encode("latin-1"),
                   "huge": b'["' + b"x" * 2_000_000 + b'"]', "object": b'{"a": 1}'}[damage]
        recent.file.write_bytes(content)
    assert recent.load() == []
    if damage != "folder":
        assert recent.add(tmp_path / "a.md") == [str((tmp_path / "a.md").absolute())]


def test_a_drafts_link_to_its_file_round_trips_and_is_forgotten(tmp_path: Path) -> None:
    from core.drafts import text_digest

    store = DraftStore(tmp_path / "drafts")
    assert store.load_link() is None  # typed text: no link
    store.save_link(tmp_path / "notes.md", "# Aim\n\nWe study X.\n")
    link = DraftStore(tmp_path / "drafts").load_link()  # as after a restart
    assert link is not None and link.path == tmp_path / "notes.md"
    assert link.digest == text_digest("# Aim\n\nWe study X.\n") != text_digest("# Aim\n\nWe study Y.\n")
    assert sorted(p.name for p in store.root.iterdir()) == ["current.link.json"]  # no temporary file left
    store.forget_link()
    store.forget_link()  # none: nothing to do
    assert store.load_link() is None


def test_a_damaged_link_is_one_line_never_a_crash(tmp_path: Path) -> None:
    import json
    import os

    from core.drafts import text_digest
    from core.errors import DraftError

    digest = text_digest("x")
    store = DraftStore(tmp_path)
    damaged: list[object] = [b"\x00garbage", b"\xff\xfe{}", "{not json", "[" * 50_000, " " * 100_000,
                             json.dumps(["/a.md", digest]), json.dumps({"path": 3, "digest": digest}),
                             json.dumps({"path": "a.md", "digest": digest}),
                             json.dumps({"path": "/a\u0000.md", "digest": digest}),
                             json.dumps({"path": "/a.md", "digest": "abc"}), json.dumps({"path": "/a.md"}),
                             "mkdir", "/dev/zero"]
    for content in damaged:
        link = store.link_path()
        if content == "mkdir":
            link.mkdir()
        elif content == "/dev/zero":
            os.symlink("/dev/zero", link)
        elif isinstance(content, bytes):
            link.write_bytes(content)
        else:
            link.write_text(str(content), encoding="utf-8")
        with pytest.raises(DraftError) as error:
            store.load_link()
        assert "\n" not in str(error.value) and "damaged" in str(error.value), content
        if link.is_dir():
            link.rmdir()
        store.forget_link()
        assert not os.path.lexists(link), content


def test_has_a_saved_text(tmp_path: Path) -> None:
    store = DraftStore(tmp_path)
    assert not store.has("before-open")
    store.save("", "before-open")
    assert not store.has("before-open")  # empty: nothing to restore
    store.save("Kept.", "before-open")
    assert store.has("before-open")


def test_a_saved_draft_that_is_not_utf8_is_set_aside_and_recovered(tmp_path: Path) -> None:
    """Hostile report G #1: a Latin-1 ``current.txt`` stopped the app at start (UnicodeDecodeError)."""
    store = DraftStore(tmp_path)
    store.path().parent.mkdir(parents=True, exist_ok=True)
    store.path().write_bytes("Caf\u00e9 notes.\nSecond line.".encode("latin-1"))
    notes: list[str] = []
    assert store.load(notes=notes) == "Caf\ufffd notes.\nSecond line."
    [aside] = list(tmp_path.glob("current.unreadable-*.txt"))
    assert aside.read_bytes() == "Caf\u00e9 notes.\nSecond line.".encode("latin-1")  # kept byte for byte
    assert not store.path().exists()  # the next autosave cannot overwrite it
    [note] = notes
    assert note.startswith(f"the saved draft could not be read as UTF-8 text; it was kept as {aside}")
    assert "\n" not in note
    store.save("New text.")
    assert aside.read_bytes() == "Caf\u00e9 notes.\nSecond line.".encode("latin-1")
    assert store.load(notes=notes) == "New text." and len(notes) == 1


def test_a_saved_draft_that_is_a_folder_or_a_pipe_never_stops_the_load(tmp_path: Path) -> None:
    import os

    store = DraftStore(tmp_path)
    store.path().mkdir(parents=True)
    notes: list[str] = []
    assert store.load(notes=notes) == "" and store.path().is_dir()  # left there: each save says so
    assert notes == [f"the saved draft {store.path()} is a folder, not a text; the pane starts empty"]
    assert store.load() == ""  # no notes asked for: still no error
    pipe = DraftStore(tmp_path / "p")
    pipe.root.mkdir()
    os.mkfifo(pipe.path())  # reading it would block the start for ever
    notes = []
    assert pipe.load(notes=notes) == ""
    assert notes[0].startswith("the saved draft could not be read (current.txt is not a regular file); "
                               "it was kept as ")
    assert not os.path.lexists(pipe.path())
