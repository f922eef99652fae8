"""Session 13: a library's index files are named for what they hold, ``content.ann`` / ``function.ann``
(faiss IVF-SQ8), no longer ``content.hnsw`` / ``function.hnsw``. A library that still has the earlier
names (faiss data under them, written by this code and renamed back here) opens, answers exactly as
before, and ends up with the new names only, its files moved and not rebuilt; a damaged earlier-name
file is one note and a rebuild; a library in a folder that cannot be written is read under the
earlier names with one note and nothing changed; the doctor checks and names the files it finds."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("faiss")

from app.cli import main
from core.fileio import StorageError, file_sha256
from core.library.doctor import diagnose, repair
from core.library.index_names import index_file_in_use
from core.library.library import Library
from core.library.store import (
    DATABASE_NAME,
    EARLIER_INDEX_FILES,
    INDEX_FILES,
    MissingDatabaseError,
)
from tests.library_damage import build_library, rows, run_cli, scramble, write_rows
from tests.tiny_bundle import make_tiny_bundle

QUERY = "We propose a new method."
PAPERS = 60


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("names") / "bundle", functions=True)


@pytest.fixture(scope="module")
def model(bundle: Path):  # type: ignore[no-untyped-def]
    from models import load_model

    return load_model(bundle, device="cpu", threads=1)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory, model) -> Path:  # type: ignore[no-untyped-def]
    """A library written by this version: 60 papers, 300 sentences, content.ann and function.ann."""
    return build_library(tmp_path_factory.mktemp("pristine") / "lib", model, papers=PAPERS)


def _with_earlier_names(folder: Path) -> Path:
    """The library as session 12 left it: the same faiss files, under the hnswlib-era names."""
    for view, name in INDEX_FILES.items():
        os.replace(folder / name, folder / EARLIER_INDEX_FILES[view])
    return folder


@pytest.fixture
def earlier(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the pristine library with its index files under their earlier names."""
    return _with_earlier_names(Path(shutil.copytree(pristine, tmp_path / "lib")))


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _files(folder: Path) -> dict[str, str]:
    """Every file of the folder and its sha256."""
    return {p.name: file_sha256(p) for p in sorted(folder.iterdir()) if p.is_file()}


