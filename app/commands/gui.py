"""``rhetorica gui [PDF]``: open the desktop application (also what plain ``rhetorica`` does)."""

from __future__ import annotations

import argparse

from app.commands._options import as_text, bounded_int, bundle_path, nonblank


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gui", help="Open the desktop application.",
        description="Open the Rhetorica window, optionally on a PDF.")
    parser.add_argument("pdf", type=nonblank, nargs="?", help="a PDF to open")
    parser.add_argument("--model", type=as_text(bundle_path), metavar="BUNDLE",
                        help="model bundle folder (default: the bundled model)")
    parser.add_argument("--screenshot", type=nonblank, metavar="OUT.png",
                        help="open, wait until the analysis is shown, save a screenshot of the window, "
                             "and exit")
    parser.add_argument("--draft", type=nonblank, metavar="TEXT_FILE",
                        help="with --screenshot: type this text into the draft pane and wait for its labels")
    parser.add_argument("--select", type=bounded_int(0, 10_000_000), metavar="N",
                        help="with --screenshot: select sentence N (0-based) once the analysis is shown")
    parser.add_argument("--show-panel", action="append", default=[], metavar="ID",
                        help="show and raise a panel (outline, inspector, profile, figures, draft); "
                        "repeatable")
    parser.add_argument("--size", metavar="WxH", help="window size, e.g. 1500x950")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the analysis cache")
    parser.add_argument("--exit-when-shown", action="store_true", help=argparse.SUPPRESS)  # for bench gui
    parser.set_defaults(func=run)


MIN_SIDE, MAX_SIDE = 200, 16_000  # window size in pixels


def run(args: argparse.Namespace) -> int:
    from app.commands._options import check_output_file
    from core.errors import RhetoricaError
    from core.fileio import read_text_input

    size = None
    if args.size:
        try:
            width, height = (int(v) for v in args.size.lower().split("x"))
            size = (width, height)
        except ValueError:
            raise RhetoricaError(f"--size {args.size!r}: use WIDTHxHEIGHT, e.g. 1500x950") from None
        if not all(MIN_SIDE <= side <= MAX_SIDE for side in size):
            raise RhetoricaError(f"--size {args.size}: each side must be {MIN_SIDE} to {MAX_SIDE} pixels")
    # Everything given on the command line is checked here, before Qt starts: a bad draft or output
    # path is one line on stderr, not a dialog or a traceback from inside the event loop.
    if args.draft is not None:
        read_text_input(args.draft, "a draft text file")
    check_output_file(args.screenshot, "--screenshot", inputs=[args.pdf, args.draft])
    from app.gui.app import run as run_gui  # Qt is imported only here

    return run_gui(pdf=args.pdf, model=args.model, screenshot=args.screenshot, draft_file=args.draft,
                   select=args.select, panels=args.show_panel, size=size, shown_probe=args.exit_when_shown,
                   use_cache=not args.no_cache)
