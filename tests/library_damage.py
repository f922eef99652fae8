"""Helpers for the library damage tests: a library of many small papers (tiny bundle vocabulary, so
it builds in a second), and the kinds of damage a hostile tester applies to its files."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.tiny_bundle import WORDS

ROOT = Path(__file__).resolve().parent.parent
PAGE = 4096  # SQLite's default page size (the library never changes it)


# Two papers of an abstracts file in ordinary English (the hostile-input tests' library).
TWO_PAPERS = [
    {
        "id": "a",
        "title": "A",
        "sentences": [
            "We propose a new method for parsing scientific text.",
            "Results show that it works well.",
        ],
    },
    {
        "id": "b",
        "title": "B",
        "sentences": [
            "We propose a simple and fast method.",
            "Experiments on two datasets demonstrate large gains.",
        ],
    },
]


def rows(papers: int, sentences: int = 5, seed: int = 0) -> list[dict[str, object]]:
    """``papers`` abstracts rows of ``sentences`` sentences each, in the tiny bundle's words."""
    rng = random.Random(seed)
    out: list[dict[str, object]] = []
    for number in range(papers):
        texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))).capitalize() + "."
                 for _ in range(sentences)]
        out.append({"id": f"paper-{number:04d}", "title": f"Paper {number}", "sentences": texts})
    return out


def write_rows(path: Path, items: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    return path


def build_library(folder: Path, model: object, papers: int = 40, sentences: int = 5, seed: int = 0) -> Path:
    """A library of ``papers`` abstracts in ``folder`` (closed again)."""
    from core.library.library import Library

    source = write_rows(folder.parent / f"{folder.name}-rows.jsonl", rows(papers, sentences, seed))
    with Library(folder) as library:
        report = library.import_jsonl(source, model)  # type: ignore[arg-type]
        assert len(report.added) == papers
    return folder


def snapshot(folder: Path) -> dict[str, list[tuple[int, str, str]]]:
    """paper id -> its sentences (position, text, role) as stored, read with plain SQLite."""
    connection = sqlite3.connect(str(folder / "library.sqlite3"))
    try:
        out: dict[str, list[tuple[int, str, str]]] = {}
        for paper_id, position, text, role in connection.execute(
                "SELECT p.paper_id, s.position, s.text, s.role FROM sentences s "
                "JOIN papers p ON p.id = s.paper ORDER BY p.paper_id, s.position"):
            out.setdefault(paper_id, []).append((position, text, role))
        for (paper_id,) in connection.execute("SELECT paper_id FROM papers"):
            out.setdefault(paper_id, [])
        return out
    finally:
        connection.close()


def scramble(path: Path, offset: int, length: int, seed: int = 1) -> None:
    """Overwrite ``length`` bytes at ``offset`` with random bytes (the size stays), like
    ``dd if=/dev/urandom … conv=notrunc``."""
    data = random.Random(seed).randbytes(length)
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(data)


def zero_pages(path: Path, first: int, count: int) -> None:
    """Zero ``count`` database pages from page number ``first`` (1-based, as SQLite counts)."""
    with open(path, "r+b") as handle:
        handle.seek((first - 1) * PAGE)
        handle.write(bytes(count * PAGE))


def truncate(path: Path, fraction: float) -> None:
    os.truncate(path, int(path.stat().st_size * fraction) // PAGE * PAGE)


def root_page(folder: Path, name: str) -> int:
    """The first page of a table or index of the library database (read before damaging it)."""
    connection = sqlite3.connect(str(folder / "library.sqlite3"))
    try:
        row = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()
        return int(row[0])
    finally:
        connection.close()


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``rhetorica ARGS`` in a child process (a crash there is a return code, not a dead test run)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ORT_DISABLE_TELEMETRY": "1"}
    script = "import sys; from app.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", script, *args], cwd=cwd or ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
