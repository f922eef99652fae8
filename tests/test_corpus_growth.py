"""The default phrase corpus grows on first use (issue 28.4): extra text shipped unlabelled is written
deduplicated against the shipped pack, labelled in resumable shards with a (tiny) model, and joined
with the shipped pack into the user's corpus, which suggestions then use; stale, foreign and damaged
states are refused or set aside with one line."""

from __future__ import annotations

import gzip
import json
import lzma
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.errors import Cancelled
from core.jobs import JobContext
from core.library.corpus_extra import (
    EXTRA_PAPERS,
    ExtraPaper,
    iter_extra,
    read_extra_manifest,
    verify_extra,
    write_extra,
)
from core.library.corpus_growth import (
    GrowthPaths,
    grow_corpus,
    growth_status,
    retire_stale_growth,
)
from core.library.pack import PackCorpus, build_pack, file_sha256
from core.library.store import LibraryError
from tests.phrase_paper_fakes import FakePaper, FakeSection
from tests.tiny_bundle import make_tiny_bundle

BASE = [
    FakePaper("csabstruct", "b1", "Base one", [FakeSection("Abstract", "abstract", [
        "We propose a new method for parsing scientific text.",
        "Results show that it works well on two datasets."])]),
    FakePaper("scitldr", "b2", "Base two", [FakeSection("Abstract", "abstract", [
        "Previous work has studied this problem in depth.",
        "Our goal is to improve accuracy on scientific text."])]),
]
EXTRA = [
    FakePaper("arxiv", "arXiv:1", "Extra one", [FakeSection("Abstract", "abstract", [
        "We propose a new method for parsing scientific text.",  # in the base pack: left out
        "Experiments on two datasets demonstrate large gains.",
        "Too short."])], "CC0 1.0"),
    FakePaper("arxiv", "arXiv:2", "Extra two", [FakeSection("Abstract", "abstract", [
        "In conclusion the approach is simple and fast.",
        "experiments on two   datasets demonstrate LARGE gains."])], "CC0 1.0"),  # same wording
    FakePaper("unarxive", "arXiv:3", "Extra three", [
        FakeSection("Introduction", "introduction",
                    ["Previous work has studied parsing of scientific text."]),
        FakeSection("Results", "result", ["Results on two datasets show large gains in accuracy."])],
        "CC BY 4.0"),
    FakePaper("unarxive", "arXiv:4", "Extra four", [FakeSection("Abstract", "abstract", ["Too short."])],
           "CC BY 4.0"),  # nothing left: not written
]


class CountingModel:
    """The real (tiny) model, counting the documents it labels."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.model_id = model.model_id
        self.documents = 0

    def encode_documents(self, documents: Any, **kwargs: Any) -> Any:
        self.documents += len(documents)
        return self.model.encode_documents(documents, **kwargs)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from models import load_model

    bundle = make_tiny_bundle(tmp_path_factory.mktemp("growth") / "bundle", functions=True)
    return load_model(bundle, device="cpu", threads=1)


@pytest.fixture(scope="module")
def shipped(model: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(the shipped pack, the shipped extra text, the model's sha256)."""
    tmp = tmp_path_factory.mktemp("shipped")
    sha = file_sha256(model.bundle_dir / "model.onnx")
    build_pack(BASE, model, tmp / "corpus", {"model_id": model.model_id, "model_sha256": sha})
    write_extra(tmp / "corpus-extra", EXTRA, base=tmp / "corpus", command="test")
    return tmp / "corpus", tmp / "corpus-extra", sha


def _paths(shipped: tuple[Path, Path, str], home: Path) -> GrowthPaths:
    return GrowthPaths(shipped[0], shipped[1], home)


def test_the_extra_text_keeps_new_wordings_once_with_ids_and_licences(shipped) -> None:
    _, extra, _ = shipped
    manifest = verify_extra(extra)
    papers = list(iter_extra(extra))
    assert [p.paper_id for p in papers] == ["arXiv:1", "arXiv:2", "arXiv:3"]
    assert papers[0] == ExtraPaper("arXiv:1", "arxiv", "Extra one", "CC0 1.0", papers[0].sections)
    assert papers[0].sections[0].sentences == ["Experiments on two datasets demonstrate large gains."]
    assert papers[1].sections[0].sentences == ["In conclusion the approach is simple and fast."]
    assert [(s.heading, s.kind) for s in papers[2].sections] == [("Introduction", "introduction"),
                                                                  ("Results", "result")]
    assert manifest["sentences"] == 4 and manifest["papers"] == 3
    assert manifest["sources"] == {"arxiv": {"licences": ["CC0 1.0"], "papers": 2, "sentences": 2},
                                   "unarxive": {"licences": ["CC BY 4.0"], "papers": 1, "sentences": 2}}
    assert manifest["deduplicated_against"]["sentences"] == 4
    credits = (extra / "ATTRIBUTION.txt").read_text(encoding="utf-8")
    assert 'arXiv:3 (unarxive, CC BY 4.0): authors not recorded. "Extra three".' in credits
    assert "arXiv:1" not in credits  # CC0 asks for no attribution


