"""Command-line options shared by the commands: model options, ranged numbers, checked text and paths."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

MAX_THREADS = 512
_RST_CODE = re.compile(r"``(.+?)``", re.DOTALL)  # ``x``
_RST_ROLE = re.compile(r":(?:func|meth|class|mod|attr|data|obj|exc):`~?([^`]+)`")  # :func:`core.x.y`


def plain_help(text: str) -> str:
    """A module docstring as --help text: reStructuredText's marks dropped, ``x`` and :func:`x` read
    as x (argparse prints them as typed)."""
    return _RST_ROLE.sub(r"\1", _RST_CODE.sub(r"\1", text))


def add_model_options(parser: argparse.ArgumentParser, *, default_threads: int | None = 2) -> None:
    """``--model BUNDLE``, ``--threads N`` and ``--device auto|cpu|cuda``."""
    parser.add_argument("--model", type=bundle_path, default=None, metavar="BUNDLE",
                        help="model bundle folder (default: resources/models/default)")
    threads_default = "all cores" if default_threads is None else str(default_threads)
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=default_threads,
                        help=f"onnxruntime threads (default: {threads_default})")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="where the model runs: auto (a CUDA GPU when onnxruntime has one that works, "
                        "else the CPU), cpu or cuda (default: auto)")


def progress_line(quiet: bool) -> Callable[[Any], None]:
    """A JobContext reporter for commands: one updating line on stderr when it is a terminal."""
    def report(progress: Any) -> None:
        if not quiet and sys.stderr.isatty():
            print(f"\r{progress.message[:60]:60} {100 * progress.fraction:5.1f}%", end="", file=sys.stderr)
    return report


def log_progress(every: float = 0.0) -> Callable[[Any], None]:
    """A JobContext reporter for long training commands: one timestamped line per message
    ("[12:00:00 +   42s] epoch 3: loss 0.51"), at most one per ``every`` seconds (the last always)."""
    import time

    start = time.time()
    last = [float("-inf")]

    def show(progress: Any) -> None:
        now = time.time()
        if now - last[0] >= every or progress.fraction >= 1:
            last[0] = now
            print(f"[{time.strftime('%H:%M:%S')} +{now - start:6.0f}s] {progress.message}", flush=True)
    return show


# -- argument types: every count and size has a range; bad values are argparse's one-line error ----
def bounded_int(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse ``type=``: a whole number in ``lo..hi`` (an absurd count is refused before any
    work starts, never looped over)."""
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{value} is out of range (use {lo} to {hi})")
        return value
    parse.__name__ = "whole number"
    return parse


def source_weight(text: str) -> tuple[str, int]:
    """An argparse ``type=`` for ``SOURCE=N``: a corpus source name and a whole number from 1 to 20."""
    source, _, times = text.partition("=")
    if not source or not times.isdigit() or not 1 <= int(times) <= 20:
        raise argparse.ArgumentTypeError(f"expected SOURCE=N with 1 <= N <= 20, not {text!r}")
    return source, int(times)


