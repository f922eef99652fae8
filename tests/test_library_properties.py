"""Property-based tests (hypothesis) of the library (issue 23): the store against a model of the
papers it should hold, under random adds, removes, reopens and writers killed mid-transaction; and
abstracts-file rows of random JSON values: never a crash, never an empty id or a non-string sentence
stored, and exactly the valid rows accepted. Small example counts: the whole file runs in seconds."""

from __future__ import annotations

import gc
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("hypothesis")
pytest.importorskip("hnswlib")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from core.library.library import Library, read_jsonl
from core.library.store import DATABASE_NAME, NewSentence, open_store
from tests.tiny_bundle import WORDS, make_tiny_bundle

# Hypothesis keeps caches in .hypothesis/ of the working folder (not ignored by git here): elsewhere.
set_hypothesis_home_dir(str(Path(tempfile.gettempdir()) / "rhetorica-hypothesis"))
# No example database; no deadline (a busy CI machine).
FAST = settings(deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -- (a) the store against a model of its papers ----------------------------------------------------
def _vectors(n: int, width: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, width)).astype(np.float32)


class StoreMachine(RuleBasedStateMachine):
    """The store holds exactly the papers added and not removed, each whole, across reopenings and
    writers that die inside their transaction; sentence ids only grow (never reused)."""

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="rhetorica-store-"))
        self.store = open_store(self.folder)
        self.expected: dict[str, list[str]] = {}  # paper id -> its sentences
        self.highest = 0  # the highest sentence id ever handed out
        self.made = 0

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    @rule(n=st.integers(0, 5), words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
    def add(self, n: int, words: list[str]) -> None:
        name = f"p{self.made}"
        self.made += 1
        texts = [f"{' '.join(words)} {i}." for i in range(n)]
        ids = self.store.add_paper(paper_id=name, sha256=f"sha-{name}", title=name, source="", note="",
                                   kind="jsonl", model_id="m", sentences=[NewSentence(t) for t in texts],
                                   content=_vectors(n, 8, self.made), function=_vectors(n, 4, self.made))
        assert ids is not None and len(ids) == n
        assert all(i > self.highest for i in ids) and ids == sorted(ids)
        self.highest = max([self.highest, *ids])
        self.expected[name] = texts

    @precondition(lambda self: self.expected)
    @rule(data=st.data())
    def add_again(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.expected)))
        again = self.store.add_paper(paper_id=name, sha256="other", title="", source="", note="",
                                     kind="jsonl", model_id="m", sentences=[NewSentence("x")],
                                     content=_vectors(1, 8, 0))
        assert again is None  # the same id is skipped

    @precondition(lambda self: self.expected)
    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.expected)))
        assert len(self.store.remove_paper(name)) == len(self.expected.pop(name))

    @rule()
    def reopen(self) -> None:
        self.store.close()
        self.store = open_store(self.folder)

    @rule(n=st.integers(1, 4), close=st.booleans())
    def writer_killed_mid_add(self, n: int, close: bool) -> None:
        """Another writer dies inside its transaction (its connection closed, or dropped unclosed):
        nothing it wrote may show."""
        other = sqlite3.connect(str(self.folder / DATABASE_NAME), isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        cursor = other.execute("INSERT INTO papers (paper_id, sha256, kind, model_id, added, sentence_count) "
                               "VALUES ('ghost', 'ghost', 'pdf', 'm', 0, ?)", (n,))
        for position in range(n - 1):  # one sentence short, as if killed before the last
            other.execute("INSERT INTO sentences (paper, position, text) VALUES (?, ?, 'half')",
                          (cursor.lastrowid, position))
        if close:
            other.close()
        del cursor, other  # dropped without a commit: SQLite rolls the transaction back as it goes
        gc.collect()

    @invariant()
    def holds_exactly_the_expected_papers(self) -> None:
        papers = {p.paper_id: p for p in self.store.papers()}
        assert set(papers) == set(self.expected)
        for name, texts in self.expected.items():
            assert papers[name].sentence_count == len(texts)
            stored = self.store.sentences_of(name)
            assert [s.text for s in stored] == texts
            assert [s.position for s in stored] == list(range(len(texts)))
        assert self.store.sentence_count() == sum(len(t) for t in self.expected.values())


StoreMachine.TestCase.settings = settings(FAST, max_examples=12, stateful_step_count=12)
test_the_store_keeps_exactly_its_papers = StoreMachine.TestCase


class _Labelled:
    """What ``Library`` asks of a model when the vectors come with the sentences: its id."""

    model_id = "m"


@settings(FAST, max_examples=8)
@given(steps=st.lists(st.tuples(st.sampled_from(["add", "remove", "crash"]), st.integers(1, 4)), max_size=8))
def test_the_indexes_follow_the_database_whatever_happened(steps: list[tuple[str, int]]) -> None:
    """Adds and removes through the library, and papers written to the database behind the saved
    indexes' back (a crash between the database write and the index save): a library opened
    afterwards answers from indexes of exactly the sentences stored."""
    folder = Path(tempfile.mkdtemp(prefix="rhetorica-index-"))
    try:
        names: list[str] = []
        for number, (step, n) in enumerate(steps):
            with Library(folder) as library:
                if step == "remove":
                    if names:
                        library.remove(names.pop(0))
                    continue
                paper = {"paper_id": f"p{number}", "sha256": f"s{number}", "title": "", "source": "",
                         "note": "", "kind": "jsonl", "sentences": [NewSentence(f"s{i}") for i in range(n)],
                         "content": _vectors(n, 8, number), "function": _vectors(n, 4, number)}
                if step == "add":
                    library._store_sentences(model=_Labelled(), **paper)  # type: ignore[arg-type]
                else:
                    library.index("content")
                    library.store.add_paper(model_id="m", **paper)  # the index save never happens
                names.append(f"p{number}")
        with Library(folder) as library:
            stored = {r.id for name in names for r in library.store.sentences_of(name)}
            for view, width in (("content", 8), ("function", 4)):
                index = library.index(view)
                assert (index is None and not stored) or len(index) == len(stored)
                if stored:
                    found, _ = library.search(view, np.ones(width), len(stored) + 5)
                    assert set(found[0].tolist()) == stored
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- (b) abstracts rows of random JSON values -------------------------------------------------------
SENTENCES = ["We propose a new method.", "Results show that it works well. In conclusion it is simple.",
             "", "   ", "\ud800 lone surrogate", "x"]
scalars = (st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False)
           | st.text(max_size=12) | st.sampled_from(SENTENCES))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["text", "section", "id", "x"]), inner, max_size=3), max_leaves=6)