def test_damaged_or_replaced_extra_text_is_one_line(shipped, tmp_path: Path) -> None:
    import shutil

    _, extra, _ = shipped
    copy = tmp_path / "extra"
    shutil.copytree(extra, copy)
    (copy / EXTRA_PAPERS).write_bytes((copy / EXTRA_PAPERS).read_bytes()[:-20])
    with pytest.raises(LibraryError, match="does not match its manifest"):
        verify_extra(copy)
    with pytest.raises(LibraryError, match="damaged phrase-corpus extra text"):
        list(iter_extra(copy))
    with lzma.open(copy / EXTRA_PAPERS, "wt", encoding="utf-8") as handle:
        handle.write('["only", "three", "fields"]\n')
    with pytest.raises(LibraryError, match="line 1: not an extra-text paper"):
        list(iter_extra(copy))
    (copy / "manifest.json").write_text('{"format": "something else"}', encoding="utf-8")
    with pytest.raises(LibraryError, match="not a phrase-corpus extra-text manifest"):
        read_extra_manifest(copy)


def test_growing_joins_the_shipped_pack_and_the_labelled_extra_text(model, shipped, tmp_path: Path) -> None:
    base, extra, sha = shipped
    paths = _paths(shipped, tmp_path / "home")
    before = growth_status(paths, shard_papers=1)
    assert (before.state, before.shards_done, before.shards, before.sentences_now) == ("needed", 0, 3, 4)
    result = grow_corpus(model, sha, paths=paths, shard_papers=1)
    assert result.shards_labelled == 3 and result.shards_reused == 0 and result.sentences_labelled == 4
    assert not paths.staging.exists()  # the shards are gone once joined
    grown = PackCorpus(paths.target)
    shipped_pack = PackCorpus(base)
    assert len(grown) == 8 and len(grown.papers) == 5
    assert grown.manifest["sources"]["arxiv"] == {"licence": "CC0 1.0", "papers": 2, "sentences": 2}
    assert grown.manifest["model_sha256"] == sha and grown.manifest["grown"]["key"]
    # the shipped rows first, their quantised vectors copied byte for byte
    assert grown.sentences(range(4)) == shipped_pack.sentences(range(4))
    assert np.array_equal(np.load(paths.target / "function.npy")[:4], np.load(base / "function.npy"))
    # the extra rows: the labels and vectors a direct build of the same papers gives
    direct = build_pack(list(iter_extra(extra)), model, tmp_path / "direct",
                        {"model_id": model.model_id, "model_sha256": sha})
    assert direct["sentences"] == 4
    alone = PackCorpus(tmp_path / "direct")
    for got, want in zip(grown.sentences(range(4, 8)), alone.sentences(range(4)), strict=True):
        assert (got.text, got.paper_id, got.role, got.function, got.section_kind) == \
            (want.text, want.paper_id, want.role, want.function, want.section_kind)
    assert np.allclose(grown.vectors_of(range(4, 8), "function"), alone.vectors_of(range(4), "function"),
                       atol=0.02)
    paper = grown.paper("arXiv:3")
    assert paper is not None and paper.note == "CC BY 4.0" and paper.title == "Extra three"
    after = growth_status(paths, shard_papers=1)
    assert (after.state, after.sentences_now) == ("grown", 8)
    again = grow_corpus(model, sha, paths=paths, shard_papers=1)
    assert again.notes == ["already grown"] and again.shards_labelled == 0


def test_a_cancelled_growth_resumes_where_it_stopped(model, shipped, tmp_path: Path) -> None:
    _, _, sha = shipped
    paths = _paths(shipped, tmp_path / "home")
    counting = CountingModel(model)
    ctx = JobContext(lambda p: ctx.cancel() if counting.documents >= 1 else None)
    with pytest.raises(Cancelled):
        grow_corpus(counting, sha, ctx, paths=paths, shard_papers=1)
    assert not paths.target.exists()  # suggestions still use the shipped pack
    status = growth_status(paths, shard_papers=1)
    assert status.state == "needed" and status.shards_done == 1
    resumed = CountingModel(model)
    result = grow_corpus(resumed, sha, paths=paths, shard_papers=1)
    assert (result.shards_reused, result.shards_labelled) == (1, 2)
    assert resumed.documents == 3  # the second paper's section and the third paper's two
    uninterrupted = grow_corpus(model, sha, paths=_paths(shipped, tmp_path / "other"), shard_papers=1)
    for name in ("sentences.jsonl.gz", "papers.jsonl.gz", "function.npy", "function-scale.npy"):
        assert (paths.target / name).read_bytes() == (uninterrupted.folder / name).read_bytes(), name


