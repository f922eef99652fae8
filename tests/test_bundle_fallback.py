"""A damaged bundle is refused in one clear line, and the GUI falls back to the shipped model.

Each case damages a copy of the tiny test bundle one way (a missing file, an altered file, an
incompatible manifest or graph); ``load_model`` must refuse it with a one-line
:class:`ModelError`, ``rhetorica --model BAD`` must print ``rhetorica: error: …`` and exit 2,
and the GUI's :class:`ModelHolder` must load the shipped default instead, with a one-line notice.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from core.errors import ModelError
from models.bundle import read_manifest, write_manifest
from models.encoder import load_model
from tests.tiny_bundle import make_tiny_bundle


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("good") / "bundle")


def _missing(bundle: Path) -> None:
    (bundle / "tokenizer.json").unlink()


def _altered(bundle: Path) -> None:
    with open(bundle / "model.onnx", "ab") as handle:
        handle.write(b"\0")


def _edit_manifest(bundle: Path, **changes: object) -> None:
    path = bundle / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**data, **changes}), encoding="utf-8")


def _newer_format(bundle: Path) -> None:
    _edit_manifest(bundle, format=2)


def _wrong_width(bundle: Path) -> None:
    manifest = read_manifest(bundle)
    manifest.embedding_dim = 16  # the graph's sentence_embedding is 8 wide; hashes still match
    write_manifest(bundle, manifest, tuple(manifest.files))


def _wrong_labels(bundle: Path) -> None:
    manifest = read_manifest(bundle)
    manifest.labels = manifest.labels[:-1]  # role_logits has one column more
    write_manifest(bundle, manifest, tuple(manifest.files))


def _foreign_tokenizer(bundle: Path) -> None:
    path = bundle / "tokenizer.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["model"]["vocab"]["method"] = 10_000_000  # past the graph's embedding table
    path.write_text(json.dumps(data), encoding="utf-8")
    write_manifest(bundle, read_manifest(bundle), tuple(read_manifest(bundle).files))


def _zero_temperature(bundle: Path) -> None:
    _edit_manifest(bundle, context={**read_manifest(bundle).context,
                                    "role_calibration": {"role_head": {"temperature": 0}}})


def _unpinned_graph(bundle: Path) -> None:
    manifest = read_manifest(bundle)
    shutil.copy2(bundle / "model.onnx", bundle / "roles.onnx")
    manifest.context = {**manifest.context, "graphs": {"sentences": "model.onnx", "roles": "roles.onnx"}}
    write_manifest(bundle, manifest, tuple(manifest.files))  # roles.onnx left out of 'files'


def _extra_input(bundle: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    model = onnx.load(str(bundle / "model.onnx"))
    model.graph.input.append(helper.make_tensor_value_info("speaker_id", TensorProto.INT64, ["n"]))
    onnx.save(model, str(bundle / "model.onnx"))
    write_manifest(bundle, read_manifest(bundle), tuple(read_manifest(bundle).files))


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "missing file": (_missing, r"is incomplete: tokenizer\.json is missing"),
    "altered file": (_altered, r"is altered: model\.onnx does not match its sha256"),
    "newer format": (_newer_format, r"format 2 is not supported \(an incompatible bundle.*update Rhetorica"),
    "embedding width": (_wrong_width, r"output 'sentence_embedding' has width 8 but the manifest says 16"),
    "label count": (_wrong_labels, r"output 'role_logits' has width 6 but the manifest says 5"),
    "foreign tokenizer": (_foreign_tokenizer, r"tokenizer\.json has token ids up to 10000000, more than "),
    "zero temperature": (_zero_temperature, r"role_head\.temperature' must be between 0\.05 and 20, not 0"),
    "unpinned graph": (_unpinned_graph, r"incompatible model bundle .*roles\.onnx .*does not pin it"),
    "graph input": (_extra_input, r"incompatible model bundle .*model\.onnx needs input\(s\) speaker_id"),
}


def damaged(good: Path, tmp_path: Path, case: str) -> Path:
    bundle = tmp_path / case.replace(" ", "-")
    shutil.copytree(good, bundle)
    CASES[case][0](bundle)
    return bundle


@pytest.mark.parametrize("case", list(CASES))
def test_damaged_bundle_is_refused_in_one_line(good: Path, tmp_path: Path, case: str) -> None:
    bundle = damaged(good, tmp_path, case)
    with pytest.raises(ModelError, match=CASES[case][1]) as error:
        load_model(bundle, device="cpu", threads=1)
    message = str(error.value)
    assert message and "\n" not in message and str(bundle) in message


def test_good_copy_loads(good: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(good, copy)
    assert load_model(copy, device="cpu", threads=1).labels


@pytest.mark.parametrize("case", ["missing file", "newer format"])
def test_cli_refuses_a_bad_model_with_exit_2(good: Path, tmp_path: Path, case: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    bundle = damaged(good, tmp_path, case)
    assert main(["suggest", "We propose a new method.", "--model", str(bundle)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rhetorica: error: ")
    assert str(bundle) in err[0]


# -- the GUI's model holder falls back to the shipped default -------------------------------------

pytest.importorskip("pytestqt")


@pytest.fixture
def shipped(good: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny good bundle stands in for the shipped default (fast to load)."""
    import models.bundle

    monkeypatch.setattr(models.bundle, "default_bundle_path", lambda: good)
    return good


