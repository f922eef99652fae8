"""A throwaway user profile for runs that must leave the user's own untouched (``gui --screenshot``).

Inside :func:`throwaway_profile` the user data folder (``RHETORICA_HOME``) is a fresh temporary folder:
the settings (window layout, zoom, recent files, remembered panels) and the saved draft start empty
there and vanish with it, so a screenshot run never overwrites the user's draft or window layout.
What the window only reads is lent from the real folder by a link: the library, the analysis cache,
the user's phrase corpus and trained models (a screenshot shows the user's library in Search, and a
cached paper needs no second labelling). The user's model and overlay choices (``model/*``,
``overlay/*``) are copied into the throwaway settings so the screenshot looks like the user's window.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from app.gui.settings import AppSettings
from core.paths import user_data_dir

LENT_FOLDERS = ("library", "cache", "corpus", "models")  # read by the window, linked, never copied
CARRIED_SETTINGS = ("model", "overlay")  # settings groups copied into the throwaway profile


def _lend(real: Path, home: Path) -> list[str]:
    """Link each of ``LENT_FOLDERS`` that exists in ``real`` into ``home``; returns those linked."""
    lent = []
    for name in LENT_FOLDERS:
        source = real / name
        if source.is_dir():
            with contextlib.suppress(OSError):  # no links (some Windows setups): the run just lacks it
                (home / name).symlink_to(source, target_is_directory=True)
                lent.append(name)
    return lent


def _carry_settings(source: AppSettings, target: AppSettings) -> None:
    for group in CARRIED_SETTINGS:
        for key in source.q.allKeys():
            if key.startswith(f"{group}/"):
                target.q.setValue(key, source.q.value(key))
    target.sync()


@contextlib.contextmanager
def throwaway_profile() -> Iterator[Path]:
    """Run the body with ``RHETORICA_HOME`` set to a temporary profile (yielded); afterwards the
    variable is as it was and the temporary folder is gone (the lent folders' links only)."""
    real = user_data_dir()
    user_settings = AppSettings()  # read before RHETORICA_HOME changes
    before = os.environ.get("RHETORICA_HOME")
    home = Path(tempfile.mkdtemp(prefix="rhetorica-profile-"))
    try:
        _lend(real, home)
        os.environ["RHETORICA_HOME"] = str(home)
        _carry_settings(user_settings, AppSettings())
        yield home
    finally:
        if before is None:
            os.environ.pop("RHETORICA_HOME", None)
        else:
            os.environ["RHETORICA_HOME"] = before
        for name in LENT_FOLDERS:  # unlink first: rmtree never walks into the user's folders
            link = home / name
            if link.is_symlink():
                link.unlink()
        shutil.rmtree(home, ignore_errors=True)
