"""The author's drafts, saved atomically under the user data folder (no Qt).

The GUI saves the draft pane a moment after each change (debounced) and restores it on start,
so a crash or a restart never loses more than the last second of typing.
"""

from __future__ import annotations

import hashlib
import os
import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from core.fileio import atomic_write_text as atomic_write_with_text
from core.paths import user_data_dir

if TYPE_CHECKING:  # pragma: no cover
    from core.labelling.sentence_context import SentenceContext

_NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
LINK_LIMIT = 64_000  # bytes: a draft's link is a path and a digest
_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")


def heading_of(line: str) -> tuple[int, str] | None:
    """(markdown level or 0, heading text) when ``line`` is a section heading of a draft: a markdown
    ``#`` line, or a short line naming a known section ("2 Methods", "Abstract")."""
    from core.document import SectionKind
    from core.pdf.headings import is_abstract_heading, section_kind, split_number

    match = _MD_HEADING.match(line)
    if match:
        return len(match.group(1)), match.group(2).strip()
    stripped = line.strip()
    if not stripped or len(stripped) > 60 or stripped[-1] in ".?!,;:":  # a paragraph, cheaply
        return None
    words = stripped.split()
    if len(words) > 6:
        return None
    _, title = split_number(stripped)
    if is_abstract_heading(title) or section_kind(title) is not SectionKind.OTHER:
        return 0, stripped
    return None


@lru_cache(maxsize=4096)
def heading_kind(heading: str) -> str:
    """The section kind a heading names ("other" when it names none)."""
    from core.document import SectionKind
    from core.pdf.headings import is_abstract_heading, section_kind, split_number

    _, bare = split_number(heading)
    return SectionKind.ABSTRACT.value if is_abstract_heading(bare) else section_kind(bare).value


@lru_cache(maxsize=4096)
def names_its_kind(heading: str) -> bool:
    """A heading whose title names its kind outright (``core.pdf.headings.is_decisive_heading``, an
    abstract or an "other" heading): a subheading such never takes its parent's kind."""
    from core.pdf.headings import is_abstract_heading, is_decisive_heading, is_other_heading, split_number

    _, bare = split_number(heading)
    return is_abstract_heading(bare) or is_decisive_heading(bare) or is_other_heading(bare)


def inherited_kinds(headings: list[tuple[int, str]]) -> list[str]:
    """The section kind of each (level, title) heading, in order: the kind its title names, except
    that a heading deeper than the one above it whose title names no kind outright
    (``core.pdf.headings.is_decisive_heading``) takes its parent's kind, as a parsed paper's
    subsections do. Level 0 (a heading known by its name only) never inherits."""
    kinds: list[str] = []
    parents: list[tuple[int, str]] = []  # (level, kind) of the open headings
    for level, title in headings:
        kind = heading_kind(title)
        if level:
            while parents and parents[-1][0] >= level:
                parents.pop()
            if parents and not names_its_kind(title):
                kind = parents[-1][1]
            parents.append((level, kind))
        kinds.append(kind)
    return kinds


def draft_headings(text: str) -> list[tuple[int, int, str]]:
    """(start, end, section kind) of each heading line of a draft (kinds by :func:`inherited_kinds`:
    "## Data analysis" under "# Methods" is a method section)."""
    lines: list[tuple[int, int, int, str]] = []  # (start, end, level, title)
    offset = 0
    for line in text.splitlines(keepends=True):
        bare = line.strip()  # a paragraph is passed over here, cheaply: a long draft has thousands
        if bare and (bare[0] == "#" or (len(bare) <= 60 and bare[-1] not in ".?!,;:")):
            found = heading_of(line)
            if found is not None:
                lines.append((offset, offset + len(line.rstrip("\r\n")), *found))
        offset += len(line)
    kinds = inherited_kinds([(level, title) for _, _, level, title in lines])
    return [(start, end, kind) for (start, end, _, _), kind in zip(lines, kinds, strict=True)]

