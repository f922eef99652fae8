"""Hostile test D: bundles that pass the sha256 check but hold something the runtime cannot use (a huge
``max_length``, a tokenizer of another model, ranker weights that are not numbers, a manifest nested too
deeply, zero temperatures, unknown role labels, file names outside the folder, ONNX external data) are
refused in one ``rhetorica: error:`` line (a :class:`ModelError`, so the GUI falls back to the shipped
model); the model id covers the manifest's runtime fields, so a manifest-only change is not served stale
cached analyses; outputs never replace a file of a model bundle."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.cli import main
from core.errors import ModelError, RhetoricaError
from models.bundle import read_manifest, record_metrics, verify_bundle, write_manifest
from models.encoder import load_model
from tests.tiny_bundle import make_tiny_bundle


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("good") / "bundle", functions=True)


@pytest.fixture
def bundle(good: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "bundle"
    shutil.copytree(good, copy)
    return copy


def _edit(bundle: Path, change: Any) -> None:
    """Change the manifest's data with ``change(data)`` and write it back (the files stay pinned)."""
    path = bundle / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _repin(bundle: Path) -> None:
    manifest = read_manifest(bundle)
    write_manifest(bundle, manifest, tuple(manifest.files))


def _one_line(error: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(error.value)
    assert text and "\n" not in text
    return text


# -- 6: bundles that pass verification but crashed the process ---------------------------------------
@pytest.mark.parametrize("max_length", [513, 2000, 10**30])
def test_max_length_past_the_encoders_positions_is_refused(bundle: Path, max_length: int) -> None:
    _edit(bundle, lambda d: d.update(max_length=max_length))
    with pytest.raises(ModelError) as error:
        load_model(bundle, device="cpu", threads=1)
    assert f"'max_length' is {max_length}, more than the 512 token positions" in _one_line(error)


def _with_position_table(bundle: Path, positions: int) -> None:
    """Give the tiny sentence graph a position table of ``positions`` rows (like BERT's), re-pinned."""
    import onnx
    from onnx import helper, numpy_helper

    path = bundle / "model.onnx"
    model = onnx.load(str(path))
    graph = model.graph
    dim = next(numpy_helper.to_array(t).shape[1] for t in graph.initializer if t.name == "E")
    graph.initializer.extend([
        numpy_helper.from_array(np.zeros((positions, dim), dtype=np.float32), "P"),
        numpy_helper.from_array(np.array(0, dtype=np.int64), "p_zero"),
        numpy_helper.from_array(np.array(1, dtype=np.int64), "p_one"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "p_axis"),
    ])
    for node in graph.node:  # the pooling reads the token vectors plus their positions' vectors
        node.input[:] = ["tok_pos" if name == "tok" else name for name in node.input]
    first = [
        helper.make_node("Shape", ["input_ids"], ["ids_shape"]),
        helper.make_node("Gather", ["ids_shape", "p_one"], ["length"], axis=0),
        helper.make_node("Range", ["p_zero", "length", "p_one"], ["position_ids"]),
        helper.make_node("Gather", ["P", "position_ids"], ["pos"], axis=0),
        helper.make_node("Add", ["tok", "pos"], ["tok_pos"]),
    ]
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend([nodes[0], *first, *nodes[1:]])  # nodes[0] is the token Gather that makes "tok"
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    _repin(bundle)


def test_max_length_past_the_graphs_position_table_is_refused_at_load(bundle: Path) -> None:
    _with_position_table(bundle, positions=10)
    _edit(bundle, lambda d: d.update(max_length=11))
    _repin(bundle)
    with pytest.raises(ModelError) as error:
        load_model(bundle, device="cpu", threads=1)
    text = _one_line(error)
    assert text.startswith(f"incompatible model bundle {bundle}: the manifest's max_length 11 is more token "
                           "positions than model.onnx reads")


def test_a_failed_graph_run_is_one_model_error_line(bundle: Path, capfd: pytest.CaptureFixture[str]) -> None:
    _with_position_table(bundle, positions=10)
    _edit(bundle, lambda d: d.update(max_length=10))
    _repin(bundle)
    model = load_model(bundle, device="cpu", threads=1)  # 10 positions: it loads and reads its sentences
    assert len(model.encode_document(["we propose a new method"]).roles) == 1
    capfd.readouterr()
    ids = np.full((1, 30), 5, dtype=np.int64)  # past the position table
    with pytest.raises(ModelError) as error:
        model.run(ids, np.ones_like(ids), np.zeros(1, dtype=np.int64))
    assert _one_line(error).startswith(f"model bundle {bundle}: model.onnx failed to run (")
    assert capfd.readouterr().err == ""  # onnxruntime logs nothing of its own


def test_a_tokenizer_of_another_model_is_refused_at_load(bundle: Path) -> None:
    path = bundle / "tokenizer.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["model"]["vocab"]["method"] = 10_000_000  # past the embedding table
    path.write_text(json.dumps(data), encoding="utf-8")
    _repin(bundle)
    verify_bundle(bundle)  # pinned: only the graph can tell
    with pytest.raises(ModelError) as error:
        load_model(bundle, device="cpu", threads=1)
    assert _one_line(error).startswith(f"incompatible model bundle {bundle}: tokenizer.json has token ids up "
                                       "to 10000000, more than model.onnx's embedding table holds")


@pytest.mark.parametrize(("weights", "message"), [
    ({"lexical": "abc"}, "'context.figures.ranker.weights.lexical' must be a number, not a string"),
    ([1, 2], "'context.figures.ranker.weights' must be an object, not a list"),
    ({"lexical": None}, "'context.figures.ranker.weights.lexical' must be a number, not null"),
])
def test_ranker_weights_must_be_numbers(bundle: Path, weights: object, message: str) -> None:
    _edit(bundle, lambda d: d["context"].update(figures={"ranker": {"weights": weights}}))
    with pytest.raises(ModelError) as error:
        verify_bundle(bundle)
    assert message in _one_line(error)


def test_ranker_weights_that_are_numbers_are_read(bundle: Path) -> None:
    from models.figure_scorer import ranker_weights

    _edit(bundle, lambda d: d["context"].update(figures={"ranker": {"weights": {"lexical": 2, "head": 0.5}}}))
    assert ranker_weights(load_model(bundle, device="cpu", threads=1)) == {"lexical": 2.0, "head": 0.5}


def test_a_manifest_nested_too_deeply_is_one_line(bundle: Path) -> None:
    path = bundle / "manifest.json"
    text = path.read_text(encoding="utf-8")
    deep = "[" * 100_000 + "]" * 100_000
    path.write_text(text.rstrip()[:-1] + ', "extra": ' + deep + "}", encoding="utf-8")
    with pytest.raises(ModelError) as error:
        verify_bundle(bundle)
    assert _one_line(error) == f"bad manifest {path}: not valid JSON (JSON nested too deeply)"


# -- 7: numbers accepted that gave garbage -------------------------------------------------------------
@pytest.mark.parametrize("temperature", [0, -1e-30, 0.01, 1e9])
def test_a_role_temperature_out_of_range_is_refused(bundle: Path, temperature: float) -> None:
    _edit(bundle, lambda d: d["context"].update(
        role_calibration={"role_head": {"temperature": temperature}, "body_head": {"temperature": 1.2}}))
    with pytest.raises(ModelError) as error:
        load_model(bundle, device="cpu", threads=1)
    assert "'context.role_calibration.role_head.temperature' must be" in _one_line(error)


@pytest.mark.parametrize(("labels", "message"), [
    (["a", "b", "c", "d", "e", "f"], "'labels' names 'a', 'b', 'c', not a role Rhetorica has"),
    (["background"] * 6, "'labels' names a role twice"),
])
def test_labels_must_be_rhetoricas_roles_once_each(bundle: Path, labels: list[str], message: str) -> None:
    _edit(bundle, lambda d: d.update(labels=labels))
    with pytest.raises(ModelError) as error:
        verify_bundle(bundle)
    assert message in _one_line(error)


def _nan_graph(bundle: Path) -> None:
    """A graph whose role logits are NaN (damaged weights), re-pinned."""
    from tests.tiny_bundle import build_onnx, weights

    w = weights(7)
    w["W0"][:] = np.nan
    build_onnx(bundle / "model.onnx", w, functions=True)
    _repin(bundle)


def test_nan_probabilities_never_reach_the_json_output(bundle: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    _nan_graph(bundle)
    draft = tmp_path / "draft.txt"
    draft.write_text("We propose a new method. Results show that it works well.\n", encoding="utf-8")
    out = tmp_path / "out.json"
    args = ["analyze", str(draft), "--model", str(bundle), "--quiet", "--no-cache", "--json", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"rhetorica: error: model bundle {bundle} gave role probabilities that are not numbers "
                   "(NaN); re-export or reinstall the model"]
    assert not out.exists()


# -- 8: the model id covers the manifest's runtime fields --------------------------------------------
def _calibrate(bundle: Path, temperature: float) -> None:
    manifest = read_manifest(bundle)
    manifest.context = {**manifest.context, "role_calibration": {
        "role_head": {"temperature": temperature}, "body_head": {"temperature": temperature}}}
    write_manifest(bundle, manifest, tuple(manifest.files))  # in place, as calibrate-roles writes it


def test_a_manifest_only_change_gives_another_model_id(bundle: Path) -> None:
    before = load_model(bundle, device="cpu", threads=1).model_id
    _calibrate(bundle, 2.0)
    calibrated = load_model(bundle, device="cpu", threads=1).model_id
    assert calibrated != before and calibrated.startswith("tiny-test@0.0.1#")
    record_metrics(bundle, {"m": {"value": 1.0, "data": "d", "command": "c"}})  # a record, not runtime
    assert load_model(bundle, device="cpu", threads=1).model_id == calibrated


def test_a_bundle_as_made_keeps_its_id_and_the_shipped_one_is_as_made(bundle: Path) -> None:
    """The id gains a runtime part only for a manifest edited in place since the bundle was made, so the
    libraries users built with a bundle stay usable; a bundle from before ``made_as`` keeps its old id."""
    from models.bundle import default_bundle_path, files_digest, model_id, runtime_digest

    shipped = read_manifest(default_bundle_path())
    assert shipped.made_as == runtime_digest(shipped)
    assert model_id(shipped) == f"{shipped.name}@{shipped.version}#{files_digest(shipped)[:12]}"
    manifest = read_manifest(bundle)
    manifest.made_as = ""
    assert "~" not in model_id(manifest)
    _calibrate(bundle, 2.0)
    assert "~" in load_model(bundle, device="cpu", threads=1).model_id


def test_the_cache_does_not_serve_an_analysis_of_the_manifest_before(bundle: Path, tmp_path: Path) -> None:
    from core.cache import AnalysisCache
    from core.labelling.analysis import analyze_paper
    from core.labelling.embedded_analysis import cached_analysis, store_analysis
    from tests.paper_factory import make_paper

    cache = AnalysisCache(tmp_path / "cache")
    paper = make_paper()
    model = load_model(bundle, device="cpu", threads=1)
    store_analysis(paper, analyze_paper(paper, model), cache)
    assert cached_analysis(paper, model.model_id, cache, need_vectors=False)[0] is not None
    _calibrate(bundle, 3.0)
    recalibrated = load_model(bundle, device="cpu", threads=1)
    assert cached_analysis(paper, recalibrated.model_id, cache, need_vectors=False)[0] is None
    fresh = analyze_paper(paper, recalibrated)
    old = cached_analysis(paper, model.model_id, cache, need_vectors=False)[0]
    assert old is not None and fresh.roles[0].confidence != old.roles[0].confidence


# -- 13: a bundle is one self-contained folder ----------------------------------------------------------
@pytest.mark.parametrize("name", ["/etc/passwd", "../bundle0/roles.onnx", "sub/roles.onnx", "a\\b.onnx",
                                  ".."])
def test_files_outside_the_bundle_folder_are_refused(bundle: Path, name: str) -> None:
    _edit(bundle, lambda d: d["files"].update({name: "0" * 64}))
    with pytest.raises(ModelError) as error:
        verify_bundle(bundle)
    assert f"'files' names {name!r}, not a file of the bundle folder" in _one_line(error)


def test_a_graph_outside_the_bundle_folder_is_refused(bundle: Path) -> None:
    graphs = {"sentences": "model.onnx", "roles": "../x/roles.onnx"}
    _edit(bundle, lambda d: d["context"].update(graphs=graphs))
    with pytest.raises(ModelError) as error:
        verify_bundle(bundle)
    text = _one_line(error)
    assert "'context.graphs.roles' names '../x/roles.onnx', not a file of the bundle folder" in text


def test_a_graph_with_external_data_is_refused_even_when_its_data_is_pinned(bundle: Path) -> None:
    import onnx

    model = onnx.load(str(bundle / "model.onnx"))
    onnx.save_model(model, str(bundle / "model.onnx"), save_as_external_data=True, location="model.bin",
                    size_threshold=0)
    manifest = read_manifest(bundle)
    write_manifest(bundle, manifest, (*manifest.files, "model.bin"))
    with pytest.raises(ModelError) as error:
        load_model(bundle, device="cpu", threads=1)
    assert _one_line(error).startswith(f"incompatible model bundle {bundle}: model.onnx keeps weights in a "
                                       "separate file")


def test_a_graph_that_is_not_onnx_is_one_line(bundle: Path) -> None:
    (bundle / "model.onnx").write_bytes(b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")
    _repin(bundle)
    with pytest.raises(ModelError) as error:
        verify_bundle(bundle)
    assert _one_line(error).startswith(f"cannot load {bundle / 'model.onnx'}: not an ONNX graph")


# -- 5 (the model bundle part): outputs never replace a file of a model bundle -------------------------
@pytest.mark.parametrize("name", ["manifest.json", "model.onnx", "tokenizer.json"])
def test_json_output_over_a_file_of_the_model_bundle_is_refused(bundle: Path, tmp_path: Path, name: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    draft = tmp_path / "draft.txt"
    draft.write_text("We propose a new method.\n", encoding="utf-8")
    before = (bundle / name).read_bytes()
    target = bundle / name
    assert main(["analyze", str(draft), "--model", str(bundle), "--no-cache", "--json", str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"rhetorica: error: {target}: is a file of the model bundle {bundle}; write --json to "
                   "another file"]
    assert (bundle / name).read_bytes() == before
    verify_bundle(bundle)


def test_an_output_linked_to_a_bundle_file_is_refused(bundle: Path, tmp_path: Path) -> None:
    from app.commands._options import check_output_file

    link = tmp_path / "out.json"
    link.symlink_to(bundle / "manifest.json")
    with pytest.raises(RhetoricaError, match="is a file of the model bundle"):
        check_output_file(link, "--json")
    assert check_output_file(bundle / "notes.json", "--json") == bundle / "notes.json"  # a new file: fine
    (bundle / "report.json").write_text("{}", encoding="utf-8")  # not pinned: a report may be rewritten
    assert check_output_file(bundle / "report.json", "--json") == bundle / "report.json"
    assert check_output_file(tmp_path / "manifest.json", "--json") == tmp_path / "manifest.json"


def test_eval_json_over_the_model_is_refused_before_it_runs(bundle: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_code:
        main(["eval", "roles", "--data", "csabstruct", "--split", "dev", "--limit", "1",
              "--model", str(bundle), "--json", str(bundle / "model.onnx")])
    assert exit_code.value.code == 2
    assert "is a file of the model bundle" in capsys.readouterr().err


# -- minor issues m2, m5 -----------------------------------------------------------------------------
def test_rhetorica_threads_not_a_number_is_one_line(bundle: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RHETORICA_THREADS", "abc")
    with pytest.raises(ModelError, match="RHETORICA_THREADS must be a whole number of threads, not 'abc'"):
        load_model(bundle, device="cpu")
    draft = tmp_path / "draft.txt"
    draft.write_text("We propose a new method.\n", encoding="utf-8")
    assert main(["analyze", str(draft), "--model", str(bundle), "--quiet", "--no-cache"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["rhetorica: error: RHETORICA_THREADS must be a whole number of threads, not 'abc'"]


def test_a_phrase_corpus_pack_is_named_as_such(tmp_path: Path) -> None:
    pack = tmp_path / "corpus"
    pack.mkdir()
    (pack / "manifest.json").write_text(json.dumps({"format": "rhetorica-phrase-corpus", "version": 1}),
                                        encoding="utf-8")
    with pytest.raises(ModelError) as error:
        load_model(pack, device="cpu", threads=1)
    assert _one_line(error).startswith(f"{pack} is a phrase-corpus pack, not a model bundle")
