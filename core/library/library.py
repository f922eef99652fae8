"""A library: the database plus one nearest-neighbour index per embedding view, kept in step.

``Library(folder)`` opens (or creates) a library folder. Adding a paper labels and embeds its
sentences with the model it is given (``core.model_api.RoleModel``), writes the paper in one
database transaction, then adds the vectors to the indexes and saves them atomically. The database
records, per view, how many sentences the saved index holds; an index that is missing, unreadable
or out of step (a crash between the database write and the index save) is rebuilt from the
database when the library opens it. Before faiss reads an index file (it trusts the file: a
damaged one crashes the process), the file is checked against the integrity record (sha256, size,
item count) kept in the database when it was saved; a file that fails is rebuilt from the database
first, and the library says so once through ``on_notice`` (kept in ``Library.notices``; without a
callback, a warning on the ``rhetorica.library`` logger). Index files that still have their earlier
names (``content.hnsw``, ``function.hnsw``) are moved to today's (``content.ann``, ``function.ann``)
when the library is opened (:mod:`core.library.index_names`).

No Qt, no torch: the model is passed in, the caller decides where it runs.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.jobs import JobContext, ensure_context
from core.library.ann_index import IndexFormatError, load_index, new_index
from core.library.index import ExactIndex, IndexError_, IndexRecord, VectorIndex, check_index_file
from core.library.index_names import NameMove, index_file, move_to_current_names, not_moved_notice
from core.library.row_check import section_kind_of
from core.library.store import (
    INDEX_FILES,  # noqa: F401  (re-exported: the index files' names)
    VIEWS,
    LibraryError,
    LibraryStats,
    LibraryStore,
    NewSentence,
    PaperRecord,
    SentenceRecord,
    open_store,
)

if TYPE_CHECKING:  # pragma: no cover
    from core.document import Paper
    from core.labelling.analysis import PaperAnalysis
    from core.model_api import RoleModel

EXACT_BELOW = 0  # libraries smaller than this use exact search (0: always HNSW)


NoticeSink = Callable[[str], None]
_log = logging.getLogger("rhetorica.library")


@dataclass
class AddReport:
    """What an add did: paper ids added, (source, reason) pairs skipped, sentences stored, and the
    input lines refused (``file:line: reason``, from an abstracts file)."""

    added: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    sentences: int = 0
    refused: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[tuple[str, str]]:
        """The skipped (source, reason) pairs that are failures (not "already in the library")."""
        return [(source, reason) for source, reason in self.skipped if reason != ALREADY_THERE]

    def record(self, source: str, paper_id: str, ids: list[int] | None) -> None:
        """Count one add: ``ids`` None means the paper was already in the library."""
        if ids is None:
            self.skipped.append((source, ALREADY_THERE))
        else:
            self.added.append(paper_id)
            self.sentences += len(ids)


ALREADY_THERE = "already in the library"


@dataclass(frozen=True)
class JsonlPaper:
    """One row of an abstracts file: ``{"id", "title", "abstract"}`` or ``{"id", "title",
    "sentences"}`` (each sentence a string or ``{"text", "section"}``)."""

    paper_id: str
    title: str
    sentences: list[tuple[str, str]]  # (text, section heading)
    sha256: str


@dataclass(frozen=True)
class RefusedLine:
    """A line of an abstracts file that is not a paper row, and why."""

    path: Path
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass
class JsonlRead:
    """The paper rows of an abstracts file, and the lines refused."""

    papers: list[JsonlPaper] = field(default_factory=list)
    refused: list[RefusedLine] = field(default_factory=list)


ROW_FORMAT = '{"id", "title", "abstract"} or {"id", "title", "sentences"}'


class _BadRow(ValueError):
    """Why a JSON value is not a paper row (the message is the reason)."""


def _json_type(value: object) -> str:
    kinds = ((type(None), "null"), (bool, "true/false"), (int, "a number"), (float, "a number"),
             (str, "a string"), (list, "a list"), (dict, "an object"))
    return next((name for kind, name in kinds if isinstance(value, kind)), type(value).__name__)


def _text(value: object, what: str, *, optional: bool = False) -> str:
    """``value`` as a string field ``what`` (null is "" when ``optional``); _BadRow otherwise."""
    if value is None and optional:
        return ""
    if not isinstance(value, str):
        raise _BadRow(f'{what} must be a string, not {_json_type(value)}')
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _BadRow(f"{what} is not valid Unicode text (a lone surrogate escape)") from None
    return value


def _paper_id(row: dict[str, Any]) -> str:
    if "id" not in row or row["id"] is None:
        raise _BadRow('no "id"')
    value = row["id"]
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    paper_id = _text(value, '"id"')
    if not paper_id.strip():
        raise _BadRow('"id" is empty')
    return paper_id


def _row_sentences(row: dict[str, Any]) -> list[tuple[str, str]]:
    """(text, section) of each non-blank sentence of a row; _BadRow when there is none."""
    from core.text.sentences import split_sentence_texts

    if row.get("sentences") is not None:
        items = row["sentences"]
        if not isinstance(items, list):
            raise _BadRow(f'"sentences" must be a list of strings or {{"text", "section"}} objects, not '
                          f"{_json_type(items)}")
        sentences = []
        for number, item in enumerate(items):
            if isinstance(item, dict):
                where = f'"sentences"[{number}]'
                sentences.append((_text(item.get("text"), f"{where}.text"),
                                  _text(item.get("section"), f"{where}.section", optional=True)))
            else:
                sentences.append((_text(item, f'"sentences"[{number}]'), ""))
        kept = [s for s in sentences if s[0].strip()]
        if not kept:
            raise _BadRow('"sentences" holds no text')
        return kept
    if row.get("abstract") is None:
        raise _BadRow('no "abstract" or "sentences"')
    abstract = _text(row["abstract"], '"abstract"')
    kept = [(s, "Abstract") for s in split_sentence_texts(abstract) if s.strip()]
    if not kept:
        raise _BadRow('"abstract" is empty')
    return kept


def paper_from_row(value: object) -> JsonlPaper:
    """The paper a parsed JSON line describes; :class:`ValueError` (its message the reason) when
    it is not a paper row: not an object, no non-empty string (or integer) id, a title that is not a
    string, no sentence text."""
    if not isinstance(value, dict):
        raise _BadRow(f"{_json_type(value)}, not an object")
    paper_id = _paper_id(value)
    title = _text(value.get("title"), '"title"', optional=True)
    sentences = _row_sentences(value)
    digest = hashlib.sha256(json.dumps([paper_id, title, sentences]).encode("utf-8")).hexdigest()
    return JsonlPaper(paper_id, title, sentences, digest)


JSONL_LIMIT = 500_000_000  # bytes: an abstracts file is read whole, so its size is capped


def _jsonl_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 file (a byte-order mark is skipped); one-line LibraryError otherwise."""
    if path.is_dir():
        raise LibraryError(f"{path} is a folder, not a JSONL file: give the file of paper rows")
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise LibraryError(f"{path}: no such file") from None
    except OSError as error:
        raise LibraryError(f"cannot read {path}: {error.strerror or error}") from None
    if size > JSONL_LIMIT:  # checked before reading: a huge file is never read whole
        raise LibraryError(f"{path} is {size / 1e6:.0f} MB, more than the {JSONL_LIMIT // 10**6} MB an "
                           "abstracts file may have: split it into smaller files")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise LibraryError(f"{path}: no such file") from None
    except OSError as error:
        raise LibraryError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise LibraryError(f"{path} is not UTF-8 text: byte 0x{data[error.start]:02x} at offset "
                           f"{error.start} (line {line}) cannot be decoded; save the file as UTF-8") from None
    # split on newlines only (str.splitlines also splits at U+2028 and the like, which JSON strings may hold)
    return [line.removesuffix("\r") for line in text.split("\n")]


