"""``rhetorica bench gui``: GUI cold start, time to first page and to overlays, UI latency."""

from __future__ import annotations

import argparse

from app.commands._options import as_text, bounded_int, bundle_path, input_file, output_file, write_output

DEFAULT_PDF = "pdfs/arxiv-2203.00130v1_PaperPlain.pdf"  # 39 pages, under ../shared


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gui", help="Measure GUI start-up, time to first page/analysis and UI-thread latency.",
        description="Cold start to a painted window and to the PDF's first page (fresh processes), "
        "then, in this process with the model loaded: time to the first page and to the role "
        f"overlays for PDF (default: the 39-page ../shared/{DEFAULT_PDF}), the event-loop latency "
        "while it is analysed (a 10 ms timer's real gaps: max and p99), and the same for reopening "
        "it from the cache.")
    parser.add_argument("pdf", type=as_text(input_file), nargs="?",
                        help="a PDF (default: the 39-page PaperPlain paper)")
    parser.add_argument("--model", type=as_text(bundle_path), metavar="BUNDLE",
                        help="model bundle folder (default: the bundled model)")
    parser.add_argument("--cold-runs", type=bounded_int(1, 1_000), default=3,
                        help="cold-start runs (default 3)")
    parser.add_argument("--json", type=as_text(output_file), metavar="OUT",
                        help="write the measurements as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    import os
    import platform
    import statistics
    from pathlib import Path

    from core.errors import RhetoricaError
    from core.paths import shared_dir

    pdf = Path(args.pdf) if args.pdf else shared_dir() / DEFAULT_PDF
    if not pdf.is_file():
        raise RhetoricaError(f"{pdf}: file not found")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from app.gui.bench import run_bench

    load_before = os.getloadavg()[0]
    results = run_bench(str(pdf), model=args.model, cold_runs=max(1, args.cold_runs))
    results["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "qpa": os.environ.get("QT_QPA_PLATFORM", ""),
                          "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)]}
    cold = [r["window_s"] for r in results["cold_start"]]
    cold_pdf = [r["first_page_s"] for r in results["cold_start_with_pdf"]]
    print(f"PDF: {pdf.name}   model: {results['model_id']}   "
          f"(machine load average {load_before:.1f} → {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    print(f"cold start to painted window: median {statistics.median(cold):.2f} s "
          f"(runs: {', '.join(f'{c:.2f}' for c in cold)})")
    print(f"cold start with the PDF to its first page painted: median {statistics.median(cold_pdf):.2f} s "
          f"(runs: {', '.join(f'{c:.2f}' for c in cold_pdf)})")
    print(f"model load (background): {results['model_load_s']:.2f} s")
    for key, title in (("uncached", "first open (no cache)"), ("cached_reopen", "reopen (cache)")):
        r = results[key]
        lat = r["latency"]
        print(f"{title}: {r['pages']} pages, {r['sentences']} sentences, {r['overlay_items']} overlays; "
              f"first page {r['first_page_s'] * 1000:.0f} ms, analysis shown {r['analysis_shown_s']:.2f} s, "
              f"embedded analysis (both views) {r['embedded_s']:.2f} s; "
              f"UI latency max {lat['max_ms']:.0f} ms, p99 {lat['p99_ms']:.0f} ms, "
              f"{lat['over_100ms']} gaps > 100 ms of {lat['samples']}")
    if args.json:
        write_output(Path(args.json), json.dumps(results, indent=2) + "\n")
    return 0
