"""Nothing lost: kill -9 during saves (a few kills per scenario of tests/faults/kill_loop.py), a full
disk and a read-only library give one clear line and keep earlier data, atomic-write helpers."""

from __future__ import annotations

import errno
import os
import random
import sqlite3
import subprocess
from pathlib import Path

import pytest

from core.drafts import DraftStore
from core.errors import RhetoricaError
from core.fileio import (
    DiskFullError,
    ReadOnlyError,
    StorageError,
    atomic_write_bytes,
    atomic_write_text,
    storage_error,
)

posix_only = pytest.mark.skipif(os.name != "posix" or not hasattr(os, "fork"),
                                reason="needs fork and SIGKILL")


# -- atomic-write helpers ------------------------------------------------------------------------
def test_atomic_write_bytes_with_a_fixed_temp_name_reuses_a_stale_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "best.pt"
    (tmp_path / "best.pt.tmp").write_bytes(b"left by a killed save")
    atomic_write_bytes(target, b"new", tmp_name="best.pt.tmp")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.pt"]


def test_writing_over_a_folder_names_the_folder_not_a_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "fig1.png").mkdir()
    with pytest.raises(StorageError, match=r"fig1\.png: it is a folder") as caught:
        atomic_write_bytes(tmp_path / "fig1.png", b"png")
    assert ".tmp" not in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig1.png"]


def test_a_full_disk_raises_a_clear_error_and_keeps_the_old_file(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "f.txt"
    atomic_write_text(target, "old")

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(DiskFullError, match=r"^disk full while saving the notes") as caught:
        atomic_write_text(target, "new", "the notes")
    assert isinstance(caught.value, OSError) and isinstance(caught.value, RhetoricaError)
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_storage_error_names_full_disks_and_read_only_folders() -> None:
    assert isinstance(storage_error(OSError(errno.ENOSPC, "x"), "it"), DiskFullError)
    full = sqlite3.OperationalError("database or disk is full")
    assert isinstance(storage_error(full, "it"), DiskFullError)
    assert isinstance(storage_error(OSError(errno.EROFS, "x"), "it", "/lib"), ReadOnlyError)
    assert isinstance(storage_error(PermissionError(errno.EACCES, "x"), "it"), ReadOnlyError)
    readonly = storage_error(sqlite3.OperationalError("attempt to write a readonly database"), "the db",
                             "/lib")
    assert str(readonly) == ("cannot save the db: /lib is read-only (check its permissions, or choose a "
                             "writable folder)")
    assert storage_error(OSError(errno.ENOENT, "x"), "it") is None
    assert storage_error(ValueError("bad"), "it") is None


def test_a_draft_save_on_a_full_disk_says_so_and_keeps_the_last_save(tmp_path: Path, monkeypatch) -> None:
    store = DraftStore(tmp_path)
    store.save("We propose X.")
    real_open = open

    def full_open(path, mode="r", *args, **kwargs):  # type: ignore[no-untyped-def]
        if "w" in mode and ".current.txt." in str(path):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", full_open)
    with pytest.raises(DiskFullError, match=r"^disk full while saving the draft 'current' \("):
        store.save("We propose Y.")
    monkeypatch.undo()
    assert store.load() == "We propose X."
    assert sorted(p.name for p in tmp_path.iterdir()) == ["current.txt"]


def test_a_short_hnsw_index_file_is_an_error_not_a_silent_empty_index(tmp_path: Path) -> None:
    pytest.importorskip("hnswlib")
    import numpy as np

    from core.library.index import HnswIndex

    index = HnswIndex(4)
    index.add(np.arange(10), np.random.default_rng(0).normal(size=(10, 4)))
    index.save(tmp_path / "v.hnsw")
    good = (tmp_path / "v.hnsw").read_bytes()
    real = index._index

    class Short:  # hnswlib on a full disk: an empty file and no error
        def save_index(self, name: str) -> None:
            Path(name).write_bytes(b"")

        def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
            return getattr(real, name)

    index._index = Short()
    with pytest.raises(OSError, match="short index file"):
        index.save(tmp_path / "v.hnsw")
    assert (tmp_path / "v.hnsw").read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.hnsw"]


# -- the library: full disk and read-only folder, through the CLI ---------------------------------
class _FailingConnection:
    """A sqlite3 connection whose writes fail with ``message`` (once ``armed``)."""

    armed = False

    def __init__(self, real: sqlite3.Connection, message: str) -> None:
        self._real, self._message = real, message

    def execute(self, sql: str, *args: object):  # type: ignore[no-untyped-def]
        if self.armed and sql.lstrip().upper().startswith(("BEGIN", "INSERT", "UPDATE", "DELETE")):
            raise sqlite3.OperationalError(self._message)
        return self._real.execute(sql, *args)

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._real, name)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path_factory.mktemp("durability") / "bundle")


