"""A library: the database plus one nearest-neighbour index per embedding view, kept in step.

``Library(folder)`` opens (or creates) a library folder. Adding a paper labels and embeds its
sentences with the model it is given (``core.model_api.RoleModel``), writes the paper in one
database transaction, then adds the vectors to the indexes and saves them atomically. The database
records, per view, how many sentences the saved index holds; an index that is missing, unreadable
or out of step (a crash between the database write and the index save) is rebuilt from the
database when the library opens it.

No Qt, no torch: the model is passed in, the caller decides where it runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.errors import RhetoricaError
from core.jobs import JobContext, ensure_context
from core.library.index import ExactIndex, HnswIndex, IndexError_
from core.library.store import (
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
    from core.model_api import RoleModel

INDEX_FILES = {"content": "content.hnsw", "function": "function.hnsw"}
EXACT_BELOW = 0  # libraries smaller than this use exact search (0: always HNSW)


@dataclass
class AddReport:
    """What an add did: paper ids added, (source, reason) pairs skipped, sentences stored."""

    added: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    sentences: int = 0

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


def read_jsonl_papers(path: Path) -> list[JsonlPaper]:
    """The papers of an abstracts JSONL file; a bad line raises one clear error naming it."""
    from core.text.sentences import split_sentence_texts

    papers: list[JsonlPaper] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise LibraryError(f"cannot read {path}: {error}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            paper_id, title = str(row["id"]), str(row.get("title", ""))
            if "sentences" in row:
                sentences = [(s, "") if isinstance(s, str) else (str(s["text"]), str(s.get("section", "")))
                             for s in row["sentences"]]
            else:
                sentences = [(s, "Abstract") for s in split_sentence_texts(str(row["abstract"]))]
        except (ValueError, KeyError, TypeError) as error:
            expected = '{"id", "title", "abstract"} or {"id", "title", "sentences"}'
            raise LibraryError(f"{path}:{number}: not a paper row ({type(error).__name__}: {error}); "
                               f"expected {expected}") from None
        digest = hashlib.sha256(json.dumps([paper_id, title, sentences]).encode("utf-8")).hexdigest()
        papers.append(JsonlPaper(paper_id, title, [s for s in sentences if s[0].strip()], digest))
    return papers


def _section_kind(heading: str) -> str:
    """The section kind a heading names ("" for no heading)."""
    from core.pdf.headings import is_abstract_heading, section_kind

    if not heading:
        return ""
    return "abstract" if is_abstract_heading(heading) else str(section_kind(heading).value)


class Library:
    """One library folder (database + indexes). Close it when done (or use ``with``)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.store: LibraryStore = open_store(self.folder)
        self._indexes: dict[str, Any] = {}

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
        """The index of ``view`` (loaded, or rebuilt when missing or out of step); None when the
        library has no vectors of this view."""
        if view in self._indexes:
            return self._indexes[view]
        dim = self._dim(view)
        if dim is None:
            return None
        path = self.folder / INDEX_FILES[view]
        saved = self.store.get_meta(f"index.{view}.count", "")
        count = self._view_count(view)
        index: Any = None
        if path.is_file() and saved == str(count):
            try:
                index = HnswIndex.load(path, dim, live=count)
            except IndexError_:
                index = None
        if index is None:
            index = self.rebuild_index(view)
        self._indexes[view] = index
        return index

    def _view_count(self, view: str) -> int:
        column = "content" if view == "content" else "function_vector"
        row = self.store.connection.execute(f"SELECT COUNT(*) FROM sentences WHERE {column} IS NOT NULL")
        return int(row.fetchone()[0])

    def rebuild_index(self, view: str, ctx: JobContext | None = None) -> HnswIndex | None:
        """Recreate ``view``'s index from the database and save it."""
        ctx = ensure_context(ctx)
        dim = self._dim(view)
        if dim is None:
            return None
        total = self._view_count(view)
        index = HnswIndex(dim, capacity=max(total, 1024))
        done = 0
        for ids, vectors in self.store.vectors(view):
            ctx.check()
            index.add(ids, vectors)
            done += len(ids)
            ctx.progress(done, total, f"indexing the {view} view")
        self._save(view, index)
        self._indexes[view] = index
        return index

    def rebuild(self, ctx: JobContext | None = None) -> None:
        """Recreate every index from the database (``rhetorica library rebuild``)."""
        for view in VIEWS:
            self.rebuild_index(view, ctx)

    def _save(self, view: str, index: HnswIndex) -> None:
        self.store.set_meta(f"index.{view}.count", "")  # in case we crash while saving
        index.save(self.folder / INDEX_FILES[view])
        self.store.set_meta(f"index.{view}.count", str(len(index)))

    duplicate_view = "content"  # the view core.suggest judges near-duplicate wording in

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
            for view, vectors in (("content", content), ("function", function)):
                if vectors is None:
                    continue
                if view in self._indexes:  # open: append the new vectors
                    self._indexes[view].add(np.asarray(ids, dtype=np.int64), vectors)
                    self._save(view, self._indexes[view])
                else:  # the library had no vectors of this view: build it from the database
                    self.index(view)
        return ids

    def add_paper(self, paper: Paper, model: RoleModel, *, note: str = "",
                  ctx: JobContext | None = None) -> list[int] | None:
        """Label, embed and store a parsed paper (None: already in the library)."""
        from core.analysis import analyze_paper

        if self.store.has_sha256(paper.sha256):
            return None
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
                 workers: int = 1) -> AddReport:
        """Parse and add PDFs; a PDF that cannot be read is skipped with its reason.

        With ``workers`` > 0 the PDFs are parsed in that many child processes (pymupdf is not
        thread-safe, and a PDF that crashes it only takes its child down) while this process labels
        and stores the ones already parsed; at most ``2 × workers`` parsed papers wait at a time, so
        memory stays bounded however many PDFs there are. ``workers=0`` parses here, one by one."""
        from core.fileio import file_sha256

        ctx = ensure_context(ctx)
        paths = list(paths)
        report = AddReport()
        todo: list[Path] = []
        for path in paths:
            try:
                if self.store.has_sha256(file_sha256(path)):
                    report.record(str(path), "", None)
                    continue
            except OSError as error:
                report.skipped.append((str(path), f"cannot read: {error.strerror or error}"))
                continue
            todo.append(path)
        done = 0
        for path, parsed in _parse_all(todo, workers):
            ctx.check()
            done += 1
            ctx.progress(done, len(todo), f"adding {path.name}")
            if isinstance(parsed, str):
                report.skipped.append((str(path), parsed))
                continue
            share = ctx.child((done - 1) / len(todo), done / len(todo))  # labelling a long paper can stop
            report.record(str(path), parsed.sha256, self.add_paper(parsed, model, ctx=share))
        ctx.progress(len(todo), max(1, len(todo)), f"added {len(report.added)} of {len(paths)}")
        return report

    def import_jsonl(self, path: Path, model: RoleModel, *, note: str = "",
                     ctx: JobContext | None = None) -> AddReport:
        """Add the papers of an abstracts JSONL file (ids as given; duplicates skipped)."""
        ctx = ensure_context(ctx)
        papers = read_jsonl_papers(path)
        report = AddReport()
        for number, paper in enumerate(papers):
            ctx.check()
            ctx.progress(number, len(papers), f"adding {paper.paper_id}")
            if self.store.has_sha256(paper.sha256) or self.store.paper(paper.paper_id) is not None:
                report.record(paper.paper_id, "", None)
                continue
            texts = [text for text, _ in paper.sentences]
            kinds = [_section_kind(section) or None for _, section in paper.sentences]
            section_kinds = [k or "other" for k in kinds] if any(kinds) else None
            (encoding,) = model.encode_documents([(texts, section_kinds)], with_function_vectors=True)
            functions = encoding.functions or []
            sentences = [NewSentence(text, section, kind or "", role.label, role.confidence,
                                     functions[i].label if functions else "",
                                     functions[i].top[0][1] if functions and functions[i].top else 0.0)
                         for i, ((text, section), kind, role) in enumerate(zip(paper.sentences, kinds,
                                                                               encoding.roles))]
            ids = self._store_sentences(paper_id=paper.paper_id, sha256=paper.sha256, title=paper.title,
                                        source=str(path), note=note, kind="jsonl", model=model,
                                        sentences=sentences, content=encoding.embeddings,
                                        function=encoding.function_vectors)
            report.record(paper.paper_id, paper.paper_id, ids)
        ctx.progress(len(papers), len(papers), f"added {len(report.added)} of {len(papers)}")
        return report

    def remove(self, paper_id: str) -> int:
        """Remove a paper (and its vectors from the indexes); returns how many sentences went."""
        ids = np.asarray(self.store.remove_paper(paper_id), dtype=np.int64)
        for view in VIEWS:
            index = self._indexes.get(view)
            if index is None and (self.folder / INDEX_FILES[view]).is_file():
                index = self.index(view)
            if index is not None:
                index.remove(ids)
                self._save(view, index)
        return len(ids)

    def stats(self) -> LibraryStats:
        return self.store.stats()


