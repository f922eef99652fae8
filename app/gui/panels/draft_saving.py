"""Saving the draft pane (``draft_files``): "Save draft" writes the edits back to the opened file where
that loses nothing (``core.draft_formats.writeback``), else goes to "Save draft as…", which writes a new
Markdown or text file.

Each refusal is one line. A file changed on disk since it was opened is asked about (Overwrite / Save
as… / Cancel); a save that wrote only some files of a LaTeX project says which, and the pane stays
unsaved. "Save draft as…" saves only as .md or .txt: another suffix becomes .md, and an existing file of
that new name is asked about (its dialog only asked about the name typed); a folder, a device or a pipe
is refused, as is a folder that does not exist (none is created)."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import TYPE_CHECKING

from app.gui.panels import draft_links
from app.gui.panels.draft_questions import OVERWRITE, SAVE_AS
from app.gui.panels.draft_reading import as_shown, flat, short
from core.errors import RhetoricaError

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.panels.draft_files import DraftFiles
    from core.draft_formats import ParsedDraft

WRITABLE = (".md", ".markdown", ".txt", ".text")


def save(files: DraftFiles) -> bool:
    """Write the pane back to the opened draft where that is lossless, else "Save draft as…". A file
    changed on disk since it was opened is asked about: Overwrite, Save as… or Cancel (not saved)."""
    from core.draft_formats.writeback import ChangedOnDisk

    opened = files.opened
    if opened is None or opened.path is None:
        return save_as(files)
    text = files.editor.toPlainText()
    try:
        return _write_back(files, opened, opened.path, text, overwrite=False)
    except ChangedOnDisk as error:
        changed = flat(error)
    answer = files._ask_changed_on_disk(changed)
    if answer == OVERWRITE:
        return _write_back(files, opened, opened.path, text, overwrite=True)
    if answer == SAVE_AS:
        return save_as(files)
    files._say(f"not saved: {changed}")
    return False


def _write_back(files: DraftFiles, opened: ParsedDraft, source: Path, text: str, overwrite: bool) -> bool:
    """``save_edits`` of the draft read from ``source``, with what follows each of its refusals (a
    ``ChangedOnDisk`` not overwritten is raised: :func:`save` asks about it)."""
    from core.draft_formats import read_draft
    from core.draft_formats.writeback import ChangedOnDisk, NotLossless, PartlySaved, save_edits

    try:
        written = save_edits(opened, text, overwrite=overwrite)
    except NotLossless as error:
        files._say(f"{source.name}: {error}")
        return save_as(files)
    except PartlySaved as error:  # its line says what was saved; the files are read again, the pane stays
        files._say(flat(error))
        try:
            files.opened = read_draft(source, opened.project_root)
            draft_links.remember(files)
        except (RhetoricaError, OSError):
            pass  # the next save finds the files changed since and asks
        return False
    except (RhetoricaError, OSError) as error:
        if isinstance(error, ChangedOnDisk) and not overwrite:
            raise
        files._say(f"not saved: {flat(error)}")
        return False
    try:
        files.opened = read_draft(source, opened.project_root)
    except (RhetoricaError, OSError) as error:
        files._say(f"saved, but {source.name} cannot be read again: {flat(error)}")
        files.opened = None
        draft_links.remember(files)
        return True
    if as_shown(files.opened.plain) != text:  # whitespace the parse does not keep: show what it reads
        files.editor.setPlainText(files.opened.plain)
    files._mark_clean()
    draft_links.remember(files)
    files._say(f"Saved {', '.join(p.name for p in written) or 'nothing changed'}")
    return True


def save_as(files: DraftFiles, path: str | None = None) -> bool:
    """Write the pane's text to a new Markdown or text file (asked for when ``path`` is None) and go on
    editing that file; False, with one line, when it is not saved."""
    from core.draft_formats import read_draft
    from core.fileio import StorageError, atomic_write_text

    if path is None:
        opened = files.opened
        suggested = (str(opened.path.with_suffix(".md")) if opened is not None and opened.path is not None
                     else "draft.md")
        path = files._ask_save_path(suggested)
        if not path:
            return False
    target = _target(files, Path(path))
    if target is None:
        return False
    try:
        atomic_write_text(target, files.editor.toPlainText(), f"the draft {target.name}")
    except StorageError as error:  # a full disk, a read-only folder: its line names the draft
        files._say(f"not saved: {flat(error)}")
        return False
    except OSError as error:  # the line names the target, never the temporary file written first
        files._say(f"not saved: cannot write {short(target)}: {error.strerror or flat(error)}")
        return False
    try:
        files.opened = read_draft(target)
    except (RhetoricaError, OSError) as error:
        files._say(f"saved {target.name}, but it cannot be read again: {flat(error)}")
        files.opened = None
        draft_links.remember(files)
        return True
    files._mark_clean()
    draft_links.remember(files)
    files.recent.add(target)
    files.fill_recent()
    files._say(f"Saved {target.name}")
    return True


def _target(files: DraftFiles, chosen: Path) -> Path | None:
    """The file "Save draft as…" ``chosen`` writes (``NAME.md`` for a suffix other than .md or .txt), or
    None, with one line, when it is refused: a folder, a device or a pipe, a folder that does not exist,
    or an existing renamed file the author does not let the draft replace."""
    if not chosen.name:
        files._say(f"not saved: {short(chosen)} is not a file name")
        return None
    target = chosen if chosen.suffix.lower() in WRITABLE else chosen.with_suffix(".md")
    for place in dict.fromkeys((chosen, target)):
        why = _not_a_file(place)
        if why:
            files._say(f"not saved: {why}")
            return None
    try:
        folder = target.parent.is_dir()
        exists = target != chosen and target.exists()
    except (OSError, ValueError):
        folder, exists = False, False
    if not folder:
        files._say(f"not saved: the folder {short(target.parent)} does not exist")
        return None
    if exists and not files._ask_replace(f"{target.name} exists: replace it? Drafts are saved as .md or "
                                         f".txt, so {chosen.name} is saved as {target.name}."):
        files._say(f"not saved: {target.name} exists (drafts are saved as .md or .txt; choose another name)")
        return None
    return target


def _not_a_file(place: Path) -> str:
    """Why the draft cannot be written at ``place`` when something that is not a regular file is there
    (a folder, a device, a pipe; or the path cannot be looked at); "" when it can."""
    try:
        mode = place.stat().st_mode
    except FileNotFoundError:
        return ""
    except (OSError, ValueError) as error:
        return f"cannot write {short(place)}: {getattr(error, 'strerror', None) or flat(error)}"
    if stat.S_ISDIR(mode):
        return f"{short(place)} is a folder; choose a file name"
    if not stat.S_ISREG(mode):
        return f"{short(place)} is not a regular file (a device or a pipe?); choose another name"
    return ""
