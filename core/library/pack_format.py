"""The files of a phrase-corpus pack and how they are written (the format :mod:`core.library.pack`
describes and reads). Kept apart from the reader so that the corpus pipeline
(:mod:`core.corpus_pipeline`) writes packs without importing the module that builds them.

Two writers give the same bytes for the same rows: :func:`write_pack` (everything in memory) and
:class:`PackWriter` (rows streamed in, shard by shard; the vectors go straight into the ``.npy``
file, so a pack of millions of sentences is merged in bounded memory).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from core.library.pack_index import write_pack_index

PACK_FORMAT = "rhetorica-phrase-corpus"
PACK_VERSION = 1
MANIFEST = "manifest.json"
PAPERS = "papers.jsonl.gz"
SENTENCES = "sentences.jsonl.gz"
VECTORS = "function.npy"
SCALES = "function-scale.npy"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class PackPaper:
    paper_id: str
    dataset: str
    title: str
    licence: str

    def row(self) -> dict[str, str]:
        return {"paper_id": self.paper_id, "dataset": self.dataset, "title": self.title,
                "licence": self.licence}


@dataclass(frozen=True)
class PackSentence:
    paper: int  # index into the papers
    position: int
    text: str
    section: str
    section_kind: str
    role: str
    function: str
    function_confidence: float = 1.0  # the model's confidence in ``function`` (older packs: 1.0)

    def row(self) -> list[Any]:
        return [self.paper, self.position, self.text, self.section, self.section_kind, self.role,
                self.function, round(float(self.function_confidence), 4)]


def quantise_rows(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 [n, d], float32 scales [n]) of L2-normalised rows (each row on its own: quantising
    shards one by one gives the same bytes as quantising their concatenation)."""
    if vectors.size == 0:  # no rows (or rows of width 0): nothing to scale
        return np.zeros(vectors.shape, dtype=np.int8), np.zeros(len(vectors), dtype=np.float32)
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    scales = np.maximum(np.abs(unit).max(axis=1), 1e-12) / 127.0
    return np.round(unit / scales[:, None]).astype(np.int8), scales.astype(np.float32)


def refuse_foreign_manifest(folder: str | Path, option: str = "--out",
                            formats: Sequence[str] = (PACK_FORMAT,),
                            what: str = "a phrase-corpus pack") -> None:
    """Before a pack is written into ``folder`` (which removes its ``manifest.json`` first): one line
    when that manifest is not one of ``formats``'s, e.g. a model bundle's, so no other folder is lost."""
    from core.errors import RhetoricaError

    path = Path(folder) / MANIFEST
    if not path.exists():
        return
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        manifest = None
    kind = manifest.get("format") if isinstance(manifest, dict) else None
    if kind in formats:
        return
    held = ("a model bundle" if isinstance(manifest, dict) and "labels" in manifest and "files" in manifest
            else f"a {MANIFEST} of something else")
    raise RhetoricaError(f"{folder}: holds {held}, not {what}; choose another {option}")


def _line(row: Any) -> bytes:
    return (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


PACK_NAMES = frozenset((MANIFEST, PAPERS, SENTENCES, VECTORS, SCALES, "function.ann"))


def _pack_owned(name: str) -> bool:
    """A file name a pack writer leaves in a pack folder (its files, or their temporary names)."""
    return name in PACK_NAMES or any(name.startswith(f"{pack}.") and ".tmp" in name for pack in PACK_NAMES)


def refuse_other_files(folder: Path, option: str) -> None:
    """One line when ``folder`` holds anything but a pack's files (its contents are replaced whole)."""
    from core.errors import RhetoricaError

    if not folder.is_dir():
        return
    others = sorted(p.name for p in folder.iterdir() if not _pack_owned(p.name) or not p.is_file())
    if others:
        raise RhetoricaError(f"{folder}: holds other files ({', '.join(others[:3])}"
                             f"{', ...' if len(others) > 3 else ''}), not a phrase-corpus pack; "
                             f"choose another {option}")


def staging_folder(folder: Path) -> Path:
    """Where a pack for ``folder`` is written before it replaces ``folder`` (a sibling: one rename)."""
    return folder.parent / f".{folder.name}.staging"


def _clear_staging(staging: Path) -> None:
    import shutil

    if staging.is_dir() and not staging.is_symlink():
        refuse_other_files(staging, "--out")  # never a folder this writer did not make
        shutil.rmtree(staging)
    elif staging.exists() or staging.is_symlink():
        staging.unlink()


def _old_folder(folder: Path) -> Path:
    return folder.parent / f".{folder.name}.old"


def commit_staged_pack(staging: Path, out: Path) -> None:
    """Replace ``out`` (absent, empty or a pack) with the complete pack in ``staging``."""
    import shutil

    old = _old_folder(out)
    _clear_staging(old)
    if out.exists():
        out.rename(old)
    staging.rename(out)
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)