def parse_for_library(path: str) -> dict[str, Any] | str:
    """Parse one PDF (in a worker process): the paper as a dict, or the one-line reason it failed."""
    from core.pdf import parse_pdf

    try:
        return parse_pdf(path).to_dict()
    except (RhetoricaError, OSError) as error:
        return str(error)


def _parse_all(paths: list[Path], workers: int) -> Iterable[tuple[Path, Paper | str]]:
    """(path, parsed paper or reason) for each path, in the order they finish (``workers`` child
    processes, at most ``2 × workers`` results waiting; 0: here, in order)."""
    from core.document import Paper

    def unpack(result: dict[str, Any] | str) -> Paper | str:
        return result if isinstance(result, str) else Paper.from_dict(result)

    if workers <= 0 or not paths:  # one PDF too goes to a child: a PDF that crashes pymupdf takes only it
        for path in paths:
            yield path, unpack(parse_for_library(str(path)))
        return
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    pending: dict[Future[dict[str, Any] | str], Path] = {}
    queue = list(reversed(paths))
    broken: list[Path] = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
        while (queue or pending) and not broken:
            while queue and len(pending) < 2 * workers:
                path = queue.pop()
                pending[pool.submit(parse_for_library, str(path))] = path
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                path = pending.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool:  # a worker died (a PDF crashed MuPDF): find which one below
                    broken = [path, *pending.values()]
                    break
                yield path, unpack(result)
    if broken:
        if len(broken) == 1 and not queue:
            yield broken[0], "the PDF reader crashed on this file"
            return
        for path in broken:  # one at a time, each in its own process: only the culprit fails
            yield from _parse_alone(path, unpack)
        yield from _parse_all(list(reversed(queue)), workers)


def _parse_alone(path: Path, unpack: Any) -> Iterable[tuple[Path, Paper | str]]:
    """Parse one PDF in its own process; a crash there is that file's."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
        try:
            yield path, unpack(pool.submit(parse_for_library, str(path)).result())
        except BrokenProcessPool:
            yield path, "the PDF reader crashed on this file"


def exact_reference(library: Library, view: str) -> ExactIndex | None:
    """An exact index over ``view`` (the recall reference for benchmarks and tests)."""
    dim = library._dim(view)
    if dim is None:
        return None
    index = ExactIndex(dim)
    for ids, vectors in library.store.vectors(view):
        index.add(ids, vectors)
    return index