@pytest.mark.parametrize(("message", "expected"), [
    ("database or disk is full", "rhetorica: error: disk full while saving the library database"),
    ("attempt to write a readonly database", "rhetorica: error: cannot save the library database "
                                             "library.sqlite3: {lib} is read-only"),
])
def test_library_add_on_a_full_disk_or_read_only_folder_prints_one_line(
        tmp_path: Path, monkeypatch, capsys: pytest.CaptureFixture[str], bundle: Path, message: str,
        expected: str) -> None:
    pytest.importorskip("hnswlib")
    from app.cli import main
    from tests.faults.kill_loop import make_pdfs

    pdfs = make_pdfs(tmp_path / "pdfs", 2)
    lib = tmp_path / "lib"
    common = ["--library", str(lib), "--model", str(bundle), "--threads", "1", "--workers", "0", "--quiet"]
    assert main(["library", "add", str(pdfs[0]), *common]) == 0
    capsys.readouterr()
    real_connect = sqlite3.connect
    monkeypatch.setattr("core.library.store.sqlite3.connect",
                        lambda *a, **k: _FailingConnection(real_connect(*a, **k), message))
    monkeypatch.setattr(_FailingConnection, "armed", True)
    assert main(["library", "add", str(pdfs[1]), *common]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(expected.format(lib=lib)), err
    monkeypatch.undo()
    from core.library.library import Library

    with Library(lib) as library:  # the earlier paper is intact
        assert library.stats().papers == 1
        assert library.store.connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="needs root to mount a tmpfs")
def test_a_real_full_tmpfs(tmp_path: Path) -> None:
    mount = tmp_path / "full"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("mount not permitted here")
    try:
        store = DraftStore(mount)
        store.save("first\n")
        with pytest.raises(StorageError, match="disk full while saving the draft"):
            store.save("x" * 2_000_000)
        assert store.load() == "first\n" and [p.name for p in mount.iterdir()] == ["current.txt"]
    finally:
        subprocess.run(["umount", str(mount)], check=False)


# -- kill -9 at random points (a few runs each; tests/faults/kill_loop.py --runs 100 for the full set)
@posix_only
def test_killed_draft_autosaves_leave_the_last_or_the_next_version(tmp_path: Path) -> None:
    from tests.faults.kill_loop import run_draft

    tally = run_draft(10, random.Random(1), tmp_path)
    assert tally.runs == 10 and tally.failures == []


@posix_only
def test_killed_library_adds_leave_a_sound_database_and_matching_indexes(tmp_path: Path) -> None:
    pytest.importorskip("hnswlib")
    from tests.faults.kill_loop import run_library

    tally = run_library(6, random.Random(2), tmp_path)
    assert tally.runs == 6 and tally.failures == []


@posix_only
def test_killed_checkpoint_writes_load_and_resume(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.faults.kill_loop import run_checkpoint

    tally = run_checkpoint(6, random.Random(3), tmp_path)
    assert tally.runs == 6 and tally.failures == []
