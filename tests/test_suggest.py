"""Phrasing suggestions (tiny bundle): the query never comes back, filters hold, MMR diversifies."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("hnswlib")

from core.library.library import Library
from core.phrasing.suggest import Source, mmr, suggest
from tests.tiny_bundle import make_tiny_bundle

ROWS = [
    {"id": "a", "title": "A", "sentences": ["We propose a new method for parsing scientific text.",
                                            "Results show that it works well.",
                                            "Results show that it works well."]},
    {"id": "b", "title": "B", "sentences": ["We propose a simple and fast method.",
                                            {"text": "Experiments on two datasets demonstrate large gains.",
                                             "section": "Results"}]},
]


@pytest.fixture()
def setup(tmp_path: Path):
    from models import load_model

    model = load_model(make_tiny_bundle(tmp_path / "bundle"), device="cpu", threads=1)
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    library = Library(tmp_path / "lib")
    library.import_jsonl(path, model)
    yield model, library
    library.close()


def test_suggestions_skip_the_query_and_duplicates(setup) -> None:
    model, library = setup
    query = "Results show that it works well."
    result = suggest(query, model, [Source("library", library)], k=10,
                     templater=lambda text: ([(0, 7)], "[X] " + text[7:]))
    texts = [s.text for s in result.suggestions]
    assert query not in texts and len(texts) == len(set(texts))
    assert result.query["text"] == query and result.query["role"]
    first = result.suggestions[0].to_dict()
    assert set(first) == {"text", "source", "similarity", "role", "function", "spans", "template"}
    assert first["source"]["kind"] == "library" and first["source"]["title"] in ("A", "B")
    assert first["spans"] == [[0, 7]]
    scores = [s.similarity for s in result.suggestions]
    assert all(-1.0001 <= x <= 1.0001 for x in scores)
    assert len(scores) > 1 and scores == sorted(scores, reverse=True)  # listed most similar first
    assert all(s.source["title"] for s in result.suggestions)


def test_filters(setup) -> None:
    model, library = setup
    sources = [Source("library", library)]
    only = suggest("We propose a new method.", model, sources, k=10, section_kind="result")
    assert [s.text for s in only.suggestions] == ["Experiments on two datasets demonstrate large gains."]
    none = suggest("We propose a new method.", model, sources, k=10, function="no-such")
    assert none.suggestions == []


def test_mmr_prefers_a_diverse_second_pick() -> None:
    query = np.array([1.0, 0.0])
    candidates = np.array([[0.99, 0.14], [0.99, 0.141], [0.8, -0.6]])
    candidates /= np.linalg.norm(candidates, axis=1, keepdims=True)
    assert mmr(query, candidates, 2, trade_off=0.5) == [0, 2]  # not the near-copy of the first
    assert mmr(query, candidates, 2, trade_off=1.0) == [0, 1]  # pure relevance
    assert mmr(query, np.zeros((0, 2)), 3) == []


def test_suggest_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    bundle = make_tiny_bundle(tmp_path / "bundle")
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    lib = ["--library", str(tmp_path / "lib")]
    model = ["--model", str(bundle), "--threads", "1"]
    assert main(["library", "import-jsonl", str(rows), *lib, *model]) == 0
    capsys.readouterr()
    empty = tmp_path / "no-corpus"
    assert main(["suggest", "We propose a new method.", *lib, "--corpus", str(empty), "--json", *model]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["query"]["text"] == "We propose a new method." and result["suggestions"]
    assert all(s["source"]["kind"] == "library" for s in result["suggestions"])
    lines = tmp_path / "draft.txt"
    lines.write_text("We propose a new method.\n\nResults show that it works well.\n", encoding="utf-8")
    assert main(["suggest", "--input", str(lines), *lib, "--corpus", str(empty), "-k", "2", *model]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    queries = [o["query"]["text"] for o in out]
    assert queries == ["We propose a new method.", "Results show that it works well."]
    assert all(len(o["suggestions"]) <= 2 for o in out)
    assert main(["suggest", "x", "--source", "corpus", "--corpus", str(empty), *model]) == 2
    assert "nothing to suggest from" in capsys.readouterr().err
    # an unknown function id or section kind is named, not silently matched by nothing
    bundle_f = make_tiny_bundle(tmp_path / "bundle-f", functions=True)
    with_functions = ["--model", str(bundle_f), "--threads", "1"]
    query = ["suggest", "We propose a new method.", *lib, "--corpus", str(empty)]
    assert main([*query, "--function", "main-findings", *with_functions]) == 2
    assert "--function main-findings: not a function id of this model (did you mean main-finding" in \
        capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main([*query, "--section", "results", *model])
    assert exit_.value.code == 2 and "invalid choice: 'results'" in capsys.readouterr().err


# -- the order shown and the titles, on a source whose vectors are set by hand -----------------------
class _Encoding:
    def __init__(self) -> None:
        from core.taxonomy.labels import FunctionPrediction, RolePrediction

        self.roles = [RolePrediction("result", {"result": 0.9, "method": 0.1})]
        self.functions = [FunctionPrediction("outperforming", (("outperforming", 0.8),))]
        self.function_vectors = np.array([[1.0, 0.0, 0.0]], dtype=np.float32)
        self.embeddings = self.function_vectors.copy()


class _Model:
    model_id = "hand-made"

    def encode_documents(self, documents, **_options):  # type: ignore[no-untyped-def]
        return [_Encoding() for _ in documents]


class _Pack:
    """Two corpus sentences: one closer to the query (0.9), one agreeing with its role and function
    (0.8, which the label bonus lets MMR pick first); papers without titles, as CSAbstruct's."""

    duplicate_view = "function"
    vectors = np.array([[0.9, np.sqrt(1 - 0.81), 0.0], [0.8, 0.0, 0.6]], dtype=np.float32)

    def search(self, view: str, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        scores = self.vectors @ query
        return np.array([[0, 1]]), scores[None, :]

    def sentences(self, ids):  # type: ignore[no-untyped-def]
        from core.library.store import SentenceRecord

        rows = [("csabstruct-train-1399", "We compare with three baselines.", "method", "baselines"),
                ("scitldr-SysEexbRb", "It outperforms all baselines.", "result", "outperforming")]
        return [SentenceRecord(i, rows[i][0], 0, rows[i][1], "Abstract", "abstract", rows[i][2], rows[i][3])
                for i in ids]

    def vectors_of(self, ids, view: str) -> np.ndarray:  # type: ignore[no-untyped-def]
        return self.vectors[list(ids)]

    def paper(self, paper_id: str):  # type: ignore[no-untyped-def]
        from core.library.store import PaperRecord

        dataset = paper_id.split("-")[0]
        title = "Critical Points of Linear Neural Networks" if dataset == "scitldr" else ""
        return PaperRecord(paper_id, "", title, dataset, "Apache-2.0", "corpus", "m", 0.0, 0)

    def close(self) -> None:
        pass


def test_suggestions_are_listed_most_similar_first_each_with_a_title() -> None:
    result = suggest("Our method beats the baselines.", _Model(), [Source("corpus", _Pack())], k=5)  # type: ignore[arg-type]
    assert [round(s.similarity, 2) for s in result.suggestions] == [0.9, 0.8]  # MMR picked 0.8 first
    assert [s.source["title"] for s in result.suggestions] == [
        "CSAbstruct abstract #1399 (CS, train set)", "Critical Points of Linear Neural Networks"]
    assert result.suggestions[0].source["paper_id"] == "csabstruct-train-1399"  # the id stays, for JSON


# -- a query already read: a sentence of the open paper, from its analysis ---------------------------
class _NoRunModel(_Model):
    def encode_documents(self, documents, **_options):  # type: ignore[no-untyped-def]
        raise AssertionError("the model ran although the query was already read")


def _reading(text: str, model_id: str, vector: list[float]):  # type: ignore[no-untyped-def]
    from core.phrasing.query_reading import QueryReading
    from core.taxonomy.labels import FunctionPrediction, RolePrediction

    return QueryReading(text, model_id, RolePrediction("method", {"method": 0.7, "result": 0.3}),
                        FunctionPrediction("baselines", (("baselines", 0.6),)),
                        np.array(vector, dtype=np.float32), None, "as the paper's analysis reads it")


def test_a_query_read_by_the_papers_analysis_is_searched_as_read_without_a_model_run() -> None:
    query = "Our method beats the baselines."
    # Near both pack sentences (0.9, 0.8): the reading's labels (method, baselines) decide the first pick,
    # where the model's own (result, outperforming) would pick the other one.
    reading = _reading(query, "hand-made", [1.0, 0.0, 0.0])
    result = suggest(query, _NoRunModel(), [Source("corpus", _Pack())], k=1, reading=reading)  # type: ignore[arg-type]
    assert result.query["function"] == "baselines" and result.query["role"] == "method"
    assert result.query["context"] == "as the paper's analysis reads it"
    assert [s.text for s in result.suggestions] == ["We compare with three baselines."]


def test_a_reading_of_another_model_or_sentence_is_not_used() -> None:
    query = "Our method beats the baselines."
    for reading in (_reading(query, "another-model", [1.0, 0.0, 0.0]),
                    _reading("Another sentence.", "hand-made", [1.0, 0.0, 0.0])):
        result = suggest(query, _Model(), [Source("corpus", _Pack())], k=1, reading=reading)  # type: ignore[arg-type]
        assert result.query["function"] == "outperforming"  # what the model read, not the reading
        assert [s.text for s in result.suggestions] == ["It outperforms all baselines."]


class _ConfidencePack(_Pack):
    """Two corpus sentences the model labels with the query's function: the closer one (0.9) with a label
    the model is unsure of (0.3), the other (0.8) a confident example (0.95)."""

    def sentences(self, ids):  # type: ignore[no-untyped-def]
        from core.library.store import SentenceRecord

        rows = [("csabstruct-train-1", "It is somewhat better than one baseline.", 0.3),
                ("csabstruct-train-2", "It outperforms all baselines by a wide margin.", 0.95)]
        return [SentenceRecord(i, rows[i][0], 0, rows[i][1], "Abstract", "abstract", "result",
                               "outperforming", function_confidence=rows[i][2]) for i in ids]


def test_the_label_ranking_takes_the_closer_sentence_and_the_confidence_ranking_the_confident_one() -> None:
    query = "Our method beats the baselines."
    flat = suggest(query, _Model(), [Source("corpus", _ConfidencePack())], k=1)  # type: ignore[arg-type]
    assert [s.text for s in flat.suggestions] == ["It is somewhat better than one baseline."]  # the default
    confident = suggest(query, _Model(), [Source("corpus", _ConfidencePack())], k=1,  # type: ignore[arg-type]
                        ranking="confidence")
    assert [s.text for s in confident.suggestions] == ["It outperforms all baselines by a wide margin."]
    with pytest.raises(ValueError, match="unknown ranking"):
        suggest(query, _Model(), [Source("corpus", _ConfidencePack())], ranking="loudest")  # type: ignore[arg-type]


def test_a_stored_confidence_is_read_and_an_unknown_one_counts_as_one() -> None:
    from core.library.store import known_confidence

    assert known_confidence(0.42) == 0.42
    assert known_confidence(0) == known_confidence(None) == known_confidence("x") == 1.0
    assert known_confidence(3) == 1.0


def test_the_gated_ranking_trusts_candidate_confidence_only_for_a_confidently_read_query() -> None:
    from core.phrasing.query_reading import QueryReading
    from core.taxonomy.labels import FunctionPrediction, RolePrediction

    query = "Our method beats the baselines."

    def read(p: float) -> QueryReading:
        return QueryReading(query, "hand-made", RolePrediction("result", {"result": 0.9, "method": 0.1}),
                            FunctionPrediction("outperforming", (("outperforming", p),)),
                            np.array([1.0, 0.0, 0.0], dtype=np.float32), None, "alone")

    def first(p: float) -> str:
        return suggest(query, _NoRunModel(), [Source("corpus", _ConfidencePack())], k=1,  # type: ignore[arg-type]
                       reading=read(p), ranking="gated").suggestions[0].text

    assert first(0.9) == "It outperforms all baselines by a wide margin."  # read confidently: confidence
    assert first(0.45) == "It is somewhat better than one baseline."  # unsure: the label ranking