def draft_sections(text: str, headings: list[tuple[int, int, str]] | None = None,
                   ) -> list[tuple[int, int, str | None, int]]:
    """:func:`draft_sentences` with the number of the heading each sentence is under (-1 before any):
    (start, end, section kind, heading number). ``headings``: the text's :func:`draft_headings`, when the
    caller has them already."""
    return _sections_in(text, draft_headings(text) if headings is None else headings, 0, len(text))


def _sections_in(text: str, headings: list[tuple[int, int, str]], lo: int,
                 hi: int) -> list[tuple[int, int, str | None, int]]:
    """:func:`draft_sections` of ``text[lo:hi]`` (spans in ``text``'s offsets), given all of ``text``'s
    headings; ``lo`` and ``hi`` are block edges (the text's ends or blank lines) for the spans to be
    those of the whole text."""
    from core.text.sentences import cut_out, split_sentences

    heading_starts = [h_start for h_start, _, _ in headings]
    heading_ends = [h_end for _, h_end, _ in headings]
    out: list[tuple[int, int, str | None, int]] = []
    for span_start, span_end in split_sentences(text[lo:hi]):
        # heading lines are cut out of the span
        for start, end in cut_out(lo + span_start, lo + span_end, heading_starts, heading_ends):
            while start < end and text[start].isspace():
                start += 1
            while end > start and text[end - 1].isspace():
                end -= 1
            if start < end:
                number = bisect_right(heading_ends, start) - 1
                out.append((start, end, headings[number][2] if number >= 0 else None, number))
    return out


def draft_sentences(text: str) -> list[tuple[int, int, str | None]]:
    """The sentences of a draft as (start, end, section kind): heading lines ("# Methods", "2 Results")
    are not sentences (a sentence the splitter ran together with the heading above it starts after
    the heading), and each sentence carries the kind of the heading above it (``None`` before any)."""
    return [(start, end, kind) for start, end, kind, _ in draft_sections(text)]


#: Characters on each side of the cursor that :func:`context_in_draft` splits into sentences first (a
#: long draft is not split whole each time the cursor rests), and how much further it looks for a blank
#: line to start or end that stretch on.
CONTEXT_REACH = 4000


def _block_edge(text: str, target: int, reach: int, forward: bool) -> tuple[int, bool]:
    """The blank-line block edge nearest ``target`` on the far side from the cursor (at most ``reach``
    further on), or the text's end; else ``target`` itself, and False: a cut inside a block, where the
    sentence the cut falls in is not whole."""
    from core.text.sentences import _BLANK_LINE

    if forward:
        if target >= len(text):
            return len(text), True
        found = _BLANK_LINE.search(text, target, target + reach)
        if found is not None:
            return found.start(), True
        return (len(text), True) if target + reach >= len(text) else (target, False)
    if target <= 0:
        return 0, True
    last = None
    for blank in _BLANK_LINE.finditer(text, max(0, target - reach), target):
        last = blank
    if last is not None:
        return last.end(), True
    return (0, True) if target - reach <= 0 else (target, False)


def _sentences_around(text: str, headings: list[tuple[int, int, str]], position: int, width: int,
                      reach: int) -> tuple[list[tuple[int, int, str | None, int]], int] | None:
    """The whole sentences of the stretch ``reach`` characters either side of ``position`` and the index
    of the cursor's among them; None when the stretch may miss it or one of its ``width`` neighbours."""
    lo, whole_start = _block_edge(text, position - reach, reach, forward=False)
    hi, whole_end = _block_edge(text, position + reach, reach, forward=True)
    found = _sections_in(text, headings, lo, hi)
    found = found[0 if whole_start else 1:len(found) if whole_end else len(found) - 1]
    at = bisect_right([start for start, _, _, _ in found], position) - 1
    short_before = lo > 0 and at - width < 0
    short_after = hi < len(text) and at + width >= len(found)
    return None if short_before or short_after else (found, at)