def read_jsonl(path: Path) -> JsonlRead:
    """The paper rows of an abstracts JSONL file, and each line that is not one (with its reason);
    blank lines are ignored. A file that cannot be read as UTF-8 text raises :class:`LibraryError`."""
    read = JsonlRead()
    for number, line in enumerate(_jsonl_lines(path), 1):
        if not line.strip():
            continue
        try:
            read.papers.append(paper_from_row(json.loads(line)))
        except json.JSONDecodeError as error:
            read.refused.append(RefusedLine(path, number, f"not a paper row: not JSON ({error.msg}, column "
                                                          f"{error.colno})"))
        except RecursionError:
            read.refused.append(RefusedLine(path, number, "not a paper row: JSON nested too deeply"))
        except _BadRow as error:
            read.refused.append(RefusedLine(path, number, f"not a paper row: {error}; expected {ROW_FORMAT}"))
    return read


def read_jsonl_papers(path: Path) -> list[JsonlPaper]:
    """The papers of an abstracts JSONL file, all or nothing: the first bad line raises one clear
    error naming it (:func:`read_jsonl` keeps the good rows and lists the bad ones)."""
    read = read_jsonl(path)
    if read.refused:
        raise LibraryError(str(read.refused[0]))
    return read.papers


def find_pdfs(paths: Sequence[Path]) -> tuple[list[Path], list[tuple[str, str]]]:
    """The PDFs that ``paths`` name (files as given, folders searched recursively) and the
    (path, reason) of those that give none (a missing path, a folder without PDFs)."""
    pdfs: list[Path] = []
    skipped: list[tuple[str, str]] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file())
            pdfs.extend(found)
            if not found:
                skipped.append((str(path), NO_PDFS))
        elif path.is_file():
            pdfs.append(path)
        elif path.exists():  # a device or a pipe: reading it would never end, or give no PDF
            skipped.append((str(path), NOT_REGULAR))
        else:
            skipped.append((str(path), NO_SUCH_PATH))
    return pdfs, skipped