def test_another_model_a_users_own_corpus_and_a_stale_growth(model, shipped, tmp_path: Path) -> None:
    import shutil

    base, extra, sha = shipped
    paths = _paths(shipped, tmp_path / "home")
    with pytest.raises(LibraryError, match="labelled with another model"):
        grow_corpus(model, "0" * 64, paths=paths, shard_papers=1)
    # a corpus the user built there themselves is used and never grown over
    build_pack(BASE[:1], model, paths.target, {"model_id": model.model_id, "model_sha256": sha})
    assert growth_status(paths, shard_papers=1).state == "own"
    with pytest.raises(LibraryError, match="your own phrase corpus"):
        grow_corpus(model, sha, paths=paths, shard_papers=1)
    shutil.rmtree(paths.target)
    # grown from a shipped pack that a new release replaced: stale, set aside, grown again
    grow_corpus(model, sha, paths=paths, shard_papers=1)
    release = tmp_path / "release"
    shutil.copytree(base, release)
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    (release / "manifest.json").write_text(json.dumps({**manifest, "command": "a new release"}),
                                           encoding="utf-8")
    newer = GrowthPaths(release, extra, paths.home)
    assert growth_status(newer, shard_papers=1).state == "stale"
    assert retire_stale_growth(newer) and not paths.target.exists()
    assert growth_status(newer, shard_papers=1).state == "needed"


def test_corpus_grow_cli_grows_the_users_corpus_and_stats_reads_it(model, shipped, tmp_path: Path,
                                                                  monkeypatch, capsys) -> None:
    from app.cli import main

    base, extra, _ = shipped
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    common = ["--base", str(base), "--extra", str(extra)]
    assert main(["corpus", "grow", "--status", *common]) == 0
    assert json.loads(capsys.readouterr().out)["state"] == "needed"
    assert main(["corpus", "grow", *common, "--model", str(model.bundle_dir), "--threads", "1",
                 "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sentences"] == 8 and report["parts_labelled"] == 1
    assert main(["corpus", "stats"]) == 0  # the grown corpus in the user data folder comes first
    stats = json.loads(capsys.readouterr().out)
    assert stats["sentences"] == 8 and stats["folder"] == str(tmp_path / "home" / "corpus")
    with gzip.open(tmp_path / "home" / "corpus" / "papers.jsonl.gz", "rt", encoding="utf-8") as handle:
        assert [json.loads(line)["paper_id"] for line in handle] == ["b1", "b2", "arXiv:1", "arXiv:2",
                                                                     "arXiv:3"]
    # a folder that is not extra text: one line, exit 2
    assert main(["corpus", "grow", "--base", str(base), "--extra", str(tmp_path), "--model",
                 str(model.bundle_dir)]) == 2
    assert "no phrase-corpus extra text" in capsys.readouterr().err


def test_unarxive_markers_read_as_words() -> None:
    from models.datasets.phrase_sources import unarxive_text

    text = "As shown in {{cite:a1}}, {{cite:b2}} and Fig. {{figure:f3}}  ({{table:t1}})."
    assert unarxive_text(text) == "As shown in [citation] and Fig. [figure] ([table])."


@pytest.mark.shared
def test_the_sources_that_ship_as_text_are_permissive_and_readable() -> None:
    from itertools import islice

    from models.datasets.phrase_sources import EXTRA_SOURCES, phrase_papers
    from tests.conftest import shared_path

    shared_path("data", "arxiv_abstracts")
    arxiv = list(islice(phrase_papers("arxiv"), 200))
    assert all(p.paper_id.startswith("arXiv:") and p.title and p.licence == "CC0 1.0" for p in arxiv)
    sentences = [s for p in arxiv for s in p.sections[0].sentences]
    assert len(sentences) > 1000 and not any("$" in s for s in sentences)
    unarxive = list(phrase_papers("unarxive"))
    assert len(unarxive) == 45  # the CC BY-SA paper is left out
    assert {p.licence for p in unarxive} == {"CC BY 4.0", "CC0 1.0"}
    body = [s for p in unarxive for sec in p.sections for s in sec.sentences]
    assert len(body) > 5000 and not any("{{" in s or "$" in s for s in body)
    assert {sec.kind for p in unarxive for sec in p.sections} >= {"abstract", "introduction", "other"}
    assert set(EXTRA_SOURCES) == {"arxiv", "unarxive"}


def test_one_growth_at_a_time_and_a_dead_processs_lock_is_taken_over(model, shipped, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    _, _, sha = shipped
    paths = _paths(shipped, tmp_path / "home")
    paths.staging.mkdir(parents=True)
    (paths.staging / "lock").write_text(str(os.getpid()), encoding="utf-8")  # a live process grows
    with pytest.raises(LibraryError, match=f"already growing \\(process {os.getpid()}\\)"):
        grow_corpus(model, sha, paths=paths, shard_papers=1)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    (paths.staging / "lock").write_text(gone, encoding="utf-8")  # left by a process that has exited
    assert grow_corpus(model, sha, paths=paths, shard_papers=1).manifest["sentences"] == 8
    assert not paths.staging.exists()
