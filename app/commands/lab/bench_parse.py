"""``rhetorica bench parse``: PDF parsing speed (pages/second, one thread) and peak memory."""

from __future__ import annotations

import argparse
import sys

from app.commands._options import as_text, bounded_int, input_folder, output_file, write_output


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "parse",
        help="Parse every PDF in a folder; report pages/second and peak memory.",
        description="Parse every PDF in a folder (default: ../shared/pdfs) on one thread and report "
        "total pages, pages/second, per-file times and peak memory.",
    )
    parser.add_argument("--pdfs", type=as_text(input_folder), metavar="DIR",
                        help="folder of PDFs (default: ../shared/pdfs)")
    parser.add_argument("--json", type=as_text(output_file), metavar="OUT",
                        help="write the measurements as JSON")
    parser.add_argument("--repeat", type=bounded_int(1, 10_000), default=1,
                        help="parse each file N times (best time kept)")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="also trace Python allocations (slower; reports the traced peak)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    import platform
    import resource
    import time
    import tracemalloc
    from pathlib import Path

    from core.errors import RhetoricaError
    from core.paths import shared_dir
    from core.pdf import PARSER_VERSION, parse_pdf

    folder = Path(args.pdfs) if args.pdfs else shared_dir() / "pdfs"
    files = sorted(folder.glob("*.pdf"))
    if not files:
        raise RhetoricaError(f"no PDF files in {folder}")
    if args.tracemalloc:
        tracemalloc.start()
    rows: list[dict[str, str | int | float]] = []
    total_pages = 0
    total_time = 0.0
    total_cpu = 0.0
    total_sentences = 0
    for path in files:
        best = None
        best_cpu = None
        for _ in range(max(1, args.repeat)):
            start = time.perf_counter()
            start_cpu = time.process_time()
            try:
                paper = parse_pdf(path)
            except RhetoricaError as error:
                rows.append({"file": path.name, "error": str(error)})
                best = None
                break
            elapsed = time.perf_counter() - start
            cpu = time.process_time() - start_cpu
            best = elapsed if best is None else min(best, elapsed)
            best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
        if best is None:
            print(f"{path.name:45s} error", file=sys.stdout)
            continue
        total_pages += paper.page_count
        total_time += best
        total_cpu += best_cpu or 0.0
        total_sentences += len(paper.sentences)
        rows.append({
            "file": path.name, "pages": paper.page_count, "seconds": round(best, 4),
            "cpu_seconds": round(best_cpu or 0.0, 4),
            "pages_per_second": round(paper.page_count / best, 1), "sentences": len(paper.sentences),
            "figures": len(paper.figures),
        })
        print(f"{path.name:45s} {paper.page_count:4d} p {best:7.3f} s {paper.page_count / best:7.1f} p/s "
              f"{len(paper.sentences):5d} sentences {len(paper.figures):3d} figures")
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    traced_peak_mb = None
    if args.tracemalloc:
        traced_peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    summary = {
        "files": len(files),
        "pages": total_pages,
        "seconds": round(total_time, 3),
        "pages_per_second": round(total_pages / total_time, 1) if total_time else None,
        "cpu_seconds": round(total_cpu, 3),
        "pages_per_cpu_second": round(total_pages / total_cpu, 1) if total_cpu else None,
        "sentences": total_sentences,
        "peak_rss_mb": round(peak_rss_mb, 1),
        "traced_peak_mb": round(traced_peak_mb, 1) if traced_peak_mb is not None else None,
        "parser_version": PARSER_VERSION,
        "sentence_splitter": "core.text.sentences",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "threads": 1,
    }
    print(f"total: {len(files)} files, {total_pages} pages in {total_time:.2f} s = "
          f"{summary['pages_per_second']} pages/s wall clock (one thread); {total_sentences} sentences")
    print(f"cpu:   {total_cpu:.2f} s of process CPU time = "
          f"{summary['pages_per_cpu_second']} pages per CPU second "
          f"(the wall-clock figure drops when other processes share the cores)")
    print(f"peak memory: {peak_rss_mb:.1f} MB max RSS"
          + (f", {traced_peak_mb:.1f} MB traced Python peak" if traced_peak_mb is not None else ""))
    if args.json:
        write_output(Path(args.json), json.dumps({"summary": summary, "files": rows}, indent=2) + "\n")
    return 0
