"""Shared pytest helpers.  Append carefully: every engineer uses this file."""

from __future__ import annotations

import os
from pathlib import Path

# Qt tests run without a display (pytest-qt); set before anything imports Qt.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# No onnxruntime telemetry in tests either (models/__init__.py sets it for the app).
os.environ["ORT_DISABLE_TELEMETRY"] = "1"

from collections.abc import Iterator

import pytest

from core.paths import shared_dir

SHARED = shared_dir()


def shared_path(*parts: str) -> Path:
    """A path under ``/work/shared`` (``../shared``); skips the test when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path} (set RHETORICA_SHARED)")
    return path


@pytest.fixture
def shared() -> Path:
    """The shared data folder; the test is skipped when it is absent."""
    return shared_path()


requires_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared data folder absent: {SHARED}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``@pytest.mark.shared`` are skipped cleanly when the shared folder is absent."""
    if SHARED.is_dir():
        return
    skip = pytest.mark.skip(reason=f"shared data folder absent: {SHARED} (set RHETORICA_SHARED)")
    for item in items:
        if "shared" in item.keywords:
            item.add_marker(skip)


def write_function_training_files(folder: Path, labelled: list[tuple[str, str]]) -> tuple[Path, Path]:
    """(labels.jsonl, train.jsonl) for tiny training runs: ``labelled`` (text, function id) rows as
    'rhetorica data functions' writes them, and the first 4 CSAbstruct train abstracts as role data."""
    import json

    from models.datasets import load_dataset

    labels = folder / "labels.jsonl"
    rows = [{"text": t, "function": f, "section_kind": "abstract", "source": "test"} for t, f in labelled]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    train = folder / "train.jsonl"
    docs = load_dataset("csabstruct", "train", shared_path())[:4]
    train.write_text("".join(json.dumps({"doc_id": d.doc_id, "sentences": d.sentences, "labels": d.labels})
                             + "\n" for d in docs), encoding="utf-8")
    return labels, train


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """Every list of texts the model tokenizes for its sentence graph, in call order (how the tests
    of one analysis per paper count encoder runs)."""
    from models.encoder import EncoderModel

    calls: list[list[str]] = []
    real = EncoderModel.tokenize

    def counting(self, sentences):  # type: ignore[no-untyped-def]
        calls.append(list(sentences))
        return real(self, sentences)

    monkeypatch.setattr(EncoderModel, "tokenize", counting)
    yield calls


@pytest.fixture(autouse=True)
def _no_real_unsaved_draft_question(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test meets the real "Save changes to …?" dialog of the draft pane (a modal offscreen waits
    forever): the answer is Discard unless the test patches ``DraftFiles._ask_unsaved`` itself; the same
    for its other questions (``app.gui.panels.draft_questions``)."""
    import sys

    if "PySide6" not in sys.modules:
        return
    from app.gui.panels.draft_files import DISCARD, DraftFiles
    from app.gui.panels.draft_questions import CANCEL

    monkeypatch.setattr(DraftFiles, "_ask_unsaved", lambda _self, _question: DISCARD)
    # nor "X changed on disk" (Cancel: not saved) nor "Replace X?" (no: not saved)
    monkeypatch.setattr(DraftFiles, "_ask_changed_on_disk", lambda _self, _message: CANCEL)
    monkeypatch.setattr(DraftFiles, "_ask_replace", lambda _self, _question: False)


@pytest.fixture(autouse=True)
def _no_real_export_running_question(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test meets the real "An export is still being written" question of a window closed while an
    export runs (a modal offscreen waits forever): the answer is "Quit anyway" (the export is cancelled, as
    closing did before the question) unless the test patches ``file_writes.ask_while_writing`` itself."""
    import sys

    if "PySide6" not in sys.modules:
        return
    from app.gui import file_writes

    monkeypatch.setattr(file_writes, "ask_while_writing", lambda _parent, _labels: file_writes.QUIT)
