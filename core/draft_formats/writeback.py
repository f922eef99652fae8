"""Saving an edited draft back to its own format, only where that loses nothing.

A ``.md``/``.txt`` draft is shown as its own text, so the edited text is the new file. A ``.tex``
draft is shown as its readable text: each edit (a difference between the text as parsed and the text
as edited) is written into the source only when it falls inside text copied verbatim from one file
(not inside a citation placeholder, a rendered math span or a heading marker); typed LaTeX specials
(``%``, ``&``, ``$`` …) are escaped. The result is parsed again and must read as the edited text
(whitespace aside), else nothing is written. A ``.docx`` is never rewritten (its formatting would be
lost): the caller offers "Save as…". Refusals are :class:`NotLossless` with one line saying why.

Saving never loses what others wrote and never leaves the files half-saved: each file is first checked
to hold, byte for byte, the text it held when the draft was read (else :class:`ChangedOnDisk`, nothing
written), then to be a writable regular file (else nothing written); a write that still fails midway
puts back the files already written (:class:`PartlySaved` if even that fails). Each file keeps its own
line ends (CRLF, CR or LF; the pane shows them all as LF), its byte-order mark, and, on the lines the
edit does not touch, the no-break spaces and line separators the pane shows as spaces and newlines.
A symbolic link is written through (the link stays).
"""

from __future__ import annotations

import bisect
import codecs
import difflib
import os
import re
import stat
from pathlib import Path

from core.draft_formats.types import ParsedDraft, Span
from core.errors import DraftError

_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
                   "_": r"\_", "%": r"\%", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_SPECIAL = re.compile(r"[\\{}$&#_%~^]")


class NotLossless(DraftError):
    """The edit cannot be written back to the draft's own format without losing something."""


class ChangedOnDisk(DraftError):
    """A file the save would write changed on disk (or went away) since the draft was read: another
    program wrote it. Nothing was written; ``paths`` are the files concerned. ``save_edits(...,
    overwrite=True)`` replaces them anyway."""

    def __init__(self, message: str, paths: list[Path]) -> None:
        super().__init__(message)
        self.paths = paths


class PartlySaved(DraftError):
    """A write failed midway and the files written before it could not be put back: ``saved`` hold
    the edit, ``unsaved`` do not (the message names both)."""

    def __init__(self, message: str, saved: list[Path], unsaved: list[Path]) -> None:
        super().__init__(message)
        self.saved, self.unsaved = saved, unsaved


# Line ends as the draft pane gives them back: its document turns CRLF, CR and the Unicode line and
# paragraph separators into LF, and a no-break space into a space (``QTextDocument.toPlainText``).
_SHOWN_AS = {"\r\n": "\n", "\r": "\n", "\u2028": "\n", "\u2029": "\n", "\xa0": " "}
_SHOWN = re.compile("\r\n|[\r\u2028\u2029\xa0]")
_LINE_END = re.compile("(\r\n|[\r\n\u2028\u2029])")


def newline_of(text: str, default: str = "\n") -> str:
    """The line end ``text`` mostly uses ("\\r\\n", "\\r" or "\\n"); ``default`` when it has none."""
    crlf = text.count("\r\n")
    counts = {"\n": text.count("\n") - crlf, "\r\n": crlf, "\r": text.count("\r") - crlf}
    best = max(counts, key=lambda end: counts[end])  # ties: LF first
    return best if counts[best] else default


def _as_shown(text: str) -> tuple[str, list[int]]:
    """``text`` as the pane shows it, and the shown offsets where a CRLF became one LF (so shown
    offset ``k`` is ``k + bisect_left(pairs, k)`` in ``text``)."""
    pieces: list[str] = []
    pairs: list[int] = []
    last = shown = 0
    for match in _SHOWN.finditer(text):
        pieces.append(text[last:match.start()])
        shown += match.start() - last
        if match.group() == "\r\n":
            pairs.append(shown)
        pieces.append(_SHOWN_AS[match.group()])
        shown += 1
        last = match.end()
    pieces.append(text[last:])
    return "".join(pieces), pairs


