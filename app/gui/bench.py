"""GUI start-up and responsiveness measurements (used by ``rhetorica bench gui``).

- cold start: wall clock from launching ``python -m app gui`` in a fresh process to the window's
  first paint (the child prints the time of its first paint; the parent started the clock just
  before spawning it);
- in this process, with the model loaded first: time from ``open_path`` to the first page painted,
  to the role overlays shown, and the UI event-loop latency (a 10 ms timer's real gaps) while the
  paper is parsed and labelled; then the same paper reopened from the analysis cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEventLoop, QTimer, SignalInstance

from app.gui.app import application, shutdown
from app.gui.latency import LatencyProbe
from app.gui.main_window import MainWindow

TAIL_S = 0.5  # latency is also recorded for this long after both the first page and the roles are shown


def cold_start(runs: int = 3, env: dict[str, str] | None = None, timeout: float = 120.0,
               pdf: str | None = None) -> list[dict[str, float]]:
    """Per run, seconds from spawning ``python -m app gui [PDF]`` to its first painted window
    (``window_s``) and, with a PDF, to the PDF's first page painted (``first_page_s``)."""
    results = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="rhetorica-bench-") as home:
            child_env = dict(os.environ if env is None else env)
            child_env["RHETORICA_HOME"] = home
            child_env.setdefault("QT_QPA_PLATFORM", "offscreen")
            command = [sys.executable, "-m", "app", "gui", "--exit-when-shown", *([pdf] if pdf else [])]
            start = time.time()
            proc = subprocess.run(command, env=child_env, capture_output=True, text=True, timeout=timeout)
            marks = {}
            for line in proc.stdout.splitlines():
                key, _, value = line.partition(" ")
                if key in ("RHETORICA_SHOWN", "RHETORICA_FIRST_PAGE"):
                    marks[key] = float(value) - start
                elif key == "RHETORICA_ERROR":
                    raise RuntimeError(f"the GUI reported an error: {value}")
            if "RHETORICA_SHOWN" not in marks or (pdf and "RHETORICA_FIRST_PAGE" not in marks):
                raise RuntimeError(f"the GUI did not report its first paint (exit {proc.returncode}): "
                                   f"{proc.stderr.strip()[-400:]}")
            run = {"window_s": marks["RHETORICA_SHOWN"]}
            if pdf:
                run["first_page_s"] = marks["RHETORICA_FIRST_PAGE"]
            results.append(run)
    return results


def _wait(signal: SignalInstance, timeout_s: float, condition: Callable[[], bool] | None = None) -> bool:
    """Run the event loop until ``signal`` fires (or ``condition()`` is already true) or timeout."""
    if condition is not None and condition():
        return True
    loop = QEventLoop()
    fired = {"ok": False}

    def done(*_: object) -> None:
        fired["ok"] = True
        loop.quit()

    signal.connect(done)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    loop.exec()
    signal.disconnect(done)
    return fired["ok"]


def _run_events(seconds: float) -> None:
    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()


def open_and_measure(window: MainWindow, pdf: str, timeout_s: float = 600.0) -> dict[str, Any]:
    """Open ``pdf`` in ``window``; times to first page / overlays shown and event-loop latency.

    The latency probe runs from ``open_path`` until the first page, the role overlays and the paper's
    embedded analysis (``Session.analysisEmbedded``) are all there, plus ``TAIL_S``.
    """
    probe = LatencyProbe(10)
    marks: dict[str, float] = {}
    window.firstPageShown.connect(lambda: marks.setdefault("first_page", time.perf_counter()))
    window.analysisShown.connect(lambda _n: marks.setdefault("analysis", time.perf_counter()))
    window.errorShown.connect(lambda m: marks.setdefault("error", time.perf_counter()) and None)
    window.session.analysisEmbedded.connect(lambda _a: marks.setdefault("embedded", time.perf_counter()))
    probe.start()
    start = time.perf_counter()
    window.open_path(pdf)
    _wait(window.analysisShown, timeout_s, lambda: "analysis" in marks)
    _wait(window.firstPageShown, 30, lambda: "first_page" in marks)
    # the paper's embedded analysis (both views, what the panels read) follows the overlays
    _wait(window.session.analysisEmbedded, timeout_s, lambda: "embedded" in marks)
    _run_events(TAIL_S)  # keep probing while the tail settles
    stats = probe.stop()
    if "analysis" not in marks:
        raise RuntimeError(f"the analysis was not shown within {timeout_s:.0f} s: {window.banner.text}")
    paper = window.session.paper
    return {
        "first_page_s": marks.get("first_page", float("nan")) - start,
        "analysis_shown_s": marks["analysis"] - start,
        "embedded_s": marks.get("embedded", float("nan")) - start,
        "sentences": len(paper.sentences) if paper else 0,
        "pages": paper.page_count if paper else 0,
        "overlay_items": len(window.page_view.overlay_items),
        "from_cache": dict(window.session.from_cache),
        "latency": stats.to_dict(),
    }


def run_bench(pdf: str, model: str | None = None, cold_runs: int = 3) -> dict[str, Any]:
    results: dict[str, Any] = {"pdf": str(pdf)}
    results["cold_start"] = cold_start(cold_runs)
    results["cold_start_with_pdf"] = cold_start(cold_runs, pdf=pdf)
    app = application()
    with tempfile.TemporaryDirectory(prefix="rhetorica-bench-") as home:
        os.environ["RHETORICA_HOME"] = home  # empty cache and settings
        window = MainWindow(model_path=model, load_model_at_start=False)
        window.resize(1500, 950)
        window.show()
        app.processEvents()
        start = time.perf_counter()
        window.models.request()
        _wait(window.models.ready, 300, lambda: window.models.model is not None)
        loaded = window.models.model
        if loaded is None:
            raise RuntimeError(f"model did not load: {window.models.error}")
        results["model_load_s"] = time.perf_counter() - start
        results["model_id"] = loaded.model_id
        results["uncached"] = open_and_measure(window, pdf)
        window.close_paper()
        app.processEvents()
        results["cached_reopen"] = open_and_measure(window, pdf)
        window.close()
        shutdown(window)
    return results


def training_latency(timeout_s: float = 1200.0) -> dict[str, Any]:
    """The main window with the sample paper open trains on the library's corrections (Tools ›
    "Train on my corrections…", the real job) while a 10 ms timer records the UI thread's gaps
    (``rhetorica bench train-gui``)."""
    from core.errors import RhetoricaError

    app = application()
    window = MainWindow()
    window.resize(1400, 900)
    window.show()
    window.open_sample()
    if not _until(app, lambda: window.session.analysis is not None, 300):
        raise RhetoricaError("the sample paper was not labelled in time")
    dialog = window.train_dialog()
    finished: list[Any] = []
    dialog.finishedRun.connect(finished.append)
    probe = LatencyProbe(10)
    started = time.perf_counter()
    probe.start()
    if not dialog.start():
        raise RhetoricaError("the training job did not start (too few corrections?)")
    done = _until(app, lambda: bool(finished), timeout_s)
    stats = probe.stop()
    report = finished[0] if finished else None
    window.close()
    return {"job_seconds": round(time.perf_counter() - started, 1), "finished": done,
            "accepted": getattr(report, "accepted", None), "ui_latency": stats.to_dict()}


def _until(app: Any, condition: Callable[[], bool], seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not condition():
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
    return bool(condition())
