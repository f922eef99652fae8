"""The corpus pipeline without Ray: the stages cut the one-process builder's batches, shards on disk
make a build resumable, the streaming pack writer writes write_pack's bytes, PDFs are parsed in
input order, and the CLI's engine options fail in one line."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from core.corpus_pipeline.driver import LocalEngine, MemoryShards, run_pipeline
from core.corpus_pipeline.shards import ShardStore
from core.corpus_pipeline.stages import (
    KeptPaper,
    KeptSection,
    PackFilter,
    SentenceSelector,
    SourcePaper,
    SourceSection,
    plan_shards,
)
from core.errors import Cancelled
from core.jobs import JobContext
from core.library.pack_format import PackPaper, PackSentence, write_pack
from tests.tiny_bundle import make_tiny_bundle

PACK_FILES = ("manifest.json", "papers.jsonl.gz", "sentences.jsonl.gz", "function.npy", "function-scale.npy")


def _paper(number: int, sections: int = 1) -> SourcePaper:
    return SourcePaper("test", f"p{number}", f"Paper {number}", "CC0 1.0", tuple(
        SourceSection(f"Section {s}", "method", tuple(
            f"Paper {number} section {s} describes step {i} of the procedure in some detail."
            for i in range(3)))
        for s in range(sections)))


PAPERS = [_paper(n, 1 + n % 3) for n in range(12)]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from models import load_model

    bundle = make_tiny_bundle(tmp_path_factory.mktemp("bundle"), functions=True)
    return load_model(bundle, device="cpu", threads=1)


def _same_pack(a: Path, b: Path) -> None:
    for name in PACK_FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_selector_keeps_each_wording_once_and_shards_never_split_a_paper() -> None:
    twice = SourcePaper("test", "q", "", "MIT", (SourceSection("A", "result", (
        "The  method works well on   two datasets.", "the method works WELL on two datasets.",
        "Too short.")),))
    selector = SentenceSelector(PackFilter())
    kept = selector.select(twice)
    assert kept is not None and kept.sections[0].texts == ("The method works well on two datasets.",)
    assert selector.select(twice) is None  # every wording seen: the paper keeps nothing, gets no index
    papers = list(SentenceSelector().run(PAPERS))
    shards = list(plan_shards(papers, 4))
    assert [p.index for s in shards for p in s.papers] == list(range(12))  # all, once, in order
    for shard in shards[:-1]:  # a shard closes at the first paper that brings it to 4 sections
        assert len(shard.sections) >= 4 and len(shard.sections) - len(shard.papers[-1].sections) < 4
    assert [s.shard_id for s in shards] == list(range(len(shards)))


def test_shard_keys_change_with_the_model_and_the_rows() -> None:
    text = ("One two three four five.",)
    paper = KeptPaper(0, PackPaper("p", "d", "t", "l"), (KeptSection(0, "A", "result", text),))
    other = KeptPaper(0, PackPaper("p", "d", "t", "l"), (KeptSection(0, "A", "method", text),))
    (shard,) = plan_shards([paper])
    (changed,) = plan_shards([other])
    assert shard.key("m1") == shard.key("m1") != shard.key("m2")
    assert shard.key("m1") != changed.key("m1")


def test_streamed_pack_has_the_bytes_of_write_pack(tmp_path: Path) -> None:
    from core.library.pack_format import PackWriter, quantise_rows

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(7, 16)).astype(np.float32)
    papers = [PackPaper(f"p{i}", "d", "", "MIT") for i in range(3)]
    sentences = [PackSentence(i % 3, i, f"sentence {i}", "S", "method", "method", "") for i in range(7)]
    write_pack(tmp_path / "whole", papers, sentences, vectors, {"x": 1})
    writer = PackWriter(tmp_path / "streamed", 7, 16)
    for start, end, paper_slice in ((0, 3, papers[:1]), (3, 7, papers[1:])):
        q, s = quantise_rows(vectors[start:end])
        writer.add(paper_slice, sentences[start:end], q, s)
    writer.finish({"x": 1})
    _same_pack(tmp_path / "whole", tmp_path / "streamed")
    write_pack(tmp_path / "empty", [], [], np.zeros((0, 0), np.float32), {})
    writer = PackWriter(tmp_path / "empty2", 0, 0)
    writer.finish({})
    _same_pack(tmp_path / "empty", tmp_path / "empty2")


def test_local_engine_with_shards_on_disk_equals_build_pack(model, tmp_path: Path) -> None:
    from core.library.pack import build_pack

    build_pack(PAPERS, model, tmp_path / "memory", {"model_sha256": "m"}, papers_per_batch=4)
    store = ShardStore(tmp_path / "work")
    result = run_pipeline(PAPERS, LocalEngine(model, store), store, tmp_path / "disk", {"model_sha256": "m"},
                          model_sha256="m", sections_per_shard=4, keep_shards=False)
    _same_pack(tmp_path / "memory", tmp_path / "disk")
    assert result.shards > 3 and result.shards_reused == 0
    assert not (tmp_path / "work").exists()  # removed after the merge


def test_a_cancelled_build_resumes_from_its_finished_shards(model, tmp_path: Path) -> None:
    def build(out: Path, ctx: JobContext | None = None, sha: str = "m"):
        store = ShardStore(tmp_path / "work")
        return run_pipeline(PAPERS, LocalEngine(model, store), store, out, {}, model_sha256=sha,
                            sections_per_shard=4, ctx=ctx)

    fresh = build(tmp_path / "fresh")
    for path in (tmp_path / "work").glob("shard-*"):
        path.unlink()
    calls = []

    def stop_after_two(progress) -> None:
        calls.append(progress)
        if len(calls) == 2:
            ctx.cancel()

    ctx = JobContext(stop_after_two)
    with pytest.raises(Cancelled):
        build(tmp_path / "resumed", ctx)
    finished = sorted(p.name for p in (tmp_path / "work").glob("shard-*.json"))
    assert 2 <= len(finished) < fresh.shards
    resumed = build(tmp_path / "resumed")
    assert resumed.shards_reused == len(finished) and resumed.shards == fresh.shards
    reused = sum(len(ShardStore(tmp_path / "work").read(int(name[6:14]))[1]) for name in finished)
    assert resumed.sentences_labelled == resumed.record["sentences"] - reused > 0
    _same_pack(tmp_path / "fresh", tmp_path / "resumed")
    other_model = build(tmp_path / "other", sha="another model")  # a key mismatch: nothing reused
    assert other_model.shards_reused == 0


def test_memory_shards_hold_nothing_after_the_merge(model, tmp_path: Path) -> None:
    store = MemoryShards()
    run_pipeline(PAPERS[:3], LocalEngine(model, store), store, tmp_path / "p", {}, model_sha256="")
    assert store._shards == {}


@pytest.mark.shared
def test_pdfs_are_parsed_in_input_order_and_a_bad_one_is_a_reason(tmp_path: Path) -> None:
    from core.corpus_pipeline.parse import parse_pdfs
    from tests.conftest import shared_path

    good = shared_path("pdfs", "bmc-datta2010.pdf")
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.4 not really")
    paths = [bad, good, bad]
    results = list(parse_pdfs(iter(paths), 2, ordered=True))
    assert [path for path, _ in results] == paths
    assert isinstance(results[0][1], str) and isinstance(results[2][1], str)
    paper = results[1][1]
    assert not isinstance(paper, str) and paper.sentences


def test_engine_ray_without_ray_says_how_to_install_it(monkeypatch, capsys, tmp_path: Path) -> None:
    from app.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    assert main(["corpus", "build", "--engine", "ray", "--out", str(tmp_path / "p"),
                 "--max-papers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rhetorica: error:") and "pip install" in err[0]
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("argv, message", [
    (["--address", "10.0.0.1:6379"], "--address goes with --engine ray"),
    (["--engine", "ray", "--address", "nohost"], "is not HOST:PORT"),
    (["--engine", "ray", "--address", "h:99999"], "is not HOST:PORT"),
    (["--workers", "0"], "out of range"),
    (["--pdf", "/no/such.pdf"], "no such file"),
])
def test_bad_engine_options_fail_in_one_line(argv, message, capsys, tmp_path: Path) -> None:
    from app.cli import main

    try:
        code = main(["corpus", "build", "--out", str(tmp_path / "p"), *argv])
    except SystemExit as exit_:  # argparse refuses a bad value itself
        code = exit_.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0], err


@pytest.mark.shared
def test_library_add_resumes_after_an_interruption(model, tmp_path: Path) -> None:
    """``library add`` (the pipeline's parse stage in a process pool): stopped after the first paper,
    the same call again adds only the rest."""
    from core.library.library import Library
    from core.paths import sample_paper_path
    from tests.conftest import shared_path

    pdfs = [sample_paper_path(), shared_path("pdfs", "bmc-datta2010.pdf")]
    seen = []

    def stop_at_the_second(progress) -> None:  # "adding NAME" comes before each paper is labelled
        if progress.message.startswith("adding "):
            seen.append(progress.message)
        if len(seen) == 2:
            ctx.cancel()

    ctx = JobContext(stop_at_the_second)
    with Library(tmp_path / "lib") as library:
        with pytest.raises(Cancelled):
            library.add_pdfs(pdfs, model, ctx, workers=1)
        assert [p.source for p in library.store.papers()] == [str(pdfs[0])]
        report = library.add_pdfs(pdfs, model, workers=1)
        assert len(report.added) == 1 and dict(report.skipped)[str(pdfs[0])] == "already in the library"
        assert sorted(p.source for p in library.store.papers()) == sorted(map(str, pdfs))


# -- hostile test F: the work folder, the pack at --out, damaged shards, bad source rows, Ray workers --
def _cli(argv: list[str], capsys) -> tuple[int, list[str]]:
    from app.cli import main

    code = main(["corpus", "build", *argv])
    return code, capsys.readouterr().err.strip().splitlines()


def test_an_existing_work_folder_of_other_files_is_refused_and_kept(tmp_path: Path, capsys) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "thesis.txt").write_text("my thesis", encoding="utf-8")
    bundle = make_tiny_bundle(tmp_path / "bundle", functions=True)
    code, err = _cli(["--out", str(tmp_path / "p"), "--work", str(docs), "--model", str(bundle),
                      "--source", "csabstruct", "--max-papers", "1", "--quiet"], capsys)
    assert code == 2 and len(err) == 1 and "not a shard folder" in err[0], err
    assert (docs / "thesis.txt").read_text(encoding="utf-8") == "my thesis"


@pytest.mark.parametrize("where", ["same", "inside", "above"])
def test_a_work_folder_at_inside_or_above_the_pack_is_refused(where: str, tmp_path: Path, capsys) -> None:
    out = tmp_path / "top" / "p"
    work = {"same": out, "inside": out / "shards", "above": tmp_path / "top"}[where]
    bundle = make_tiny_bundle(tmp_path / "bundle", functions=True)
    code, err = _cli(["--out", str(out), "--work", str(work), "--model", str(bundle),
                      "--source", "csabstruct", "--max-papers", "1", "--quiet"], capsys)
    assert code == 2 and len(err) == 1 and "apart from --out" in err[0], err


def test_removing_the_shards_deletes_only_the_stores_own_files(model, tmp_path: Path) -> None:
    store = ShardStore(tmp_path / "work")
    store.create()
    (tmp_path / "work" / "notes.txt").write_text("mine", encoding="utf-8")  # added by the user meanwhile
    run_pipeline(PAPERS, LocalEngine(model, store), store, tmp_path / "p", {}, model_sha256="m",
                 sections_per_shard=4, keep_shards=False)
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["notes.txt"]


def _build_kept(model, tmp_path: Path, out: Path):
    store = ShardStore(tmp_path / "work")
    return run_pipeline(PAPERS, LocalEngine(model, store), store, out, {}, model_sha256="m",
                        sections_per_shard=4, keep_shards=True)


@pytest.mark.parametrize("damage", ["cut npz", "swapped npz", "json shape"])
def test_a_damaged_shard_is_labelled_again_not_reused(damage: str, model, tmp_path: Path) -> None:
    import json

    first = _build_kept(model, tmp_path, tmp_path / "a")
    work = tmp_path / "work"
    npz = work / "shard-00000001.npz"
    if damage == "cut npz":
        npz.write_bytes(npz.read_bytes()[:50])
    elif damage == "swapped npz":  # rows that do not match the JSON's
        with np.load(npz) as arrays:
            quantised, scales = arrays["quantised"], arrays["scales"]
        with open(npz, "wb") as handle:
            np.savez(handle, quantised=quantised[1:], scales=scales[1:])
    else:
        meta = work / "shard-00000001.json"
        record = json.loads(meta.read_text(encoding="utf-8"))
        meta.write_text(json.dumps({**record, "papers": 3, "dim": "x"}), encoding="utf-8")
    again = _build_kept(model, tmp_path, tmp_path / "b")
    assert again.shards_reused == first.shards - 1
    _same_pack(tmp_path / "a", tmp_path / "b")


def test_a_failed_merge_leaves_the_previous_pack_whole(model, tmp_path: Path, monkeypatch) -> None:
    import errno

    from core.library.pack_format import PackWriter

    out = tmp_path / "p"
    _build_kept(model, tmp_path, out)
    before = {name: (out / name).read_bytes() for name in PACK_FILES}
    real_init = PackWriter.__init__

    class FullDisk:
        def __init__(self, handle) -> None:
            self.handle, self.writes = handle, 0

        def write(self, data: bytes) -> int:
            self.writes += 1
            if self.writes == 2:
                raise OSError(errno.ENOSPC, "No space left on device")  # a write names no file
            return self.handle.write(data)

        def __getattr__(self, name: str):
            return getattr(self.handle, name)

    def init(self, *args) -> None:
        real_init(self, *args)
        self._vectors = FullDisk(self._vectors)
        self._raw.append(self._vectors.handle)

    monkeypatch.setattr(PackWriter, "__init__", init)
    with pytest.raises(OSError) as raised:
        run_pipeline(PAPERS[::-1], LocalEngine(model, ShardStore(tmp_path / "work")),
                     ShardStore(tmp_path / "work"), out, {}, model_sha256="m", sections_per_shard=4)
    assert raised.value.filename is not None  # the CLI's line names where
    assert {name: (out / name).read_bytes() for name in PACK_FILES} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p", "work"]  # no staging folder left


def test_a_pack_never_replaces_a_folder_of_other_files(tmp_path: Path) -> None:
    from core.errors import RhetoricaError
    from core.library.pack_format import PackWriter

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "thesis.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(RhetoricaError, match="holds other files"):
        PackWriter(tmp_path / "docs", 0, 4)
    assert (tmp_path / "docs" / "thesis.txt").exists()


@pytest.mark.parametrize("content, message", [
    (b'{bad json\n', "train.jsonl:1: malformed row"),
    (b'{"sentences": ["ok."]}\n{"nosentences": 1}\n', "train.jsonl:2: malformed row (no 'sentences' field)"),
    (b'[1, 2]\n', "train.jsonl:1: malformed row (a JSON list, not an object)"),
    (b'\xff\xfe{"sentences": []}\n', "train.jsonl:1: malformed row (not UTF-8 text)"),
    (b'{"sentences": "a string"}\n', "train.jsonl:1: malformed row ('sentences' is not a list of strings)"),
])
def test_a_malformed_source_row_fails_in_one_line(content: bytes, message: str, tmp_path: Path) -> None:
    from core.errors import DatasetError
    from models.datasets.phrase_sources import phrase_papers

    folder = tmp_path / "data" / "csabstruct"
    folder.mkdir(parents=True)
    for split in ("dev", "test"):
        (folder / f"{split}.jsonl").write_bytes(b"")
    (folder / "train.jsonl").write_bytes(content)
    with pytest.raises(DatasetError, match=re.escape(message)):
        list(phrase_papers("csabstruct", tmp_path))


def test_a_local_ray_offers_the_cores_so_too_many_workers_are_refused(monkeypatch) -> None:
    from core.errors import RhetoricaError
    from models import corpus_ray

    class FakeRay:
        cpus = 0

        def init(self, num_cpus: int, **options) -> None:
            self.cpus = num_cpus

        def cluster_resources(self) -> dict[str, float]:
            return {"CPU": float(self.cpus)}

        def shutdown(self) -> None:
            pass

    monkeypatch.setattr(corpus_ray, "import_ray", FakeRay)
    monkeypatch.setattr(corpus_ray.os, "cpu_count", lambda: 2)
    with pytest.raises(RhetoricaError, match=r"offers 2 CPU\(s\): --workers 16 labelling workers"):
        corpus_ray.connect(None, 16)
    assert corpus_ray.connect(None, 2)[1] == 2 and corpus_ray.connect(None, None)[1] == 1
