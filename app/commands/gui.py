"""``rhetorica gui [PDF]``: open the desktop application (also what plain ``rhetorica`` does)."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gui", help="Open the desktop application.",
        description="Open the Rhetorica window, optionally on a PDF.")
    parser.add_argument("pdf", nargs="?", help="a PDF to open")
    parser.add_argument("--model", metavar="BUNDLE", help="model bundle folder (default: the bundled model)")
    parser.add_argument("--screenshot", metavar="OUT.png",
                        help="open, wait until the analysis is shown, save a screenshot of the window, "
                             "and exit")
    parser.add_argument("--draft", metavar="TEXT_FILE",
                        help="with --screenshot: type this text into the draft pane and wait for its labels")
    parser.add_argument("--select", type=int, metavar="N",
                        help="with --screenshot: select sentence N (0-based) once the analysis is shown")
    parser.add_argument("--show-panel", action="append", default=[], metavar="ID",
                        help="show and raise a panel (outline, inspector, profile, figures, draft); "
                        "repeatable")
    parser.add_argument("--size", metavar="WxH", help="window size, e.g. 1500x950")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the analysis cache")
    parser.add_argument("--exit-when-shown", action="store_true", help=argparse.SUPPRESS)  # for bench gui
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    size = None
    if args.size:
        try:
            width, height = (int(v) for v in args.size.lower().split("x"))
            size = (width, height)
        except ValueError:
            from core.errors import RhetoricaError

            raise RhetoricaError(f"--size {args.size!r}: use WIDTHxHEIGHT, e.g. 1500x950") from None
    from app.gui.app import run as run_gui  # Qt is imported only here

    return run_gui(pdf=args.pdf, model=args.model, screenshot=args.screenshot, draft_file=args.draft,
                   select=args.select, panels=args.show_panel, size=size, shown_probe=args.exit_when_shown,
                   use_cache=not args.no_cache)
