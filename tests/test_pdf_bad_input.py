"""Bad input: every kind gives a typed error with a one-line message, and the CLI prints one
line and exits 2.  Every bad file is generated here."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pymupdf
import pytest

from app.cli import main
from core.errors import (
    CorruptPdfError,
    EncryptedPdfError,
    MissingFileError,
    NotAPdfError,
    RhetoricaError,
    ScannedPdfError,
    TooLargeError,
)
from core.pdf import parse_pdf
from tests.pdf_factory import hyphen_pdf, many_pages_pdf


def _zero_byte(tmp: Path) -> Path:
    path = tmp / "empty.pdf"
    path.write_bytes(b"")
    return path


def _text_file(tmp: Path) -> Path:
    path = tmp / "notes.pdf"
    path.write_text("This is a plain text file renamed to .pdf\n" * 20, encoding="utf-8")
    return path


def _docx(tmp: Path) -> Path:
    path = tmp / "paper.pdf"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", "<w:document/>")
    return path


def _truncated(tmp: Path) -> Path:
    good = hyphen_pdf(tmp / "good.pdf").read_bytes()
    path = tmp / "truncated.pdf"
    path.write_bytes(good[: len(good) // 2])
    return path


def _garbage(tmp: Path) -> Path:
    path = tmp / "garbage.pdf"
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    return path


def _encrypted(tmp: Path) -> Path:
    doc = pymupdf.open(hyphen_pdf(tmp / "plain.pdf"))
    path = tmp / "locked.pdf"
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    return path


def _scanned(tmp: Path) -> Path:
    doc = pymupdf.open()
    pix = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 300, 400), False)
    pix.set_rect(pix.irect, (200,))
    for _ in range(2):
        page = doc.new_page(width=612, height=792)
        page.insert_image(page.rect, pixmap=pix)
    path = tmp / "scan.pdf"
    doc.save(path)
    return path


def _missing(tmp: Path) -> Path:
    return tmp / "does-not-exist.pdf"


CASES = [
    (_zero_byte, NotAPdfError, "empty"),
    (_text_file, NotAPdfError, "not a PDF"),
    (_docx, NotAPdfError, "ZIP"),
    (_truncated, CorruptPdfError, "truncated"),
    (_garbage, CorruptPdfError, "damaged"),
    (_encrypted, EncryptedPdfError, "password"),
    (_scanned, ScannedPdfError, "OCR"),
    (_missing, MissingFileError, "no such file"),
]


@pytest.mark.parametrize(("make", "error", "words"), CASES, ids=[c[0].__name__.strip("_") for c in CASES])
def test_bad_input_raises_a_typed_one_line_error(tmp_path, make, error, words):
    path = make(tmp_path)
    with pytest.raises(error) as caught:
        parse_pdf(path)
    message = str(caught.value)
    assert "\n" not in message and words in message and str(path) in message


@pytest.mark.parametrize(("make", "error", "words"), CASES, ids=[c[0].__name__.strip("_") for c in CASES])
def test_cli_prints_one_line_and_exits_2(tmp_path, capsys, make, error, words):
    path = make(tmp_path)
    code = main(["parse", str(path)])
    captured = capsys.readouterr()
    assert code == 2
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rhetorica: error: ") and words in lines[0]
    assert "Traceback" not in captured.err


def test_missing_file_is_a_not_a_pdf_error():
    assert issubclass(MissingFileError, NotAPdfError) and issubclass(NotAPdfError, RhetoricaError)


def test_bytes_appended_after_a_complete_pdf_do_not_make_it_truncated(tmp_path):
    """A complete file with 3 KB of junk after its last %%EOF (a mail footer, padding) opens (MuPDF repairs
    it); a file cut short is still refused as truncated."""
    good = hyphen_pdf(tmp_path / "good.pdf").read_bytes()
    appended = tmp_path / "appended.pdf"
    appended.write_bytes(good + bytes(range(256)) * 12 + b"\n-- sent from my phone\n")
    assert parse_pdf(appended).sentences
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(good[: len(good) - 300] + bytes(range(256)) * 12)  # cut short, then junk: no %%EOF at all
    with pytest.raises(CorruptPdfError, match="truncated"):
        parse_pdf(cut)


def test_page_limit(tmp_path):
    path = many_pages_pdf(tmp_path / "long.pdf", 500)
    with pytest.raises(TooLargeError, match="500 pages, more than the limit of 100"):
        parse_pdf(path, max_pages=100)
    assert main(["parse", str(path), "--max-pages", "100"]) == 2


@pytest.mark.slow
def test_500_pages_parse_with_bounded_memory(tmp_path):
    """A 500-page file parses completely in a fresh process whose peak RSS stays bounded."""
    import json
    import subprocess
    import sys

    path = many_pages_pdf(tmp_path / "long.pdf", 500)
    script = (
        "import json, re, sys\n"
        "from core.pdf import parse_pdf\n"
        "p = parse_pdf(sys.argv[1])\n"
        # VmHWM, not ru_maxrss: ru_maxrss keeps the parent's peak across fork+exec.
        "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
        "print(json.dumps({'pages': p.page_count, 'sentences': len(p.sentences),\n"
        "                  'rss_mb': int(hwm) / 1024}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parent.parent)
    result = json.loads(done.stdout)
    assert result["pages"] == 500
    assert result["sentences"] >= 500 * 30
    assert result["rss_mb"] < 400, result


def test_cli_summary_json_and_figures(tmp_path, capsys):
    from tests.pdf_factory import figure_pdf

    pdf = figure_pdf(tmp_path / "figs.pdf")
    out = tmp_path / "paper.json"
    figs = tmp_path / "figs"
    assert main(["parse", str(pdf), "--json", str(out), "--figures-dir", str(figs)]) == 0
    text = capsys.readouterr().out
    assert "title:     Figures In A Generated Paper" in text
    assert "1 Introduction  [introduction" in text
    assert "fig1" in text and "Figure 1: A grey box" in text
    from core.document import Paper

    paper = Paper.load(out)
    assert [f.id for f in paper.figures] == ["fig1", "tab1"]
    assert sorted(p.name for p in figs.iterdir()) == ["fig1.png", "tab1.png"]
    assert (figs / "fig1.png").read_bytes().startswith(b"\x89PNG")


def test_damaged_files_give_typed_errors_or_parse(tmp_path, capfd):
    """Bytes flipped or cut inside a real file: a typed error or a parse, never a raw exception,
    and no MuPDF chatter on the terminal."""
    import random

    from tests.pdf_factory import two_column_pdf

    good = two_column_pdf(tmp_path / "good.pdf").read_bytes()
    rng = random.Random(7)
    outcomes = set()
    for k in range(12):
        data = bytearray(good)
        if k % 2:
            for _ in range(50):
                data[rng.randrange(200, len(data))] = rng.randrange(256)
        else:
            start = rng.randrange(200, len(data) // 2)
            del data[start:start + rng.randrange(50, 2000)]
        path = tmp_path / f"damaged{k}.pdf"
        path.write_bytes(bytes(data))
        try:
            parse_pdf(path)
            outcomes.add("parsed")
        except RhetoricaError as error:
            assert "\n" not in str(error)
            outcomes.add(type(error).__name__)
        assert main(["parse", str(path), "--quiet"]) in (0, 2)
    captured = capfd.readouterr()
    assert "MuPDF error" not in captured.err and "Traceback" not in captured.err
    assert outcomes
