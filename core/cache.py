"""Analysis cache: parsed papers and their role analyses, per PDF, on disk (no Qt).

Entries are keyed by the PDF's sha256 plus the parser version (for the :class:`Paper`) and
additionally the model id (for the analysis), so reopening a paper is instant, the cache
survives restarts, and changing the parser or the model bundle invalidates it (a different key
simply misses; :meth:`AnalysisCache.prune` removes the stale files).  Files live under
``core.paths.user_data_dir() / "cache"`` (``RHETORICA_HOME`` overrides the folder) and are written
atomically.  A damaged entry is treated as a miss and removed.

An embedded analysis (:func:`core.labelling.analysis.label_paper`: both views of every sentence, and of the
title and caption sentences) keeps its vectors beside its JSON Lines file, in a numpy ``.npz`` of
float32 arrays (``content``, ``function``, ``figures``) read with ``allow_pickle=False``; the
entry's header records the ``.npz``'s sha256 and shapes, so a changed, cut or mismatched file is
refused (:meth:`AnalysisCache.read_analysis` says why in one line) and the analysis is computed
again.  Nothing read from the cache can run code.

Every entry is checked whole before it is used: well-formed JSON of the wrong shape (a null where a
sentence should be, a ``section_index`` outside the paper, a role Rhetorica does not have, a function
label that is no id, nesting too deep to read) is a damaged entry like a cut file: removed, said in one
line, and computed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.document import Paper
from core.fileio import atomic_write_bytes, atomic_write_text, file_sha256
from core.json_shapes import ShapeError, as_list, as_object, entry, loads
from core.paths import user_data_dir

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from core.labelling.analysis import PaperAnalysis

CACHE_FORMAT = 2  # JSON Lines: a header line, then chunks of sentences/roles
CHUNK = 100  # small lines: each json.loads is short, so a reading thread never holds the GIL long
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


VECTOR_ARRAYS = ("content", "function", "figures")  # the .npz of an embedded analysis


def _safe(part: str) -> str:
    return _SAFE.sub("_", part)[:80] or "none"


@dataclass(frozen=True)
class CachedPaper:
    """What :meth:`AnalysisCache.read_paper` found: the paper (None: a miss) and, when an entry was
    there but damaged (and was removed), one line saying so."""

    paper: Paper | None
    note: str = ""


@dataclass(frozen=True)
class CachedAnalysis:
    """What :meth:`AnalysisCache.read_analysis` found: the analysis (None: a miss) and, when an entry
    was there but damaged (and was removed), one line saying so."""

    analysis: PaperAnalysis | None
    note: str = ""


class DamagedEntry(ValueError):
    """A cache entry that cannot be used (the message says why, in a few words)."""


class AnalysisCache:
    """Parsed papers and analyses cached per (sha256, parser version[, model id])."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else user_data_dir() / "cache"

    # -- keys ---------------------------------------------------------------------------
    @staticmethod
    def sha256_of(path: str | Path) -> str:
        return file_sha256(path)

    def paper_path(self, sha256: str, parser_version: str) -> Path:
        return self.root / "papers" / f"{sha256}__{_safe(parser_version)}.jsonl"

    def analysis_path(self, sha256: str, parser_version: str, model_id: str) -> Path:
        name = f"{sha256}__{_safe(parser_version)}__{_safe(model_id)}.jsonl"
        return self.root / "analyses" / name

    # -- papers -------------------------------------------------------------------------
    def load_paper(self, sha256: str, parser_version: str) -> Paper | None:
        """The cached paper, or None (see :meth:`read_paper`)."""
        return self.read_paper(sha256, parser_version).paper

    def read_paper(self, sha256: str, parser_version: str, name: str = "") -> CachedPaper:
        """The cached parse of the PDF ``sha256`` (``name``: its file name, for the note) by
        ``parser_version``. A damaged entry is removed and reported in ``note``."""
        path = self.paper_path(sha256, parser_version)
        try:
            return CachedPaper(self._read_paper(path, sha256))
        except DamagedEntry as error:
            self._drop(path)
            return CachedPaper(None, f"The cached parse of {name or sha256[:12]} was damaged ({error}); "
                                     "it is computed again.")

    def _read_paper(self, path: Path, sha256: str) -> Paper | None:
        lines = self._read_lines(path, "paper")
        if lines is None:
            return None
        header, chunks = lines
        try:
            data = dict(as_object(entry(header, "paper", "the entry"), "the entry's paper"))
            data["sentences"] = _chunk_items(chunks, "sentences")
            paper = Paper.from_dict(data)
            paper.check_links()
        except ShapeError as error:
            raise DamagedEntry(str(error)) from None
        if paper.sha256 and paper.sha256 != sha256:
            raise DamagedEntry("it is the entry of another PDF")
        return paper

    def save_paper(self, paper: Paper, sha256: str | None = None) -> Path:
        sha = sha256 or paper.sha256
        path = self.paper_path(sha, paper.parser_version)
        data = paper.to_dict()
        sentences = data.pop("sentences")
        header = {"format": CACHE_FORMAT, "kind": "paper", "sha256": sha,
                  "parser_version": paper.parser_version, "paper": data}
        self._write(path, header, "sentences", sentences)
        return path

    # -- analyses -----------------------------------------------------------------------
    def vectors_path(self, sha256: str, parser_version: str, model_id: str) -> Path:
        return self.analysis_path(sha256, parser_version, model_id).with_suffix(".npz")

    def load_analysis(self, paper: Paper, model_id: str, sha256: str | None = None, *,
                      need_vectors: bool = False) -> PaperAnalysis | None:
        """The cached analysis, or None (see :meth:`read_analysis`)."""
        return self.read_analysis(paper, model_id, sha256, need_vectors=need_vectors).analysis

    def read_analysis(self, paper: Paper, model_id: str, sha256: str | None = None, *,
                      need_vectors: bool = False) -> CachedAnalysis:
        """The cached analysis of ``paper`` by ``model_id``, with its vectors when it has them.
        ``need_vectors``: an entry without vectors is a miss (kept: its labels stay good). A damaged
        entry is removed and reported in ``note``."""
        sha = sha256 or paper.sha256
        path = self.analysis_path(sha, paper.parser_version, model_id)
        try:
            analysis = self._read_analysis(path, paper, model_id)
            if analysis is None:
                return CachedAnalysis(None)
        except DamagedEntry as error:
            self._drop(path)
            self._drop(path.with_suffix(".npz"))
            name = paper.title or Path(paper.source_path).name or sha[:12]
            return CachedAnalysis(None, f"The cached analysis of {name} was damaged ({error}); "
                                        "it is computed again.")
        if need_vectors and not analysis.embedded:
            return CachedAnalysis(None)
        return CachedAnalysis(analysis)

    def _read_analysis(self, path: Path, paper: Paper, model_id: str) -> PaperAnalysis | None:
        from core.labelling.analysis import PaperAnalysis

        lines = self._read_lines(path, "analysis")
        if lines is None:
            return None
        header, chunks = lines
        try:
            data = dict(as_object(entry(header, "analysis", "the entry"), "the entry's analysis"))
            data["roles"] = _chunk_items(chunks, "roles")
            analysis = PaperAnalysis.from_dict(data)
        except ValueError as error:  # a ShapeError names the field; others say what is unsupported
            raise DamagedEntry(str(error)) from None
        if analysis.model_id != model_id or len(analysis.roles) != len(paper.sentences):
            raise DamagedEntry("it does not match the paper")
        _check_labels(analysis)
        vectors = header.get("vectors")
        if vectors is not None:
            self._attach_vectors(analysis, path.with_suffix(".npz"), vectors)
        return analysis

    @staticmethod
    def _attach_vectors(analysis: PaperAnalysis, path: Path, record: Any) -> None:
        """Read the entry's ``.npz`` (checked against the header's sha256 and shapes) into ``analysis``."""
        import numpy as np

        try:
            digest, texts = str(record["sha256"]), [str(t) for t in record["figure_texts"]]
            data = path.read_bytes()
        except FileNotFoundError:
            raise DamagedEntry("its vectors are missing") from None
        except (OSError, KeyError, TypeError) as error:
            raise DamagedEntry(f"unreadable vectors: {type(error).__name__}") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise DamagedEntry("its vectors file was changed or cut")
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
                content, function, figures = (np.asarray(arrays[name]) for name in VECTOR_ARRAYS)
        except (OSError, KeyError, ValueError, EOFError) as error:
            raise DamagedEntry(f"unreadable vectors: {type(error).__name__}") from None
        n = len(analysis.roles)
        for name, array, rows in (("content", content, n), ("function", function, n),
                                  ("figures", figures, len(texts))):
            if array.dtype != np.float32 or array.ndim != 2 or array.shape[0] != rows \
                    or not np.isfinite(array).all():
                raise DamagedEntry(f"its {name} vectors do not fit the analysis")
        analysis.embeddings, analysis.function_vectors = content, function
        analysis.figure_texts, analysis.figure_vectors = texts, figures

    def save_analysis(self, paper: Paper, analysis: PaperAnalysis, sha256: str | None = None) -> Path:
        """Write the analysis (and, when it is :attr:`~core.labelling.analysis.PaperAnalysis.embedded`, its
        vectors: the ``.npz`` first, so the entry never names vectors that are not there)."""
        sha = sha256 or paper.sha256
        path = self.analysis_path(sha, paper.parser_version, analysis.model_id)
        data = analysis.to_dict()
        roles = data.pop("roles")
        header = {"format": CACHE_FORMAT, "kind": "analysis", "sha256": sha,
                  "parser_version": paper.parser_version, "model_id": analysis.model_id, "analysis": data}
        if analysis.embedded:
            assert analysis.embeddings is not None and analysis.function_vectors is not None
            assert analysis.figure_vectors is not None
            blob = _npz_bytes(analysis.embeddings, analysis.function_vectors, analysis.figure_vectors)
            atomic_write_bytes(path.with_suffix(".npz"), blob)
            header["vectors"] = {"sha256": hashlib.sha256(blob).hexdigest(),
                                 "figure_texts": list(analysis.figure_texts)}
        self._write(path, header, "roles", roles)
        if not analysis.embedded:
            self._drop(path.with_suffix(".npz"))
        return path

    # -- housekeeping -------------------------------------------------------------------
    def prune(self, sha256: str, parser_version: str, model_id: str | None = None) -> int:
        """Remove entries of ``sha256`` made by another parser version or model id; return count."""
        keep = {self.paper_path(sha256, parser_version).name}
        if model_id is not None:
            keep.add(self.analysis_path(sha256, parser_version, model_id).name)
        removed = 0
        for folder in ("papers", "analyses"):
            for path in (self.root / folder).glob(f"{sha256}__*"):
                if path.suffix not in (".jsonl", ".npz"):
                    continue
                if path.with_suffix(".jsonl").name in keep or (
                        model_id is None and folder == "analyses"
                        and path.name.startswith(f"{sha256}__{_safe(parser_version)}__")):
                    continue
                self._drop(path)
                removed += 1
        return removed

    def clear(self) -> int:
        """Remove every entry; returns how many files were removed."""
        removed = 0
        for folder in ("papers", "analyses"):
            for pattern in ("*.jsonl", "*.npz"):
                for path in (self.root / folder).glob(pattern):
                    self._drop(path)
                    removed += 1
        return removed

    @staticmethod
    def _write(path: Path, header: dict[str, Any], key: str, items: list[Any]) -> None:
        lines = [json.dumps(header, ensure_ascii=False)]
        lines += [json.dumps({key: items[i:i + CHUNK]}, ensure_ascii=False)
                  for i in range(0, len(items), CHUNK)]
        atomic_write_text(path, "\n".join(lines) + "\n")

    @staticmethod
    def _read_lines(path: Path, kind: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """The entry's header and chunks; None when there is none; :class:`DamagedEntry` when unreadable."""
        try:
            with open(path, encoding="utf-8") as handle:
                header = loads(handle.readline())
                if not isinstance(header, dict) or header.get("format") != CACHE_FORMAT \
                        or header.get("kind") != kind:
                    raise ValueError("not a cache entry of this format")
                chunks = [loads(line) for line in handle if line.strip()]
        except FileNotFoundError:
            return None
        except ShapeError as error:
            raise DamagedEntry(str(error)) from None
        except (OSError, ValueError) as error:
            raise DamagedEntry(f"unreadable entry: {type(error).__name__}") from None
        if not all(isinstance(chunk, dict) for chunk in chunks):
            raise DamagedEntry("unreadable entry: not a list of chunks")
        return header, chunks

    @staticmethod
    def _drop(path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()


def _chunk_items(chunks: list[dict[str, Any]], key: str) -> list[Any]:
    """The entry's items (sentences, roles) from its chunk lines, in order."""
    return [item for i, chunk in enumerate(chunks)
            for item in as_list(entry(chunk, key, f"chunk {i + 1}"), f"chunk {i + 1}'s '{key}'")]


_FUNCTION_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")  # "main-finding", "none"

def _check_labels(analysis: PaperAnalysis) -> None:
    """Refuse (:class:`DamagedEntry`) a role or function label that Rhetorica does not have: a role not
    in :data:`~core.taxonomy.labels.ROLES`, a function "id" that is no id at all. (Any well-formed id is
    kept: a model trained on another version of the taxonomy has ids the bundled one lacks, and its
    analyses must not be recomputed on every run.)"""
    from core.taxonomy.labels import ROLES

    for i, role in enumerate(analysis.roles):
        unknown = sorted(set(role.probabilities) - set(ROLES))
        if unknown:
            raise DamagedEntry(f"role {i}: unknown role {unknown[0]!r}")
    if analysis.functions is None:
        return
    if len(analysis.functions) != len(analysis.roles):
        raise DamagedEntry("its functions do not match its sentences")
    for i, function in enumerate(analysis.functions):
        labels = {function.label, *(f for f, _ in function.top)}
        bad = sorted(f for f in labels if not _FUNCTION_ID.fullmatch(f))
        if bad:
            raise DamagedEntry(f"function {i}: {bad[0][:40]!r} is not a function id")


def _npz_bytes(content: np.ndarray, function: np.ndarray, figures: np.ndarray) -> bytes:
    """The vectors as an uncompressed ``.npz`` (plain float32 arrays: nothing in it can run code)."""
    import numpy as np

    buffer = io.BytesIO()
    content, function, figures = (np.ascontiguousarray(a, dtype=np.float32)
                                  for a in (content, function, figures))
    np.savez(buffer, content=content, function=function, figures=figures)  # the names of VECTOR_ARRAYS
    return buffer.getvalue()
