"""The parser's output on the shared PDFs against the committed digests
(``tests/fixtures/parse_digests.json``, written by ``python -m tests.parse_snapshot digests``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.paths import sample_paper_path
from core.pdf import PARSER_VERSION
from tests.parse_snapshot import DIGEST_FILE, REFRESH_HINT, check_digests, compare_dirs, load_digests


@pytest.mark.shared
@pytest.mark.slow
def test_shared_pdfs_match_committed_digests(shared: Path) -> None:
    pdf_dir = shared / "pdfs"
    if not pdf_dir.is_dir():
        pytest.skip(f"no shared PDFs: {pdf_dir}")
    result = check_digests(pdf_dir)
    assert result.checked > 0, f"no PDF in {pdf_dir} has a digest in {DIGEST_FILE}"
    assert result.ok, result.message()


def test_digest_file_is_well_formed() -> None:
    version, digests = load_digests()
    assert version
    assert digests and all(name.endswith(".pdf") and len(d) == 64 for name, d in digests.items())


def _write(folder: Path, files: dict[str, dict[str, object]]) -> Path:
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data, indent=2), encoding="utf-8")
    return folder


def test_compare_reports_differing_and_unpaired_papers(tmp_path: Path) -> None:
    paper: dict[str, object] = {"title": "T", "sections": [{"heading": "Introduction"}]}
    changed: dict[str, object] = {"title": "T", "sections": [{"heading": "Introduction and motivation"}]}
    a = _write(tmp_path / "a", {"same.json": paper, "changed.json": paper, "gone.json": paper})
    b = _write(tmp_path / "b", {"same.json": paper, "changed.json": changed, "added.json": paper})
    result = compare_dirs(a, b)
    assert not result.identical
    assert result.same == 1
    assert list(result.differing) == ["changed.json"]
    diff = "\n".join(result.differing["changed.json"])
    assert '-      "heading": "Introduction"' in diff
    assert '+      "heading": "Introduction and motivation"' in diff
    assert result.only_a == ["gone.json"] and result.only_b == ["added.json"]
    assert compare_dirs(a, a).identical


def test_refresh_hint_names_the_version_and_the_command() -> None:
    assert "PARSER_VERSION" in REFRESH_HINT and "tests.parse_snapshot digests" in REFRESH_HINT


def test_check_names_changed_papers_and_says_how_to_refresh(tmp_path: Path) -> None:
    pdf_dir = tmp_path / "pdfs"
    pdf_dir.mkdir()
    (pdf_dir / "sample.pdf").write_bytes(sample_paper_path().read_bytes())
    digest_file = tmp_path / "digests.json"
    digest_file.write_text(json.dumps({"parser_version": PARSER_VERSION,
                                       "digests": {"sample.pdf": "0" * 64, "absent.pdf": "1" * 64}}))
    result = check_digests(pdf_dir, digest_file)
    assert not result.ok
    assert result.changed == ["sample.pdf"] and result.missing == ["absent.pdf"]
    message = result.message()
    assert "sample.pdf" in message and "absent.pdf" in message and REFRESH_HINT in message
