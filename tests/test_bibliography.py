"""core.exporting.bibliography (issue 27.4): papers as BibTeX and RIS, escaped so that a title from a PDF can
never break the file, and ``rhetorica search --bibtex/--ris``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.exporting.bibliography import (
    BibEntry,
    bibtex_key,
    bibtex_value,
    library_entries,
    ris_value,
    to_bibtex,
    to_ris,
)
from core.library.store import NewSentence, PaperMetadata, open_store

HOSTILE = BibEntry(
    paper_id="zotero:1/ABCD", title="50% of {unbalanced} \\input{/etc/passwd} a_b & c $x^2$ # ~ } {",
    authors=("Müller, Jürgen", "O'Brien, Ann {Jr}"), year=2021, doi="10.1000/x_y%z",
    note="line one\nTY  - JOUR\rER  - ")


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def test_bibtex_escapes_every_special_and_keeps_braces_balanced() -> None:
    text = to_bibtex([HOSTILE])
    assert text.startswith("@article{muller2021unbalanced,\n")
    assert _balanced(text)
    title = next(line for line in text.splitlines() if line.startswith("  title"))
    assert r"50\% of \textbraceleft{}unbalanced\textbraceright{}" in title
    assert r"\textbackslash{}input" in title and "\\input{" not in title
    assert r"a\_b \& c \$x\textasciicircum{}2\$ \# \textasciitilde{}" in title
    assert r"author = {Müller, Jürgen and O'Brien, Ann \textbraceleft{}Jr\textbraceright{}}" in text
    assert "year = {2021}" in text and r"doi = {10.1000/x\_y\%z}" in text
    assert "note = {line one TY - JOUR ER -}" in text  # one line
    assert text.count("\n@") == 0 and text.rstrip().endswith("}")


def test_bibtex_without_authors_is_misc_with_a_key_from_the_id_and_keys_are_unique() -> None:
    plain = BibEntry(paper_id="3f9a-b", title="Only a title")
    assert bibtex_key(plain) == "paper3f9ab"
    twins = [BibEntry("a", "Deep Learning for Cats", ("Smith, J",), 2020),
             BibEntry("b", "Deep Learning for Dogs", ("Smith, J",), 2020)]
    text = to_bibtex([plain, *twins])
    assert "@misc{paper3f9ab," in text and "author" not in text.split("@article")[0]
    assert "@article{smith2020deep," in text and "@article{smith2020deepa," in text
    assert bibtex_value("a\n\tb  c") == "a b c"


def test_ris_is_one_line_per_value_with_crlf_records() -> None:
    text = to_ris([HOSTILE, BibEntry("p2", "Second\u2028paper")])
    records = text.split("ER  - \r\n")
    assert len(records) == 3 and records[2] == ""
    lines = text.split("\r\n")
    assert lines[0] == "TY  - JOUR"
    assert "TI  - 50% of {unbalanced} \\input{/etc/passwd} a_b & c $x^2$ # ~ } {" in lines
    assert "AU  - Müller, Jürgen" in lines and "PY  - 2021" in lines and "DO  - 10.1000/x_y%z" in lines
    assert "N1  - line one TY - JOUR ER -" in lines  # a line break cannot start a new tag
    assert "TY  - GEN" in lines and "TI  - Second paper" in lines
    assert all(line == "" or (line[:2].isalnum() and line[2:6] == "  - ") for line in lines)
    assert ris_value("a\x00b\x1bc") == "a b c"


def test_library_entries_use_the_kept_metadata(tmp_path: Path) -> None:
    store = open_store(tmp_path / "lib")
    try:
        for paper_id in ("p1", "p2"):
            store.add_paper(paper_id=paper_id, sha256=f"sha-{paper_id}", title=f"Title {paper_id}",
                            source="test", note="", kind="jsonl", model_id="m",
                            sentences=[NewSentence("A sentence.", role="method")],
                            content=np.ones((1, 4), dtype=np.float32))
        store.set_metadata("p2", PaperMetadata(("Doe, Jane",), 2019, "10.1/abc"))
        entries = library_entries(store, ["p2", "missing", "p1", "p2"], ["n2", "nm", "n1", "again"])
    finally:
        store.close()
    assert [e.paper_id for e in entries] == ["p2", "p1"]
    assert entries[0] == BibEntry("p2", "Title p2", ("Doe, Jane",), 2019, "10.1/abc", "n2")
    assert entries[1] == BibEntry("p1", "Title p1", (), None, "", "n1")


@pytest.fixture()
def cli_library(tmp_path: Path):
    pytest.importorskip("hnswlib")
    from core.phrasing.search import clear_cache
    from models import load_model
    from tests.test_search import ROWS
    from tests.tiny_bundle import make_tiny_bundle

    clear_cache()
    bundle = make_tiny_bundle(tmp_path / "bundle")
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    from core.library.library import Library

    with Library(tmp_path / "lib") as lib:
        lib.import_jsonl(rows, load_model(bundle, device="cpu", threads=1))
        lib.store.set_metadata("b", PaperMetadata(("Lovelace, Ada", "Babbage, Charles"), 1843, "10.5/b"))
    yield ["--library", str(tmp_path / "lib"), "--model", str(bundle), "--threads", "1", "--quiet"]
    clear_cache()


def test_search_command_writes_bibtex_and_ris(cli_library: list[str], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    bib, ris = tmp_path / "out" / "found.bib", tmp_path / "found.ris"
    (tmp_path / "out").mkdir()
    outputs = ["--bibtex", str(bib), "--ris", str(ris)]
    assert main(["search", "--like", "a", "--json", *outputs, *cli_library]) == 0
    out = capsys.readouterr()
    json.loads(out.out)  # stdout stays JSON; the file lines go to stderr
    assert f"wrote 2 paper(s) to {bib}" in out.err and f"wrote 2 paper(s) to {ris}" in out.err
    text = bib.read_text(encoding="utf-8")
    assert "@article{lovelace1843" in text and "author = {Lovelace, Ada and Babbage, Charles}" in text
    assert "doi = {10.5/b}" in text and "@misc{c," in text and "Rhetorica search: like Paper A" in text
    records = ris.read_text(encoding="utf-8").split("ER  - ")
    assert len(records) == 3 and "AU  - Lovelace, Ada" in records[0] + records[1]


def test_search_bibliography_bad_paths_are_one_line(cli_library: list[str], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    for bad in (["--bibtex", str(tmp_path / "no" / "x.bib")], ["--ris", str(tmp_path)],
                ["--bibtex", str(tmp_path / "same"), "--ris", str(tmp_path / "same")]):
        assert main(["search", "--like", "a", *bad, *cli_library]) == 2
        err = capsys.readouterr().err
        assert err.startswith("rhetorica: error: ") and err.count("\n") == 1
    assert not (tmp_path / "same").exists()


def test_suggestion_entries_keep_library_sources_only(tmp_path: Path) -> None:
    from core.exporting.bibliography import suggestion_entries

    store = open_store(tmp_path / "lib")
    try:
        store.add_paper(paper_id="p1", sha256="sha-p1", title="Cats", source="test", note="", kind="pdf",
                        model_id="m", sentences=[NewSentence("We aim to study cats.", role="objective")],
                        content=np.ones((1, 4), dtype=np.float32))
        store.set_metadata("p1", PaperMetadata(("Doe, Jane",), 2019, ""))
        sources = [{"kind": "corpus", "paper_id": "csabstruct-train-1", "title": "x", "section": ""},
                   {"kind": "library", "paper_id": "p1", "title": "Cats", "section": "Introduction"},
                   {"kind": "library", "paper_id": "p1", "title": "Cats", "section": "Methods"}]
        entries = suggestion_entries(store, sources)
    finally:
        store.close()
    assert entries == [BibEntry("p1", "Cats", ("Doe, Jane",), 2019, "",
                                "Rhetorica suggestion source (Introduction)")]
    assert "@article{doe2019cats," in to_bibtex(entries)