def _suggest(bundle: Path, folder: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return run_cli("suggest", QUERY, "--library", str(folder), "--source", "library", "--corpus",
                   str(tmp_path / "no-corpus"), "--json", "--model", str(bundle), "--threads", "1")


def _search(folder: Path) -> subprocess.CompletedProcess[str]:
    return run_cli("search", "--like", "paper-0003", "--library", str(folder), "--json", "--quiet")


def _notes(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("rhetorica: note:")]


def _results(library: Library, model) -> dict[str, list[int]]:  # type: ignore[no-untyped-def]
    """The 20 nearest sentences of the query in each view."""
    return {view: library.search(view, model.embed([QUERY], view=view), 20)[0][0].tolist()
            for view in INDEX_FILES}


def test_earlier_names_are_moved_once_and_the_answers_are_the_same(  # type: ignore[no-untyped-def]
        bundle: Path, pristine: Path, earlier: Path, tmp_path: Path) -> None:
    moved = {view: file_sha256(earlier / name) for view, name in EARLIER_INDEX_FILES.items()}
    assert not any((earlier / name).exists() for name in INDEX_FILES.values())
    reference, searched = _suggest(bundle, pristine, tmp_path), _search(pristine)
    assert reference.returncode == 0 and searched.returncode == 0, reference.stderr + searched.stderr
    first = _suggest(bundle, earlier, tmp_path)
    assert first.returncode == 0 and _notes(first.stderr) == [], first.stderr
    assert json.loads(first.stdout) == json.loads(reference.stdout)
    assert _names(earlier) == _names(pristine) == sorted([*INDEX_FILES.values(), "library.json",
                                                          DATABASE_NAME])
    for view, name in INDEX_FILES.items():  # moved, not rebuilt: the same bytes under the new name
        assert file_sha256(earlier / name) == moved[view] == file_sha256(pristine / name)
    again = _search(earlier)
    assert again.returncode == 0 and _notes(again.stderr) == [], again.stderr
    assert json.loads(again.stdout) == json.loads(searched.stdout)
    with Library(earlier) as library:
        assert library.renamed == [] and library.notices == []


def test_the_move_keeps_the_index_in_step_with_later_adds_and_removals(  # type: ignore[no-untyped-def]
        earlier: Path, model, tmp_path: Path) -> None:
    heard: list[str] = []
    with Library(earlier, on_notice=heard.append) as library:
        assert [(m.view, m.outcome) for m in library.renamed] == [("content", "renamed"),
                                                                 ("function", "renamed")]
        more = [{**row, "id": f"more-{n}"} for n, row in enumerate(rows(2, seed=7))]
        assert len(library.import_jsonl(write_rows(tmp_path / "more.jsonl", more), model).added) == 2
        library.remove("paper-0004")
        assert len(library.index("content")) == len(library.index("function")) == 5 * PAPERS + 10 - 5
    assert heard == [] and _names(earlier) == sorted([*INDEX_FILES.values(), "library.json", DATABASE_NAME])
    with Library(earlier, on_notice=heard.append) as library:  # the saved files hold the same
        for view in INDEX_FILES:
            stored = sorted(int(i) for ids, _ in library.store.vectors(view) for i in ids)
            assert sorted(library.index(view).ids().tolist()) == stored
    assert heard == []


def test_a_damaged_file_under_its_earlier_name_is_one_note_and_a_rebuild(  # type: ignore[no-untyped-def]
        bundle: Path, pristine: Path, earlier: Path, tmp_path: Path, model) -> None:
    damaged = earlier / EARLIER_INDEX_FILES["function"]
    scramble(damaged, damaged.stat().st_size // 2 - 1024, 2048)
    reference = _suggest(bundle, pristine, tmp_path)
    first = _suggest(bundle, earlier, tmp_path)
    assert first.returncode == 0, first.stderr
    assert _notes(first.stderr) == [
        "rhetorica: note: the library index function.ann (until now function.hnsw) is damaged (its checksum "
        f"does not match the one recorded when it was saved): rebuilt it from the database ({5 * PAPERS} "
        "sentences)"], first.stderr
    assert json.loads(first.stdout) == json.loads(reference.stdout)
    assert _names(earlier) == _names(pristine)
    with Library(earlier) as library, Library(pristine) as original:
        assert _results(library, model) == _results(original, model)
        assert library.notices == []  # rebuilt and saved under the new name, with its record


def test_when_both_names_are_there_the_file_that_passes_its_check_is_kept(  # type: ignore[no-untyped-def]
        pristine: Path, tmp_path: Path, model) -> None:
    both = Path(shutil.copytree(pristine, tmp_path / "both"))
    for view, name in INDEX_FILES.items():
        shutil.copy(both / name, both / EARLIER_INDEX_FILES[view])
    good = file_sha256(both / INDEX_FILES["content"])
    scramble(both / INDEX_FILES["content"], 100, 64)  # today's content file fails, the earlier passes
    with Library(both) as library, Library(pristine) as original:
        assert {m.view: m.outcome for m in library.renamed} == {"content": "kept-earlier",
                                                                 "function": "kept-current"}
        assert _results(library, model) == _results(original, model) and library.notices == []
    assert _names(both) == _names(pristine) and file_sha256(both / INDEX_FILES["content"]) == good


@contextmanager
def _read_only(folder: Path) -> Iterator[Path]:
    """``folder`` as a folder that cannot be written: a read-only bind mount of it as root (whom
    permissions do not stop), else the folder without its write permission."""
    if os.name != "posix":
        pytest.skip("needs POSIX permissions or mounts")
    if os.geteuid() != 0:
        mode = folder.stat().st_mode
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(mode)
        return
    view = folder.with_name(f"{folder.name}-read-only")
    view.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(folder), str(view)], capture_output=True).returncode == 0
    if mounted and subprocess.run(["mount", "-o", "remount,ro,bind", str(view)],
                                  capture_output=True).returncode != 0:
        subprocess.run(["umount", str(view)], check=False)
        mounted = False
    if not mounted:
        view.rmdir()
        pytest.skip("a read-only bind mount is not permitted here")
    try:
        yield view
    finally:
        subprocess.run(["umount", str(view)], check=True)
        view.rmdir()


