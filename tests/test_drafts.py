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