def refuse_bad_paths(skipped: Sequence[tuple[str, str]]) -> None:
    """One error for the first path of :func:`find_pdfs` that cannot be read: a missing path or one that
    is neither a regular file nor a folder (a folder without PDFs is only a note)."""
    from core.errors import MissingFileError, NotAPdfError

    for path, reason in skipped:
        if reason == NO_SUCH_PATH:
            raise MissingFileError(path, reason)
        if reason == NOT_REGULAR:
            raise NotAPdfError(path, reason)


NO_PDFS = "no PDF files in this folder"
NO_SUCH_PATH = "no such file or folder"
NOT_REGULAR = "is not a regular file or a folder (a device or a pipe?)"


class Library:
    """One library folder (database + indexes). Close it when done (or use ``with``)."""

    def __init__(self, folder: str | Path, *, on_notice: NoticeSink | None = None) -> None:
        self.folder = Path(folder)
        self.store: LibraryStore = open_store(self.folder)
        self._indexes: dict[str, Any] = {}
        self.notices: list[str] = []  # what the library repaired by itself (one line each)
        self._on_notice = on_notice
        self._index_files: dict[str, Path] = {view: index_file(self.folder, view) for view in VIEWS}
        try:
            self.renamed: list[NameMove] = self._move_index_files()  # files found under earlier names
        except BaseException:
            self.store.close()
            raise

    def _move_index_files(self) -> list[NameMove]:
        """Move index files that have their earlier names to today's (once; see
        :mod:`core.library.index_names`); where the folder cannot be written they are read under
        their earlier names, and one notice says so."""
        moves = move_to_current_names(self.folder, self._check_index_file)
        for move in moves:
            self._index_files[move.view] = move.path
            if move.moved:
                _log.info("moved the library index %s to %s", move.earlier.name, move.path.name)
        message = not_moved_notice(self.folder, moves)
        if message is not None:
            self.notice(message)
        return moves

    def _check_index_file(self, view: str, path: Path) -> str | None:
        """Why the index file ``path`` of ``view`` must not be loaded (None: it is the file saved)."""
        import sqlite3

        try:
            return check_index_file(path, self.index_record(view), self._view_count(view))
        except sqlite3.DatabaseError as error:
            return f"cannot be checked ({error})"

    def index_path(self, view: str) -> Path:
        """The file ``view``'s index is read from (today's name, unless the folder cannot be written
        and the file still has its earlier name)."""
        return self._index_files[view]

    def notice(self, message: str) -> None:
        """Tell the user, once, about something the library put right by itself."""
        self.notices.append(message)
        if self._on_notice is not None:
            self._on_notice(message)
        else:
            _log.warning(message)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- indexes ------------------------------------------------------------------------------
    def _dim(self, view: str) -> int | None:
        for _, vectors in self.store.vectors(view, batch=1):
            return int(vectors.shape[1])
        return None

    def index(self, view: str) -> Any:
        """The index of ``view`` (loaded once its file passes the integrity check; else rebuilt
        from the database, with a notice); None when the library has no vectors of this view."""
        if view in self._indexes:
            return self._indexes[view]
        dim = self._dim(view)
        if dim is None:
            return None
        path = self.index_path(view)
        count = self._view_count(view)
        problem = check_index_file(path, self.index_record(view), count)
        index: Any = None
        if problem is None:
            try:
                index = load_index(path, dim)
            except IndexFormatError as error:  # "<name> is an hnswlib index of an earlier version"
                problem = str(error).removeprefix(f"{path.name} ")
            except IndexError_ as error:
                problem = f"cannot be read ({error})"
        if index is None:
            first_build = problem == "is missing" and not self.store.get_meta(f"index.{view}.count")
            index = self._build(view)
            saved = self._save_rebuilt(view, index)
            if not first_build:
                self.notice(f"the library index {self._file_name(view, path)} {problem}: rebuilt it from "
                            f"the database ({count} sentences){saved}")
        self._indexes[view] = index
        return index

    def _file_name(self, view: str, path: Path) -> str:
        """``path``'s name for a notice, with the earlier name it had when this library moved it."""
        earlier = next((move.earlier.name for move in self.renamed
                        if move.view == view and move.moved and move.path == path), "")
        return f"{path.name} (until now {earlier})" if earlier else path.name

    def _save_rebuilt(self, view: str, index: VectorIndex) -> str:
        """Save an index rebuilt on opening; a library on a read-only disk keeps it in memory only
        (returns what the notice adds then)."""
        from core.fileio import StorageError

        try:
            self._save(view, index)
        except StorageError as error:
            return f"; not saved ({error})"
        return ""

    def index_record(self, view: str) -> IndexRecord | None:
        """The integrity record of ``view``'s index file, as saved (None: none)."""
        return IndexRecord.from_json(self.store.get_meta(f"index.{view}.file"))

    def _view_count(self, view: str) -> int:
        column = "content" if view == "content" else "function_vector"
        row = self.store.connection.execute(f"SELECT COUNT(*) FROM sentences WHERE {column} IS NOT NULL")
        return int(row.fetchone()[0])

    def rebuild_index(self, view: str, ctx: JobContext | None = None) -> VectorIndex | None:
        """Recreate ``view``'s index from the database and save it."""
        index = self._build(view, ctx)
        if index is not None:
            self._save(view, index)
            self._indexes[view] = index
        return index

    def _build(self, view: str, ctx: JobContext | None = None) -> VectorIndex | None:
        """A new index of ``view``'s vectors in the database (None: it has none)."""
        ctx = ensure_context(ctx)
        dim = self._dim(view)
        if dim is None:
            return None
        total = self._view_count(view)
        index = new_index(dim, expected=total)
        done = 0
        for ids, vectors in self.store.vectors(view):
            ctx.check()
            index.add(ids, vectors)
            done += len(ids)
            ctx.progress(done, total, f"indexing the {view} view")
        return index

    def rebuild(self, ctx: JobContext | None = None) -> None:
        """Recreate every index from the database (``rhetorica library rebuild``)."""
        for view in VIEWS:
            self.rebuild_index(view, ctx)

    def _save(self, view: str, index: VectorIndex) -> None:
        """Save the index atomically (under today's name), then record what was saved (count and
        integrity record); the record is cleared first, so a crash while saving leaves a file that is
        rebuilt. A file still read under its earlier name is removed once the new one is saved."""
        import contextlib

        count, record = f"index.{view}.count", f"index.{view}.file"
        self.store.set_metas({count: "", record: ""})
        path = index_file(self.folder, view)
        saved = index.save(path)
        self.store.set_metas({count: str(len(index)), record: saved.to_json()})
        if self._index_files[view] != path:
            with contextlib.suppress(OSError):
                self._index_files[view].unlink()
            self._index_files[view] = path

    duplicate_view = "content"  # the view core.phrasing.suggest judges near-duplicate wording in

    def sentences(self, ids: Sequence[int]) -> list[SentenceRecord]:
        return self.store.sentences(ids)

    def vectors_of(self, ids: Sequence[int], view: str) -> np.ndarray:
        return self.store.vectors_of(ids, view)

    def paper(self, paper_id: str) -> PaperRecord | None:
        return self.store.paper(paper_id)

    def search(self, view: str, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(sentence ids [q, k'], cosine similarities [q, k']) best first."""
        index = self.index(view)
        if index is None:
            empty = np.zeros((1 if query.ndim == 1 else len(query), 0))
            return empty.astype(np.int64), empty.astype(np.float32)
        return index.search(query, k)

    # -- adding and removing ------------------------------------------------------------------
    def _store_sentences(self, *, paper_id: str, sha256: str, title: str, source: str, note: str,
                         kind: str, model: RoleModel, sentences: Sequence[NewSentence],
                         content: np.ndarray, function: np.ndarray | None = None) -> list[int] | None:
        texts = [s.text for s in sentences]
        if function is None or len(function) != len(texts):  # not from the labelling run: embed now
            function = model.embed(texts, view="function") if texts else None
        for view in VIEWS:  # open the indexes first, so the new vectors are appended, not rebuilt
            self.index(view)
        ids = self.store.add_paper(paper_id=paper_id, sha256=sha256, title=title, source=source, note=note,
                                   kind=kind, model_id=model.model_id, sentences=sentences,
                                   content=content, function=function)
        if ids:
            self._index_new(paper_id, ids, content, function)
        return ids

    def _index_new(self, paper_id: str, ids: list[int], content: np.ndarray,
                   function: np.ndarray | None) -> None:
        """Add a stored paper's vectors to the indexes and save them. The paper is in the database
        already: an index that cannot be saved (a full disk) is rebuilt from it on the library's next
        use, and a notice says so instead of an error that would say the add failed."""
        from core.fileio import StorageError

        for view, vectors in (("content", content), ("function", function)):
            if vectors is None:
                continue
            try:
                if view in self._indexes:  # open: append the new vectors
                    self._indexes[view].add(np.asarray(ids, dtype=np.int64), vectors)
                    self._save(view, self._indexes[view])
                else:  # the library had no vectors of this view: build it from the database
                    self.index(view)
            except StorageError as error:
                self._indexes.pop(view, None)  # reopened (and rebuilt) from the database when next needed
                self.notice(f"added {paper_id[:16]} to the library, but its {view} index could not be saved "
                            f"({error}); it is rebuilt from the database the next time the library is used")

    def add_paper(self, paper: Paper, model: RoleModel, *, note: str = "",
                  ctx: JobContext | None = None, analysis: PaperAnalysis | None = None) -> list[int] | None:
        """Label, embed and store a parsed paper (None: already in the library). ``analysis``: the
        paper's embedded analysis by ``model`` (``core.labelling.embedded_analysis``), stored as it is instead
        of running the model again."""
        from core.labelling.analysis import analyze_paper

        if self.store.has_sha256(paper.sha256):
            return None
        if analysis is None or not analysis.embedded or analysis.model_id != model.model_id \
                or len(analysis.roles) != len(paper.sentences):
            analysis = analyze_paper(paper, model, ctx, with_embeddings=True, with_function_vectors=True)
        functions = analysis.functions or []
        sentences = []
        for sentence in paper.sentences:
            section = paper.sections[sentence.section_index] if 0 <= sentence.section_index < len(
                paper.sections) else None
            role = analysis.roles[sentence.index]
            function = functions[sentence.index] if functions else None
            sentences.append(NewSentence(
                sentence.text, section.heading if section else "", section.kind.value if section else "",
                role.label, role.confidence, function.label if function else "",
                function.top[0][1] if function and function.top else 0.0))
        assert analysis.embeddings is not None
        return self._store_sentences(paper_id=paper.sha256, sha256=paper.sha256, title=paper.title,
                                     source=paper.source_path, note=note, kind="pdf", model=model,
                                     sentences=sentences, content=analysis.embeddings,
                                     function=analysis.function_vectors)

    def add_pdfs(self, paths: Iterable[Path], model: RoleModel, ctx: JobContext | None = None,
                 workers: int = 1, known_sha256: Mapping[Path, str] | None = None) -> AddReport:
        """Parse and add PDFs; a PDF that cannot be read is skipped with its reason.

        With ``workers`` > 0 the PDFs are parsed in that many child processes (pymupdf is not
        thread-safe, and a PDF that crashes it only takes its child down) while this process labels
        and stores the ones already parsed; at most ``2 × workers`` parsed papers wait at a time, so
        memory stays bounded however many PDFs there are (the corpus pipeline's parse stage,
        :func:`core.corpus_pipeline.parse.parse_pdfs`). ``workers=0`` parses here, one by one. A PDF
        already in the library (same sha256) is skipped, so an interrupted add resumes;
        ``known_sha256`` gives the hashes a caller has just computed (a Zotero sync's plan), so those
        files are not read an extra time for that check."""
        from core.corpus_pipeline.parse import parse_pdfs
        from core.fileio import file_sha256

        ctx = ensure_context(ctx)
        paths = list(paths)
        report = AddReport()
        todo: list[Path] = []
        for path in paths:
            if not _utf8_name(path):
                report.skipped.append((str(path), "its file name is not valid UTF-8 text, which the library "
                                                  "stores: rename the file and add it again"))
                continue
            try:
                sha = (known_sha256 or {}).get(path) or file_sha256(path)
                if self.store.has_sha256(sha):
                    report.record(str(path), "", None)
                    continue
            except OSError as error:
                report.skipped.append((str(path), f"cannot read: {error.strerror or error}"))
                continue
            todo.append(path)
        done = 0
        for path, parsed in parse_pdfs(todo, workers):
            ctx.check()
            done += 1
            ctx.progress(done, len(todo), f"adding {path.name}")
            if isinstance(parsed, str):
                report.skipped.append((str(path), parsed))
                continue
            share = ctx.child((done - 1) / len(todo), done / len(todo))  # labelling a long paper can stop
            with _telling_what_was_added(report):
                report.record(str(path), parsed.sha256, self.add_paper(parsed, model, ctx=share))
        ctx.progress(len(todo), max(1, len(todo)), f"added {len(report.added)} of {len(paths)}")
        return report

    def import_jsonl(self, path: Path, model: RoleModel, *, note: str = "",
                     ctx: JobContext | None = None) -> AddReport:
        """Add the papers of an abstracts JSONL file (ids as given; duplicates skipped). Lines that
        are not paper rows are refused (``report.refused``); a file without one paper row raises."""
        ctx = ensure_context(ctx)
        read = read_jsonl(path)
        if not read.papers and read.refused:
            first = read.refused[0]
            raise LibraryError(f"{path}: no paper rows to import ({len(read.refused)} line(s) refused; "
                               f"line {first.line}: {first.reason})")
        if not read.papers:
            raise LibraryError(f"{path} holds no paper rows: expected one JSON object per line, {ROW_FORMAT}")
        papers = read.papers
        report = AddReport(refused=[str(line) for line in read.refused])
        for number, paper in enumerate(papers):
            ctx.check()
            ctx.progress(number, len(papers), f"adding {paper.paper_id}")
            if self.store.has_sha256(paper.sha256) or self.store.paper(paper.paper_id) is not None:
                report.record(paper.paper_id, "", None)
                continue
            texts = [text for text, _ in paper.sentences]
            kinds = [section_kind_of(section) or None for _, section in paper.sentences]
            section_kinds = [k or "other" for k in kinds] if any(kinds) else None
            (encoding,) = model.encode_documents([(texts, section_kinds)], with_function_vectors=True)
            functions = encoding.functions or []
            sentences = [NewSentence(text, section, kind or "", role.label, role.confidence,
                                     functions[i].label if functions else "",
                                     functions[i].top[0][1] if functions and functions[i].top else 0.0)
                         for i, ((text, section), kind, role) in enumerate(zip(paper.sentences, kinds,
                                                                               encoding.roles))]
            with _telling_what_was_added(report):
                ids = self._store_sentences(paper_id=paper.paper_id, sha256=paper.sha256, title=paper.title,
                                            source=str(path), note=note, kind="jsonl", model=model,
                                            sentences=sentences, content=encoding.embeddings,
                                            function=encoding.function_vectors)
            report.record(paper.paper_id, paper.paper_id, ids)
        ctx.progress(len(papers), len(papers), f"added {len(report.added)} of {len(papers)}")
        return report

    def remove(self, paper_id: str) -> int:
        """Remove a paper (and its vectors from the indexes); returns how many sentences went."""
        paper_id = self.store.resolve_paper_id(paper_id)
        for view in VIEWS:  # open (or rebuild) the indexes while they match the database
            if view not in self._indexes and self.index_path(view).is_file():
                self.index(view)
        ids = np.asarray(self.store.remove_paper(paper_id), dtype=np.int64)
        for view in VIEWS:
            index = self._indexes.get(view)
            if index is not None:
                index.remove(ids)
                self._save(view, index)
        return len(ids)

    def stats(self) -> LibraryStats:
        return self.store.stats()


@contextmanager
def _telling_what_was_added(report: AddReport) -> Iterator[None]:
    """A full (or read-only) disk while adding a paper stops the add: the error then also says how many
    papers this add had put in the library before it (they stay there)."""
    from core.fileio import StorageError

    try:
        yield
    except StorageError as error:
        if not report.added:
            raise
        raise type(error)(f"{error}; the {len(report.added)} paper(s) added before it are in the "
                          "library") from None


def exact_reference(library: Library, view: str) -> ExactIndex | None:
    """An exact index over ``view`` (the recall reference for benchmarks and tests)."""
    dim = library._dim(view)
    if dim is None:
        return None
    index = ExactIndex(dim)
    for ids, vectors in library.store.vectors(view):
        index.add(ids, vectors)
    return index


def _utf8_name(path: Path) -> bool:
    """Whether ``path`` is UTF-8 text (a name of other bytes is kept as surrogates, which SQLite refuses)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
