"""Library schema 2 (issue 27.3): a paper's bibliographic metadata, and libraries written by schema 1 opened
and migrated with every paper kept."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from core.library.store import (
    DATABASE_NAME,
    MIGRATIONS,
    SCHEMA_VERSION,
    LibraryError,
    NewSentence,
    PaperMetadata,
    open_store,
)


def _schema_1_library(folder: Path) -> None:
    """A library database as schema 1 wrote it, with one paper of two sentences."""
    folder.mkdir()
    db = sqlite3.connect(folder / DATABASE_NAME, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    for statement in MIGRATIONS[0].split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO papers (paper_id, sha256, title, kind, model_id, added, sentence_count) "
               "VALUES ('old', 'aa', 'An Old Paper', 'pdf', 'm', 0, 2)")
    vector = np.ones(4, np.float32).tobytes()
    db.executemany("INSERT INTO sentences (paper, position, text, content) VALUES (1, ?, ?, ?)",
                   [(n, text, vector) for n, text in enumerate(["First.", "Second."])])
    db.close()


def test_a_schema_1_library_is_migrated_with_its_papers(tmp_path: Path) -> None:
    folder = tmp_path / "lib"
    _schema_1_library(folder)
    with open_store(folder) as store:
        assert store.schema_version == SCHEMA_VERSION == 2
        (paper,) = store.papers()
        assert (paper.paper_id, paper.title, paper.sentence_count) == ("old", "An Old Paper", 2)
        assert [s.text for s in store.sentences_of("old")] == ["First.", "Second."]
        assert store.metadata() == {}
        store.set_metadata("old", PaperMetadata(("Lovelace, Ada",), 1843, "10.1/x", "zotero:1/ABCD2345"),
                           title="Notes on the Analytical Engine")
    with open_store(folder) as store:  # kept, and the migration is not run twice
        assert store.papers()[0].title == "Notes on the Analytical Engine"
        assert store.metadata()["old"] == PaperMetadata(("Lovelace, Ada",), 1843, "10.1/x",
                                                        "zotero:1/ABCD2345")


def test_metadata_follows_its_paper(tmp_path: Path) -> None:
    with open_store(tmp_path / "lib") as store:
        store.add_paper(paper_id="p", sha256="bb", title="T", source="", note="", kind="pdf", model_id="m",
                        sentences=[NewSentence("One.")], content=np.ones((1, 4), np.float32))
        store.set_metadata("p", PaperMetadata(("Ö, Ä",), None, "", ""))  # no title given: the title stays
        assert store.paper("p").title == "T"  # type: ignore[union-attr]
        assert store.metadata()["p"].authors == ("Ö, Ä",)
        store.set_metadata("p", PaperMetadata((), 2020, "10.2/y", "k"))  # replaced, not merged
        assert store.metadata()["p"] == PaperMetadata((), 2020, "10.2/y", "k")
        store.set_metadata("p", PaperMetadata())  # none: the paper has no metadata any more
        assert store.metadata() == {}
        store.set_metadata("p", PaperMetadata(year=2021))
        store.remove_paper("p")
        assert store.metadata() == {}
        with pytest.raises(LibraryError, match="no paper 'p'"):
            store.set_metadata("p", PaperMetadata())
