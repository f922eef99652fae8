"""``rhetorica figures rank PDF``: a paper's figures ranked as graphical-abstract candidates (issue 14)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands._options import (
    add_model_options,
    check_input_file,
    check_output_file,
    check_output_folder,
    path_arg,
    progress_line,
)

if TYPE_CHECKING:  # pragma: no cover
    from core.document import Paper
    from core.figures.figure_rank import FigureRanking


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    help_text = "Figures of a paper: rank them as graphical-abstract candidates."
    parser = subparsers.add_parser("figures", help=help_text, description=help_text)
    children = parser.add_subparsers(dest="figures_command", metavar="WHAT")
    rank_help = ("Rank a paper's figures by how well each stands for the paper: the caption–text scorer "
                 "between the title + abstract and each caption (and the sentences that mention it), what "
                 "the figure is made of (diagram, chart, photo, panels: read from the PDF), the cue words of "
                 "its caption and of the sentences that point to it, and where it sits, weighted as fitted "
                 "on readers' picks. Prints the ranking with the reason in words; --json also carries each "
                 "figure's features, type, look and mentions.")
    rank = children.add_parser("rank", help=rank_help, description=rank_help)
    rank.add_argument("pdf", type=path_arg, help="the paper (PDF)")
    rank.add_argument("--json", type=path_arg, default=None, metavar="OUT", help="write the ranking as JSON")
    rank.add_argument("--png", type=path_arg, default=None, metavar="DIR",
                      help="write each candidate as a PNG (300 dpi) named by its rank and number")
    rank.add_argument("--include-tables", action="store_true", help="tables are candidates too")
    rank.add_argument("--quiet", action="store_true", help="no progress line")
    add_model_options(rank)
    rank.set_defaults(func=run_rank)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)


def run_rank(args: argparse.Namespace) -> int:
    from core.errors import RhetoricaError
    from core.figures.figure_rank import rank_figures
    from core.fileio import atomic_write_text
    from core.jobs import JobContext
    from core.pdf import parse_pdf
    from models.encoder import load_model
    from models.figure_scorer import load_figure_scorer, ranker_weights

    check_input_file(args.pdf, "a PDF")
    check_output_file(args.json, "--json", inputs=[args.pdf])
    check_output_folder(args.png, "--png")
    paper = parse_pdf(args.pdf, JobContext(progress_line(args.quiet)))
    if not paper.sentences:
        raise RhetoricaError(f"{args.pdf}: no text found in the PDF (a scanned paper?)")
    model = load_model(args.model, device=args.device, threads=args.threads)
    weights = ranker_weights(model)
    ranking = rank_figures(paper, load_figure_scorer(model, threads=args.threads), weights,
                           "fitted on the graphical-abstract dev set" if weights else "",
                           include_tables=args.include_tables)
    if not ranking.figures:  # nothing to rank is a finding, not a failure: exit 0, as parse does
        written = "; no PNG written" if args.png is not None else ""
        print(f"{args.pdf.name}: {nothing_to_rank(paper, args.include_tables)}{written}", file=sys.stderr)
    pngs = _render_pngs(args.pdf, paper, ranking) if args.png is not None else {}  # before any write
    if args.json is not None:
        atomic_write_text(args.json, json.dumps(ranking.to_dict(), ensure_ascii=False, indent=2) + "\n")
    if pngs:  # no folder is made for nothing
        _write_pngs(pngs, args.png)
    print(f"{ranking.paper or args.pdf.name}  (scorer: {ranking.scorer}; weights: {ranking.weights_source})")
    for figure in ranking.figures:
        label = "Table" if figure.kind == "table" else "Figure"
        print(f"{figure.rank:>3}. {label} {figure.number:<4} score {figure.score:+.2f}  p.{figure.page + 1}  "
              f"{figure.reason}")
    return 0


def nothing_to_rank(paper: Paper, include_tables: bool) -> str:
    """Why no figure is ranked, in one sentence: "no figures found", with what to do when the paper
    has tables that were left out, or only supplementary figures (never candidates)."""
    main = [f for f in paper.figures if not f.number.upper().startswith("S")]
    if include_tables:
        return "no figures or tables found" + (" (supplementary ones are not candidates)" if paper.figures
                                               else "")
    if any(f.kind == "table" for f in main):
        return "no figures found (tables are not candidates; add --include-tables to rank them)"
    supplementary = any(f.kind == "figure" for f in paper.figures)
    return "no figures found" + (" (supplementary figures are not candidates)" if supplementary else "")


PNG_DPI = 300


def _render_pngs(pdf: Path, paper: Paper, ranking: FigureRanking) -> dict[str, bytes]:
    """Each ranked figure's crop at 300 dpi, by file name (all rendered before any is written), with its
    resolution in the file (as the GUI's Export PNG writes it), so that a document places it at its size."""
    from core.pdf.render import render_figure_png

    figures = {f.id: f for f in paper.figures}
    out = {}
    for ranked in ranking.figures:
        figure = figures[ranked.figure_id]
        png = render_figure_png(pdf, figure, zoom=PNG_DPI / 72)
        size = paper.page_sizes[figure.page] if figure.page < len(paper.page_sizes) else None
        out[f"rank{ranked.rank:02d}-{ranked.kind}-{ranked.number}.png"] = with_png_dpi(
            png, rendered_dpi(png, figure.bbox, size))
    return out


def rendered_dpi(png: bytes, bbox: tuple[float, float, float, float],
                 page_size: tuple[float, float] | None) -> float:
    """The resolution a crop of ``bbox`` was rendered at: its pixel width over its width in inches
    (:func:`core.pdf.render.render_figure_png` adds a 1-point margin, cut at the page's edge, and scales
    a poster-sized crop down); :data:`PNG_DPI` when the width is unknown."""
    width_px = int.from_bytes(png[16:20], "big") if png[12:16] == b"IHDR" else 0
    page_w = page_size[0] if page_size else bbox[2] + 1
    points = min(bbox[2] + 1, page_w) - max(bbox[0] - 1, 0.0)
    if width_px <= 0 or points < 1:
        return PNG_DPI
    dpi = 72 * width_px / points
    return PNG_DPI if abs(dpi - PNG_DPI) < 0.02 * PNG_DPI else dpi  # pixel rounding


def with_png_dpi(png: bytes, dpi: float) -> bytes:
    """``png`` with its pHYs chunk (pixels per metre) saying ``dpi``: replaced, or added after IHDR."""
    import struct
    import zlib

    chunks, at = [], 8
    while at + 12 <= len(png):
        end = at + 12 + struct.unpack(">I", png[at:at + 4])[0]
        chunks.append((png[at + 4:at + 8], png[at:end]))
        at = end
    if png[:8] != b"\x89PNG\r\n\x1a\n" or not chunks or chunks[0][0] != b"IHDR":
        return png
    per_metre = round(dpi / 0.0254)
    data = struct.pack(">IIB", per_metre, per_metre, 1)
    phys = struct.pack(">I", len(data)) + b"pHYs" + data + struct.pack(">I", zlib.crc32(b"pHYs" + data))
    kept = [raw for kind, raw in chunks if kind != b"pHYs"]
    return png[:8] + kept[0] + phys + b"".join(kept[1:])


def _write_pngs(pngs: dict[str, bytes], folder: Path) -> None:
    from core.fileio import atomic_write_bytes

    folder.mkdir(parents=True, exist_ok=True)
    for name, png in pngs.items():
        atomic_write_bytes(folder / name, png)
