"""The help and output wording testers found wrong (report L, problem 7): options without help, Zotero's
data folder called a profile, "for its all", an unchecked section kind, reStructuredText marks in help."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from app.cli import main
from app.commands._options import plain_help
from app.commands.search import _text, facet_words, write_bibliographies


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--help"])
    assert stop.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse's line breaks as spaces


def _option_help(text: str, option: str, following: str) -> str:
    """What the help says of ``option`` (up to the next option ``following``)."""
    return text.split("options:", 1)[1].split(f" {option} ", 1)[1].split(f" {following} ", 1)[0]


def test_suggest_source_and_library_and_library_list_json_have_help(
        capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys, "suggest")
    source = _option_help(text, "--source {corpus,library,all}", "--library")
    assert "corpus" in source and "library" in source and "the default" in source
    assert "library folder (default:" in _option_help(text, "--library DIR", "--corpus")
    listing = _help(capsys, "library", "list")
    assert "--json print the papers as a JSON list" in listing


def test_zotero_option_names_the_data_folder_not_a_profile(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys, "library", "add")
    assert "PROFILE_DIR" not in text and "[--zotero [DATA_DIR]]" in text
    assert "Zotero's data folder DATA_DIR, the one that holds zotero.sqlite" in text
    assert main(["library", "add", "--library", "/nonexistent/lib", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--zotero [DATA_DIR] (Zotero's data folder, default ~/Zotero)" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv", [("lsp",), ("bench", "index"), ("bench", "suggest"), ("bench", "lsp"),
                                  ("bench", "draft"), ("bench", "align"), ("bench", "corpus")])
def test_help_shows_no_restructuredtext_marks(argv: tuple[str, ...],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys, *argv)
    assert "``" not in text and ":func:`" not in text and ":class:`" not in text


def test_plain_help_drops_code_marks_and_roles() -> None:
    assert plain_help("an open ``.tex``/``.md`` file; see :func:`core.x.y` and :class:`~a.B`") == \
        "an open .tex/.md file; see core.x.y and a.B"


def test_a_correction_with_an_unknown_section_kind_is_refused(tmp_path, capsys) -> None:
    library = ["--library", str(tmp_path / "lib")]
    with pytest.raises(SystemExit) as stop:
        main(["corrections", "add", "We test it.", "method", "--section-kind", "blah", *library])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "argument --section-kind: invalid choice: 'blah'" in err and "'discussion'" in err
    assert not (tmp_path / "lib").exists()  # nothing stored
    good = ["corrections", "add", "We test it.", "method", "--section-kind", "discussion", *library]
    assert main(good) == 0


def _result(facet: str) -> SimpleNamespace:
    query = SimpleNamespace(title="Paper A", paper_id="a", facet=facet, facet_sentences=["x"],
                            fallback=False)
    return SimpleNamespace(query=query, results=[SimpleNamespace(paper_id="b", score=0.5, title="B",
                                                                 evidence=[])])


def test_search_says_as_a_whole_for_the_facet_all(tmp_path, monkeypatch) -> None:
    assert facet_words("all") == "as a whole" and facet_words("method") == "for its method"
    assert _text(_result("all")).startswith("papers like Paper A (a) as a whole: 1 query sentence(s)")
    assert "for its method:" in _text(_result("method"))
    written: list[str] = []
    monkeypatch.setattr("core.exporting.bibliography.library_entries",
                        lambda store, ids, notes: written.extend(notes) or [])
    args = SimpleNamespace(bibtex=tmp_path / "o.bib", ris=None)
    write_bibliographies(args, SimpleNamespace(store=None), _result("all"))
    assert written == ["Rhetorica search: like Paper A as a whole, rank 1, score 0.500"]