def test_a_read_only_library_is_read_under_its_earlier_names_with_one_note(  # type: ignore[no-untyped-def]
        bundle: Path, pristine: Path, earlier: Path, tmp_path: Path, model) -> None:
    before = _files(earlier)
    reference = _suggest(bundle, pristine, tmp_path)
    with _read_only(earlier) as folder:
        heard: list[str] = []
        with Library(folder, on_notice=heard.append) as library, Library(pristine) as original:
            assert library.store.read_only
            assert _results(library, model) == _results(original, model)
            assert [m.outcome for m in library.renamed] == ["not-moved", "not-moved"]
            assert library.index_path("content") == folder / "content.hnsw"
            with pytest.raises(StorageError, match="read-only"):
                library.remove("paper-0001")
        assert len(heard) == 1 and heard[0].startswith(f"the library folder {folder} cannot be written (")
        assert heard[0].endswith("its index files are read under their earlier names content.hnsw, function"
                                 ".hnsw (renamed to content.ann, function.ann once it can be written)")
        run = _suggest(bundle, folder, tmp_path)
        assert run.returncode == 0 and json.loads(run.stdout) == json.loads(reference.stdout), run.stderr
        assert _notes(run.stderr) == [f"rhetorica: note: {heard[0]}"]
        diagnosis = diagnose(folder)
        assert diagnosis.healthy and [i.name for i in diagnosis.indexes] == ["content.hnsw", "function.hnsw"]
    assert _files(earlier) == before  # nothing moved, nothing written
    with Library(earlier) as library:  # writable again: moved then, quietly
        assert [m.outcome for m in library.renamed] == ["renamed", "renamed"] and library.notices == []
    assert _names(earlier) == _names(pristine)


def test_the_doctor_names_the_files_it_finds_and_its_repair_moves_them(
        earlier: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["library", "doctor", "--check", "--library", str(earlier)]) == 0
    out = capsys.readouterr().out
    assert "index content.hnsw: ok (its earlier name: renamed to content.ann when the library is next " \
           "opened)" in out
    scramble(earlier / EARLIER_INDEX_FILES["function"], 1000, 500)
    assert main(["library", "doctor", "--check", "--library", str(earlier)]) == 1
    assert "index function.hnsw: is damaged (its checksum does not match" in capsys.readouterr().out
    report = repair(earlier)
    assert report.complete and report.done == [
        "renamed content.hnsw to content.ann",
        f"rebuilt function.ann from the database ({5 * PAPERS:,} sentences)"]
    after = diagnose(earlier)
    assert after.healthy and [i.name for i in after.indexes] == list(INDEX_FILES.values())
    assert not any(p.suffix == ".hnsw" for p in earlier.iterdir())
    assert repair(earlier).done == ["nothing to repair"]


def test_earlier_index_files_still_show_that_a_library_was_there(earlier: Path) -> None:
    (earlier / DATABASE_NAME).unlink()
    (earlier / "library.json").unlink()
    with pytest.raises(MissingDatabaseError, match="is missing, so the papers of the library"):
        Library(earlier)
    assert index_file_in_use(earlier, "content") == earlier / "content.hnsw"
    assert not (earlier / DATABASE_NAME).exists()
