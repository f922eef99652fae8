"""The library database: atomic adds, duplicates skipped, removal, vectors back, migrations, kill -9."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from core.library.store import (
    DATABASE_NAME,
    SCHEMA_VERSION,
    LibraryError,
    NewSentence,
    open_store,
)


def _paper(store, name: str, n: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    sentences = [NewSentence(f"{name} sentence {i}.", "Introduction", "introduction", "background", 0.9,
                             "topic-importance", 0.4) for i in range(n)]
    return store.add_paper(paper_id=name, sha256=f"sha-{name}", title=name.title(), source=f"/{name}.pdf",
                           note="CC BY 4.0", kind="pdf", model_id="m@1", sentences=sentences,
                           content=rng.standard_normal((n, 8)).astype(np.float32),
                           function=rng.standard_normal((n, 4)).astype(np.float32))


def test_add_read_remove(tmp_path: Path) -> None:
    with open_store(tmp_path / "lib") as store:
        assert store.schema_version == SCHEMA_VERSION
        ids = _paper(store, "alpha", 3)
        assert ids is not None and len(ids) == 3
        assert _paper(store, "alpha", 3) is None  # same sha256 and id: skipped
        _paper(store, "beta", 2, seed=1)
        assert [p.paper_id for p in store.papers()] == ["alpha", "beta"]
        assert store.paper("alpha").sentence_count == 3  # type: ignore[union-attr]
        picked = store.sentences([ids[2], ids[0]])
        assert [s.text for s in picked] == ["alpha sentence 2.", "alpha sentence 0."]
        assert [s.position for s in store.sentences_of("alpha")] == [0, 1, 2]
        chunks = list(store.vectors("content", batch=2))
        assert [len(i) for i, _ in chunks] == [2, 2, 1] and chunks[0][1].shape == (2, 8)
        assert next(iter(store.vectors("function")))[1].shape == (5, 4)
        stats = store.stats()
        assert (stats.papers, stats.sentences, stats.models) == (2, 5, {"m@1": 2})
        _paper(store, "alphabet", 1, seed=2)
        with pytest.raises(LibraryError, match="names several papers"):
            store.resolve_paper_id("alph")
        assert store.resolve_paper_id("alphab") == "alphabet"  # a unique start, as listings show ids
        assert len(store.remove_paper("alphab")) == 1
        removed = store.remove_paper("alpha")
        assert removed == ids and store.sentence_count() == 2  # the sentences go with the paper
        with pytest.raises(LibraryError, match="no paper 'alpha'"):
            store.remove_paper("alpha")
        with pytest.raises(ValueError, match="2 sentences but 3 content vectors"):
            store.add_paper(paper_id="x", sha256="x", title="", source="", note="", kind="pdf", model_id="m",
                            sentences=[NewSentence("a"), NewSentence("b")], content=np.zeros((3, 8)))
        store.set_meta("index.content", "built")
        assert store.get_meta("index.content") == "built" and store.get_meta("missing", "-") == "-"


def test_a_failed_add_leaves_nothing(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        bad = np.zeros((2, 8), dtype=np.float32)
        with pytest.raises(sqlite3.IntegrityError):  # the second sentence has no text
            store.add_paper(paper_id="p", sha256="s", title="", source="", note="", kind="pdf", model_id="m",
                            sentences=[NewSentence("a"), NewSentence(None)],  # type: ignore[arg-type]
                            content=bad)
        assert store.papers() == [] and store.sentence_count() == 0


def test_newer_or_broken_databases_are_refused(tmp_path: Path) -> None:
    with open_store(tmp_path / "new") as store:
        store.connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(LibraryError, match="newer Rhetorica"):
        open_store(tmp_path / "new")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / DATABASE_NAME).write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(LibraryError, match="not a readable library database"):
        open_store(tmp_path / "junk")


WRITER = """
import sys, numpy as np
from core.library.store import NewSentence, open_store
store = open_store(sys.argv[1])
print("ready", flush=True)
i = 0
while True:
    n = 200
    store.add_paper(paper_id=f"p{i}", sha256=f"s{i}", title="t", source="", note="", kind="pdf",
                    model_id="m", sentences=[NewSentence(f"sentence {k} of {i}") for k in range(n)],
                    content=np.ones((n, 384), dtype=np.float32))
    i += 1
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_kill_9_during_adds_leaves_a_consistent_library(tmp_path: Path) -> None:
    """Kill a process that keeps adding papers at random moments: every paper that is there is
    whole (its sentence count matches), and the library opens and takes more papers."""
    root = Path(__file__).resolve().parent.parent
    folder = tmp_path / "lib"
    for delay in (0.3, 0.7, 1.1):
        process = subprocess.Popen([sys.executable, "-c", WRITER, str(folder)], cwd=root,
                                   stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(root)})
        assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        connection = sqlite3.connect(str(folder / DATABASE_NAME))
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = connection.execute("SELECT p.sentence_count, COUNT(s.id) FROM papers p "
                                  "LEFT JOIN sentences s ON s.paper = p.id GROUP BY p.id").fetchall()
        orphans = connection.execute("SELECT COUNT(*) FROM sentences WHERE paper NOT IN "
                                     "(SELECT id FROM papers)").fetchone()[0]
        connection.close()
        assert all(expected == found for expected, found in rows) and orphans == 0
    with open_store(folder) as store:
        assert store.papers()  # some adds finished before the kills
        assert _paper(store, "after", 2) is not None
