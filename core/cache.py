"""Analysis cache: parsed papers and their role analyses, per PDF, on disk (no Qt).

Entries are keyed by the PDF's sha256 plus the parser version (for the :class:`Paper`) and
additionally the model id (for the analysis), so reopening a paper is instant, the cache
survives restarts, and changing the parser or the model bundle invalidates it (a different key
simply misses; :meth:`AnalysisCache.prune` removes the stale files).  Files live under
``core.paths.user_data_dir() / "cache"`` (``RHETORICA_HOME`` overrides the folder) and are written
atomically.  A damaged entry is treated as a miss and removed.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.document import Paper, Sentence
from core.fileio import atomic_write_text, file_sha256
from core.paths import user_data_dir

if TYPE_CHECKING:  # pragma: no cover
    from core.analysis import PaperAnalysis

CACHE_FORMAT = 2  # JSON Lines: a header line, then chunks of sentences/roles
CHUNK = 100  # small lines: each json.loads is short, so a reading thread never holds the GIL long
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _safe(part: str) -> str:
    return _SAFE.sub("_", part)[:80] or "none"


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
        path = self.paper_path(sha256, parser_version)
        lines = self._read(path, "paper")
        if lines is None:
            return None
        header, chunks = lines
        try:
            data = dict(header["paper"])
            data["sentences"] = []
            paper = Paper.from_dict(data)
            paper.sentences = [Sentence.from_dict(s) for chunk in chunks for s in chunk["sentences"]]
        except (KeyError, TypeError, ValueError):
            self._drop(path)
            return None
        if paper.sha256 and paper.sha256 != sha256:
            self._drop(path)
            return None
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
    def load_analysis(self, paper: Paper, model_id: str, sha256: str | None = None) -> PaperAnalysis | None:
        from core.analysis import PaperAnalysis
        from core.labels import RolePrediction

        sha = sha256 or paper.sha256
        path = self.analysis_path(sha, paper.parser_version, model_id)
        lines = self._read(path, "analysis")
        if lines is None:
            return None
        header, chunks = lines
        try:
            data = dict(header["analysis"])
            data["roles"] = []
            analysis = PaperAnalysis.from_dict(data)
            analysis.roles = [RolePrediction.from_dict(r) for chunk in chunks for r in chunk["roles"]]
        except (KeyError, TypeError, ValueError):
            self._drop(path)
            return None
        if analysis.model_id != model_id or len(analysis.roles) != len(paper.sentences):
            self._drop(path)
            return None
        return analysis

    def save_analysis(self, paper: Paper, analysis: PaperAnalysis, sha256: str | None = None) -> Path:
        sha = sha256 or paper.sha256
        path = self.analysis_path(sha, paper.parser_version, analysis.model_id)
        data = analysis.to_dict()
        roles = data.pop("roles")
        header = {"format": CACHE_FORMAT, "kind": "analysis", "sha256": sha,
                  "parser_version": paper.parser_version, "model_id": analysis.model_id, "analysis": data}
        self._write(path, header, "roles", roles)
        return path

    # -- housekeeping -------------------------------------------------------------------
    def prune(self, sha256: str, parser_version: str, model_id: str | None = None) -> int:
        """Remove entries of ``sha256`` made by another parser version or model id; return count."""
        keep = {self.paper_path(sha256, parser_version).name}
        if model_id is not None:
            keep.add(self.analysis_path(sha256, parser_version, model_id).name)
        removed = 0
        for folder in ("papers", "analyses"):
            for path in (self.root / folder).glob(f"{sha256}__*.jsonl"):
                if path.name in keep or (model_id is None and folder == "analyses"
                                         and path.name.startswith(f"{sha256}__{_safe(parser_version)}__")):
                    continue
                self._drop(path)
                removed += 1
        return removed

    def clear(self) -> int:
        """Remove every entry; returns how many files were removed."""
        removed = 0
        for folder in ("papers", "analyses"):
            for path in (self.root / folder).glob("*.jsonl"):
                self._drop(path)
                removed += 1
        return removed

    @staticmethod
    def _write(path: Path, header: dict[str, Any], key: str, items: list[Any]) -> None:
        lines = [json.dumps(header, ensure_ascii=False)]
        lines += [json.dumps({key: items[i:i + CHUNK]}, ensure_ascii=False)
                  for i in range(0, len(items), CHUNK)]
        atomic_write_text(path, "\n".join(lines) + "\n")

    def _read(self, path: Path, kind: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        try:
            with open(path, encoding="utf-8") as handle:
                header = json.loads(handle.readline())
                if not isinstance(header, dict) or header.get("format") != CACHE_FORMAT \
                        or header.get("kind") != kind:
                    raise ValueError("not a cache entry of this format")
                chunks = [json.loads(line) for line in handle if line.strip()]
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            self._drop(path)
            return None
        return header, chunks

    @staticmethod
    def _drop(path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()