class PackWriter:
    """Write a pack row by row: ``add`` papers, sentences and their quantised vectors in order,
    then ``finish``. Everything goes into a staging folder beside ``folder``, which replaces
    ``folder`` only once the pack is complete: a failure or a kill before that leaves the previous
    pack as it was (``abort`` removes the staging folder). The vectors are written with ordinary
    writes (not a sparse memory map), so a full disk is an OSError naming the file, never SIGBUS."""

    def __init__(self, folder: str | Path, sentences: int, dim: int) -> None:
        self.final = Path(folder).resolve() if Path(folder).is_symlink() else Path(folder)
        old = _old_folder(self.final)
        if old.is_dir() and not self.final.exists():  # killed between commit's two renames: put it back
            old.rename(self.final)
        refuse_foreign_manifest(self.final, "folder")
        refuse_other_files(self.final, "folder")
        self.out = staging_folder(self.final)
        _clear_staging(self.out)
        self.out.mkdir(parents=True)
        self.total, self.dim = sentences, dim
        self.papers = self.sentences = 0
        self._raw: list[IO[bytes]] = []
        self._scales = np.zeros(sentences, dtype=np.float32)
        try:
            self._gz = {name: self._open_gz(name) for name in (PAPERS, SENTENCES)}
            self._vectors_path = self.out / f"{VECTORS}.tmp.npy"
            self._vectors = open(self._vectors_path, "wb")  # noqa: SIM115 (closed in finish/abort)
            self._raw.append(self._vectors)
            np.lib.format.write_array_header_1_0(self._vectors, {
                "descr": np.lib.format.dtype_to_descr(np.dtype(np.int8)), "fortran_order": False,
                "shape": (sentences, dim)})
        except OSError as error:
            self.abort()
            raise _named(error, self.out) from None

    def _open_gz(self, name: str) -> gzip.GzipFile:
        raw = open(self.out / f"{name}.tmp", "wb")  # noqa: SIM115 (closed in finish)
        self._raw.append(raw)
        # mtime=0: the same input gives the same bytes (reproducible builds)
        return gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0)

    def add(self, papers: Iterable[PackPaper], sentences: Sequence[PackSentence], quantised: np.ndarray,
            scales: np.ndarray) -> None:
        if len(sentences) != len(quantised) or len(sentences) != len(scales):
            raise ValueError(f"{len(sentences)} sentences but {len(quantised)} vectors")
        if self.sentences + len(sentences) > self.total:
            raise ValueError(f"more than the {self.total} sentences announced")
        try:
            for paper in papers:
                self._gz[PAPERS].write(_line(paper.row()))
                self.papers += 1
            for sentence in sentences:
                self._gz[SENTENCES].write(_line(sentence.row()))
            if len(sentences):
                rows = np.ascontiguousarray(quantised, dtype=np.int8).reshape(len(sentences), self.dim)
                self._vectors.write(rows.tobytes())
                self._scales[self.sentences: self.sentences + len(sentences)] = scales
        except OSError as error:
            raise _named(error, self.out) from None
        self.sentences += len(sentences)

    def abort(self) -> None:
        """Drop the staging folder (after a failure): the previous pack stays as it was."""
        import contextlib
        import shutil

        for raw in self._raw:
            with contextlib.suppress(OSError):
                raw.close()
        shutil.rmtree(self.out, ignore_errors=True)

    def finish(self, manifest: dict[str, Any]) -> dict[str, Any]:
        if self.sentences != self.total:
            raise ValueError(f"{self.sentences} sentences written, {self.total} announced")
        try:
            for gz in self._gz.values():
                gz.close()
            for raw in self._raw:
                raw.flush()
                os.fsync(raw.fileno())
                raw.close()
            for name in (PAPERS, SENTENCES):
                (self.out / f"{name}.tmp").replace(self.out / name)
            self._vectors_path.replace(self.out / VECTORS)
            np.save(self.out / f"{SCALES}.tmp.npy", self._scales)
            (self.out / f"{SCALES}.tmp.npy").replace(self.out / SCALES)
            vectors = self.out / VECTORS
            write_pack_index(vectors, np.load(vectors, mmap_mode="r"), self._scales)  # big packs only
            record = {"format": PACK_FORMAT, "version": PACK_VERSION, **manifest,
                      "papers": self.papers, "sentences": self.sentences,
                      "function_dim": int(self.dim)}
            (self.out / MANIFEST).write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n",
                                             encoding="utf-8")
            commit_staged_pack(self.out, self.final)
        except OSError as error:
            self.abort()
            raise _named(error, self.out) from None
        except BaseException:
            self.abort()
            raise
        return record


def _named(error: OSError, folder: Path) -> OSError:
    """``error`` naming a file (a failed write on a full disk names none): one line in the CLI."""
    if error.filename is not None:
        return error
    return OSError(error.errno, error.strerror or str(error), str(folder))


def write_pack(folder: str | Path, papers: Sequence[PackPaper], sentences: Sequence[PackSentence],
               function_vectors: np.ndarray, manifest: dict[str, Any]) -> dict[str, Any]:
    """Write a pack from rows and float vectors held in memory."""
    if len(sentences) != len(function_vectors):
        raise ValueError(f"{len(sentences)} sentences but {len(function_vectors)} vectors")
    quantised, scales = quantise_rows(np.asarray(function_vectors, dtype=np.float32))
    dim = int(quantised.shape[1]) if quantised.ndim == 2 else 0
    writer = PackWriter(folder, len(sentences), dim)
    try:
        writer.add(papers, sentences, quantised, scales)
    except BaseException:
        writer.abort()
        raise
    return writer.finish(manifest)
