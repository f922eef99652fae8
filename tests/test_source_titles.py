"""Every suggestion source has a title a reader can use (issue 26.5): the paper's own, or a label that
says what it is; never a bare id like "csabstruct-train-1399"."""

from __future__ import annotations

import re

from core.library.store import PaperRecord
from core.phrasing.source_titles import corpus_label, dataset_of, source_title


def record(title: str, source: str, kind: str, paper_id: str = "x") -> PaperRecord:
    return PaperRecord(paper_id, "", title, source, "", kind, "m", 0.0, 0)


def test_a_corpus_paper_without_a_title_gets_a_label_saying_what_it_is() -> None:
    # the shipped pack's CSAbstruct papers: dataset "csabstruct", title "" (the dataset has none)
    title = source_title(record("", "csabstruct", "corpus", "csabstruct-train-1399"), "csabstruct-train-1399",
                         "corpus")
    assert title == "CSAbstruct abstract #1399 (CS, train set)"
    assert "csabstruct-train-1399" not in title
    assert corpus_label("csabstruct-dev-7", "csabstruct") == "CSAbstruct abstract #7 (CS, dev set)"
    # no record at all (a pack read without its papers file): the id's prefix names the dataset
    assert source_title(None, "csabstruct-test-3", "corpus") == "CSAbstruct abstract #3 (CS, test set)"
    assert dataset_of("pmid-21645374") == "pubmedqa" and dataset_of("oa-stm-S1") == "oa-stm"
    assert dataset_of("nothing-known") == ""
    assert source_title(None, "weird-1", "corpus") == "Untitled paper weird-1 from the phrase corpus"


def test_a_title_the_source_has_is_used_as_it_is() -> None:
    title = "Critical Points of Linear Neural Networks:  Analytical Forms\n and Landscape Properties"
    shown = source_title(record(title, "scitldr", "corpus"), "scitldr-SysEexbRb", "corpus")
    assert shown == "Critical Points of Linear Neural Networks: Analytical Forms and Landscape Properties"
    assert source_title(record("My paper", "/home/u/p.pdf", "pdf"), "abc", "library") == "My paper"


def test_an_untitled_library_paper_is_named_by_its_file() -> None:
    assert source_title(record("", "/home/u/papers/smith2020.pdf", "pdf"), "9f3a…", "library") == (
        "Untitled PDF: smith2020.pdf")
    assert source_title(record(" ", "/data/rows.jsonl", "jsonl"), "p4", "library") == (
        "Untitled paper p4 from rows.jsonl in your library")
    assert source_title(None, "p9", "library") == "Untitled paper p9 in your library"


def test_no_label_is_a_bare_id() -> None:
    bare = re.compile(r"^[\w.-]+$")
    cases = [(record("", "csabstruct", "corpus", "csabstruct-train-1"), "csabstruct-train-1", "corpus"),
             (None, "pmid-1", "corpus"), (record("", "", "pdf"), "abc123", "library"),
             (record("", "", "jsonl"), "p1", "library"), (None, "x", "")]
    for paper, paper_id, kind in cases:
        title = source_title(paper, paper_id, kind)
        assert title and not bare.match(title) and " " in title, title