def _holder(path: Path | None):  # type: ignore[no-untyped-def]
    from app.gui.job_tracker import JobTracker
    from app.gui.model_holder import ModelHolder, ModelOptions

    tracker = JobTracker()
    holder = ModelHolder(tracker, ModelOptions(path=str(path) if path else None, device="cpu", threads=1))
    return tracker, holder


def _wait_settled(qtbot, holder) -> None:  # type: ignore[no-untyped-def]
    holder.request()
    qtbot.waitUntil(lambda: holder.state in ("ready", "failed"), timeout=60_000)


@pytest.mark.parametrize("case", list(CASES))
def test_holder_falls_back_to_the_shipped_model(qtbot, shipped: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                case: str) -> None:
    bundle = damaged(shipped, tmp_path, case)
    _tracker, holder = _holder(bundle)
    notices: list[str] = []
    holder.noticed.connect(notices.append)
    with qtbot.waitSignal(holder.ready, timeout=60_000) as ready:
        holder.request()
    assert holder.state == "ready" and holder.error is None and holder.using_fallback
    assert ready.args[0].bundle_dir == shipped
    assert notices == [holder.notice]
    notice = holder.notice
    assert "\n" not in notice
    assert notice.startswith(f"Your model at {bundle} could not be used (")
    assert notice.endswith("); using the shipped model.")
    assert json.dumps(notice)  # plain text


def test_holder_missing_folder_falls_back(qtbot, shipped: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _tracker, holder = _holder(tmp_path / "no-such-bundle")
    _wait_settled(qtbot, holder)
    assert holder.state == "ready" and "model bundle not found" in holder.notice


def test_holder_good_model_has_no_notice(qtbot, shipped: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    copy = tmp_path / "mine"
    shutil.copytree(shipped, copy)
    _tracker, holder = _holder(copy)
    _wait_settled(qtbot, holder)
    assert holder.state == "ready" and holder.notice == "" and not holder.using_fallback
    assert holder.model.bundle_dir == copy


def test_holder_fails_cleanly_when_the_shipped_model_is_bad_too(qtbot, good: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import models.bundle

    broken_default = damaged(good, tmp_path, "altered file")
    monkeypatch.setattr(models.bundle, "default_bundle_path", lambda: broken_default)
    mine = damaged(good, tmp_path, "missing file")
    _tracker, holder = _holder(mine)
    failures: list[Exception] = []
    holder.failed.connect(failures.append)
    _wait_settled(qtbot, holder)
    assert holder.state == "failed" and holder.model is None and failures
    message = str(holder.error)
    assert "\n" not in message and "tokenizer.json is missing" in message
    assert "the shipped model could not be used either" in message and "is altered" in message


def test_settings_model_path_falls_back_in_the_window(qtbot, shipped: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The model chosen in Settings is broken: the window still gets a model (the shipped one)."""
    from app.gui.settings import AppSettings
    from tests.gui_helpers import open_window

    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    settings = AppSettings()
    settings.model_path = str(damaged(shipped, tmp_path, "altered file"))
    for window in open_window(qtbot, None, settings=settings):
        qtbot.waitUntil(lambda w=window: w.models.state in ("ready", "failed"), timeout=60_000)
        assert window.models.state == "ready" and window.models.using_fallback
        assert window.models.model.bundle_dir == shipped
        assert "could not be used" in window.models.notice
