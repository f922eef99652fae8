"""Regression tests for issue 23's defects, one by one (the bad-input matrix covers every command):
absurd counts, empty queries, bad output paths, non-UTF-8 text and argv, Markdown exports that
carried HTML and script links verbatim, and misleading "not found" messages. Each CLI case checks the
one line printed; the helpers (``app/commands/_options.py``, ``core.fileio.read_text_input``,
``core.exporting.exports.markdown_text``) are tested directly too."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli import main
from tests.library_damage import TWO_PAPERS
from tests.tiny_bundle import make_tiny_bundle

ROOT = Path(__file__).resolve().parent.parent
ROWS = TWO_PAPERS


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``rhetorica ARGV`` in-process (argparse's exit included)."""
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as error:
        code = error.code if isinstance(error.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    """The single line on stderr (asserting there is exactly one, an error, with no traceback)."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("rhetorica: error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("hnswlib")
    w = tmp_path_factory.mktemp("hostile")
    make_tiny_bundle(w / "bundle", functions=True)
    (w / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    assert (
        main(
            [
                "library",
                "import-jsonl",
                str(w / "rows.jsonl"),
                "--library",
                str(w / "lib"),
                "--model",
                str(w / "bundle"),
                "--threads",
                "1",
                "--quiet",
            ]
        )
        == 0
    )
    (w / "latin1.txt").write_bytes(b"caf\xe9\n")
    return w


def model(w: Path) -> list[str]:
    return ["--model", str(w / "bundle"), "--threads", "1"]


# -- absurd counts ------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", ["-1", "0", "100000000", "abc"])
def test_suggest_k_is_refused_by_argparse_in_one_line(
    k: str, world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.perf_counter()
    code, out, err = run(
        [
            "suggest",
            "-k",
            k,
            "We propose a method.",
            "--source",
            "library",
            "--library",
            str(world / "lib"),
            *model(world),
        ],
        capsys,
    )
    assert code == 2 and not out and time.perf_counter() - started < 5
    line = one_line(err)
    assert line.startswith("rhetorica: error: suggest: argument -k: ") and "usage:" not in err
    assert ("out of range (use 1 to 100)" in line) or ("not a whole number" in line)


def test_argparse_errors_are_one_line_without_usage(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["figures", "rank"], capsys)  # a missing positional, in a sub-subcommand
    assert code == 2 and one_line(err).startswith("rhetorica: error: figures rank: ")
    code, _, err = run(["no-such-command"], capsys)
    assert code == 2 and one_line(err).startswith("rhetorica: error: argument COMMAND: invalid choice")


def test_core_suggest_clamps_k_for_every_caller(world: Path) -> None:
    """The GUI calls core.phrasing.suggest.suggest directly: a k of -1 or 10**8 is clamped, not looped
    over."""
    from core.library.library import Library
    from core.phrasing.suggest import MAX_K, Source, suggest
    from models import load_model

    bundle = load_model(world / "bundle", threads=1)
    with Library(world / "lib") as library:
        for k in (-1, 0, 10**8):
            started = time.perf_counter()
            result = suggest("We propose a method.", bundle, [Source("library", library)], k)
            assert len(result.suggestions) <= MAX_K and time.perf_counter() - started < 5
        assert len(suggest("We propose a method.", bundle, [Source("library", library)], -1).suggestions) == 1


def test_ranged_types() -> None:
    from app.commands._options import bounded_float, bounded_int

    whole, share = bounded_int(1, 100), bounded_float(0.0, 1.0)
    assert (whole("7"), whole(" 100 "), share("0.25"), share("1")) == (7, 100, 0.25, 1.0)
    for parse, text in (
        (whole, "0"),
        (whole, "101"),
        (whole, "1.5"),
        (whole, "nan"),
        (share, "nan"),
        (share, "inf"),
        (share, "-0.1"),
        (share, "x"),
    ):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)


# -- empty queries ------------------------------------------------------------------------------------
@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_query_is_refused(query: str, world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["suggest", query, "--source", "library", "--library", str(world / "lib"), *model(world)], capsys
    )
    assert code == 2 and not out
    assert one_line(err) == (
        "rhetorica: error: suggest: argument sentence: the sentence is empty: give a "
        "sentence to find phrasings for"
    )


@pytest.mark.parametrize("command", ["suggest", "template"])
def test_an_input_file_without_sentences_is_refused(
    command: str, world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n\t\n", encoding="utf-8")
    extra = (
        ["--source", "library", "--library", str(world / "lib"), *model(world)]
        if command == "suggest"
        else []
    )
    code, out, err = run([command, "--input", str(blank), *extra], capsys)
    assert code == 2 and not out
    assert one_line(err) == (
        f"rhetorica: error: {blank}: no sentences (every line is blank): give one sentence per line"
    )


# -- output paths, checked before the work --------------------------------------------------------------
def test_output_paths_are_checked_before_the_work(
    world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.pdf_factory import hyphen_pdf

    pdf = hyphen_pdf(tmp_path / "paper.pdf")
    draft = tmp_path / "draft.txt"
    draft.write_text(
        "Abstract\nWe propose a new method. Results show that it works well.\n", encoding="utf-8"
    )
    existing = tmp_path / "existing.png"
    existing.write_bytes(b"the user's picture")
    lines = tmp_path / "lines.txt"
    lines.write_text("We propose a new method.\n", encoding="utf-8")
    expected = {
        ("parse", str(pdf), "--json", str(tmp_path)): f"{tmp_path}: is a folder; give --json a file name",
        (
            "align",
            str(draft),
            str(draft),
            "--html",
            str(tmp_path),
            *model(world),
        ): f"{tmp_path}: is a folder; give --html a file name",
        (
            "figures",
            "rank",
            str(pdf),
            "--png",
            str(existing),
            *model(world),
        ): f"{existing}: is a file, not a folder; give --png a folder",
        (
            "template",
            "--input",
            str(lines),
            "--json",
            "/no/such/dir/x",
        ): "/no/such/dir/x: the folder /no/such/dir does not exist (create it first)",
        (
            "template",
            "--input",
            str(lines),
            "--json",
            str(lines),
        ): f"{lines}: is also an input; write --json to another file",
        (
            "parse",
            str(pdf),
            "--json",
            str(existing / "x.json"),
        ): f"{existing / 'x.json'}: the folder {existing} is a file, not a folder",
    }
    for argv, message in expected.items():
        code, _, err = run(list(argv), capsys)
        assert code == 2 and one_line(err) == f"rhetorica: error: {message}", argv
    assert existing.read_bytes() == b"the user's picture"
    assert lines.read_text(encoding="utf-8") == "We propose a new method.\n"
    assert not Path("/no/such").exists()


def test_output_checks_as_argparse_types(tmp_path: Path) -> None:
    from app.commands._options import output_file, output_folder

    assert output_file(str(tmp_path / "runs" / "new" / "x.json")) == tmp_path / "runs" / "new" / "x.json"
    (tmp_path / "f").write_text("x", encoding="utf-8")
    for parse, bad in (
        (output_file, tmp_path),
        (output_file, tmp_path / "f" / "x.json"),
        (output_folder, tmp_path / "f"),
        (output_folder, tmp_path / "f" / "sub"),
    ):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(str(bad))


# -- text that is not UTF-8 ----------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["suggest", "template"])
def test_a_non_utf8_input_file_names_the_byte(
    command: str, world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = (
        ["--source", "library", "--library", str(world / "lib"), *model(world)]
        if command == "suggest"
        else []
    )
    code, _, err = run([command, "--input", str(world / "latin1.txt"), *extra], capsys)
    assert code == 2
    assert one_line(err) == (
        f"rhetorica: error: {world / 'latin1.txt'}: not UTF-8 text (byte 0xe9 at offset 3); save it as UTF-8"
    )


def test_undecodable_argv_is_refused(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = b"bad \xff".decode("utf-8", "surrogateescape")  # what Python makes of such a command line
    code, _, err = run(
        ["suggest", bad, "--source", "library", "--library", str(world / "lib"), *model(world)], capsys
    )
    assert code == 2
    assert one_line(err) == (
        'rhetorica: error: suggest: argument sentence: "bad \\xff": not UTF-8 text (byte 0xff at position 4)'
    )
    code, _, err = run(["corrections", "add", bad, "method", "--library", str(world / "lib")], capsys)
    assert code == 2 and "not UTF-8 text" in one_line(err)


def test_gui_checks_the_draft_before_qt_starts(world: Path, tmp_path: Path) -> None:
    """In a fresh interpreter: the bad draft is refused and PySide6 was never imported."""
    probe = (
        "import sys\nfrom app.cli import main\ncode = main(sys.argv[1:])\n"
        "print('qt' if 'PySide6' in sys.modules else 'no-qt', code)"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            probe,
            "gui",
            "--draft",
            str(world / "latin1.txt"),
            "--screenshot",
            str(tmp_path / "shot.png"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.split() == ["no-qt", "2"]
    assert one_line(done.stderr).endswith("not UTF-8 text (byte 0xe9 at offset 3); save it as UTF-8")
    assert not (tmp_path / "shot.png").exists()


def test_read_text_input(tmp_path: Path) -> None:
    from core.fileio import TextInputError, read_text_input

    cases = {
        b"caf\xc3\xa9\n": None,
        b"\xef\xbb\xbfBOM first\n": None,
        b"caf\xe9\n": "not UTF-8 text (byte 0xe9 at offset 3); save it as UTF-8",
        b"\xef\xbb\xbfcaf\xe9": "not UTF-8 text (byte 0xe9 at offset 6); save it as UTF-8",
        b"abc\xc3": "not UTF-8 text (byte 0xc3 at offset 3); save it as UTF-8",
        b"a\x00b": "is a binary file, not a text file (a NUL byte at offset 1)",
        "utf16".encode("utf-16"): "is UTF-16 text; save it as UTF-8",
        b"%PDF-1.7\n": "is a PDF, not a text file",
    }
    for number, (data, reason) in enumerate(cases.items()):
        path = tmp_path / f"{number}.txt"
        path.write_bytes(data)
        if reason is None:
            assert read_text_input(path) == data.decode("utf-8-sig")
        else:
            with pytest.raises(
                TextInputError, match="^" + str(path) + ": " + reason.replace("(", r"\(").replace(")", r"\)")
            ):
                read_text_input(path)
    # a character cut by the 1 MiB block boundary is no error; a bad byte after it has its true offset
    across = tmp_path / "across.txt"
    across.write_bytes(b"x" * ((1 << 20) - 1) + "é".encode() + b"\xff")
    with pytest.raises(TextInputError, match=rf"byte 0xff at offset {(1 << 20) + 1}\)"):
        read_text_input(across)
    huge = tmp_path / "huge.txt"
    with open(huge, "wb"):
        pass
    import os

    os.truncate(huge, 3 * 10**9)  # sparse: refused by its size, never read
    with pytest.raises(TextInputError, match=r"is too large for a text file \(3.0 GB; at most 50.0 MB\)"):
        read_text_input(huge)
    with pytest.raises(TextInputError, match="is a folder, not a text file"):
        read_text_input(tmp_path)
    with pytest.raises(TextInputError, match="no such file"):
        read_text_input(tmp_path / "missing.txt")
    with pytest.raises(TextInputError, match="not a regular file"):
        read_text_input("/dev/zero")


# -- Markdown exports are inert ------------------------------------------------------------------------
HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(2)">',
    "[click](javascript:alert(3))",
    "![x](data:text/html;base64,PHNjcmlwdD4=)",
    "<javascript:alert(4)>",
    "[v](VBScript:msgbox(5))",
]


def _inert(markdown: str) -> None:
    # (attribute text such as onerror= may stay: with "<" an entity it is no tag)
    for raw in (
        "<script",
        "<img",
        "](javascript:",
        "](data:",
        "<javascript:",
        "](VBScript:",
        "javascript:",
        "vbscript:",
        "data:text",
    ):
        assert raw.lower() not in markdown.lower(), raw


def test_markdown_text_escapes_html_links_and_schemes() -> None:
    from core.exporting.exports import markdown_text

    assert markdown_text("a < b & c > d") == "a &lt; b &amp; c &gt; d"
    assert markdown_text("[x](javascript:alert(1))") == "\\[x\\](javascript\\:alert(1))"
    assert markdown_text("the data: a table") == "the data: a table"  # ordinary prose is left alone
    assert markdown_text("two\nlines") == "two lines"
    _inert(" ".join(markdown_text(text) for text in HOSTILE))


def test_analysis_markdown_export_is_inert(tmp_path: Path) -> None:
    from core.exporting.exports import to_markdown
    from tests.paper_factory import make_analysis, make_paper

    paper = make_paper()
    paper.title = HOSTILE[0]
    paper.authors = [HOSTILE[1]]
    for sentence, text in zip(paper.sentences, HOSTILE[2:], strict=False):
        sentence.text = text
    _inert(to_markdown(paper, make_analysis(paper)))


def test_align_markdown_export_is_inert(
    world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    draft = tmp_path / "draft.txt"  # plain text keeps the markup as words (a .md draft drops inline HTML)
    draft.write_text(
        "# "
        + HOSTILE[0]
        + "\n\n## Abstract\nWe propose a new method. "
        + " ".join(f"Results show {text} works well." for text in HOSTILE)
        + "\n",
        encoding="utf-8",
    )
    other = tmp_path / "other.txt"
    other.write_text(
        "Abstract\nWe propose a simple and fast method. Results show that it works well.\n", encoding="utf-8"
    )
    out = tmp_path / "x.md"
    code, _, err = run(
        [
            "align",
            str(draft),
            str(other),
            "--md",
            str(out),
            "--html",
            str(tmp_path / "x.html"),
            *model(world),
        ],
        capsys,
    )
    assert code == 0, err
    markdown = out.read_text(encoding="utf-8")
    assert "&lt;script&gt;" in markdown
    _inert(markdown)


# -- messages that say what is wrong ---------------------------------------------------------------------
def test_a_folder_is_named_a_folder(world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    expected = {
        ("analyze", str(folder)): f"{folder}: is a folder, not a PDF or a paper JSON",
        ("figures", "rank", str(folder)): f"{folder}: is a folder, not a PDF",
        (
            "search",
            "--like",
            str(folder),
            "--library",
            str(world / "lib"),
        ): f"{folder}: is a folder, not a PDF",
        (
            "align",
            str(folder),
            str(folder),
        ): f"{folder}: is a folder, not a PDF, a draft text file or a library paper id",
        ("suggest", "--input", str(folder)): f"{folder}: is a folder, not a text file of sentences",
    }
    for argv, message in expected.items():
        code, _, err = run(list(argv), capsys)
        assert code == 2 and one_line(err) == f"rhetorica: error: {message}", argv


def test_align_refuses_a_data_file_instead_of_reading_its_markup_as_prose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paper = tmp_path / "paper.json"
    paper.write_text('{"schema_version": 1, "sentences": [{"text": "We propose a method."}]}',
                     encoding="utf-8")
    draft = tmp_path / "draft.txt"
    draft.write_text("We propose a method. It works.\n", encoding="utf-8")
    code, _, err = run(["align", str(draft), str(paper), "--quiet"], capsys)
    assert code == 2 and one_line(err) == (f"rhetorica: error: {paper}: is a .json file, not a PDF, a draft "
                                           "(.tex .md .docx .txt) or a library paper id")


def test_an_output_never_replaces_a_file_the_draft_includes(
    world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main_tex = tmp_path / "main.tex"
    main_tex.write_text("\\section{Intro}\nWe propose a method.\n\\input{part}\n", encoding="utf-8")
    part = tmp_path / "part.tex"
    part.write_text("\\section{Results}\nIt works well on two datasets.\n", encoding="utf-8")
    other = tmp_path / "other.txt"
    other.write_text("We propose a method. It works.\n", encoding="utf-8")
    argv = ["align", str(main_tex), str(other), "--json", str(part), "--quiet", *model(world)]
    code, _, err = run(argv, capsys)
    assert code == 2 and one_line(err) == (f"rhetorica: error: {part}: is a file the draft includes; write "
                                           "--json to another file")
    assert part.read_text(encoding="utf-8").startswith("\\section{Results}")
    code, _, err = run(["analyze", str(main_tex), "--json", str(part), "--quiet", *model(world)], capsys)
    assert code == 2 and one_line(err) == (f"rhetorica: error: {part}: is a file the draft includes; write "
                                           "--json to another file")
    assert part.read_text(encoding="utf-8").startswith("\\section{Results}")


def test_a_library_path_that_is_a_file_is_named_a_file(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        [
            "suggest",
            "We propose a method.",
            "--source",
            "library",
            "--library",
            str(world / "rows.jsonl"),
            *model(world),
        ],
        capsys,
    )
    assert code == 2
    assert one_line(err) == f"rhetorica: error: {world / 'rows.jsonl'}: is a file, not a library folder"


# -- the last nets ----------------------------------------------------------------------------------------
def test_a_library_warning_is_one_note_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import warnings

    from app.commands import template

    def noisy(args: argparse.Namespace) -> int:
        warnings.warn("something odd\nover two lines", UserWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(template, "run", noisy)
    code, _, err = run(["template", "--input", "x"], capsys)
    assert code == 0 and err == "rhetorica: note: something odd over two lines\n"


def test_an_unforeseen_os_error_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.commands import template

    def failing(args: argparse.Namespace) -> int:
        raise PermissionError(13, "Permission denied", "/some/file")

    monkeypatch.setattr(template, "run", failing)
    code, _, err = run(["template", "--input", "x"], capsys)
    assert code == 2 and one_line(err) == "rhetorica: error: /some/file: Permission denied"
