"""A fresh GUI process that shows the Suggestions panel with one query and reports when the first
suggestions are listed (``rhetorica bench corpus`` runs it as a child, with an empty user folder).

Prints ``RHETORICA_SUGGESTIONS <epoch seconds> <rows> <corpus sentences> <growing: 0|1>`` once the
panel lists suggestions, or ``RHETORICA_ERROR <line>``; ``--grow`` starts the background growth of the phrase
corpus as the app does on first use (:mod:`app.gui.corpus_growth_job`), so the time is measured with
it running.

    python -m app.gui.first_suggestions "We propose a new method." [--grow] [--timeout S]
"""

from __future__ import annotations

import argparse
import sys
import time


def _corpus_sentences() -> int:
    import json

    from core.paths import corpus_dir

    try:
        return int(json.loads((corpus_dir() / "manifest.json").read_text(encoding="utf-8"))["sentences"])
    except (OSError, ValueError, KeyError):
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.gui.first_suggestions")
    parser.add_argument("query")
    parser.add_argument("--grow", action="store_true", help="grow the phrase corpus in the background")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)

    from app.gui.app import application, shutdown
    from app.gui.bench import _until
    from app.gui.corpus_growth_job import CorpusGrowth
    from app.gui.main_window import MainWindow
    from app.gui.panels.suggestions import SuggestionsPanel

    app = application()
    window = MainWindow()
    window.show()
    growth = CorpusGrowth(window.tracker, window.models)
    if args.grow:
        growth.start_when_ready()
    panel = window.panels["suggestions"]
    assert isinstance(panel, SuggestionsPanel)
    shown: list[float] = []
    panel.suggestionsShown.connect(lambda _query: shown.append(time.time()))
    window.docks["suggestions"].show()
    panel.set_query(args.query)
    if not _until(app, lambda: bool(shown), args.timeout):
        print(f"RHETORICA_ERROR no suggestions within {args.timeout:.0f} s: {panel.status.text()}",
              flush=True)
        code = 1
    else:
        rows = len(panel.rows())
        growing = int(growth.worker is not None and growth.worker.is_running)
        print(f"RHETORICA_SUGGESTIONS {shown[0]:.6f} {rows} {_corpus_sentences()} {growing}", flush=True)
        code = 0 if rows else 1
    window.close()
    shutdown(window)
    return code


if __name__ == "__main__":
    sys.exit(main())