def _lf(text: str) -> str:
    """Typed text with every line end as LF (what the pane gives; a caller may pass CRLF or CR)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def keep_line_ends(source: str, edited: str) -> str:
    """``edited`` (a whole ``.md``/``.txt`` text as the pane gives it) as the file's new text: lines the
    edit leaves alone are the source's own (its line end, no-break spaces, separators), new lines end
    with the line end the source mostly uses."""
    parts = _LINE_END.split(source)
    old, ends = parts[0::2], parts[1::2]
    new = _LINE_END.split(_lf(edited))[0::2]
    shown = [line.replace("\xa0", " ") for line in old]
    newline = newline_of(source)
    head = 0
    while head < min(len(old), len(new)) and shown[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and shown[-1 - tail] == new[-1 - tail]:
        tail += 1

    def end(k: int) -> str | None:
        return ends[k] if k < len(ends) else None

    lines: list[tuple[str, str | None]] = [(old[k], end(k)) for k in range(head)]
    matcher = difflib.SequenceMatcher(None, shown[head:len(old) - tail], new[head:len(new) - tail])
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            lines.extend((old[k], end(k)) for k in range(head + i1, head + i2))
        else:  # a changed line keeps the line end of the line it replaces
            lines.extend((new[head + k], end(head + i1 + k - j1) if i1 + k - j1 < i2 else None)
                         for k in range(j1, j2))
    lines.extend((old[k], end(k)) for k in range(len(old) - tail, len(old)))
    body = "".join(line + (end or newline) for line, end in lines[:-1])
    return body + lines[-1][0]


def escape_latex(text: str) -> str:
    """Typed text as LaTeX that prints it (``50%`` → ``50\\%``)."""
    return _SPECIAL.sub(lambda m: _LATEX_SPECIALS[m.group()], text)


def _span_index(spans: list[Span], starts: list[int], index: int) -> Span:
    return spans[bisect.bisect_right(starts, index) - 1]


def latex_edits(draft: ParsedDraft, edited: str) -> dict[str | None, list[tuple[int, int, str]]]:
    """Per source file, the (start, end, new LaTeX) replacements that turn the parsed text into
    ``edited``; :class:`NotLossless` when an edit touches text that is not the source's own. The
    texts are compared as the pane shows them (line ends as LF); typed line ends are written in the
    line end of the file they go into."""
    spans = draft.spans
    starts = [s.plain_start for s in spans]
    old = draft.plain
    shown, pairs = _as_shown(old)
    edited = _lf(edited)
    main_newline = newline_of(draft.source)
    newlines: dict[str | None, str] = {}

    def newline(key: str | None) -> str:
        if key not in newlines:
            newlines[key] = (main_newline if key is None
                             else newline_of(draft.files.get(key, ""), default=main_newline))
        return newlines[key]

    def plain_at(index: int) -> int:
        """The offset in ``plain`` of the shown character at ``index``."""
        return index + bisect.bisect_left(pairs, index)

    def place(index: int) -> tuple[str | None, int] | None:
        """(file, source offset) of the plain character at ``index`` when it is verbatim."""
        if not 0 <= index < len(old):
            return None
        span = _span_index(spans, starts, index)
        return (span.file, span.source_start + index - span.plain_start) if span.verbatim else None

    edits: dict[str | None, list[tuple[int, int, str]]] = {}
    matcher = difflib.SequenceMatcher(None, shown, edited, autojunk=False)
    for tag, s1, s2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        i1, i2 = plain_at(s1), plain_at(s2)
        typed = escape_latex(edited[j1:j2])
        if i1 < i2:
            first = place(i1)
            if first is None:
                raise NotLossless(_refusal(old, i1))
            for k in range(i1 + 1, i2):
                here = place(k)
                if here is None or here != (first[0], first[1] + k - i1):
                    raise NotLossless(_refusal(old, k))
            edits.setdefault(first[0], []).append(
                (first[1], first[1] + i2 - i1, typed.replace("\n", newline(first[0]))))
            continue
        before, after = place(i1 - 1), place(i1)
        if before is not None:
            edits.setdefault(before[0], []).append(
                (before[1] + 1, before[1] + 1, typed.replace("\n", newline(before[0]))))
        elif after is not None:
            edits.setdefault(after[0], []).append(
                (after[1], after[1], typed.replace("\n", newline(after[0]))))
        else:
            raise NotLossless(_refusal(old, i1))
    return edits


def _refusal(old: str, index: int) -> str:
    near = " ".join(old[max(0, index - 20):index + 20].split())
    return (f"the edit near “{near}” touches text made from LaTeX markup (a citation, math, a "
            "heading marker); save the draft as a new file instead")


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text


def written_back(draft: ParsedDraft, edited: str) -> dict[str | None, str]:
    """The new text of every file the edit changes (None: the main file). Raises
    :class:`NotLossless` when the edit cannot be saved in the draft's own format."""
    if draft.format in ("md", "txt"):
        text = keep_line_ends(draft.source, edited)
        return {None: text} if text != draft.source else {}
    if draft.format != "tex":
        raise NotLossless(f"a .{draft.format} draft cannot be rewritten without losing its formatting; "
                          "save it as a new Markdown or text file")
    edits = latex_edits(draft, edited)
    texts = {key: _apply(draft.source if key is None else draft.files[key], changes)
             for key, changes in edits.items()}
    from core.draft_formats.latex import parse_latex

    included: dict[str, str] = dict(draft.files)
    included.update((key, text) for key, text in texts.items() if key is not None)
    check = parse_latex(texts.get(None, draft.source), name=str(draft.path or "the draft"), path=draft.path,
                        project_root=draft.project_root, overrides=included)
    if check.plain.split() != edited.split():
        raise NotLossless("the edited text does not read back the same from LaTeX (typed markup such as "
                          "`` or --?); save the draft as a new file instead")
    return texts


