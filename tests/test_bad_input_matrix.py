"""The bad-input matrix (issue 23, "survive a hostile tester").

Every ``rhetorica`` command (and sub-command) that takes a path, a text or a number is driven through
generated bad inputs: an empty file, a folder, a missing path, a binary file, non-UTF-8 text, a huge
sparse file (3 GB, never to be read whole), the wrong kind of file (text where a PDF is wanted, a
PDF where JSON Lines are), damaged libraries (bytes flipped in the database or an index, a
zero-length database), damaged model bundles (a truncated graph, a garbage manifest), damaged
checkpoints (random bytes, a pickle that would run code), absurd numbers and bad output paths.

For every case: the exit status is non-zero where the input is unusable; stderr holds exactly one
line ``rhetorica: error: …`` (plus, at most, ``rhetorica: note: …`` lines) and never a traceback;
and no file of the user's is changed or lost (sha256 of every file before and after; a huge sparse
file by size and modification time). Cases run in-process through ``app.cli.main`` (fast), except
the damaged-library ones, which run in a subprocess each (SQLite or hnswlib crashing on a damaged
file must not take pytest down), and the huge-file ones, which run in a subprocess whose address
space (2 GB) cannot hold the file, so reading it whole fails loudly instead of swapping. The case
count is printed when the module is collected (see it with ``-s``) and checked by a test.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.paths import shared_dir
from tests.library_damage import TWO_PAPERS

ROOT = Path(__file__).resolve().parent.parent
HUGE_BYTES = 3 * 10**9  # sparse: costs no disk
HUGE_CHILD_LIMIT = 2 * 10**9  # bytes of address space for a case given the huge file (see _limit_memory)
HASH_LIMIT = 50 * 10**6  # larger files are compared by size and mtime, not read
NOTE = "rhetorica: note:"
ERROR = "rhetorica: error:"


@dataclass(frozen=True)
class Case:
    """One command line with one bad thing in it. ``argv`` items are formatted with the world's paths
    (``{w}``: the shared read-only world folder, ``{t}``: this case's own folder)."""

    id: str
    argv: tuple[str, ...]
    expect: str = "error"  # "error": non-zero exit and one error line; "any": no crash (exit 0 allowed)
    subprocess: bool = False
    may_change: tuple[str, ...] = ()  # file names (relative to {t}) that may legitimately be rewritten
    setup: str = ""  # "lib": copy the good library to {t}/lib first; "lib-<damage>": a damaged copy
    needs: tuple[str, ...] = ()  # "torch", "shared"
    huge: bool = False  # the input is the 3 GB sparse file: check memory and time
    tags: tuple[str, ...] = field(default_factory=tuple)


# -- the bad inputs ---------------------------------------------------------------------------------
# Each kind names a file (or folder) in the world; a command's slot is formatted with it.
PDF_KINDS = {  # where a PDF is wanted
    "empty": "{w}/in/empty.pdf",
    "folder": "{w}/in/folder",
    "missing": "{w}/in/missing.pdf",
    "binary": "{w}/in/binary.pdf",
    "nonutf8": "{w}/in/latin1.pdf",
    "huge": "{w}/in/huge.pdf",
    "text-as-pdf": "{w}/in/notes.pdf",
    "txt": "{w}/in/lines.txt",
}
TEXT_KINDS = {  # where a UTF-8 text file (a draft, one sentence per line) is wanted
    "empty": "{w}/in/empty.txt",
    "blank": "{w}/in/blank.txt",
    "folder": "{w}/in/folder.txt",
    "missing": "{w}/in/missing.txt",
    "binary": "{w}/in/binary.txt",
    "nonutf8": "{w}/in/latin1.txt",
    "utf16": "{w}/in/utf16.txt",
    "huge": "{w}/in/huge.txt",
    "pdf-as-text": "{w}/in/paper-pdf.txt",
}
JSONL_KINDS = {  # where JSON Lines are wanted
    "empty": "{w}/in/empty.jsonl",
    "folder": "{w}/in/folder",
    "missing": "{w}/in/missing.jsonl",
    "binary": "{w}/in/binary.jsonl",
    "nonutf8": "{w}/in/latin1.jsonl",
    "huge": "{w}/in/huge.jsonl",
    "pdf": "{w}/in/paper.pdf",
    "not-json": "{w}/in/lines.txt",
    "json-array": "{w}/in/array.jsonl",
}
FOLDER_KINDS = {  # where a folder (library, corpus, bundle, data) is wanted
    "file": "{w}/in/lines.txt",
    "binary": "{w}/in/binary.bin",
}
BUNDLE_KINDS = {  # --model
    "truncated-graph": "{w}/bundles/truncated",
    "garbage-manifest": "{w}/bundles/garbage",
    "wrong-manifest": "{w}/bundles/wrong",
    "no-tokenizer": "{w}/bundles/no-tokenizer",
    "a-file": "{w}/in/lines.txt",
    "missing": "{w}/bundles/missing",
    "empty-folder": "{w}/in/folder",
}
CHECKPOINT_KINDS = {
    "random": "{w}/in/random.pt",
    "evil-pickle": "{w}/in/evil.pt",
    "empty": "{w}/in/empty.pt",
    "folder": "{w}/in/folder",
    "missing": "{w}/in/missing.pt",
    "text": "{w}/in/notes.pt",
}
CONFIG_KINDS = {  # a JSON or TOML data file (a lexicon, a taxonomy) or a .npy array
    "empty": "{w}/in/empty.txt",
    "folder": "{w}/in/folder",
    "missing": "{w}/in/missing.json",
    "binary": "{w}/in/binary.bin",
    "nonutf8": "{w}/in/latin1.txt",
    "huge": "{w}/in/huge.txt",
    "wrong-json": "{w}/in/array.jsonl",
    "text": "{w}/in/lines.txt",
    "pdf": "{w}/in/paper.pdf",
}
OUT_FILE_KINDS = {  # an output file option
    "folder": "{t}/outdir",
    "no-parent": "{t}/no/such/out.json",
    "parent-is-file": "{t}/file.txt/out.json",
}
OUT_FOLDER_KINDS = {"a-file": "{t}/file.txt", "parent-is-file": "{t}/file.txt/sub"}
INT_KINDS = {"negative": "-1", "absurd": "1000000000000", "word": "abc", "nan": "nan"}
FLOAT_KINDS = {"nan": "nan", "inf": "inf", "negative": "-1", "absurd": "1e12", "word": "abc"}
SENTENCE_KINDS = {"empty": "", "blank": "   ", "undecodable": "bad \udcff bytes"}
LIBRARY_DAMAGE = ("flipped-db", "flipped-index", "zero-db", "garbage-db")

M = ("--model", "{w}/bundle", "--threads", "1")  # the tiny test bundle
LIB = ("--library", "{t}/lib")


def _cases() -> list[Case]:
    cases: list[Case] = []

    def add(
        prefix: str,
        kinds: dict[str, str],
        argv: tuple[str, ...],
        *,
        skip: tuple[str, ...] = (),
        expect: dict[str, str] | None = None,
        **options: object,
    ) -> None:
        for kind, value in kinds.items():
            if kind in skip:
                continue
            filled = tuple(a.replace("{X}", value) for a in argv)
            cases.append(
                Case(
                    f"{prefix}[{kind}]",
                    filled,
                    (expect or {}).get(kind, "error"),
                    huge=kind == "huge",
                    **options,
                )
            )  # type: ignore[arg-type]

    # -- a PDF is wanted
    add("parse", PDF_KINDS, ("parse", "{X}"))
    add("analyze", PDF_KINDS, ("analyze", "{X}", *M), skip=("txt",))  # a .txt is a draft analyze reads
    add("figures-rank", PDF_KINDS, ("figures", "rank", "{X}", *M))
    add("search-like", PDF_KINDS, ("search", "--like", "{X}", *LIB, *M), setup="lib", skip=("txt",))
    add("align-pdf", PDF_KINDS, ("align", "{X}", "{w}/in/draft.txt", *M), skip=("txt",))
    add(
        "bench-align",
        PDF_KINDS,
        ("bench", "align", "{X}", "{w}/in/paper.pdf", "--runs", "1"),
        skip=("txt", "nonutf8", "binary", "text-as-pdf", "empty", "huge"),
    )  # these would run the bench
    add(
        "bench-analyze",
        PDF_KINDS,
        ("bench", "analyze", "{X}", "--runs", "1"),
        skip=("txt", "nonutf8", "binary", "text-as-pdf", "empty", "huge"),
    )
    add(
        "library-add",
        PDF_KINDS,
        ("library", "add", "{X}", "--library", "{t}/newlib", *M, "--workers", "0"),
        expect={
            "binary": "any",
            "nonutf8": "any",
            "text-as-pdf": "any",
            "empty": "any",
            "huge": "any",
            "txt": "any",
        },
    )  # a bad PDF among many is skipped and reported, not fatal
    # -- a UTF-8 text file is wanted
    add(
        "suggest-input",
        TEXT_KINDS,
        ("suggest", "--input", "{X}", "--source", "library", *LIB, *M),
        setup="lib",
    )
    add("template-input", TEXT_KINDS, ("template", "--input", "{X}"))
    add("align-draft", TEXT_KINDS, ("align", "{w}/in/draft.txt", "{X}", *M))
    add(
        "gui-draft",
        TEXT_KINDS,
        ("gui", "--draft", "{X}", "--screenshot", "{t}/shot.png"),
        skip=("empty", "blank"),
    )  # a blank draft is a valid draft: the window would open
    add(
        "bench-suggest-input",
        TEXT_KINDS,
        ("bench", "suggest", "--input", "{X}", "--queries", "1"),
        skip=("empty", "blank", "huge", "nonutf8", "binary", "utf16", "pdf-as-text"),
    )
    # -- JSON Lines are wanted
    add(
        "corrections-import",
        JSONL_KINDS,
        ("corrections", "import", "{X}", *LIB),
        setup="lib",
        expect={"empty": "any"},
    )
    add(
        "library-import-jsonl",
        JSONL_KINDS,
        ("library", "import-jsonl", "{X}", "--library", "{t}/newlib", *M),
        expect={"empty": "any"},
    )
    add("data-open-set", JSONL_KINDS, ("data", "open-set", "{X}", "--out", "{t}/split"))
    add("data-precision", JSONL_KINDS, ("data", "precision", "{X}"), expect={"empty": "any"})
    add(
        "eval-suggest-judgements",
        JSONL_KINDS,
        ("eval", "suggest", "--judgements", "{X}", "--key", "{w}/in/key.jsonl"),
        expect={"empty": "any"},
    )
    add(
        "eval-suggest-key",
        JSONL_KINDS,
        ("eval", "suggest", "--judgements", "{w}/in/judgements.jsonl", "--key", "{X}"),
        expect={"empty": "any"},
    )
    add(
        "eval-retrieval-labels", JSONL_KINDS, ("eval", "retrieval", "--data", "labels", "--labels", "{X}", *M)
    )
    add(
        "train-roles-functions",
        JSONL_KINDS,
        ("train", "roles", "--functions", "{X}", "--out", "{t}/b"),
        skip=("empty", "not-json", "json-array"),  # readable text: training would start
    )
    add(
        "train-body-labels",
        JSONL_KINDS,
        ("train", "body", "--function-labels", "{X}", "--out", "{t}/b"),
        skip=("empty", "not-json", "json-array"),
    )
    # -- a folder is wanted
    add("suggest-library", FOLDER_KINDS, ("suggest", "x", "--source", "library", "--library", "{X}", *M))
    add("suggest-corpus", FOLDER_KINDS, ("suggest", "x", "--source", "corpus", "--corpus", "{X}", *M))
    add("search-library", FOLDER_KINDS, ("search", "--like", "a", "--library", "{X}"))
    add("align-library", FOLDER_KINDS, ("align", "a", "b", "--library", "{X}", *M))
    add("corrections-list-library", FOLDER_KINDS, ("corrections", "list", "--library", "{X}"))
    add("corpus-stats", FOLDER_KINDS, ("corpus", "stats", "--corpus", "{X}"))
    add("library-list", FOLDER_KINDS, ("library", "list", "--library", "{X}"))
    add("bench-index-library", FOLDER_KINDS, ("bench", "index", "--library", "{X}", "--n", "10"))
    add("eval-split-data-dir", FOLDER_KINDS, ("eval", "split", "--data-dir", "{X}"))
    add("train-figures-bundle", FOLDER_KINDS, ("train", "figures", "--bundle", "{X}", "--out", "{t}/b"))
    add("eval-content-against", FOLDER_KINDS, ("eval", "content", "--against", "{X}"))
    add(
        "train-corrections-library",
        FOLDER_KINDS,
        ("train", "corrections", "--library", "{X}", "--out", "{t}/b"),
    )
    add("data-figure-pairs-shared", FOLDER_KINDS, ("data", "figure-pairs", "--shared", "{X}"))
    add(
        "export-reuse",
        FOLDER_KINDS,
        ("export", "{w}/in/random.pt", "--out", "{t}/b", "--reuse-sentence-graphs", "{X}"),
    )
    # -- a data file: a lexicon, a taxonomy, an array of vectors
    add("eval-templates-lexicon", CONFIG_KINDS, ("eval", "templates", "--lexicon", "{X}"))
    add(
        "data-precision-taxonomy",
        CONFIG_KINDS,
        ("data", "precision", "{w}/in/judgements.jsonl", "--taxonomy", "{X}"),
    )
    add("bench-index-vectors", CONFIG_KINDS, ("bench", "index", "--vectors", "{X}", "--n", "10"))
    # -- a damaged model bundle
    add("analyze-model", BUNDLE_KINDS, ("analyze", "{w}/in/paper.pdf", "--model", "{X}"))
    add(
        "suggest-model",
        BUNDLE_KINDS,
        ("suggest", "x", "--source", "library", *LIB, "--model", "{X}"),
        setup="lib",
    )
    add("figures-rank-model", BUNDLE_KINDS, ("figures", "rank", "{w}/in/paper.pdf", "--model", "{X}"))
    add("align-model", BUNDLE_KINDS, ("align", "{w}/in/draft.txt", "{w}/in/draft2.md", "--model", "{X}"))
    add(
        "search-model",
        BUNDLE_KINDS,
        ("search", "--like", "{w}/in/paper.pdf", *LIB, "--model", "{X}"),
        setup="lib",
    )
    add(
        "library-import-model",
        BUNDLE_KINDS,
        ("library", "import-jsonl", "{w}/in/rows.jsonl", "--library", "{t}/newlib", "--model", "{X}"),
    )
    # -- a damaged checkpoint (refused, never run: the evil pickle would create {w}/PWNED)
    add("export-checkpoint", CHECKPOINT_KINDS, ("export", "{X}", "--out", "{t}/bundle"), needs=("torch",))
    # -- an output file
    add("parse-json", OUT_FILE_KINDS, ("parse", "{w}/in/paper.pdf", "--json", "{X}"))
    add("analyze-json", OUT_FILE_KINDS, ("analyze", "{w}/in/paper.pdf", *M, "--json", "{X}"))
    add("align-json", OUT_FILE_KINDS, ("align", "{w}/in/draft.txt", "{w}/in/draft2.md", *M, "--json", "{X}"))
    add("align-md", OUT_FILE_KINDS, ("align", "{w}/in/draft.txt", "{w}/in/draft2.md", *M, "--md", "{X}"))
    add("align-html", OUT_FILE_KINDS, ("align", "{w}/in/draft.txt", "{w}/in/draft2.md", *M, "--html", "{X}"))
    add("figures-rank-json", OUT_FILE_KINDS, ("figures", "rank", "{w}/in/paper.pdf", *M, "--json", "{X}"))
    add("template-json", OUT_FILE_KINDS, ("template", "--input", "{w}/in/lines.txt", "--json", "{X}"))
    add("corrections-export", OUT_FILE_KINDS, ("corrections", "export", "{X}", *LIB), setup="lib")
    add("gui-screenshot", OUT_FILE_KINDS, ("gui", "--screenshot", "{X}"))
    add("eval-templates-json", OUT_FILE_KINDS, ("eval", "templates", "--json", "{X}"), skip=("no-parent",))
    add("eval-roles-json", OUT_FILE_KINDS, ("eval", "roles", *M, "--json", "{X}"), skip=("no-parent",))
    add("bench-gemm-json", OUT_FILE_KINDS, ("bench", "gemm", "--json", "{X}"), skip=("no-parent",))
    add("data-formulas-out", OUT_FILE_KINDS, ("data", "formulas", "--out", "{X}"), skip=("no-parent",))
    add(
        "data-functions-out",
        OUT_FILE_KINDS,
        ("data", "functions", "--source", "x", "--out", "{X}"),
        skip=("no-parent",),
    )  # research commands create missing folders under runs/
    cases.append(
        Case(
            "template-json[same-as-input]",
            ("template", "--input", "{t}/lines.txt", "--json", "{t}/lines.txt"),
            setup="lines",
        )
    )
    cases.append(
        Case("parse-json[same-as-input]", ("parse", "{t}/paper.pdf", "--json", "{t}/paper.pdf"), setup="pdf")
    )
    cases.append(
        Case(
            "align-md[same-as-input]",
            ("align", "{t}/draft.txt", "{w}/in/draft2.md", *M, "--md", "{t}/draft.txt"),
            setup="draft",
        )
    )
    cases.append(
        Case(
            "align-outputs[same-file]",
            ("align", "{w}/in/draft.txt", "{w}/in/draft2.md", *M, "--md", "{t}/x", "--html", "{t}/x"),
        )
    )
    # -- an output folder
    add("parse-figures-dir", OUT_FOLDER_KINDS, ("parse", "{w}/in/paper.pdf", "--figures-dir", "{X}"))
    add("figures-rank-png", OUT_FOLDER_KINDS, ("figures", "rank", "{w}/in/paper.pdf", *M, "--png", "{X}"))
    add("export-out", OUT_FOLDER_KINDS, ("export", "--untrained", "--out", "{X}"))
    add("train-roles-out", OUT_FOLDER_KINDS, ("train", "roles", "--data", "csabstruct:train", "--out", "{X}"))
    add("train-body-out", OUT_FOLDER_KINDS, ("train", "body", "--out", "{X}"))
    add("train-figures-out", OUT_FOLDER_KINDS, ("train", "figures", "--out", "{X}"))
    add("train-corrections-out", OUT_FOLDER_KINDS, ("train", "corrections", "--out", "{X}"))
    add("data-open-set-out", OUT_FOLDER_KINDS, ("data", "open-set", "{w}/in/labels.jsonl", "--out", "{X}"))
    add("eval-suggest-draw", OUT_FOLDER_KINDS, ("eval", "suggest", "--draw", "{X}"))
    add("corpus-build-out", OUT_FOLDER_KINDS, ("corpus", "build", "--out", "{X}"))
    # -- absurd numbers
    for name, argv in {
        "suggest-k": ("suggest", "x", "-k", "{X}", "--source", "library", *LIB, *M),
        "search-k": ("search", "--like", "a", "-k", "{X}", *LIB),
        "align-top": ("align", "{w}/in/draft.txt", "{w}/in/draft2.md", "--top", "{X}", *M),
        "parse-max-pages": ("parse", "{w}/in/paper.pdf", "--max-pages", "{X}"),
        "analyze-threads": ("analyze", "{w}/in/paper.pdf", *M[:2], "--threads", "{X}"),
        "corrections-remove": ("corrections", "remove", "{X}", *LIB),
        "gui-select": ("gui", "--select", "{X}", "--screenshot", "{t}/shot.png"),
        "corpus-build-max-papers": ("corpus", "build", "--max-papers", "{X}", "--out", "{t}/c"),
        "library-add-workers": (
            "library",
            "add",
            "{w}/in/paper.pdf",
            "--workers",
            "{X}",
            "--library",
            "{t}/newlib",
            *M,
        ),
        "eval-search-queries": ("eval", "search", "--queries", "{X}"),
        "eval-roles-limit": ("eval", "roles", "--limit", "{X}", *M),
        "eval-suggest-k": ("eval", "suggest", "--draw", "{t}/d", "-k", "{X}"),
        "bench-index-n": ("bench", "index", "--library", "{t}", "--n", "{X}"),
        "bench-encode-batch-size": ("bench", "encode", "--batch-size", "{X}"),
        "bench-gemm-rows": ("bench", "gemm", "--rows", "{X}"),
        "bench-suggest-scale": ("bench", "suggest", "--scale", "{X}"),
        "train-roles-batch-size": ("train", "roles", "--batch-size", "{X}", "--out", "{t}/b"),
        "train-figures-rank": ("train", "figures", "--rank", "{X}", "--out", "{t}/b"),
        "data-open-set-seen": ("data", "open-set", "{w}/in/labels.jsonl", "--seen", "{X}", "--out", "{t}/s"),
    }.items():
        add(name, INT_KINDS, argv, setup="lib" if "{t}/lib" in argv else "")
    for name, argv in {
        "align-function-weight": (
            "align",
            "{w}/in/draft.txt",
            "{w}/in/draft2.md",
            "--function-weight",
            "{X}",
            *M,
        ),
        "bench-index-noise": ("bench", "index", "--library", "{t}", "--noise", "{X}"),
        "train-body-lr": ("train", "body", "--lr", "{X}", "--out", "{t}/b"),
        "data-formulas-min-share": ("data", "formulas", "--min-share", "{X}", "--out", "{t}/f.json"),
        "bench-train-gui-timeout": ("bench", "train-gui", "--timeout", "{X}"),
    }.items():
        add(name, FLOAT_KINDS, argv)
    cases.append(Case("gui-size[absurd]", ("gui", "--size", "100000x1", "--screenshot", "{t}/shot.png")))
    # -- bad text on the command line
    add("suggest-sentence", SENTENCE_KINDS, ("suggest", "{X}", "--source", "library", *LIB, *M), setup="lib")
    add("corrections-add-text", SENTENCE_KINDS, ("corrections", "add", "{X}", "method", *LIB), setup="lib")
    add(
        "corrections-add-label",
        {"undecodable": SENTENCE_KINDS["undecodable"]},
        ("corrections", "add", "We propose a method.", "{X}", *LIB),
        setup="lib",
    )
    add(
        "search-like-id",
        {"undecodable": SENTENCE_KINDS["undecodable"]},
        ("search", "--like", "{X}", *LIB),
        setup="lib",
    )
    add(
        "align-id",
        {"undecodable": SENTENCE_KINDS["undecodable"]},
        ("align", "{X}", "{w}/in/draft.txt", *LIB, *M),
        setup="lib",
    )
    add(
        "library-remove-id",
        {"undecodable": SENTENCE_KINDS["undecodable"]},
        ("library", "remove", "{X}", *LIB),
        setup="lib",
    )
    add(
        "export-name",
        {"undecodable": SENTENCE_KINDS["undecodable"]},
        ("export", "--untrained", "--out", "{t}/b", "--name", "{X}"),
    )
    # -- a damaged library (subprocesses: a crash in SQLite or hnswlib must not take pytest down)
    for damage in LIBRARY_DAMAGE:
        index_ok = "any" if damage == "flipped-index" else "error"  # a damaged index is rebuilt: usable
        # a damaged index is rebuilt from the database, which records the new index's size and checksum
        rewrites = (
            (
                "lib/content.ann",
                "lib/function.ann",
                "lib/library.sqlite3",
                "lib/library.sqlite3-wal",
                "lib/library.sqlite3-shm",
            )
            if damage == "flipped-index"
            else ()
        )
        for name, argv, expect in (
            ("library-list", ("library", "list", *LIB), index_ok),
            ("library-stats", ("library", "stats", *LIB), index_ok),
            ("library-remove", ("library", "remove", "a", *LIB), index_ok),
            ("suggest", ("suggest", "We propose a method.", "--source", "library", *LIB, *M), index_ok),
            ("search", ("search", "--like", "a", *LIB), index_ok),
            ("align", ("align", "a", "{w}/in/draft.txt", *LIB, *M), index_ok),
            ("corrections-list", ("corrections", "list", *LIB), index_ok),
            ("corrections-export", ("corrections", "export", "{t}/c.jsonl", *LIB), index_ok),
        ):
            changes = rewrites + (("c.jsonl",) if name == "corrections-export" else ())
            if name == "library-remove":
                changes += ("lib/library.sqlite3", "lib/library.sqlite3-wal", "lib/library.sqlite3-shm")
            cases.append(
                Case(
                    f"damaged-library-{name}[{damage}]",
                    argv,
                    expect,
                    subprocess=True,
                    setup=f"lib-{damage}",
                    may_change=changes,
                )
            )
    return cases


CASES = _cases()
print(f"\nbad-input matrix: {len(CASES)} cases", file=sys.stderr)


def test_matrix_case_count() -> None:
    """The matrix covers what it claims (a shrinking count would be a silently dropped row)."""
    assert len(CASES) >= 400, len(CASES)
    assert len({case.id for case in CASES}) == len(CASES), "case ids must be unique"


# -- the world: every file a case may read ---------------------------------------------------------
DRAFT = (
    "Abstract\nPrevious work has studied this problem. Our goal is to improve accuracy. "
    "We propose a new method for parsing scientific text.\n\n"
    "Conclusion\nIn conclusion the approach is simple and fast.\n"
)
DRAFT2 = (
    "# Abstract\nOur goal is to improve accuracy. Experiments on two datasets demonstrate large gains. "
    "Results show that it works well.\n\n# Conclusion\nThe approach is simple.\n"
)
ROWS = TWO_PAPERS


class _Evil:
    """Unpickling this creates the file PWNED: a checkpoint loader that runs pickled code fails the test."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return open, (self.marker, "w")


def _sparse(path: Path, size: int = HUGE_BYTES, head: bytes = b"") -> None:
    with open(path, "wb") as handle:
        handle.write(head)
    os.truncate(path, size)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from tests.pdf_factory import hyphen_pdf
    from tests.tiny_bundle import make_tiny_bundle

    w = tmp_path_factory.mktemp("world")
    home = w / "home"  # RHETORICA_HOME: no case may touch the real user data folder
    home.mkdir()
    old_home = os.environ.get("RHETORICA_HOME")
    os.environ["RHETORICA_HOME"] = str(home)
    bundle = make_tiny_bundle(w / "bundle", functions=True)
    inp = w / "in"
    inp.mkdir()
    (inp / "folder").mkdir()
    (inp / "folder.txt").mkdir()
    for suffix in ("pdf", "txt", "jsonl", "pt"):
        (inp / f"empty.{suffix}").write_bytes(b"")
    for suffix in ("pdf", "txt", "jsonl", "bin"):
        (inp / f"binary.{suffix}").write_bytes(bytes(range(256)) * 64)
    for suffix in ("pdf", "txt", "jsonl"):
        (inp / f"latin1.{suffix}").write_bytes("café au lait\nnaïve\n".encode("latin-1"))
        _sparse(inp / f"huge.{suffix}")
    (inp / "blank.txt").write_text("\n   \n\t\n", encoding="utf-8")
    (inp / "utf16.txt").write_bytes("We propose a method.\n".encode("utf-16"))
    (inp / "notes.pdf").write_text("These are my notes, not a PDF.\n" * 20, encoding="utf-8")
    (inp / "notes.pt").write_text("not a checkpoint\n", encoding="utf-8")
    (inp / "lines.txt").write_text(
        "We propose a new method.\nResults show that it works well.\n", encoding="utf-8"
    )
    (inp / "array.jsonl").write_text("[1, 2, 3]\n", encoding="utf-8")
    (inp / "draft.txt").write_text(DRAFT, encoding="utf-8")
    (inp / "draft2.md").write_text(DRAFT2, encoding="utf-8")
    (inp / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    (inp / "labels.jsonl").write_text(
        json.dumps({"text": "We propose a method.", "function": "proposal"}) + "\n", encoding="utf-8"
    )
    (inp / "key.jsonl").write_text(
        json.dumps({"query_id": "q0", "cid": "q0-0", "system": "model"}) + "\n", encoding="utf-8"
    )
    (inp / "judgements.jsonl").write_text(
        json.dumps({"query_id": "q0", "cid": "q0-0", "same_job": 2}) + "\n", encoding="utf-8"
    )
    hyphen_pdf(inp / "paper.pdf")
    shutil.copy(inp / "paper.pdf", inp / "paper-pdf.txt")
    (inp / "random.pt").write_bytes(os.urandom(4096))
    (inp / "evil.pt").write_bytes(pickle.dumps(_Evil(w / "PWNED")))
    # damaged bundles
    bundles = w / "bundles"
    for name in ("truncated", "garbage", "wrong", "no-tokenizer"):
        shutil.copytree(bundle, bundles / name)
    graph = (bundles / "truncated" / "model.onnx").read_bytes()
    (bundles / "truncated" / "model.onnx").write_bytes(graph[: len(graph) // 2])
    (bundles / "garbage" / "manifest.json").write_bytes(os.urandom(512))
    (bundles / "wrong" / "manifest.json").write_text('{"format": "one", "labels": 7}', encoding="utf-8")
    (bundles / "no-tokenizer" / "tokenizer.json").unlink()
    # a good library, copied (and damaged) per case
    from app.cli import main

    assert (
        main(
            [
                "library",
                "import-jsonl",
                str(inp / "rows.jsonl"),
                "--library",
                str(w / "lib"),
                "--model",
                str(bundle),
                "--threads",
                "1",
                "--quiet",
            ]
        )
        == 0
    )
    assert main(["corrections", "list", "--library", str(w / "lib")]) == 0  # its tables exist from now on
    yield w
    if old_home is None:
        os.environ.pop("RHETORICA_HOME", None)
    else:
        os.environ["RHETORICA_HOME"] = old_home


def _flip(path: Path, count: int = 64) -> None:
    """Flip bytes spread over the second half of ``path`` (past the header a reader checks first)."""
    data = bytearray(path.read_bytes())
    for i in range(count):
        position = len(data) // 2 + (i * 997) % max(1, len(data) // 2)
        data[position] ^= 0xFF
    path.write_bytes(bytes(data))


def _flip_pages(path: Path) -> None:
    """Flip the first bytes (the b-tree page header) of every page of a SQLite database but the
    first: the file still opens as a database, and any read of a table finds it malformed."""
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    for start in range(page, len(data), page):
        for offset in range(8):
            data[start + offset] ^= 0xA5
    path.write_bytes(bytes(data))


def _prepare(case: Case, w: Path, t: Path) -> None:
    (t / "outdir").mkdir()
    (t / "file.txt").write_text("a file of the user's\n", encoding="utf-8")
    if case.setup == "lines":
        shutil.copy(w / "in" / "lines.txt", t / "lines.txt")
    elif case.setup == "pdf":
        shutil.copy(w / "in" / "paper.pdf", t / "paper.pdf")
    elif case.setup == "draft":
        shutil.copy(w / "in" / "draft.txt", t / "draft.txt")
    elif case.setup.startswith("lib"):
        shutil.copytree(w / "lib", t / "lib")
        damage = case.setup.removeprefix("lib").removeprefix("-")
        db = t / "lib" / "library.sqlite3"
        if damage == "flipped-db":
            _flip_pages(db)
        elif damage == "flipped-index":
            for name in ("content.ann", "function.ann"):
                if (t / "lib" / name).is_file():
                    _flip(t / "lib" / name)
        elif damage == "zero-db":
            db.write_bytes(b"")
        elif damage == "garbage-db":
            db.write_bytes(os.urandom(8192))


def _snapshot(*folders: Path) -> dict[str, tuple[object, ...]]:
    found: dict[str, tuple[object, ...]] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                stat = path.stat()
                if stat.st_size > HASH_LIMIT:
                    found[str(path)] = (stat.st_size, stat.st_mtime_ns)
                else:
                    found[str(path)] = (hashlib.sha256(path.read_bytes()).hexdigest(),)
    return found


def _new_library(path: str, before: dict[str, tuple[object, ...]]) -> bool:
    """True for a file of a library folder the command was asked to create (``--library NEW``): an
    empty new library is tolerated; a library created inside an existing folder of the user's is not."""
    folder = Path(path).parent
    return (folder / "library.sqlite3").exists() and not any(p.startswith(f"{folder}/") for p in before)


def _run_in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from app.cli import main

    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as error:  # argparse
        code = error.code if isinstance(error.code, int) else 2
    return code, capsys.readouterr().err


def _limit_memory() -> None:
    """In the child: an address-space limit a 3 GB file cannot be read into (the app runs in 1.5 GB)."""
    resource.setrlimit(resource.RLIMIT_AS, (HUGE_CHILD_LIMIT, HUGE_CHILD_LIMIT))


def _run_subprocess(argv: list[str], cwd: Path, *, huge: bool = False) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ORT_DISABLE_TELEMETRY": "1"}
    process = subprocess.run(
        [sys.executable, "-m", "app.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=120,
        preexec_fn=_limit_memory if huge else None,
    )
    return process.returncode, process.stderr.decode("utf-8", "backslashreplace")


def _format(arg: str, w: Path, t: Path) -> str:
    return arg.replace("{w}", str(w)).replace("{t}", str(t))


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input(
    case: Case,
    world: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if "torch" in case.needs:
        pytest.importorskip("torch")
    if "shared" in case.needs and not shared_dir().is_dir():
        pytest.skip(f"shared data folder absent: {shared_dir()}")
    if case.argv[:2] == ("library", "add") and case.id.startswith("library-add["):
        pytest.importorskip("hnswlib")
    t = tmp_path / "case"
    t.mkdir()
    _prepare(case, world, t)
    monkeypatch.chdir(t)  # a command writing a default output (runs/…) writes here, not in the repository
    argv = [_format(a, world, t) for a in case.argv]
    allowed = {str(t / name) for name in case.may_change}
    before = _snapshot(world, t)
    started = time.perf_counter()
    if case.subprocess or case.huge:  # the huge file: in a child that cannot hold it in memory
        code, err = _run_subprocess(argv, t, huge=case.huge)
    else:
        code, err = _run_in_process(argv, capsys)
    seconds = time.perf_counter() - started
    after = _snapshot(world, t)

    lines = [line for line in err.splitlines() if line.strip()]
    shown = "\n".join(lines[-12:])
    assert "Traceback" not in err, f"a traceback:\n{shown}"
    errors = [line for line in lines if line.startswith(ERROR)]
    others = [line for line in lines if not line.startswith((ERROR, NOTE))]
    assert len(errors) <= 1 and not others, f"stderr is not one error line (+ notes):\n{shown}"
    if case.expect == "error":
        assert code != 0, f"exit 0 for unusable input; stderr:\n{shown}"
        assert len(errors) == 1, f"no 'rhetorica: error:' line (exit {code}):\n{shown}"
    elif code != 0:
        assert len(errors) == 1, f"exit {code} without an error line:\n{shown}"
    changed = sorted(p for p in before if p not in allowed and after.get(p) != before[p])
    assert not changed, f"files of the user's changed or lost: {changed}; stderr:\n{shown}"
    if code != 0:  # a refusal leaves nothing behind either (no half-written output, no stray library)
        created = sorted(p for p in after
                         if p not in before and p not in allowed and not _new_library(p, before))
        assert not created, f"files left behind by a refusal: {created}; stderr:\n{shown}"
    assert not (world / "PWNED").exists(), "a checkpoint's pickle ran code"
    if case.huge:
        assert "out of memory" not in err, f"the 3 GB file was read whole:\n{shown}"
        assert seconds < 30, f"the 3 GB file took {seconds:.1f} s (read whole?)"
