"""Persistent settings (QSettings, organisation "Rhetorica").

With ``RHETORICA_HOME`` set (tests, benchmarks, portable use) the settings live in
``$RHETORICA_HOME/settings.ini`` instead of the platform's native store.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from app.gui.palette import DEFAULT_OPACITY

MAX_RECENT = 10
MAX_PANELS = 64
DEVICES = ("auto", "cpu", "cuda")
MAX_THREADS = 64  # the Settings dialog's range is 0 (automatic) to this
# The kinds of file dialog whose last folder is remembered (``AppSettings.folder_for``):
PAPERS, CORRECTIONS, LIBRARY_ADD, COMPARE, DRAFTS, EXPORTS = (
    "papers", "corrections", "library-add", "compare", "drafts", "exports")


def _to_bool(value: object, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).lower() in ("1", "true", "yes", "on")


def _usable_path(value: object) -> bool:
    """A recent file worth listing: an absolute path (``add_recent`` stores them so) with no control or
    format characters (a newline, a right-to-left override: junk from a damaged settings file)."""
    import unicodedata

    return (isinstance(value, str) and os.path.isabs(value)
            and not any(unicodedata.category(c).startswith("C") for c in value))


def default_folder() -> str:
    """Where a file dialog starts when no folder is remembered: the user's documents folder, else the
    home folder (never the process's working folder, which for a desktop launch is anywhere)."""
    from PySide6.QtCore import QStandardPaths

    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return documents if documents and Path(documents).is_dir() else str(Path.home())


def dialog_folder(kind: str) -> str:
    """:meth:`AppSettings.folder_for` in the user's settings (for a panel that has no settings object)."""
    return AppSettings().folder_for(kind)


def remember_dialog_folder(kind: str, chosen: str | os.PathLike[str]) -> None:
    """:meth:`AppSettings.remember_folder` in the user's settings."""
    settings = AppSettings()
    settings.remember_folder(kind, chosen)
    settings.sync()


class AppSettings:
    """Typed accessors over one ``QSettings`` store."""

    def __init__(self, qsettings: QSettings | None = None) -> None:
        if qsettings is None:
            home = os.environ.get("RHETORICA_HOME")
            if home:
                qsettings = QSettings(str(Path(home) / "settings.ini"), QSettings.Format.IniFormat)
            else:
                qsettings = QSettings("Rhetorica", "Rhetorica")
        self.q = qsettings

    def _get(self, key: str, default: object = None) -> object:
        return self.q.value(key, default)

    def sync(self) -> None:
        self.q.sync()

    # model -----------------------------------------------------------------------------
    @property
    def model_path(self) -> str:
        return str(self._get("model/path", "") or "")

    @model_path.setter
    def model_path(self, value: str) -> None:
        self.q.setValue("model/path", value or "")

    @property
    def previous_model_path(self) -> str:
        """The bundle in use before "Use the new model" (Train on my corrections); "" when none, or
        the bundled default was in use (then ``previous_model_default`` is set)."""
        return str(self._get("model/previous_path", "") or "")

    @previous_model_path.setter
    def previous_model_path(self, value: str) -> None:
        self.q.setValue("model/previous_path", value or "")

    @property
    def has_previous_model(self) -> bool:
        """True while a model swap can be rolled back (the previous one may be the bundled default)."""
        return _to_bool(self._get("model/has_previous"), False)

    @has_previous_model.setter
    def has_previous_model(self, value: bool) -> None:
        self.q.setValue("model/has_previous", bool(value))

    @property
    def device(self) -> str:
        value = str(self._get("model/device", "auto") or "auto")
        return value if value in DEVICES else "auto"

    @device.setter
    def device(self, value: str) -> None:
        self.q.setValue("model/device", value if value in DEVICES else "auto")

    @property
    def threads(self) -> int:
        """CPU threads for the model, 0 (automatic) to ``MAX_THREADS``: the Settings dialog's range, also
        for a value edited into the file (a huge one made loading the model hang)."""
        try:
            return min(MAX_THREADS, max(0, int(str(self._get("model/threads", 0) or 0).strip())))
        except (TypeError, ValueError):
            return 0

    @threads.setter
    def threads(self, value: int) -> None:
        self.q.setValue("model/threads", int(value))

    # overlay ---------------------------------------------------------------------------
    @property
    def role_colors(self) -> dict[str, str]:
        raw = self._get("overlay/colors", "")
        try:
            data = json.loads(str(raw)) if raw else {}
        except ValueError:
            data = {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    @role_colors.setter
    def role_colors(self, value: dict[str, str]) -> None:
        self.q.setValue("overlay/colors", json.dumps(value))

    @property
    def opacity(self) -> float:
        try:
            opacity = float(str(self._get("overlay/opacity", DEFAULT_OPACITY)))
        except (TypeError, ValueError):
            return DEFAULT_OPACITY
        return min(1.0, max(0.0, opacity)) if math.isfinite(opacity) else DEFAULT_OPACITY

    @opacity.setter
    def opacity(self, value: float) -> None:
        self.q.setValue("overlay/opacity", round(float(value), 3))

    # view ------------------------------------------------------------------------------
    @property
    def zoom(self) -> float:
        """The last zoom factor, or 0.0 when none was saved (then the view fits the width)."""
        try:
            zoom = float(str(self._get("view/zoom", 0.0) or 0.0))
        except (TypeError, ValueError):
            zoom = 0.0
        return min(6.0, max(0.2, zoom)) if zoom > 0 else 0.0

    @zoom.setter
    def zoom(self, value: float) -> None:
        self.q.setValue("view/zoom", round(float(value), 4))

    @property
    def geometry(self) -> QByteArray | None:
        value = self._get("window/geometry")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    @geometry.setter
    def geometry(self, value: QByteArray) -> None:
        self.q.setValue("window/geometry", value)

    @property
    def window_state(self) -> QByteArray | None:
        value = self._get("window/state")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    @window_state.setter
    def window_state(self, value: QByteArray) -> None:
        self.q.setValue("window/state", value)

    def forget_window_state(self) -> None:
        """Drop the remembered toolbars and docks (one that could not be restored)."""
        self.q.remove("window/state")

    @property
    def panels_shown_order(self) -> list[str]:
        """Panel ids, the one shown longest ago first (which remembered panel comes back on start)."""
        raw = self._get("window/panels_shown", "")
        try:
            data = json.loads(str(raw)) if raw else []
        except ValueError:
            data = []
        return [str(p) for p in data if isinstance(p, str)][:MAX_PANELS] if isinstance(data, list) else []

    @panels_shown_order.setter
    def panels_shown_order(self, value: list[str]) -> None:
        self.q.setValue("window/panels_shown", json.dumps([str(p) for p in value][-MAX_PANELS:]))

    # recent files ----------------------------------------------------------------------
    @property
    def recent_files(self) -> list[str]:
        raw = self._get("files/recent", "")
        try:
            data = json.loads(str(raw)) if raw else []
        except ValueError:
            data = []
        return [p for p in data if _usable_path(p)][:MAX_RECENT] if isinstance(data, list) else []

    @recent_files.setter
    def recent_files(self, value: list[str]) -> None:
        self.q.setValue("files/recent", json.dumps(list(value)[:MAX_RECENT]))

    def add_recent(self, path: str) -> list[str]:
        path = str(Path(path).resolve())
        files = [p for p in self.recent_files if p != path]
        files.insert(0, path)
        self.recent_files = files
        return self.recent_files

    # file dialogs ----------------------------------------------------------------------
    def folder_for(self, kind: str) -> str:
        """The folder a file dialog of ``kind`` (``CORRECTIONS``, ``LIBRARY_ADD``…) starts in: the one
        last chosen in such a dialog while it still exists, else :func:`default_folder`."""
        value = self._get(f"folders/{kind}", "")
        if _usable_path(value) and Path(str(value)).is_dir():
            return str(value)
        return default_folder()

    def remember_folder(self, kind: str, chosen: str | os.PathLike[str]) -> None:
        """Remember where the author chose ``chosen`` (a file: its folder; a folder: itself)."""
        path = Path(chosen).expanduser().absolute()
        folder = path if path.is_dir() else path.parent
        self.q.setValue(f"folders/{kind}", str(folder))

    def flag(self, key: str, default: bool = False) -> bool:
        return _to_bool(self._get(f"flags/{key}"), default)

    def set_flag(self, key: str, value: bool) -> None:
        self.q.setValue(f"flags/{key}", bool(value))

    # per-paper choices -----------------------------------------------------------------
    def graphical_abstract(self, sha256: str) -> dict[str, str]:
        """The figure chosen as the graphical abstract of the paper ``sha256`` (``{}``: none):
        ``{"id": "fig3", "kind": "figure", "number": "3"}``."""
        if not sha256:
            return {}
        raw = self._get(f"graphical_abstract/{sha256}", "")
        try:
            data = json.loads(str(raw)) if raw else {}
        except ValueError:
            data = {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def set_graphical_abstract(self, sha256: str, choice: dict[str, str] | None) -> None:
        """Remember (or, with ``None``/``{}``, forget) the graphical abstract chosen for ``sha256``."""
        if not sha256:
            return
        key = f"graphical_abstract/{sha256}"
        if choice:
            self.q.setValue(key, json.dumps({str(k): str(v) for k, v in choice.items()}))
        else:
            self.q.remove(key)
