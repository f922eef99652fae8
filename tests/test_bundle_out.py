"""Where a new bundle is written: never over a bundle, never half-made (hostile test D, problems 1-4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.errors import ModelError
from models.bundle import default_bundle_path, read_manifest, verify_bundle, write_manifest
from models.training.bundle_out import refuse_bundle_out, staged_bundle
from tests.tiny_bundle import make_tiny_bundle


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_staged_bundle_appears_under_its_name_only_when_complete(tmp_path: Path) -> None:
    out = tmp_path / "new"
    with staged_bundle(out) as stage:
        make_tiny_bundle(stage)
        assert not out.exists() and stage.parent == tmp_path and stage.name.startswith(".new.")
    verify_bundle(out)
    assert _names(tmp_path) == ["new"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with staged_bundle(empty) as stage:
        make_tiny_bundle(stage)
    verify_bundle(empty)
    other = tmp_path / "other"  # a folder with other files, no bundle: the bundle's files join them
    other.mkdir()
    (other / "notes.txt").write_text("mine", encoding="utf-8")
    with staged_bundle(other) as stage:
        make_tiny_bundle(stage)
    verify_bundle(other)
    assert (other / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert _names(tmp_path) == ["empty", "new", "other"]


@pytest.mark.parametrize("error", [KeyboardInterrupt, ModelError])
def test_an_interrupted_build_leaves_nothing_that_loads(tmp_path: Path, error: type[BaseException]) -> None:
    out = tmp_path / "new"
    with pytest.raises(error), staged_bundle(out) as stage:
        make_tiny_bundle(stage)  # a complete first manifest, as export writes before the carried parts
        raise error("killed")
    assert _names(tmp_path) == []


def test_an_out_that_holds_a_bundle_or_is_a_source_or_the_shipped_model_is_refused(tmp_path: Path) -> None:
    source = make_tiny_bundle(tmp_path / "source")
    before = _names(source)
    with pytest.raises(ModelError, match=r"is the bundle you train from; write the new bundle to a new"):
        refuse_bundle_out(source, sources=[("the bundle you train from", tmp_path / "." / "source")])
    with pytest.raises(ModelError, match=r"already holds a model bundle \(manifest.json\); give --out a new"):
        refuse_bundle_out(source)
    with pytest.raises(ModelError, match="already holds a model bundle"), staged_bundle(source):
        pass
    with pytest.raises(ModelError, match="is the shipped model"):
        refuse_bundle_out(default_bundle_path())
    assert _names(source) == before
    assert refuse_bundle_out(tmp_path / "fresh") == tmp_path / "fresh"


def test_export_refuses_an_existing_bundle_before_any_work(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from models.training.export import ExportOptions, export_bundle

    source = make_tiny_bundle(tmp_path / "source")

    class Untouchable:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"the net was used ({name}) before --out was checked")

    for out in (source, tmp_path / "other"):
        if out != source:
            make_tiny_bundle(out)
        with pytest.raises(ModelError, match=r"already holds a model bundle|sentence graphs are reused"):
            export_bundle(Untouchable(), tmp_path, out,  # type: ignore[arg-type]
                          ExportOptions(reuse_sentence_graphs=source), [])


@pytest.mark.parametrize("command", [
    ["export", "CK", "--out", "SOURCE"],
    ["export", "CK", "--out", "SOURCE2", "--reuse-sentence-graphs", "SOURCE2"],
    ["train", "corrections", "--bundle", "SOURCE", "--out", "SOURCE", "--library", "LIB"],
    ["train", "corrections", "--bundle", "SOURCE", "--out", "OTHER", "--library", "LIB"],
    ["train", "corrections", "--bundle", "OTHER", "--out", "SHIPPED", "--library", "LIB"],
])
def test_the_commands_refuse_such_an_out_in_one_line_before_any_work(tmp_path: Path, capsys,
                                                                     command: list[str]) -> None:
    from app.cli import main

    source = make_tiny_bundle(tmp_path / "source")
    other = make_tiny_bundle(tmp_path / "other")
    (tmp_path / "lib").mkdir()
    (tmp_path / "ck.pt").write_bytes(b"not read")
    names = {"CK": tmp_path / "ck.pt", "SOURCE": source, "SOURCE2": tmp_path / "source" / ".." / "source",
             "OTHER": other, "SHIPPED": default_bundle_path(), "LIB": tmp_path / "lib"}
    shipped = {p.name: p.stat().st_mtime_ns for p in default_bundle_path().iterdir()}
    assert main([str(names.get(word, word)) for word in command]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ("already holds a model bundle" in err[0] or "is the bundle" in err[0]
                              or "is the shipped model" in err[0]), err
    verify_bundle(source), verify_bundle(other)
    assert {p.name: p.stat().st_mtime_ns for p in default_bundle_path().iterdir()} == shipped


@pytest.mark.parametrize("epochs", ["101", "100000"])
def test_train_corrections_epochs_are_bounded(tmp_path: Path, capsys, epochs: str) -> None:
    from app.cli import main

    with pytest.raises(SystemExit):
        main(["train", "corrections", "--out", str(tmp_path / "b"), "--epochs", epochs])
    assert "--epochs" in capsys.readouterr().err


def _source_with_function_side(folder: Path) -> Path:
    """A tiny bundle with functions, a none detector, a role prior and role temperatures."""
    from models.none_detector import NoneDetector, write_none_detector

    bundle = make_tiny_bundle(folder, functions=True)
    manifest = read_manifest(bundle)
    detector = NoneDetector(("department", "kind=other"), np.ones(2, np.float32),
                            np.array([9.0, 0.0], np.float32), -6.0)
    context = dict(manifest.context)
    functions = dict(context["functions"])
    functions["none_detector"] = write_none_detector(bundle, detector, {"fitted_on": "test"})
    functions["role_prior"] = {"alpha": 0.5, "threshold": 0.3}
    context["functions"] = functions
    context["role_calibration"] = {"role_head": {"temperature": 1.5}, "body_head": {"temperature": 1.25}}
    manifest.context = context
    write_manifest(bundle, manifest, (*manifest.files, "none_detector.npz"))
    return bundle


def test_a_corrections_bundle_keeps_its_sources_function_side_and_appears_only_when_whole(
        tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("torch")
    import models.training.checkpoint as checkpoint
    import models.training.figure_head as figure_head
    import models.training.pipeline as pipeline
    from models.encoder import load_model
    from models.training.corrections import CorrectionJob, CorrectionReport, _export

    source = _source_with_function_side(tmp_path / "source")

    def fake_export(_checkpoint: Path, bundle_dir: Path, **_kw: Any) -> None:
        # what export_checkpoint(..., reuse_sentence_graphs=source) writes: a new manifest without
        # the source's none detector, role prior and role calibration
        with staged_bundle(bundle_dir) as stage:
            make_tiny_bundle(stage, functions=True)

    monkeypatch.setattr(checkpoint, "save_checkpoint", lambda *a, **k: None)
    monkeypatch.setattr(pipeline, "export_checkpoint", fake_export)
    report = CorrectionReport({"role": 30}, {}, {}, True, "ok", 0.1, 1)
    job = CorrectionJob(bundle=source, corrections=[], work=tmp_path / "work",
                        out=tmp_path / "models" / "new")
    _export(None, tmp_path, job, report, read_manifest(source), None)  # type: ignore[arg-type]

    new, old = verify_bundle(job.out), read_manifest(source)
    assert new.context["functions"]["none_detector"] == old.context["functions"]["none_detector"]
    assert new.context["functions"]["role_prior"] == old.context["functions"]["role_prior"]
    calibration = new.context["role_calibration"]
    assert calibration["role_head"] == {"temperature": 1.5}
    assert calibration["body_head"]["temperature"] == 1.25
    assert "not refitted" in calibration["note"]
    assert (job.out / "none_detector.npz").read_bytes() == (source / "none_detector.npz").read_bytes()
    model = load_model(job.out, device="cpu")
    assert model._none_detector is not None  # the runtime reads the carried detector
    assert _names(tmp_path / "models") == ["new"]

    def killed(*_args: Any) -> None:  # interrupted between the first manifest and the carried parts
        raise KeyboardInterrupt

    monkeypatch.setattr(figure_head, "carry_figure_head", killed)
    job = CorrectionJob(bundle=source, corrections=[], work=tmp_path / "work", out=tmp_path / "models" / "x")
    with pytest.raises(KeyboardInterrupt):
        _export(None, tmp_path, job, report, read_manifest(source), None)  # type: ignore[arg-type]
    assert _names(tmp_path / "models") == ["new"]
    assert json.loads((source / "manifest.json").read_text(encoding="utf-8"))["context"]["role_calibration"]


def test_quantising_does_not_print_onnxruntimes_preprocessing_advice(tmp_path: Path, caplog) -> None:
    """Hostile test D, m4: "WARNING:root:Please consider to run pre-processing…", 2-3 times an export."""
    pytest.importorskip("onnxruntime")
    import logging

    from models.training.quantize import quantize_int8

    source = make_tiny_bundle(tmp_path / "b") / "model.onnx"
    with caplog.at_level(logging.WARNING):
        quantize_int8(source, tmp_path / "int8.onnx")
    assert (tmp_path / "int8.onnx").is_file()
    assert not [r for r in caplog.records if "pre-processing" in r.getMessage()]
    logging.getLogger().warning("Please consider something else")  # the filter is gone afterwards
    assert caplog.records
