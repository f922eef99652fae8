"""The author's drafts, saved atomically under the user data folder (no Qt).

The GUI saves the draft pane a moment after each change (debounced) and restores it on start,
so a crash or a restart never loses more than the last second of typing.
"""

from __future__ import annotations

import re
from pathlib import Path

from core.fileio import atomic_write_text
from core.paths import user_data_dir

_NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class DraftStore:
    """Named plain-text drafts in ``user_data_dir()/drafts`` (``RHETORICA_HOME`` overrides)."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else user_data_dir() / "drafts"

    def path(self, name: str = "current") -> Path:
        if not _NAME.match(name):
            raise ValueError(f"bad draft name {name!r}: use letters, digits, '.', '_' or '-'")
        return self.root / f"{name}.txt"

    def save(self, text: str, name: str = "current") -> Path:
        path = self.path(name)
        atomic_write_text(path, text)
        return path

    def load(self, name: str = "current") -> str:
        """The saved text, or an empty string when there is none."""
        try:
            return self.path(name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""
