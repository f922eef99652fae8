"""Several phrase-corpus packs of one model as one pack (``core.library.pack``'s format), their
quantised vectors copied byte for byte (never re-quantised), each wording kept once (the first pack
that holds it wins), papers left without a sentence dropped.

Used by :mod:`core.library.corpus_growth` to join the shipped pack and the packs labelled on the
user's machine.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.jobs import JobContext, ensure_context
from core.library.corpus_extra import wording_key
from core.library.pack import (
    MANIFEST,
    PACK_FORMAT,
    PACK_VERSION,
    PAPERS,
    SCALES,
    SENTENCES,
    VECTORS,
    is_pack,
)
from core.library.pack_format import refuse_foreign_manifest
from core.library.pack_index import write_pack_index
from core.library.store import LibraryError


def _gz_rows(path: Path) -> list[Any]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _read_part(folder: Path) -> tuple[dict[str, Any], list[Any], list[Any], np.ndarray, np.ndarray]:
    if not is_pack(folder):
        raise LibraryError(f"{folder}: not a phrase-corpus pack")
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        papers = _gz_rows(folder / PAPERS)
        rows = _gz_rows(folder / SENTENCES)
        vectors = np.load(folder / VECTORS)
        scales = np.load(folder / SCALES)
    except (OSError, ValueError, TypeError, EOFError) as error:
        raise LibraryError(f"{folder}: damaged phrase-corpus pack ({error})") from None
    if not len(rows) == len(vectors) == len(scales) or vectors.dtype != np.int8:
        raise LibraryError(f"{folder}: damaged phrase-corpus pack ({len(rows)} sentences, "
                           f"{len(vectors)} vectors)")
    return manifest, papers, rows, vectors, scales


def _write_gz(path: Path, rows: Iterable[Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
        for row in rows:
            gz.write((json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
    tmp.replace(path)


def merge_packs(parts: Sequence[Path], out: Path, manifest: dict[str, Any],
                ctx: JobContext | None = None) -> dict[str, Any]:
    """Write ``parts`` (packs) as one pack in ``out``; ``manifest`` adds to the written manifest
    (model id and sha256 come from the first part; every part must have the same ``model_sha256``
    and vector width). Returns the written manifest."""
    ctx = ensure_context(ctx)
    refuse_foreign_manifest(out, "folder")
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).unlink(missing_ok=True)
    seen: set[str] = set()
    papers_out: list[Any] = []
    rows_out: list[Any] = []
    vectors_out: list[np.ndarray] = []
    scales_out: list[np.ndarray] = []
    counts: dict[str, dict[str, Any]] = {}
    first: dict[str, Any] = {}
    for number, part in enumerate(parts):
        ctx.progress(number, len(parts), f"joining the phrase corpus ({len(rows_out)} sentences)")
        part_manifest, papers, rows, vectors, scales = _read_part(part)
        if not first:
            first = part_manifest
        elif part_manifest.get("model_sha256") != first.get("model_sha256"):
            raise LibraryError(f"{part}: labelled by {part_manifest.get('model_id')}, not by "
                               f"{first.get('model_id')}: packs of two models cannot be joined")
        if vectors_out and vectors.shape[1] != vectors_out[0].shape[1]:
            raise LibraryError(f"{part}: {vectors.shape[1]}-d vectors, not {vectors_out[0].shape[1]}-d")
        renumber: dict[int, int] = {}
        kept: list[int] = []
        for i, row in enumerate(rows):
            key = wording_key(str(row[2]))
            if key in seen:
                continue
            seen.add(key)
            kept.append(i)
            paper = int(row[0])
            if paper not in renumber:
                renumber[paper] = len(papers_out)
                papers_out.append(papers[paper])
                entry = counts.setdefault(str(papers[paper]["dataset"]), {"licence": "", "papers": 0,
                                                                          "sentences": 0})
                licences = [x for x in entry["licence"].split(", ") if x]
                if papers[paper]["licence"] not in licences:
                    entry["licence"] = ", ".join([*licences, str(papers[paper]["licence"])])
                entry["papers"] += 1
            counts[str(papers[paper]["dataset"])]["sentences"] += 1
            rows_out.append([renumber[paper], *row[1:]])
        index = np.asarray(kept, dtype=np.int64)
        vectors_out.append(vectors[index])
        scales_out.append(scales[index])
    ctx.progress(len(parts), len(parts), f"writing the phrase corpus ({len(rows_out)} sentences)")
    _write_gz(out / PAPERS, papers_out)
    _write_gz(out / SENTENCES, rows_out)
    matrix = np.concatenate(vectors_out) if vectors_out else np.zeros((0, 0), dtype=np.int8)
    scales_all = np.concatenate(scales_out) if scales_out else np.zeros(0, np.float32)
    for name, array in ((VECTORS, matrix), (SCALES, scales_all)):
        tmp = out / f"{name}.tmp.npy"
        np.save(tmp, array)
        tmp.replace(out / name)
    write_pack_index(out / VECTORS, matrix, scales_all)  # a big joined pack is searched through its index
    record = {"format": PACK_FORMAT, "version": PACK_VERSION,
              "model_id": first.get("model_id", ""), "model_sha256": first.get("model_sha256", ""),
              "filter": first.get("filter", {}), **manifest, "sources": counts,
              "papers": len(papers_out), "sentences": len(rows_out),
              "function_dim": int(matrix.shape[1]) if matrix.ndim == 2 else 0}
    tmp = out / f"{MANIFEST}.tmp"
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(out / MANIFEST)
    return record