sentence_items = st.lists(scalars | st.fixed_dictionaries({}, optional={"text": scalars, "section": scalars}),
                          max_size=4)
records = st.fixed_dictionaries({}, optional={
    "id": st.sampled_from(["a", "b", "", " ", "\ud800"]) | scalars, "title": scalars,
    "abstract": scalars, "sentences": sentence_items | values}) | values


def _text_ok(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def expected_row(record: Any) -> tuple[str, list[str]] | None:
    """The rule, written again plainly: (id, sentence texts) of a valid row, None for a refused one."""
    if not isinstance(record, dict):
        return None
    paper_id = record.get("id")
    if isinstance(paper_id, int) and not isinstance(paper_id, bool):
        paper_id = str(paper_id)
    elif not (_text_ok(paper_id) and paper_id.strip()):
        return None
    if record.get("title") is not None and not _text_ok(record["title"]):
        return None
    if record.get("sentences") is not None:
        items = record["sentences"]
        if not isinstance(items, list):
            return None
        texts = []
        for item in items:
            text = item.get("text") if isinstance(item, dict) else item
            section = item.get("section") if isinstance(item, dict) else None
            if not _text_ok(text) or (section is not None and not _text_ok(section)):
                return None
            texts.append(text)
        texts = [t for t in texts if t.strip()]
        return (paper_id, texts) if texts else None
    abstract = record.get("abstract")
    if not _text_ok(abstract) or not abstract.strip():
        return None
    return paper_id, []  # (the abstract's sentences come from the splitter)


def _write(path: Path, rows: list[Any]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@settings(FAST, max_examples=150)
@given(rows=st.lists(records, min_size=1, max_size=6))
def test_exactly_the_valid_rows_are_read(rows: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.jsonl"
        _write(path, rows)
        read = read_jsonl(path)
    expected = [(number, expected_row(row)) for number, row in enumerate(rows, 1)]
    assert [r.line for r in read.refused] == [n for n, e in expected if e is None]
    valid = [e for _, e in expected if e is not None]
    assert [p.paper_id for p in read.papers] == [e[0] for e in valid]
    for paper, (_, texts) in zip(read.papers, valid):
        assert paper.paper_id.strip() and paper.sentences
        assert all(isinstance(t, str) and t.strip() and isinstance(s, str) for t, s in paper.sentences)
        if texts:
            assert [t for t, _ in paper.sentences] == texts


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from models import load_model

    return load_model(make_tiny_bundle(tmp_path_factory.mktemp("prop") / "bundle", functions=True),
                      device="cpu", threads=1)


@settings(FAST, max_examples=12)
@given(rows=st.lists(records, min_size=1, max_size=5))
def test_an_import_stores_only_valid_rows(model, rows: list[Any]) -> None:  # type: ignore[no-untyped-def]
    from core.library.store import LibraryError

    valid = [e for e in map(expected_row, rows) if e is not None]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.jsonl"
        _write(path, rows)
        with Library(Path(folder) / "lib") as library:
            if not valid:
                with pytest.raises(LibraryError, match="no paper rows"):
                    library.import_jsonl(path, model)
                return
            report = library.import_jsonl(path, model)
            assert len(report.refused) == len(rows) - len(valid)
            papers = library.store.papers()
            assert [p.paper_id for p in papers] == list(dict.fromkeys(e[0] for e in valid))  # first of an id
            for paper in papers:
                stored = library.store.sentences_of(paper.paper_id)
                assert paper.paper_id.strip() and len(stored) == paper.sentence_count > 0
                assert all(isinstance(s.text, str) and s.text.strip() for s in stored)
