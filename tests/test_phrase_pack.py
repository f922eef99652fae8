"""The phrase-corpus pack: built from papers with a (tiny) model, read back without a database or
index, searched exactly, used by suggestions beside a library; a pack from another model is refused."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from core.library.pack import PackCorpus, PackFilter, build_pack, file_sha256, is_pack, quantise_rows
from core.library.store import LibraryError
from core.phrasing.suggest import has_sentences, open_source, suggest
from tests.phrase_paper_fakes import FakePaper, FakeSection
from tests.tiny_bundle import make_tiny_bundle

PAPERS = [
    FakePaper("csabstruct", "p1", "First paper", [FakeSection("Abstract", "abstract", [
        "We propose a new method for parsing scientific text.",
        "Results show that the method works well on two datasets.",
        "Too short."])]),
    FakePaper("scirex", "p2", "Second paper", [
        FakeSection("Introduction", "introduction",
                 ["Little attention has been paid to the role of syntax here.",
                  "We propose a new method for parsing scientific text."]),
        FakeSection("Results", "result",
                 ["Experiments on three corpora demonstrate large gains over baselines."])]),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from models import load_model

    tmp = tmp_path_factory.mktemp("pack")
    model = load_model(make_tiny_bundle(tmp / "bundle"), device="cpu", threads=1)
    sha = file_sha256(model.bundle_dir / "model.onnx")
    record = build_pack(PAPERS, model, tmp / "pack", {"model_id": model.model_id, "model_sha256": sha})
    return model, tmp / "pack", record


def test_build_keeps_each_wording_once_with_its_source_and_labels(built) -> None:
    _, folder, record = built
    assert is_pack(folder) and has_sentences(folder)
    # "Too short." is filtered; the repeated proposal sentence is kept once (in the first paper).
    assert record["sentences"] == 4 and record["papers"] == 2
    assert record["sources"]["scirex"] == {"licence": "Apache-2.0", "papers": 1, "sentences": 2}
    corpus = PackCorpus(folder)
    records = corpus.sentences(range(len(corpus)))
    assert [r.paper_id for r in records] == ["p1", "p1", "p2", "p2"]
    assert [r.position for r in records] == [0, 1, 0, 1]  # reading order within each paper
    assert records[3].section == "Results" and records[3].section_kind == "result"
    roles = ("background", "objective", "method", "result", "conclusion", "other")
    assert all(r.role in roles for r in records)
    paper = corpus.paper("p2")
    assert paper is not None and paper.title == "Second paper" and paper.note == "Apache-2.0"
    with gzip.open(folder / "sentences.jsonl.gz", "rt", encoding="utf-8") as handle:
        assert len(handle.read().splitlines()) == 4


def test_exact_search_finds_each_sentence_first_and_vectors_round_trip(built) -> None:
    model, folder, _ = built
    corpus = PackCorpus(folder)
    texts = [r.text for r in corpus.sentences(range(len(corpus)))]
    queries = model.embed(texts, view="function")
    ids, scores = corpus.search("function", queries, 2)
    assert ids[:, 0].tolist() == [0, 1, 2, 3]
    assert np.all(scores[:, 0] > 0.98) and np.all(scores[:, 0] >= scores[:, 1])
    stored = corpus.vectors_of([2], "function")[0]
    assert float(stored @ queries[2] / np.linalg.norm(queries[2])) > 0.99  # int8 keeps the direction
    empty_ids, _ = corpus.search("content", queries[0], 3)  # a pack has no content view
    assert empty_ids.shape == (1, 0)


def test_quantised_rows_keep_their_direction() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(50, 128)).astype(np.float32)
    q, scales = quantise_rows(vectors)
    assert q.dtype == np.int8 and np.abs(q).max() == 127
    back = q.astype(np.float32) * scales[:, None]
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert np.min(np.sum(back * unit, axis=1) / np.linalg.norm(back, axis=1)) > 0.999


def test_suggestions_come_from_a_pack_and_a_library_together(built, tmp_path: Path) -> None:
    from core.library.library import Library

    model, folder, _ = built
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "mine", "title": "My paper",
                                "sentences": ["We propose a fast method for tagging citations."]}) + "\n",
                    encoding="utf-8")
    with Library(tmp_path / "lib") as library:
        library.import_jsonl(rows, model)
    corpus = open_source("corpus", folder, model)
    library_source = open_source("library", tmp_path / "lib", model)
    try:
        query = "We propose a new method for parsing scientific text."
        result = suggest(query, model, [corpus, library_source], k=10)
        texts = [s.text for s in result.suggestions]
        assert query not in texts  # the query's own wording never comes back
        kinds = {s.source["kind"] for s in result.suggestions}
        assert kinds == {"corpus", "library"}
        titles = {s.source["title"] for s in result.suggestions}
        assert "My paper" in titles and titles & {"First paper", "Second paper"}
    finally:
        corpus.library.close()
        library_source.library.close()


def test_a_pack_from_another_model_and_a_damaged_pack_are_refused(built, tmp_path: Path) -> None:
    model, folder, _ = built
    corpus = PackCorpus(folder)
    corpus.check_model(file_sha256(model.bundle_dir / "model.onnx"))  # its own model: fine
    with pytest.raises(LibraryError, match="rebuild it with 'rhetorica corpus build'"):
        corpus.check_model("0" * 64)
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("manifest.json", "function.npy", "function-scale.npy", "papers.jsonl.gz"):
        (broken / name).write_bytes((folder / name).read_bytes())
    (broken / "sentences.jsonl.gz").write_bytes(b"not gzip")
    with pytest.raises(LibraryError, match="damaged phrase-corpus pack"):
        PackCorpus(broken)
    with pytest.raises(LibraryError, match="not a phrase-corpus pack"):
        PackCorpus(tmp_path)


@pytest.mark.parametrize("bad_row", ["[0]", "null",
                                     '[0, "x", "text", "Abstract", "abstract", "method", "none"]',
                                     '[1000000000000, 0, "text", "Abstract", "abstract", "method", "none"]',
                                     '[0, 0, 7, "Abstract", "abstract", "method", "none"]'])
def test_a_damaged_sentence_row_is_one_line_not_a_crash(built, tmp_path: Path, bad_row: str) -> None:
    _, folder, _ = built
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    for name in ("manifest.json", "function.npy", "function-scale.npy", "papers.jsonl.gz"):
        (damaged / name).write_bytes((folder / name).read_bytes())
    with gzip.open(folder / "sentences.jsonl.gz", "rt", encoding="utf-8") as handle:
        rows = handle.read().splitlines()
    with gzip.open(damaged / "sentences.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write("\n".join([bad_row, *rows[1:]]) + "\n")
    corpus = PackCorpus(damaged)
    assert corpus.sentences([1])[0].text == json.loads(rows[1])[2]
    with pytest.raises(LibraryError, match="sentence 0 is not a valid row"):
        corpus.sentences([0])


def test_numpys_advice_to_unpickle_never_reaches_the_user(built, tmp_path: Path) -> None:
    _, folder, _ = built
    damaged = tmp_path / "pickled"
    damaged.mkdir()
    for name in ("manifest.json", "function-scale.npy", "papers.jsonl.gz", "sentences.jsonl.gz"):
        (damaged / name).write_bytes((folder / name).read_bytes())
    np.save(damaged / "function.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(LibraryError, match="not a plain numeric array") as caught:
        PackCorpus(damaged)
    assert "allow_pickle" not in str(caught.value)


def test_the_filter_keeps_ordinary_sentences_only() -> None:
    keep = PackFilter(min_words=3, max_words=6)
    assert keep.keeps("We propose a method.")
    assert not keep.keeps("Too short.") and not keep.keeps("1 2 3 4 5") and not keep.keeps("a " * 7)


@pytest.mark.shared
def test_every_phrase_source_reads_attributable_papers() -> None:
    from itertools import islice

    from tests.conftest import shared_path

    shared_path("data")  # skips with a reason when ../shared is absent
    from models.datasets.phrase_sources import LICENCES, PHRASE_SOURCES, phrase_papers

    assert set(LICENCES.values()) <= {"Apache-2.0", "MIT", "CC BY 4.0", "CC0 1.0"}  # only what may be bundled
    for source in PHRASE_SOURCES:
        papers = list(islice(phrase_papers(source), 3))
        assert len(papers) == 3, source
        assert all(p.paper_id and p.sentence_count() > 0 and p.licence for p in papers), source
        assert all(s.kind for p in papers for s in p.sections), source
    scitldr = next(phrase_papers("scitldr"))
    assert scitldr.title  # titles come with the papers that have them
    scirex = next(phrase_papers("scirex"))
    assert scirex.title and {s.kind for s in scirex.sections} - {"other"}


def test_bench_suggest_reports_time_to_first_suggestions(built, tmp_path: Path) -> None:
    from app.cli import main

    model, folder, _ = built
    queries = tmp_path / "queries.txt"
    queries.write_text("We introduce a method for tagging.\nOur results show large gains.\n"
                       "Little is known about this.\n", encoding="utf-8")
    out = tmp_path / "bench.json"
    assert main(["bench", "suggest", "--corpus", str(folder), "--model", str(model.bundle_dir),
                 "--input", str(queries), "--threads", "1", "-k", "3", "--json", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["queries"] == 3 and report["sources"] == {"corpus": 4}
    assert 0 < report["seconds_to_first_suggestions"] < 60
    assert report["latency_ms"]["p50"] > 0 and report["mean_suggestions"] > 0


def test_blind_judgements_are_scored_per_system_macro_over_queries() -> None:
    from app.commands.lab.eval_suggest import score

    systems = {"q0-0": "model", "q0-1": "random", "q0-2": "model", "q1-0": "model", "q1-1": "random"}
    marks = {"q0-0": 2, "q0-1": 0, "q0-2": 1, "q1-0": 0, "q1-1": 1}
    key = [{"query_id": cid[:2], "cid": cid, "system": system} for cid, system in systems.items()]
    judged = [{"query_id": cid[:2], "cid": cid, "same_job": mark} for cid, mark in marks.items()]
    result = score(judged, key)
    assert result["model"] == {"queries": 2, "candidates": 3, "precision_strict": 0.25,
                               "precision_lenient": 0.5}
    assert result["random"]["precision_strict"] == 0.0 and result["random"]["precision_lenient"] == 0.5
    with pytest.raises(ValueError, match="not in the key"):
        score([{"query_id": "q9", "cid": "q9-0", "same_job": 2}], key)


def test_a_candidate_both_models_gave_counts_for_both_and_recognition_is_per_model() -> None:
    from app.commands.lab.eval_suggest import score

    def row(cid: str, system: str, predicted: str) -> dict[str, str]:
        return {"query_id": "q0", "cid": cid, "system": system, "gold_function": "aim",
                "predicted_function": predicted}

    key = [row("q0-0", "model", "aim"), row("q0-0", "baseline", "gap"), row("q0-1", "baseline", "gap"),
           row("q0-2", "random", "aim")]
    judged = [{"query_id": "q0", "cid": cid, "same_job": mark} for cid, mark in
              (("q0-0", 2), ("q0-1", 0), ("q0-2", 0))]
    result = score(judged, key)
    assert result["model"]["precision_strict"] == 1.0 and result["baseline"]["precision_strict"] == 0.5
    assert result["model"]["query_function_recognised"]["queries"] == 1
    assert result["baseline"]["query_function_recognised"]["queries"] == 0  # the baseline read it as a gap
    assert result["random"]["query_function_recognised"]["queries"] == 1  # split by the model's reading


@pytest.mark.shared
def test_in_context_queries_are_read_with_their_section_and_neighbours_or_from_the_papers_analysis() -> None:
    from pathlib import Path as _Path

    from app.commands.lab.eval_suggest import _query_papers, _query_rows, _Reader, sample_queries
    from models import load_model
    from tests.conftest import shared_path

    shared_path("pdfs2")  # skips with a reason when ../shared is absent
    exclude = sample_queries([_Path("models/datasets/gold_data/suggest-judgements-v2/sample.jsonl")])
    rows = _query_rows(6, "v2", 3031, exclude)
    papers = _query_papers(rows, "v2")
    assert len(papers) == len(rows)
    model = load_model(device="cpu", threads=2)
    neighbours, analysis = _Reader("neighbours", model, papers), _Reader("analysis", model, papers)
    for row in rows:
        key = (str(row["pdf"]), str(row["sid"]))
        context, reading = neighbours(key, row["text"])
        assert context.text == row["text"] and context.section_kind is not None and reading is None
        assert context.sentences()[context.position] == row["text"]
    for row in rows[:2]:  # read as the app reads a selected sentence: the paper's analysis, its whole section
        key = (str(row["pdf"]), str(row["sid"]))
        paper, index = papers[key]
        context, reading = analysis(key, row["text"])
        assert reading is not None and reading.model_id == model.model_id and reading.text == row["text"]
        assert reading.role == analysis._analyses[id(paper)].roles[index]
        assert context.sentences()[context.position] == row["text"]
        assert len(context.sentences()) >= len(neighbours(key, row["text"])[0].sentences())
    first = (str(rows[0]["pdf"]), str(rows[0]["sid"]))
    assert _Reader("alone", model, papers)(first, rows[0]["text"]) == (None, None)


def test_queries_can_come_from_the_dev_papers_only() -> None:
    import json as _json

    from app.commands.lab.eval_suggest import _query_rows
    from core.errors import RhetoricaError
    from models.datasets.gold import GOLD_DIR

    dev_texts = {_json.loads(line).get("text") for line in (GOLD_DIR / "dev.jsonl").read_text().splitlines()}
    rows = _query_rows(30, "v1", 7, split="dev")
    assert len(rows) == 30 and all(row["text"] in dev_texts for row in rows)
    both = _query_rows(500, "v1", 7)  # the default keeps drawing from dev and test, as before
    assert any(row["text"] not in dev_texts for row in both)
    with pytest.raises(RhetoricaError, match="no dev split"):
        _query_rows(5, "v2", 7, split="dev")


def test_oa_stm_sentences_reach_the_corpus_as_characters_not_xml_references(tmp_path: Path) -> None:
    import json

    from models.datasets.phrase_sources import phrase_papers

    folder = tmp_path / "data" / "oa_stm_coresc"
    folder.mkdir(parents=True)
    (folder / "titlesList.txt").write_text("S1.txt Heat &amp; mass transfer\n", encoding="utf-8")
    escaped = "We prove it for n&lt;p and call it &quot;tight&quot;."
    rows = [{"doc_id": "S1", "part": "abstract", "text": escaped},
            {"doc_id": "S1", "part": "body", "text": "Plain text stays as it is."}]
    (folder / "coresc_auto_sentences.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows),
                                                        encoding="utf-8")
    (paper,) = list(phrase_papers("oa-stm", tmp_path))
    assert paper.title == "Heat & mass transfer"
    assert [s.sentences for s in paper.sections] == [['We prove it for n<p and call it "tight".'],
                                                     ["Plain text stays as it is."]]


def test_a_pack_keeps_each_sentences_function_confidence_and_an_older_pack_reads_as_one(
        built, tmp_path: Path) -> None:
    import shutil

    _, folder, _ = built
    records = PackCorpus(folder).sentences(range(4))
    labelled = [r for r in records if r.function]
    assert all(0.0 < r.function_confidence <= 1.0 for r in records)
    assert not labelled or any(r.function_confidence < 1.0 for r in labelled)  # the model's own, stored
    older = tmp_path / "older"
    shutil.copytree(folder, older)
    with gzip.open(folder / "sentences.jsonl.gz", "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    assert all(len(row) == 8 for row in rows)
    with gzip.open(older / "sentences.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(row[:7]) + "\n" for row in rows))  # as packs before session 18
    assert [r.function_confidence for r in PackCorpus(older).sentences(range(4))] == [1.0] * 4


def test_a_pack_is_never_written_over_a_model_bundle(built, tmp_path: Path, capsys) -> None:
    """Hostile test D, problem 5: the writer removes ``manifest.json`` first, so a model bundle given as
    ``--out`` lost its manifest; it is refused in one line, and a pack folder is still rewritten."""
    from app.cli import main
    from core.errors import RhetoricaError
    from core.library.pack_format import PackWriter
    from models.bundle import verify_bundle

    _, pack, _ = built
    bundle = make_tiny_bundle(tmp_path / "bundle")
    assert main(["corpus", "build", "--source", "csabstruct", "--max-papers", "1", "--out", str(bundle),
                 "--work", str(tmp_path / "work"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds a model bundle, not a phrase-corpus pack; choose another --out" in err[0]
    with pytest.raises(RhetoricaError, match="holds a model bundle"):
        PackWriter(bundle, 1, 4)
    other = tmp_path / "other"
    other.mkdir()
    (other / "manifest.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(RhetoricaError, match=r"holds a manifest\.json of something else"):
        PackWriter(other, 1, 4)
    verify_bundle(bundle)
    assert (other / "manifest.json").read_text(encoding="utf-8") == "[1, 2]"
    import shutil

    again = shutil.copytree(pack, tmp_path / "again")
    writer = PackWriter(again, 0, 4)  # a pack's own folder may be rewritten
    assert (again / "manifest.json").exists()  # the old pack stays whole until the new one is complete
    assert writer.finish({})["sentences"] == 0 and not writer.out.exists()