def context_in_draft(text: str, position: int, neighbours: int | None = None,
                     headings: list[tuple[int, int, str]] | None = None) -> SentenceContext | None:
    """The draft sentence at ``position`` (or the last one starting before it) with the context it is
    labelled in: the kind of the heading above it and up to ``neighbours`` (default
    ``core.labelling.sentence_context.QUERY_NEIGHBOURS``) sentences on each side under the same heading. None
    in a draft without sentences before ``position``. Only a stretch around ``position`` is split
    (:data:`CONTEXT_REACH` characters each side, to blank lines; wider while it may miss a neighbour), so
    a resting cursor costs about the same in a draft of any length; the answer is the whole text's.
    ``headings``: the text's :func:`draft_headings`, when the caller kept them (the only step that reads
    every line)."""
    from core.labelling.sentence_context import QUERY_NEIGHBOURS, SentenceContext

    width = QUERY_NEIGHBOURS if neighbours is None else neighbours
    headings = draft_headings(text) if headings is None else headings
    reach = CONTEXT_REACH
    while (around := _sentences_around(text, headings, position, width, reach)) is None:
        reach *= 2
    found, at = around
    if at < 0:
        return None
    _, _, kind, heading = found[at]

    def sentence(k: int) -> str:
        return text[found[k][0]:found[k][1]]

    def same(k: int) -> bool:
        return 0 <= k < len(found) and found[k][3] == heading

    return SentenceContext(sentence(at), tuple(sentence(k) for k in range(at - width, at) if same(k)),
                           tuple(sentence(k) for k in range(at + 1, at + 1 + width) if same(k)), kind)


class DraftStore:
    """Named plain-text drafts in ``user_data_dir()/drafts`` (``RHETORICA_HOME`` overrides)."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else user_data_dir() / "drafts"

    def path(self, name: str = "current") -> Path:
        if not _NAME.match(name):
            raise ValueError(f"bad draft name {name!r}: use letters, digits, '.', '_' or '-'")
        return self.root / f"{name}.txt"

    def save(self, text: str, name: str = "current") -> Path:
        """Save atomically (the old text or the new, never a torn file); a full disk or read-only
        folder raises :class:`core.fileio.DiskFullError` / :class:`core.fileio.ReadOnlyError` (an
        ``OSError`` too) with a one-line message, leaving the previous save intact."""
        path = self.path(name)
        atomic_write_with_text(path, text, f"the draft {name!r}")
        return path

    def load(self, name: str = "current", notes: list[str] | None = None) -> str:
        """The saved text, or an empty string when there is none. A saved text that cannot be read never
        stops the caller, and is never lost to the next save: a file that is not UTF-8 text, or cannot be
        read, is set aside (renamed ``NAME.unreadable-YYYYMMDD-HHMMSS.txt``) and what can be read of it is
        returned (an undecodable byte as U+FFFD); a folder in its place reads as "". Each such case puts
        one line in ``notes`` (when given)."""
        import stat
        import time

        path = self.path(name)
        data = b""
        try:
            mode = path.stat().st_mode
            if stat.S_ISDIR(mode):  # left where it is: each save then says it cannot write there
                if notes is not None:
                    notes.append(f"the saved draft {path} is a folder, not a text; the pane starts empty")
                return ""
            if not stat.S_ISREG(mode):  # a pipe or a device would block or never end
                raise OSError(f"{path.name} is not a regular file")
            data = path.read_bytes()
            return data.decode("utf-8")
        except FileNotFoundError:
            return ""
        except UnicodeDecodeError:
            why = "could not be read as UTF-8 text"
        except OSError as error:
            why = f"could not be read ({error.strerror or error})"
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside, k = path.with_name(f"{path.stem}.unreadable-{stamp}{path.suffix}"), 1
        while os.path.lexists(aside):  # a second one within the same second
            k += 1
            aside = path.with_name(f"{path.stem}.unreadable-{stamp}-{k}{path.suffix}")
        try:
            path.rename(aside)
            kept = f"it was kept as {aside}"
        except OSError as error:
            kept = f"it could not be set aside ({error.strerror or error}): copy it elsewhere before editing"
        recovered = data.decode("utf-8", "replace")
        if notes is not None:
            shown = "; the pane shows what could be read (unreadable bytes as \ufffd)" if recovered else ""
            notes.append(f"the saved draft {why}; {kept}{shown}")
        return recovered

    def has(self, name: str) -> bool:
        """A saved text named ``name`` exists and is not empty."""
        try:
            return self.path(name).stat().st_size > 0
        except OSError:
            return False

    # -- the file a draft's text came from (a sidecar: ``current.link.json``) -------------------------
    def link_path(self, name: str = "current") -> Path:
        return self.path(name).with_suffix(".link.json")

    def save_link(self, source: str | Path, text: str, name: str = "current") -> None:
        """Remember that the draft ``name`` is the file ``source`` whose readable text is ``text`` (when
        it was opened or saved): saved atomically; raises ``OSError`` like :meth:`save`."""
        import json

        data = {"path": str(Path(source).absolute()), "digest": text_digest(text)}
        atomic_write_with_text(self.link_path(name), json.dumps(data, indent=1) + "\n",
                               f"the link of the draft {name!r}")

    def load_link(self, name: str = "current") -> DraftLink | None:
        """The file the draft ``name`` came from (None: typed text). A damaged link (not a small JSON
        file, wrong fields) raises :class:`core.errors.DraftError` with one line."""
        from core.errors import DraftError
        from core.fileio import TextInputError, read_text_input
        from core.json_shapes import loads

        file = self.link_path(name)
        if not os.path.lexists(file):
            return None
        try:
            data = loads(read_text_input(file, "a draft link", max_bytes=LINK_LIMIT))
        except (TextInputError, OSError, ValueError) as error:
            raise DraftError(f"the draft's link to its file is damaged ({error})") from None
        path, digest = (data.get("path"), data.get("digest")) if isinstance(data, dict) else (None, None)
        if not (isinstance(path, str) and "\0" not in path and Path(path).is_absolute()
                and isinstance(digest, str) and _DIGEST.match(digest)):
            raise DraftError(f"the draft's link to its file is damaged ({file}: not a path and a digest)")
        return DraftLink(Path(path), digest)

    def forget_link(self, name: str = "current") -> None:
        """The draft ``name`` is typed text: its link, if any, is removed (a failure is ignored)."""
        import contextlib

        with contextlib.suppress(OSError):
            self.link_path(name).unlink(missing_ok=True)


def text_digest(text: str) -> str:
    """Hex sha256 of ``text`` (UTF-8): what a draft's link remembers of its file's readable text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class DraftLink:
    """The file a saved draft came from: its absolute ``path`` and the :func:`text_digest` of its readable
    text when it was last opened or saved (a file whose text differs now changed on disk since)."""

    path: Path
    digest: str


