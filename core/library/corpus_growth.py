"""The default phrase corpus grows on the user's machine: the shipped pack (``resources/corpus``,
labelled) joined with the shipped extra text (``resources/corpus-extra``, unlabelled:
:mod:`core.library.corpus_extra`), labelled and embedded with the model in use, becomes one pack in
the user data folder (``user_data_dir()/corpus``, which :func:`core.paths.corpus_dir` prefers).

"Ship what must be shipped; build the rest in the background on first use, from files the package
carries, no network": suggestions work from the shipped pack at once; :func:`grow_corpus` is a long
job (``JobContext``: progress, cancellable) that the GUI runs in a background worker and
``rhetorica corpus grow`` in the foreground.

Resumable: the extra text is labelled in shards of :data:`SHARD_PAPERS` papers, each written as a
pack of its own under ``user_data_dir()/corpus-growth/`` (its manifest, written last, marks it done
and names the run's key); a cancelled or killed run keeps its finished shards and a later run
labels only the rest. When every shard is there, the shipped pack and the shards are joined
(:func:`core.library.pack_merge.merge_packs`) into a folder beside the target and moved into place
in one rename, so the app sees either the shipped pack or the whole grown one, never half of it.

The run's key names what the result depends on: the extra text's sha256, the shipped pack's
manifest, the model's sha256 and the shard size. A grown pack whose key is not the current one
(another release's pack or model) is ``stale``: :func:`retire_stale_growth` removes it, so
suggestions fall back to the shipped pack until it has grown again. A corpus the user built there
themselves (``rhetorica corpus build --out``, a library folder) is never touched (``own``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from core.jobs import JobContext, ProgressCallback, ensure_context
from core.library.corpus_extra import ExtraPaper, iter_extra, read_extra_manifest, verify_extra
from core.library.pack import MANIFEST, build_pack, is_pack
from core.library.pack_merge import merge_packs
from core.library.store import LibraryError

SHARD_PAPERS = 1000  # arXiv abstracts: about 7,800 sentences, a minute or two of labelling on 2 cores
STAGING = "corpus-growth"  # under the user data folder: the shards and the join in progress
TARGET = "corpus"  # under the user data folder: what core.paths.corpus_dir() prefers


@dataclass(frozen=True)
class GrowthPaths:
    """Where a growth reads from and writes to (defaults: the shipped resources and the user data
    folder; tests and ``rhetorica corpus grow --base/--extra`` give others)."""

    base: Path  # the shipped, labelled pack
    extra: Path  # the shipped extra text
    home: Path  # the user data folder

    @property
    def staging(self) -> Path:
        return self.home / STAGING

    @property
    def target(self) -> Path:
        return self.home / TARGET

    @classmethod
    def default(cls, base: Path | None = None, extra: Path | None = None,
                home: Path | None = None) -> GrowthPaths:
        from core.paths import resources_dir, user_data_dir

        return cls(base or resources_dir() / "corpus", extra or resources_dir() / "corpus-extra",
                   home or user_data_dir())


@dataclass(frozen=True)
class GrowthStatus:
    """What the default phrase corpus is now and what growing it would do."""

    state: str  # "grown" | "needed" | "stale" | "own" | "unavailable"
    message: str  # one line for a status bar or the CLI
    shards_done: int = 0
    shards: int = 0
    sentences_now: int = 0  # in the pack suggestions search now
    sentences_grown: int = 0  # after growing (shipped + extra, before the join's last dedup)

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "message": self.message, "shards_done": self.shards_done,
                "shards": self.shards, "sentences_now": self.sentences_now,
                "sentences_grown": self.sentences_grown}


@dataclass
class GrowthResult:
    folder: Path
    manifest: dict[str, Any]
    shards_labelled: int = 0
    shards_reused: int = 0
    seconds: float = 0.0
    sentences_labelled: int = 0
    notes: list[str] = field(default_factory=list)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def growth_key(paths: GrowthPaths, model_sha256: str, shard_papers: int = SHARD_PAPERS) -> str:
    """What a grown pack depends on, as a short hash (see the module's docstring)."""
    extra = read_extra_manifest(paths.extra)
    try:
        base_manifest = (paths.base / MANIFEST).read_bytes()
    except OSError as error:
        raise LibraryError(f"{paths.base}: no shipped phrase corpus ({error.strerror})") from None
    digest = hashlib.sha256()
    for part in (str(extra.get("data_sha256", "")), hashlib.sha256(base_manifest).hexdigest(),
                 model_sha256, str(shard_papers)):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:20]


def _base_model_sha(paths: GrowthPaths) -> str:
    manifest = _read_json(paths.base / MANIFEST)
    if manifest is None or not is_pack(paths.base):
        raise LibraryError(f"{paths.base}: no shipped phrase corpus to grow")
    return str(manifest.get("model_sha256", ""))