def bounded_float(lo: float, hi: float) -> Callable[[str], float]:
    """An argparse ``type=``: a finite number in ``lo..hi``."""
    import math

    def parse(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{text.strip()} is out of range (use {lo:g} to {hi:g})")
        return value
    parse.__name__ = "number"
    return parse


def _bad_text(text: str) -> str | None:
    """Why ``text`` (from the command line) is not usable text, or None."""
    for position, char in enumerate(text):
        if "\udc80" <= char <= "\udcff":  # a byte the locale could not decode (surrogateescape)
            return f"not UTF-8 text (byte 0x{ord(char) - 0xdc00:02x} at position {position})"
        if "\ud800" <= char <= "\udfff" or char == "\x00":
            return f"holds a character that is not text (U+{ord(char):04X} at position {position})"
    return None


def text_arg(text: str) -> str:
    """An argparse ``type=`` for text stored or printed (labels, ids, names): valid UTF-8, no NUL."""
    reason = _bad_text(text)
    if reason is not None:
        raise argparse.ArgumentTypeError(f"{_shown(text)}: {reason}")
    return text


def check_text(text: str, what: str) -> str:
    """``text`` when it is usable text, else a one-line error naming ``what`` (for values that are
    only known to be text after a look, such as a paper id that is not a file)."""
    reason = _bad_text(text)
    if reason is not None:
        raise _error(f"{what} {_shown(text)}: {reason}")
    return text


def sentence_arg(text: str) -> str:
    """An argparse ``type=`` for a query sentence: :func:`text_arg`, and not empty or blank."""
    text_arg(text)
    if not text.strip():
        raise argparse.ArgumentTypeError("the sentence is empty: give a sentence to find phrasings for")
    return text


def _shown(text: str, width: int = 40) -> str:
    """``text`` quoted for a message: undecodable bytes as escapes, clipped."""
    try:  # the bytes as typed: an undecodable byte shows as \xff
        shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        shown = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return '"' + (shown if len(shown) <= width else shown[: width - 1] + "…") + '"'


# -- paths: checked before any work starts, so a bad one costs nothing and changes nothing -------
def _error(message: str) -> Exception:
    from core.errors import RhetoricaError

    return RhetoricaError(message)


def check_input_file(path: str | Path, what: str = "a file", *, max_bytes: int | None = None) -> Path:
    """``path`` as an existing regular file, or a one-line error: no such file, a folder (``what``
    is what was wanted, e.g. "a PDF"), a device or pipe, or more than ``max_bytes``."""
    from core.errors import MissingFileError, NotAPdfError
    from core.fileio import human_size as _size

    path = Path(path)
    if path.is_dir():
        raise NotAPdfError(str(path), f"is a folder, not {what}")
    if not path.exists():
        raise MissingFileError(str(path), "no such file")
    if not path.is_file():
        raise NotAPdfError(str(path), f"is not a regular file (a device or a pipe?), not {what}")
    if max_bytes is not None:
        size = path.stat().st_size
        if size > max_bytes:
            raise NotAPdfError(str(path), f"is too large for {what} ({_size(size)}; at most "
                                          f"{_size(max_bytes)})")
    return path


def check_input_folder(path: str | Path, what: str = "a folder") -> Path:
    """``path`` as an existing folder, or a one-line error (missing, or a file)."""
    path = Path(path)
    if path.is_file():
        raise _error(f"{path}: is a file, not {what}")
    if not path.is_dir():
        raise _error(f"{path}: no such folder")
    return path


def _nearest_existing(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _check_writable_folder(folder: Path, shown: Path) -> None:
    import tempfile

    if not os.access(folder, os.W_OK | os.X_OK):
        raise _error(f"{shown}: cannot write in {folder} (read-only: choose a writable folder)")
    try:  # what os.access cannot tell (root, /proc, a read-only mount): the output's temporary file
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".rhetorica-probe-")
    except OSError as error:
        raise _error(f"{shown}: cannot write in {folder} ({error.strerror or error}: choose a writable "
                     "folder)") from None
    os.close(handle)
    os.unlink(probe)


def check_output_file(path: str | Path | None, option: str = "the output", *, inputs: Sequence[Any] = (),
                      create_parents: bool = False) -> Path | None:
    """``path`` checked as a file to write, before the work starts: not a folder, not a device, not
    one of ``inputs``, in a writable folder that exists (``create_parents``: or that can be created
    in a writable folder; the caller creates it). None (no output asked for) and "-" pass through."""
    if path is None or str(path) == "-":
        return None if path is None else Path(path)
    path = Path(path)
    if path.is_dir():
        raise _error(f"{path}: is a folder; give {option} a file name")
    if path.exists() and not path.is_file():
        raise _error(f"{path}: is not a regular file (a device or a pipe?); give {option} a file name")
    parent = path.absolute().parent
    if path.exists():
        for given in inputs:
            if given is not None and Path(given).is_file() and os.path.samefile(path, given):
                raise _error(f"{path}: is also an input; write {option} to another file")
    bundle = _model_bundle_holding(path)
    if bundle is not None:
        raise _error(f"{path}: is a file of the model bundle {bundle}; write {option} to another file")
    if not parent.is_dir():
        if parent.exists() or not create_parents:
            what = "is a file, not a folder" if parent.exists() else "does not exist (create it first)"
            raise _error(f"{path}: the folder {path.parent} {what}")
        existing = _nearest_existing(parent)
        if not existing.is_dir():
            raise _error(f"{path}: {existing} is a file, not a folder")
        parent = existing
    _check_writable_folder(parent, path)
    return path


def _model_bundle_holding(path: Path) -> Path | None:
    """The model bundle folder (manifest.json beside model.onnx) of which ``path`` (or the file it links to)
    is the manifest or a file it pins, else None: an output there would break the bundle (or the one in
    use: the model loads while the work runs). Other files in the folder (a report) may be written."""
    from core.json_shapes import loads

    for candidate in dict.fromkeys((path.absolute(), path.resolve())):
        folder = candidate.parent
        manifest = folder / "manifest.json"
        if not (manifest.is_file() and (folder / "model.onnx").is_file()):
            continue
        if candidate.name in ("manifest.json", "model.onnx"):
            return folder
        try:
            pinned = loads(manifest.read_text(encoding="utf-8")).get("files", {})
        except (OSError, ValueError, AttributeError):  # not a readable manifest: its loader says so
            continue
        if isinstance(pinned, dict) and candidate.name in pinned:
            return folder
    return None


def refuse_outputs_over_read_files(outputs: Sequence[tuple[str, Path | None]], read: Sequence[Path]) -> None:
    """After a draft was read: no output may replace a file it includes (``\\input{part}`` and ``--json
    part.tex``); the check before reading knew only the main file."""
    for option, out in outputs:
        if out is None or not out.is_file():
            continue
        for included in read:
            if included.is_file() and os.path.samefile(out, included):
                raise _error(f"{out}: is a file the draft includes; write {option} to another file")


def check_output_folder(path: str | Path | None, option: str = "the output") -> Path | None:
    """``path`` checked as a folder to write into (created when missing), before the work starts:
    not an existing file, and in a writable place. None passes through."""
    if path is None:
        return None
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise _error(f"{path}: is a file, not a folder; give {option} a folder")
    existing = _nearest_existing(path.absolute())
    if not existing.is_dir():
        raise _error(f"{path}: {existing} is a file, not a folder")
    _check_writable_folder(existing, path)
    return path


# -- the same checks as argparse types (for options checked when the command line is read) ---------
def path_arg(text: str) -> Path:
    """An argparse ``type=`` for a path: not empty (``Path("")`` would silently be the current folder)."""
    return Path(nonblank(text))


def nonblank(text: str) -> str:
    """An argparse ``type=`` for a path or id kept as text: not empty or blank."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty value: give a path (or an id)")
    return text


def _path_type(check: Callable[..., Any], name: str, **options: Any) -> Callable[[str], Any]:
    def parse(text: str) -> Path:
        from core.errors import RhetoricaError

        nonblank(text)
        try:
            check(Path(text), **options)
        except RhetoricaError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        return Path(text)
    parse.__name__ = name
    return parse


def as_text(path_type: Callable[[str], Path]) -> Callable[[str], str]:
    """The same check, keeping the value a string (for options passed on as text)."""
    def parse(text: str) -> str:
        path_type(text)
        return text
    parse.__name__ = path_type.__name__
    return parse


# An output file whose missing folders are created (the research commands write under runs/…).
output_file = _path_type(check_output_file, "output file", create_parents=True)
output_folder = _path_type(check_output_folder, "output folder")
input_file = _path_type(check_input_file, "input file")
input_folder = _path_type(check_input_folder, "input folder")


def write_output(path: str | Path, text: str) -> None:
    """Write an output file whole or not at all (a temporary file renamed over it; missing folders
    are created), so a failure never leaves half a file or changes an existing one."""
    from core.fileio import atomic_write_text

    atomic_write_text(path, text)


def read_jsonl(path: str | Path, what: str = "a JSON Lines file", *, max_bytes: int = 500_000_000
               ) -> list[dict[str, Any]]:
    """The objects of a JSON Lines file (blank lines skipped), or a one-line error naming the file
    and, for a bad line, its number."""
    from core.fileio import read_jsonl_objects

    return [row for _number, row in read_jsonl_objects(path, what, max_bytes=max_bytes)]


def bundle_path(text: str) -> Path:
    """An argparse ``type=`` for ``--model BUNDLE``: a file given where the bundle folder is wanted is
    named as such (a missing folder is left to the loader, which says it is not found)."""
    path = Path(nonblank(text))
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{path}: is a file, not a model bundle folder")
    return path
