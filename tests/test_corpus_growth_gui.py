"""The phrase corpus grows in the background once the GUI's model is ready (issue 28.4), through the
job tracker (progress, Cancel); a cancelled growth resumes at the next start; ``rhetorica bench corpus``
reports the time from a fresh start to the first suggestions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from app.gui.corpus_growth_job import LABEL, CorpusGrowth, growth_needed
from app.gui.job_tracker import JobTracker
from app.gui.model_holder import ModelHolder, ModelOptions
from core.library.corpus_growth import GrowthPaths, growth_status
from core.library.pack import PackCorpus, build_pack, file_sha256
from tests.gui_helpers import wait_released
from tests.test_corpus_growth import BASE, EXTRA
from tests.tiny_bundle import make_tiny_bundle

TIMEOUT_MS = 240_000  # two model loads and a job run at nice 10 on a busy 2-core machine


@pytest.fixture
def resources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(a bundle, the user folder): a shipped pack and extra text of that bundle in a resources
    folder of the test's own."""
    import core.paths
    from core.library.corpus_extra import write_extra
    from models import load_model

    bundle = make_tiny_bundle(tmp_path / "bundle", functions=True)
    model = load_model(bundle, device="cpu", threads=1)
    shipped = tmp_path / "resources"
    build_pack(BASE, model, shipped / "corpus",
               {"model_id": model.model_id, "model_sha256": file_sha256(bundle / "model.onnx")})
    write_extra(shipped / "corpus-extra", EXTRA, base=shipped / "corpus")
    monkeypatch.setattr(core.paths, "resources_dir", lambda: shipped)
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    return bundle, tmp_path / "home"


def _holder(tracker: JobTracker, bundle: Path) -> ModelHolder:
    return ModelHolder(tracker, ModelOptions(path=str(bundle), device="cpu", threads=1))


def test_the_corpus_grows_in_the_background_once_the_model_is_ready(qtbot, resources) -> None:
    bundle, home = resources
    tracker = JobTracker()
    models = _holder(tracker, bundle)
    lines: list[str] = []
    growth = CorpusGrowth(tracker, models, lines.append)
    labels: list[str] = []
    tracker.progress.connect(lambda label, *_: labels.append(label))
    growth.start_when_ready()
    assert growth.worker is None  # waits for the model
    with qtbot.waitSignal(growth.grown, timeout=TIMEOUT_MS) as grown:
        models.request()
    assert grown.args == [8] and lines == ["Phrase corpus grown: 8 sentences"]
    assert LABEL in labels  # shown in the status bar with its progress
    assert len(PackCorpus(home / "corpus")) == 8
    assert growth_status(GrowthPaths.default()).state == "grown"
    assert not growth_needed(bundle)  # the next start does nothing
    again = CorpusGrowth(tracker, models)
    again.start_when_ready()
    assert again.worker is None


def test_a_cancelled_growth_resumes_at_the_next_start(qtbot, resources) -> None:
    bundle, home = resources
    tracker = JobTracker()
    models = _holder(tracker, bundle)
    with qtbot.waitSignal(models.ready, timeout=TIMEOUT_MS):
        models.request()
    lines: list[str] = []
    growth = CorpusGrowth(tracker, models, lines.append)
    growth.start_when_ready()
    worker = growth.worker
    assert worker is not None
    assert tracker.cancel_all() == 1  # the status bar's Cancel, before its model has loaded
    wait_released(qtbot, worker, TIMEOUT_MS)
    assert not (home / "corpus").exists() and growth_status(GrowthPaths.default()).state == "needed"
    assert lines == ["Phrase corpus: growing paused; it resumes at the next start"]
    later = CorpusGrowth(tracker, models)
    with qtbot.waitSignal(later.grown, timeout=TIMEOUT_MS) as grown:
        later.start_when_ready()
    assert grown.args == [8]


def test_another_model_does_not_grow_the_shipped_corpus(resources, tmp_path: Path) -> None:
    other = make_tiny_bundle(tmp_path / "other", functions=True, seed=3)
    assert not growth_needed(other) and not growth_needed(None)
    assert growth_needed(resources[0])


@pytest.mark.shared
def test_bench_corpus_times_a_fresh_start_to_the_first_suggestions(tmp_path: Path) -> None:
    from app.cli import main

    out = tmp_path / "bench.json"
    assert main(["bench", "corpus", "--runs", "1", "--json", str(out)]) == 0
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    for kind in ("cli", "gui"):
        run = report[kind]["runs"][0]
        assert run["suggestions"] > 0 and run["seconds"] > 0 and run["corpus_sentences"] > 0, kind
