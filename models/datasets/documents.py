"""The shape every dataset reader returns, and the small helpers readers share."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.errors import DatasetError


@dataclass
class LabelledDocument:
    """One document's sentences in reading order with their gold labels."""

    doc_id: str
    sentences: list[str]
    labels: list[str]  # the dataset's own label names, per sentence
    allowed: list[frozenset[str]]  # canonical roles each sentence may take
    section_kinds: list[str] | None  # core.document.SectionKind values when known

    def __len__(self) -> int:
        return len(self.sentences)


def data_root(shared: Path | None) -> Path:
    """``SHARED/data`` (``shared`` defaults to ``core.paths.shared_dir()``); one-line error if absent."""
    if shared is None:
        from core.paths import shared_dir

        shared = shared_dir()
    root = Path(shared) / "data"
    if not root.is_dir():
        raise DatasetError(f"{root}: shared data folder not found (set RHETORICA_SHARED)")
    return root


def need_file(path: Path) -> Path:
    """``path`` if it is a file, else a one-line :class:`DatasetError` (readers share it)."""
    if not path.is_file():
        raise DatasetError(f"{path}: dataset file not found")
    return path


def bad_split(name: str, split: str, known: tuple[str, ...]) -> DatasetError:
    """The error for an unknown split of dataset ``name`` (readers share it)."""
    return DatasetError(f"{name} has no split {split!r}; known: {', '.join(known)}")