def _target_kind(paths: GrowthPaths) -> tuple[str, dict[str, Any] | None]:
    """("absent" | "grown" | "own", its manifest)."""
    target = paths.target
    if (target / "library.sqlite3").exists():
        return "own", None
    manifest = _read_json(target / MANIFEST) if (target / MANIFEST).is_file() else None
    if manifest is None:
        return ("own", None) if target.exists() and any(target.iterdir()) else ("absent", None)
    return ("grown" if isinstance(manifest.get("grown"), dict) else "own"), manifest


def growth_status(paths: GrowthPaths | None = None, shard_papers: int = SHARD_PAPERS) -> GrowthStatus:
    """The state of the default phrase corpus (cheap: reads manifests, labels nothing)."""
    paths = paths or GrowthPaths.default()
    base = _read_json(paths.base / MANIFEST) or {}
    shipped = int(base.get("sentences", 0))
    kind, manifest = _target_kind(paths)
    if kind == "own":
        return GrowthStatus("own", f"your own phrase corpus in {paths.target} is used; nothing grows",
                            sentences_now=int((manifest or {}).get("sentences", 0)))
    try:
        extra = read_extra_manifest(paths.extra)
        key = growth_key(paths, str(base.get("model_sha256", "")), shard_papers)
    except LibraryError as error:
        return GrowthStatus("unavailable", f"the phrase corpus cannot grow: {error}", sentences_now=shipped)
    grown_total = shipped + int(extra.get("sentences", 0))
    shards = -(-int(extra.get("papers", 0)) // shard_papers)
    if kind == "grown" and manifest is not None:
        now = int(manifest.get("sentences", 0))
        if manifest["grown"].get("key") == key:
            return GrowthStatus("grown", f"phrase corpus: {now:,} sentences (grown)", shards, shards,
                                now, now)
        return GrowthStatus("stale", "the grown phrase corpus belongs to another release or model: "
                            "it is set aside and grows again", 0, shards, now, grown_total)
    done = len(_done_shards(paths, key))
    return GrowthStatus("needed", f"phrase corpus: {shipped:,} sentences; {grown_total:,} once the rest "
                        f"is labelled ({done} of {shards} parts done)", done, shards, shipped, grown_total)


def retire_stale_growth(paths: GrowthPaths | None = None) -> bool:
    """Remove a grown pack that belongs to another release or model (True when one was removed), so
    that suggestions use the shipped pack until the corpus has grown again."""
    paths = paths or GrowthPaths.default()
    if growth_status(paths).state != "stale":
        return False
    shutil.rmtree(paths.target, ignore_errors=True)
    return not paths.target.exists()


def _shard_dir(paths: GrowthPaths, number: int) -> Path:
    return paths.staging / f"shard-{number:04d}"


def _done_shards(paths: GrowthPaths, key: str) -> set[int]:
    done = set()
    if paths.staging.is_dir():
        for folder in paths.staging.glob("shard-*"):
            manifest = _read_json(folder / MANIFEST) if is_pack(folder) else None
            if manifest is not None and manifest.get("growth_key") == key:
                done.add(int(folder.name.removeprefix("shard-")))
    return done


def _shards(papers: Iterator[ExtraPaper], size: int) -> Iterator[list[ExtraPaper]]:
    while batch := list(islice(papers, size)):
        yield batch


class _ShardContext(JobContext):
    """A shard's context: its progress is shown as the whole growth's, and cancelling the growth
    cancels it."""

    def __init__(self, parent: JobContext, on_progress: ProgressCallback) -> None:
        super().__init__(on_progress)
        self._parent = parent

    def check(self) -> None:
        self._parent.check()
        super().check()


def _prepare_staging(paths: GrowthPaths, key: str) -> None:
    """The staging folder for run ``key``: shards of another key (another release, model or shard
    size) and a join left by a killed run are removed."""
    paths.staging.mkdir(parents=True, exist_ok=True)
    plan = paths.staging / "growth.json"
    recorded = _read_json(plan) or {}
    if recorded.get("key") != key:
        for folder in paths.staging.iterdir():
            if folder.is_dir():
                shutil.rmtree(folder)  # the lock file stays
        plan.write_text(json.dumps({"key": key}) + "\n", encoding="utf-8")
    for leftover in ("joined", "replaced"):
        shutil.rmtree(paths.staging / leftover, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if os.name == "nt":  # no cheap liveness test: a lock is honoured for a day
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, another user's
        return True
    return True


@contextmanager
def _growth_lock(paths: GrowthPaths) -> Iterator[None]:
    """One growth at a time per user folder (the GUI's background job and ``rhetorica corpus grow``):
    a lock file naming the process; one left by a process that is gone (or a day old) is taken over."""
    paths.staging.mkdir(parents=True, exist_ok=True)
    lock = paths.staging / "lock"
    for _ in range(2):
        try:
            handle = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                pid = int(lock.read_text(encoding="utf-8").strip() or 0)
                age = time.time() - lock.stat().st_mtime
            except (OSError, ValueError):
                pid, age = 0, 0.0
            if pid and _alive(pid) and age < 86_400:
                raise LibraryError(f"the phrase corpus is already growing (process {pid}); "
                                   "wait for it or stop it") from None
            lock.unlink(missing_ok=True)
            continue
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(str(os.getpid()))
        break
    else:
        raise LibraryError(f"{lock}: cannot take the growth lock")
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def grow_corpus(model: Any, model_sha256: str, ctx: JobContext | None = None,
                paths: GrowthPaths | None = None, shard_papers: int = SHARD_PAPERS,
                command: str = "") -> GrowthResult:
    """Label and embed the extra text with ``model`` (a ``models.encoder.EncoderModel``; its
    ``model.onnx`` has ``model_sha256``, which must be the model the shipped pack was built with) and
    join it with the shipped pack into the user's phrase corpus. Resumable (finished shards are kept
    and reused); raises :class:`core.errors.Cancelled` when ``ctx`` is cancelled."""
    ctx = ensure_context(ctx)
    paths = paths or GrowthPaths.default()
    started = time.monotonic()
    if shard_papers < 1:
        raise ValueError("shard_papers must be at least 1")
    kind, _ = _target_kind(paths)
    if kind == "own":
        raise LibraryError(f"{paths.target} holds your own phrase corpus (it takes precedence): the "
                           "default corpus does not grow over it; move it away to grow the default one")
    built_with = _base_model_sha(paths)
    if built_with and model_sha256 != built_with:
        raise LibraryError(f"the shipped phrase corpus was labelled with another model "
                           f"({built_with[:12]}…, not {model_sha256[:12]}…): growing it with this one "
                           "would mix two function views; use the shipped model")
    extra = verify_extra(paths.extra)
    key = growth_key(paths, model_sha256, shard_papers)
    status = growth_status(paths, shard_papers)
    if status.state == "grown":
        manifest = _read_json(paths.target / MANIFEST) or {}
        return GrowthResult(paths.target, manifest, seconds=time.monotonic() - started,
                            notes=["already grown"])
    with _growth_lock(paths):
        result = _grow(model, model_sha256, ctx, paths, shard_papers, command, extra, key)
    shutil.rmtree(paths.staging, ignore_errors=True)
    result.seconds = time.monotonic() - started
    return result


def _grow(model: Any, model_sha256: str, ctx: JobContext, paths: GrowthPaths, shard_papers: int,
          command: str, extra: dict[str, Any], key: str) -> GrowthResult:
    """The growth proper, under the lock: label the missing shards, join, move into place."""
    _prepare_staging(paths, key)
    done = _done_shards(paths, key)
    total_sentences = max(1, int(extra.get("sentences", 0)))
    result = GrowthResult(paths.target, {})
    labelled = 0  # sentences of the extra text behind us (labelled now or before)
    model_id = str(getattr(model, "model_id", ""))
    for number, shard in enumerate(_shards(iter_extra(paths.extra), shard_papers)):
        ctx.check()
        size = sum(p.sentence_count() for p in shard)
        if number in done:
            result.shards_reused += 1
            labelled += size
            continue
        before = labelled

        def forward(p: Any, before: int = before, size: int = size) -> None:
            now = before + int(p.fraction * size)
            ctx.progress(now, total_sentences + total_sentences // 20,
                         f"growing the phrase corpus: {now:,} of {total_sentences:,} sentences labelled")

        folder = _shard_dir(paths, number)
        shutil.rmtree(folder, ignore_errors=True)  # a shard a killed run left half-written
        build_pack(shard, model, folder, {"model_id": model_id, "model_sha256": model_sha256,
                                          "growth_key": key},
                   ctx=_ShardContext(ctx, forward), papers_per_batch=32, expected_papers=len(shard))
        result.shards_labelled += 1
        result.sentences_labelled += size
        labelled += size
    ctx.check()
    shards = sorted(_done_shards(paths, key))
    expected = -(-int(extra.get("papers", 0)) // shard_papers)
    if len(shards) != expected:
        raise LibraryError(f"{paths.staging}: {len(shards)} of {expected} parts labelled; run it again")
    joined = paths.staging / "joined"

    def joining(p: Any) -> None:
        ctx.progress(total_sentences + int(p.fraction * (total_sentences // 20)),
                     total_sentences + total_sentences // 20, p.message)

    manifest = merge_packs([paths.base, *(_shard_dir(paths, n) for n in shards)], joined,
                           {"command": command or "rhetorica corpus grow",
                            "grown": {"key": key, "extra_sha256": extra.get("data_sha256", ""),
                                      "base": str(paths.base), "extra": str(paths.extra),
                                      "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}},
                           ctx=_ShardContext(ctx, joining))
    ctx.check()
    _move_into_place(joined, paths)
    result.manifest = manifest
    return result


def _move_into_place(joined: Path, paths: GrowthPaths) -> None:
    """``joined`` becomes the target in one rename; a stale grown pack there is set aside first."""
    target = paths.target
    if target.exists():
        kind, _ = _target_kind(paths)
        if kind == "own":  # appeared while we were labelling: leave it, and say so
            raise LibraryError(f"{target} now holds your own phrase corpus: the grown one stays in {joined}")
        aside = paths.staging / "replaced"
        shutil.rmtree(aside, ignore_errors=True)
        os.replace(target, aside)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(joined, target)