RECENT_DRAFTS = 10
RECENT_LIMIT = 1_000_000  # bytes: ten paths are far less; a larger list file is damaged


class RecentDrafts:
    """The draft files opened last (newest first, at most :data:`RECENT_DRAFTS`), kept as JSON in
    ``user_data_dir()/drafts/recent.json``; a damaged list reads as empty."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.file = (Path(root) if root is not None else user_data_dir() / "drafts") / "recent.json"

    def load(self) -> list[str]:
        """The list, newest first; a damaged list (not a small JSON list of paths, nested too deeply, not
        UTF-8, a folder …) reads as empty."""
        from core.errors import RhetoricaError
        from core.fileio import read_text_input
        from core.json_shapes import loads

        try:
            data = loads(read_text_input(self.file, "the recent drafts", max_bytes=RECENT_LIMIT))
        except (OSError, ValueError, RhetoricaError):
            return []
        if not isinstance(data, list):
            return []
        return [item for item in data if isinstance(item, str) and item][:RECENT_DRAFTS]

    def add(self, path: str | Path) -> list[str]:
        """Put ``path`` first; returns the new list (saved atomically; a failed save keeps the old)."""
        name = str(Path(path).absolute())
        return self._save([name, *(p for p in self.load() if p != name)][:RECENT_DRAFTS])

    def remove(self, path: str | Path) -> list[str]:
        """Drop ``path`` (a file that has gone); returns the new list."""
        name = str(Path(path).absolute())
        return self._save([p for p in self.load() if p != name])

    def _save(self, paths: list[str]) -> list[str]:
        import contextlib
        import json

        with contextlib.suppress(OSError):  # a read-only data folder: the list is just not remembered
            atomic_write_with_text(self.file, json.dumps(paths, indent=1) + "\n", "the recent drafts list")
        return paths
