"""core.cache: papers and analyses cached per (sha256, parser version[, model id])."""

from __future__ import annotations

from pathlib import Path

from core.cache import AnalysisCache
from core.fileio import file_sha256
from tests.paper_factory import make_analysis, make_paper


def test_paper_round_trip_and_parser_version_invalidates(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path)
    paper = make_paper(parser_version="p1")
    assert cache.load_paper(paper.sha256, "p1") is None
    cache.save_paper(paper)
    loaded = cache.load_paper(paper.sha256, "p1")
    assert loaded is not None and loaded.to_dict() == paper.to_dict()
    assert cache.load_paper(paper.sha256, "p2") is None  # parser changed: miss
    assert cache.load_paper("cd" * 32, "p1") is None  # another file: miss


def test_analysis_round_trip_and_model_invalidates(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path)
    paper = make_paper()
    analysis = make_analysis(paper, model_id="m@1#aaa")
    cache.save_analysis(paper, analysis)
    loaded = cache.load_analysis(paper, "m@1#aaa")
    assert loaded is not None
    assert [r.label for r in loaded.roles] == [r.label for r in analysis.roles]
    assert loaded.roles[0].probabilities == analysis.roles[0].probabilities
    assert cache.load_analysis(paper, "m@2#bbb") is None  # model changed: miss
    paper.parser_version = "other"
    assert cache.load_analysis(paper, "m@1#aaa") is None  # parser changed: miss


def test_survives_a_new_instance_and_rejects_mismatched_entries(tmp_path: Path) -> None:
    paper = make_paper()
    AnalysisCache(tmp_path).save_paper(paper)
    AnalysisCache(tmp_path).save_analysis(paper, make_analysis(paper))
    again = AnalysisCache(tmp_path)  # "after a restart"
    assert again.load_paper(paper.sha256, paper.parser_version) is not None
    assert again.load_analysis(paper, "tiny@1#abc") is not None
    shorter = make_paper()
    shorter.sentences = shorter.sentences[:2]  # analysis no longer matches the sentences
    assert again.load_analysis(shorter, "tiny@1#abc") is None


def test_damaged_entry_is_a_miss_and_removed(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path)
    paper = make_paper()
    path = cache.save_paper(paper)
    path.write_text("{not json", encoding="utf-8")
    assert cache.load_paper(paper.sha256, paper.parser_version) is None
    assert not path.exists()


def test_prune_removes_stale_versions(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path)
    old = make_paper(parser_version="p1")
    new = make_paper(parser_version="p2")
    cache.save_paper(old)
    cache.save_paper(new)
    cache.save_analysis(new, make_analysis(new, "m@1#a"))
    cache.save_analysis(new, make_analysis(new, "m@2#b"))
    removed = cache.prune(new.sha256, "p2", "m@2#b")
    assert removed == 2
    assert cache.load_paper(new.sha256, "p2") is not None
    assert cache.load_analysis(new, "m@2#b") is not None
    assert cache.load_analysis(new, "m@1#a") is None


def test_default_root_follows_rhetorica_home(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path))
    assert AnalysisCache().root == tmp_path / "cache"


def test_file_sha256(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    assert file_sha256(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_clear(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path)
    paper = make_paper()
    cache.save_paper(paper)
    cache.save_analysis(paper, make_analysis(paper))
    assert cache.clear() == 2
    assert cache.load_paper(paper.sha256, paper.parser_version) is None
