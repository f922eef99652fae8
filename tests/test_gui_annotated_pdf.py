"""File › Export as › "Export annotated PDF…" (issue 27.4): a background job writes the open PDF with
the palette's role colours as highlight annotations; a path that cannot be written is one banner line."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")
pymupdf = pytest.importorskip("pymupdf")

from PySide6.QtWidgets import QMenu  # noqa: E402

from core.exporting.label_words import role_words  # noqa: E402
from core.taxonomy.role_colors import hex_to_rgb  # noqa: E402
from tests.gui_helpers import TIMEOUT_MS, open_window, wait_released  # noqa: E402
from tests.pdf_factory import two_column_pdf  # noqa: E402


@pytest.fixture
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path_factory.mktemp("tiny") / "bundle")


def _run(qtbot, window, path: Path):  # type: ignore[no-untyped-def]
    worker = window.exporter.export_annotated_pdf(path)
    assert worker is not None
    wait_released(qtbot, worker)
    qtbot.waitUntil(lambda: window.exporter.annotating is None, timeout=TIMEOUT_MS)
    return worker


def test_export_annotated_pdf_in_the_background(qtbot, bundle: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    pdf = two_column_pdf(tmp_path / "paper.pdf")
    for window in open_window(qtbot, bundle):
        exporter = window.exporter
        texts = [a.text() for menu in window.menuBar().findChildren(QMenu) for a in menu.actions()]
        assert "Export annotated &PDF…" in texts
        assert exporter.export_annotated_pdf(tmp_path / "early.pdf") is None  # nothing open yet
        with qtbot.waitSignal(window.analysisShown, timeout=TIMEOUT_MS):
            assert window.open_path(pdf)
        assert exporter.suggested_annotated_path() == str(tmp_path / "paper-roles.pdf")
        roles = window.session.analysis.roles
        role = roles[0].label
        window.palette_.set_color(role, "#123456")
        _run(qtbot, window, tmp_path / "out" / "annotated")  # ".pdf" is added
        out = tmp_path / "out" / "annotated.pdf"
        assert "highlight(s) for" in window.statusBar().currentMessage()
        with pymupdf.open(out) as doc:
            annots = [a for page in doc for a in page.annots()]
            assert len(annots) >= len(roles)
            first = annots[0]
            assert first.info["subject"] == role
            assert first.info["content"].startswith(f"Role: {role_words(roles[0])}\n")
            assert tuple(first.colors["stroke"]) == pytest.approx(hex_to_rgb("#123456"), abs=0.01)
        blocker = tmp_path / "blocker"
        blocker.write_text("a file", encoding="utf-8")
        _run(qtbot, window, blocker / "x.pdf")
        assert window.banner.text.startswith(f"Could not write {blocker / 'x.pdf'}: ")
        assert "\n" not in window.banner.text