def _real(path: Path) -> Path:
    """``path`` with symbolic links followed: the file to write (so a link stays a link)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a link loop: the checks name it
        return path


def _on_disk(path: Path, limit: int | None) -> bytes | None:
    """The bytes of the regular file ``path`` (at most ``limit`` + 1 of them; None: all), None when it
    is not one (gone, a folder, a pipe) or cannot be read."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
        with open(path, "rb") as handle:
            return handle.read() if limit is None else handle.read(limit + 1)
    except OSError:
        return None


def _joined(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _check_writable(target: Path, name: str) -> None:
    """Raise a one-line :class:`core.fileio.StorageError` unless ``target`` can be replaced: a regular
    file (or none yet) that is not read-only, in a folder that can be written."""
    from core.fileio import ReadOnlyError, StorageError

    try:
        mode: int | None = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise StorageError(f"cannot save {name}: {error.strerror or error}; nothing was saved") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise StorageError(f"cannot save {name}: it is not a regular file any more; nothing was saved")
    if mode is not None and not os.access(target, os.W_OK):
        raise ReadOnlyError(f"cannot save {name}: the file is read-only (check its permissions, or "
                            "Save as…); nothing was saved")
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise ReadOnlyError(f"cannot save {name}: its folder {target.parent} is read-only (check its "
                            "permissions, or Save as…); nothing was saved")


def save_edits(draft: ParsedDraft, edited: str, *, overwrite: bool = False) -> list[Path]:
    """Write the edit into the draft's file(s); returns the files written (none when the edit changes
    nothing), as the draft names them (a symbolic link is written through). All or none of them
    change. Raises, with one line each and nothing written:
    :class:`NotLossless` (the draft's format cannot take the edit); :class:`ChangedOnDisk` (a file to
    write no longer holds what was read from it: another program changed, moved or deleted it;
    ``overwrite=True`` writes it anyway, the edit applied to the text as it was read); a
    :class:`core.fileio.StorageError` (an ``OSError``) when a file cannot be written; or
    :class:`PartlySaved` in the rare case a write fails midway and the files written before it cannot
    be put back. (A program writing a file between the check and the write, a split second, is not
    caught.)"""
    from core.draft_formats.text_file import TEXT_DRAFT_LIMIT
    from core.fileio import StorageError, atomic_write_bytes, atomic_write_text

    if draft.path is None:
        raise NotLossless("the draft has no file to save to")
    texts = written_back(draft, edited)
    keys = list(texts)
    root = draft.project_root or draft.path.parent
    paths = {key: draft.path if key is None else root / key for key in keys}  # as the author knows them
    targets = {key: _real(path) for key, path in paths.items()}
    names = {key: draft.path.name if key is None else key for key in keys}
    was: dict[str | None, bytes | None] = {}  # each file's bytes now, to check it and to put it back
    gone, changed = [], []
    for key in keys:
        was[key] = data = _on_disk(targets[key], None if overwrite else TEXT_DRAFT_LIMIT)
        read = (draft.source if key is None else draft.files[key]).encode("utf-8", "surrogatepass")
        if data is None:
            gone.append(key)
        elif data.removeprefix(codecs.BOM_UTF8) != read:
            changed.append(key)
    if gone and not overwrite:
        raise ChangedOnDisk(f"{_joined([names[k] for k in gone])} {'is' if len(gone) == 1 else 'are'} no "
                            "longer on disk (moved, deleted or replaced since the draft was opened); "
                            "Save as… keeps your edits (they are still in the pane)",
                            [paths[k] for k in gone])
    if changed and not overwrite:
        one = len(changed) == 1
        raise ChangedOnDisk(f"{_joined([names[k] for k in changed])} changed on disk since "
                            f"{'it was' if one else 'they were'} opened; reopen "
                            f"{'it' if one and len(keys) == 1 else 'the draft'} or Save as… (your edits are "
                            "still in the pane)", [paths[k] for k in changed])
    for key in keys:
        _check_writable(targets[key], names[key])

    written: list[str | None] = []
    for key in keys:
        bom = (was[key] or b"").startswith(codecs.BOM_UTF8)
        try:
            atomic_write_text(targets[key], texts[key], f"the draft {names[key]}",
                              "utf-8-sig" if bom else "utf-8")
        except OSError as error:
            reason = " ".join(str(error).split())
            kept = []
            for done in reversed(written):  # put back the files already written, byte for byte
                try:
                    before = was[done]
                    if before is None:
                        targets[done].unlink()
                    else:
                        atomic_write_bytes(targets[done], before, f"the draft {names[done]}")
                except OSError:
                    kept.append(done)
            if kept:
                saved = [k for k in keys if k in kept]
                unsaved = [k for k in keys if k not in kept]
                raise PartlySaved(f"saved {_joined([names[k] for k in saved])}; not saved "
                                  f"{_joined([names[k] for k in unsaved])}: {reason} (your edits are still "
                                  "in the pane)", [paths[k] for k in saved],
                                  [paths[k] for k in unsaved]) from None
            message = f"{reason}; nothing was saved" if len(keys) > 1 else reason
            if not isinstance(error, StorageError):
                message = f"cannot save {names[key]}: {message}"
            raise (type(error) if isinstance(error, StorageError) else StorageError)(message) from None
        written.append(key)
    return [paths[key] for key in keys]
