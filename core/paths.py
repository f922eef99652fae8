"""Where the bundled resources and the user's data live."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def resources_dir() -> Path:
    """The bundled ``resources/`` folder (next to the packages, or inside a frozen app)."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        return Path(frozen_root) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def sample_paper_path() -> Path:
    return resources_dir() / "sample" / "sample-paper.pdf"


def shared_dir() -> Path:
    """The ``../shared`` data folder beside the repository (may be absent)."""
    env = os.environ.get("RHETORICA_SHARED")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent.parent / "shared"


def user_data_dir() -> Path:
    """Per-user data folder (caches, drafts, library).  Override with RHETORICA_HOME."""
    env = os.environ.get("RHETORICA_HOME")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "rhetorica"


def corpus_dir() -> Path:
    """The default phrase corpus: the pack shipped in ``resources/corpus`` (``core.library.pack``,
    rebuilt by ``rhetorica corpus build``); a corpus in the user data folder (a pack or a library
    folder) takes precedence, so a user can build their own without touching the installation."""
    own = user_data_dir() / "corpus"
    if (own / "manifest.json").is_file() or (own / "library.sqlite3").is_file():
        return own
    return resources_dir() / "corpus"


def library_dir() -> Path:
    """The user's library folder (``--library DIR`` chooses another)."""
    return user_data_dir() / "library"
