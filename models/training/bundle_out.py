"""Where a new model bundle is written (no torch here: the command lines check ``--out`` with it first).

* :func:`refuse_bundle_out`: before any work, one line for an ``--out`` that already holds a bundle
  (a ``manifest.json``), that is a bundle the run reads (``--bundle``, ``--reuse-sentence-graphs``)
  or that is the shipped model folder.
* :func:`staged_bundle`: the bundle is built in a hidden sibling folder (``.<name>.<random>.partial``)
  and becomes ``out`` by one rename only when it is complete, so an interrupted or failed run never
  leaves a half-made bundle that loads under the name asked for (a killed run leaves only the hidden
  folder, which nothing reads).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from core.errors import ModelError

MANIFEST = "manifest.json"
PARTIAL_SUFFIX = ".partial"


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def refuse_bundle_out(out: str | Path, option: str = "--out", *,
                      sources: Sequence[tuple[str, str | Path | None]] = ()) -> Path:
    """``out`` checked as the folder of a new bundle, or a one-line :class:`ModelError`.

    ``sources``: (what it is, e.g. "the bundle you train from", path) for each bundle the run reads."""
    from models.bundle import default_bundle_path

    out = Path(out)
    for what, source in sources:
        if source is not None and _same(out, Path(source)):
            raise ModelError(f"{out}: {option} is {what}; write the new bundle to a new folder")
    if _same(out, default_bundle_path()):
        raise ModelError(f"{out}: {option} is the shipped model; write the new bundle to a new folder")
    if (out / MANIFEST).exists():
        raise ModelError(f"{out}: already holds a model bundle ({MANIFEST}); give {option} a new or "
                         "empty folder")
    return out


@contextmanager
def staged_bundle(out: str | Path) -> Iterator[Path]:
    """Yield a fresh hidden folder beside ``out`` to build the bundle in; when the block ends without
    an error it becomes ``out`` (one rename; into an existing folder that holds no bundle, its files
    are moved in with ``manifest.json`` last). On an error or an interruption the folder is removed."""
    out = Path(out)
    refuse_bundle_out(out)
    out.absolute().parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=PARTIAL_SUFFIX, dir=out.absolute().parent))
    umask = os.umask(0)
    os.umask(umask)
    staging.chmod(0o777 & ~umask)  # a bundle folder as mkdir makes it, not mkdtemp's owner-only one
    try:
        yield staging
        _install(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _install(staging: Path, out: Path) -> None:
    if (out / MANIFEST).exists():  # appeared while this run built its own
        raise ModelError(f"{out}: a model bundle was written there meanwhile; the new one is not installed")
    if out.is_dir():
        try:
            out.rmdir()  # empty: the rename below replaces it
        except OSError:
            for entry in sorted(staging.iterdir(), key=lambda p: p.name == MANIFEST):
                os.replace(entry, out / entry.name)
            staging.rmdir()
            return
    os.replace(staging, out)
