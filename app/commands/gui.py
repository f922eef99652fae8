"""``rhetorica gui [PDF]``: open the desktop application (also what plain ``rhetorica`` does)."""

from __future__ import annotations

import argparse

from app.commands._options import as_text, bounded_int, bundle_path, input_file, nonblank

PANELS_PLACEHOLDER = "%(panels)s"  # in --show-panel's help: the registered panel ids, read when shown


def _panel_ids() -> list[str]:
    from app.gui.panels import builtin_panel_ids  # imports Qt: only for --help and --show-panel

    return builtin_panel_ids()


def panel_id(text: str) -> str:
    """An argparse ``type=``: the id of a registered panel."""
    ids = _panel_ids()
    if text.strip() not in ids:
        raise argparse.ArgumentTypeError(f"no panel {text!r} (panels: {', '.join(ids)})")
    return text.strip()


panel_id.__name__ = "panel id"


class _PanelHelp(argparse.HelpFormatter):
    """Fills ``%(panels)s`` in a help text with the panel registry's ids, only when help is shown
    (building the parser for other commands does not import Qt)."""

    def _expand_help(self, action: argparse.Action) -> str:
        if action.help and PANELS_PLACEHOLDER in action.help:
            action = argparse.Action(action.option_strings, action.dest, help=action.help.replace(
                PANELS_PLACEHOLDER, ", ".join(_panel_ids())))
        return super()._expand_help(action)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gui", help="Open the desktop application.", formatter_class=_PanelHelp,
        description="Open the Rhetorica window, optionally on a PDF. Sentence numbers count from 1, as "
                    "the window shows them.")
    parser.add_argument("pdf", type=nonblank, nargs="?", help="a PDF to open")
    parser.add_argument("--model", type=as_text(bundle_path), metavar="BUNDLE",
                        help="model bundle folder (default: the bundled model)")
    parser.add_argument("--compare", type=as_text(input_file), metavar="B.pdf",
                        help="line PDF up with this second paper: the Alignment panel opens on the two")
    parser.add_argument("--side-by-side", action="store_true",
                        help="with --compare: also open the alignment's side-by-side window")
    parser.add_argument("--show-panel", action="append", default=[], type=panel_id, metavar="ID",
                        help=f"show a panel in front of its tab group; repeatable. IDs: {PANELS_PLACEHOLDER}")
    parser.add_argument("--select", type=bounded_int(1, 10_000_000), metavar="N",
                        help="select sentence N (counted from 1) once the paper is labelled")
    parser.add_argument("--screenshot", type=nonblank, metavar="OUT.png",
                        help="open, wait until the analysis (and any --compare) is shown, save a screenshot "
                             "of the window (and OUT-side-by-side.png with --side-by-side) and exit; runs "
                             "on a throwaway profile: your saved draft and window layout are not touched")
    parser.add_argument("--draft", type=nonblank, metavar="TEXT_FILE",
                        help="with --screenshot: type this text into the draft pane and wait for its labels")
    parser.add_argument("--size", metavar="WxH", help="window size, e.g. 1500x950")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the analysis cache")
    parser.add_argument("--exit-when-shown", action="store_true", help=argparse.SUPPRESS)  # for bench gui
    parser.set_defaults(func=run)


MIN_SIDE, MAX_SIDE = 200, 16_000  # window size in pixels


def _size(text: str | None) -> tuple[int, int] | None:
    from core.errors import RhetoricaError

    if not text:
        return None
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise RhetoricaError(f"--size {text!r}: use WIDTHxHEIGHT, e.g. 1500x950") from None
    if not all(MIN_SIDE <= side <= MAX_SIDE for side in (width, height)):
        raise RhetoricaError(f"--size {text}: each side must be {MIN_SIDE} to {MAX_SIDE} pixels")
    return width, height


def _check_combinations(args: argparse.Namespace) -> None:
    from core.errors import RhetoricaError

    if args.compare and not args.pdf:
        raise RhetoricaError("--compare B.pdf needs a paper to compare it with: "
                             "rhetorica gui A.pdf --compare B.pdf")
    if args.side_by_side and not args.compare:
        raise RhetoricaError("--side-by-side shows an alignment: give --compare B.pdf too")
    if args.draft is not None and not args.screenshot:
        raise RhetoricaError("--draft is for --screenshot runs (the window keeps your own draft)")


def run(args: argparse.Namespace) -> int:
    from app.commands._options import check_output_file
    from core.fileio import read_text_input

    # Everything given on the command line is checked here, before Qt starts: a bad draft or output
    # path is one line on stderr, not a dialog or a traceback from inside the event loop.
    size = _size(args.size)
    _check_combinations(args)
    if args.draft is not None:
        read_text_input(args.draft, "a draft text file")
    check_output_file(args.screenshot, "--screenshot", inputs=[args.pdf, args.draft, args.compare])
    from app.gui.app import GuiRequest
    from app.gui.app import run as run_gui  # Qt is imported only here

    return run_gui(GuiRequest(
        pdf=args.pdf, model=args.model, screenshot=args.screenshot, draft_file=args.draft,
        select_number=args.select, panels=args.show_panel, size=size, compare=args.compare,
        side_by_side=args.side_by_side, shown_probe=args.exit_when_shown, use_cache=not args.no_cache))
