"""Bringing a Zotero library into a Rhetorica library, and keeping it in step (issue 27.3).

A sync is two steps. :func:`plan_sync` compares a :class:`~core.library.zotero.ZoteroSnapshot` with
what the library recorded at the last sync (table ``zotero_items``, made by the first sync: per Zotero
item and PDF attachment, the items' ``dateModified``, the file's size, time and sha256, the paper it
became, or why it could not be added) and needs no model:

* an attachment seen before, with the same file (size and time) and the same ``dateModified``, is
  unchanged (nothing is read; a file is hashed only when its size or time changed);
* the same file (same sha256) under a changed item: only the metadata is refreshed (no labelling);
* a PDF already in the library (by sha256, e.g. added from a folder before): linked, its metadata kept;
* a new PDF, or a changed file: added (parsed, labelled, embedded); the paper of the old file stays in
  the library and the report says so;
* a paper the user removed from the library is not added again; a file that could not be added is
  not tried again until it changes (its reason is repeated);
* items (or PDF attachments) gone from Zotero or moved to its trash are reported, never deleted: their
  papers stay in the library until the user removes them.

:func:`apply_sync` then writes: the metadata (title, authors, year, DOI and the item key, in the
``papers`` columns of library schema 2), the new papers (:meth:`core.library.library.Library.add_pdfs`,
so progress, cancel and the parse workers are those of any add) and the new sync state. A cancel keeps
what was added before it (and records it, so the next sync does not add it again).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.jobs import JobContext, ensure_context
from core.library.store import LibraryStore, PaperMetadata
from core.library.zotero import ZoteroEntry, ZoteroSnapshot

if TYPE_CHECKING:  # pragma: no cover
    from core.library.library import Library
    from core.model_api import RoleModel

Key = tuple[int, str, str]  # (Zotero library id, item key, attachment key)


@dataclass(frozen=True)
class SyncState:
    """What the last sync recorded of one Zotero item's PDF attachment."""

    row: int
    modified: str
    file_size: int
    file_mtime: int
    file_sha256: str
    paper_id: str | None  # the library's paper (None: none, see ``problem``)
    problem: str  # why the file could not be added ("" with no paper: the user removed the paper)


@dataclass(frozen=True)
class Planned:
    """An attachment whose file (or item) is new or changed: its file's sha256, size and time."""

    entry: ZoteroEntry
    sha256: str
    size: int
    mtime: int
    previous: SyncState | None


@dataclass(frozen=True)
class GoneItem:
    """An item (or PDF attachment) the last sync saw that Zotero no longer has, or has in its trash."""

    library_id: int
    item_key: str
    paper_id: str
    title: str
    trashed: bool

    @property
    def line(self) -> str:
        where = self.item_key if self.library_id == 1 else f"{self.library_id}/{self.item_key}"
        title = f" “{' '.join(self.title.split())[:80]}”" if self.title.strip() else ""
        gone = "moved to Zotero's trash" if self.trashed else "removed from Zotero"
        return f"{where}{title}: {gone}; its paper stays in your library ({self.paper_id[:16]})"


@dataclass
class SyncPlan:
    """What a sync will do (made by :func:`plan_sync`; nothing is written yet)."""

    snapshot: ZoteroSnapshot
    add: list[Planned] = field(default_factory=list)  # parse, label and add
    link: list[Planned] = field(default_factory=list)  # already in the library: keep the metadata
    refresh: list[Planned] = field(default_factory=list)  # same file, the item changed: new metadata
    touch: list[Planned] = field(default_factory=list)  # same file and item, new file time: record it
    unchanged: int = 0
    left_out: list[ZoteroEntry] = field(default_factory=list)  # removed from the library by the user
    unreadable: list[tuple[ZoteroEntry, str]] = field(default_factory=list)
    gone: list[GoneItem] = field(default_factory=list)
    forget: list[int] = field(default_factory=list)  # state rows of items gone from Zotero and library

    @property
    def profile(self) -> str:
        return str(self.snapshot.data_dir)


@dataclass
class SyncReport:
    """What a sync did, for the CLI and the GUI."""

    profile: Path
    items: int  # top-level Zotero items read
    added: list[str] = field(default_factory=list)  # item labels
    linked: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    left_out: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (item label, reason)
    gone: list[str] = field(default_factory=list)  # one line per item gone from Zotero
    replaced: list[str] = field(default_factory=list)  # one line per changed file (the old paper stays)
    sentences: int = 0

    def summary(self) -> str:
        """One line: "Zotero (~/Zotero): 12 items; added 3 papers (410 sentences), …"."""
        parts = [f"added {len(self.added)} paper(s) ({self.sentences} sentences)"]
        for count, what in ((len(self.linked), "already in the library, now with Zotero's metadata"),
                            (len(self.updated), "with new metadata"), (self.unchanged, "unchanged"),
                            (len(self.failed), "without a readable PDF"),
                            (len(self.gone), "gone from Zotero"),
                            (self.left_out, "removed from your library before (not added again)")):
            if count:
                parts.append(f"{count} {what}")
        return f"Zotero ({self.profile}): {self.items} item(s); " + ", ".join(parts)

    def lines(self) -> list[str]:
        """One line for each item that was not added and each change worth knowing."""
        return ([f"{label}: {reason}" for label, reason in self.failed] + self.replaced + self.gone)


# -- the state the last sync recorded -----------------------------------------------------------
# In the library's database, created by the first sync (a library never synced has no such table, like
# the corrections table); ``paper`` NULL with no ``problem``: the user removed the paper.
STATE_TABLE = """
CREATE TABLE IF NOT EXISTS zotero_items (
    id INTEGER PRIMARY KEY,
    profile TEXT NOT NULL,
    library_id INTEGER NOT NULL,
    item_key TEXT NOT NULL,
    attachment_key TEXT NOT NULL,
    modified TEXT NOT NULL,
    file_size INTEGER NOT NULL,
    file_mtime INTEGER NOT NULL,
    file_sha256 TEXT NOT NULL,
    paper INTEGER REFERENCES papers(id) ON DELETE SET NULL,
    problem TEXT NOT NULL DEFAULT '',
    synced REAL NOT NULL,
    UNIQUE (profile, library_id, item_key, attachment_key)
)
"""


def _has_state(store: LibraryStore) -> bool:
    return store.connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'zotero_items'").fetchone() is not None


def load_state(store: LibraryStore, profile: str) -> dict[Key, SyncState]:
    """What the last sync of the Zotero data folder ``profile`` recorded, by item and attachment."""
    if not _has_state(store):
        return {}
    rows = store.connection.execute(
        "SELECT z.id, z.library_id, z.item_key, z.attachment_key, z.modified, z.file_size, z.file_mtime, "
        "z.file_sha256, p.paper_id, z.problem FROM zotero_items z LEFT JOIN papers p ON p.id = z.paper "
        "WHERE z.profile = ?", (profile,))
    return {(int(r[1]), str(r[2]), str(r[3])): SyncState(
        int(r[0]), str(r[4]), int(r[5]), int(r[6]), str(r[7]), None if r[8] is None else str(r[8]), str(r[9]))
        for r in rows}


def _save_state(store: LibraryStore, profile: str, planned: Planned, paper_id: str | None,
                problem: str = "") -> None:
    entry = planned.entry
    with store.transaction() as db:
        db.execute(STATE_TABLE)
        db.execute(
            "INSERT INTO zotero_items (profile, library_id, item_key, attachment_key, modified, file_size, "
            "file_mtime, file_sha256, paper, problem, synced) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
            "(SELECT id FROM papers WHERE paper_id = ?), ?, ?) "
            "ON CONFLICT(profile, library_id, item_key, attachment_key) DO UPDATE SET "
            "modified = excluded.modified, file_size = excluded.file_size, file_mtime = excluded.file_mtime, "
            "file_sha256 = excluded.file_sha256, paper = excluded.paper, problem = excluded.problem, "
            "synced = excluded.synced",
            (profile, *entry.key, entry.modified, planned.size, planned.mtime, planned.sha256, paper_id,
             problem, time.time()))


# -- planning ------------------------------------------------------------------------------------
def plan_sync(store: LibraryStore, snapshot: ZoteroSnapshot, ctx: JobContext | None = None) -> SyncPlan:
    """Compare ``snapshot`` with the library's record of the last sync (see the module docstring);
    hashes the files that are new or whose size or time changed. Writes nothing."""
    from core.fileio import file_sha256

    ctx = ensure_context(ctx)
    plan = SyncPlan(snapshot)
    state = load_state(store, plan.profile)
    entries = snapshot.entries
    for number, entry in enumerate(entries):
        ctx.progress(number, len(entries), "comparing Zotero with your library")
        previous = state.get(entry.key) if entry.attachment_key else None
        if entry.path is None:
            plan.unreadable.append((entry, entry.problem))
            continue
        if previous is not None and previous.paper_id is None and not previous.problem:
            plan.left_out.append(entry)
            continue
        try:
            info = entry.path.stat()
            same_file = previous is not None and (previous.file_size, previous.file_mtime) == (
                info.st_size, info.st_mtime_ns)
            if same_file and previous is not None and previous.modified == entry.modified:
                if previous.problem:
                    plan.unreadable.append((entry, previous.problem))
                else:
                    plan.unchanged += 1
                continue
            sha = previous.file_sha256 if same_file and previous is not None else file_sha256(entry.path)
        except OSError as error:
            plan.unreadable.append((entry, f"cannot read {entry.path}: {error.strerror or error}"))
            continue
        planned = Planned(entry, sha, info.st_size, info.st_mtime_ns, previous)
        if previous is not None and sha == previous.file_sha256:
            if previous.problem:
                plan.unreadable.append((entry, previous.problem))
                plan.touch.append(planned)
            elif previous.modified != entry.modified:
                plan.refresh.append(planned)
            else:
                plan.touch.append(planned)
        elif store.has_sha256(sha):
            plan.link.append(planned)
        else:
            plan.add.append(planned)
    seen = {entry.key for entry in entries if entry.attachment_key}
    for key, previous in state.items():
        if key in seen:
            continue
        if previous.paper_id is None:
            plan.forget.append(previous.row)
            continue
        record = store.paper(previous.paper_id)
        trashed = (key[0], key[1]) in snapshot.trashed or (key[0], key[2]) in snapshot.trashed
        plan.gone.append(GoneItem(key[0], key[1], previous.paper_id, record.title if record else "", trashed))
    ctx.progress(len(entries), max(1, len(entries)), f"{len(plan.add)} new PDF(s) to add")
    return plan


# -- applying ------------------------------------------------------------------------------------
def metadata_of(entry: ZoteroEntry) -> tuple[PaperMetadata, str]:
    """(the metadata a paper keeps of its Zotero item, the title to give it: "" keeps the PDF's own,
    as for a PDF with no parent item, whose "title" is a file name)."""
    item = entry.item
    metadata = PaperMetadata(item.authors, item.year, item.doi, item.source_key)
    return metadata, "" if entry.standalone else item.title


def _keep(store: LibraryStore, profile: str, planned: Planned, paper_id: str) -> None:
    metadata, title = metadata_of(planned.entry)
    store.set_metadata(paper_id, metadata, title)
    _save_state(store, profile, planned, paper_id)


def _replaced(planned: Planned, paper_id: str) -> str | None:
    previous = planned.previous
    if previous is None or previous.paper_id is None or previous.paper_id == paper_id:
        return None
    return (f"{planned.entry.item.label}: its PDF changed; added the new file, the paper of the old one "
            f"stays in your library ({previous.paper_id[:16]})")


def apply_sync(library: Library, plan: SyncPlan, model: RoleModel | None, ctx: JobContext | None = None,
               workers: int = 1) -> SyncReport:
    """Carry out ``plan`` on ``library`` (``model`` labels the new PDFs; it may be None when
    ``plan.add`` is empty). ``workers``: PDF parse processes, as for ``Library.add_pdfs``."""
    ctx = ensure_context(ctx)
    store, profile = library.store, plan.profile
    report = SyncReport(plan.snapshot.data_dir, plan.snapshot.items, unchanged=plan.unchanged,
                        left_out=len(plan.left_out), gone=[g.line for g in plan.gone],
                        failed=[(entry.item.label, reason) for entry, reason in plan.unreadable])
    for planned in plan.touch:
        previous = planned.previous
        _save_state(store, profile, planned, previous.paper_id if previous else None,
                    previous.problem if previous else "")
        if previous is not None and not previous.problem:
            report.unchanged += 1
    for planned in plan.refresh:
        assert planned.previous is not None and planned.previous.paper_id is not None
        _keep(store, profile, planned, planned.previous.paper_id)
        report.updated.append(planned.entry.item.label)
    for planned in plan.link:
        _keep(store, profile, planned, planned.sha256)
        report.linked.append(planned.entry.item.label)
        report.replaced += [line for line in [_replaced(planned, planned.sha256)] if line]
    if plan.add:
        if model is None:
            raise ValueError("new PDFs to add but no model to label them")
        _add_new(library, plan, model, ctx, workers, report)
    if plan.forget:
        with store.transaction() as db:
            db.executemany("DELETE FROM zotero_items WHERE id = ?", [(row,) for row in plan.forget])
    return report


def _add_new(library: Library, plan: SyncPlan, model: RoleModel, ctx: JobContext, workers: int,
             report: SyncReport) -> None:
    store, profile = library.store, plan.profile
    paths: dict[str, Path] = {}
    for planned in plan.add:
        assert planned.entry.path is not None
        paths.setdefault(planned.sha256, planned.entry.path)
    reasons: dict[str, str] = {}
    finished = False
    try:
        added = library.add_pdfs(list(paths.values()), model, ctx, workers=workers,
                                 known_sha256={path: sha for sha, path in paths.items()})
        reasons, finished = dict(added.skipped), True
        report.sentences += added.sentences
    finally:  # also after a cancel: what was added is recorded, so the next sync does not add it again
        for planned in plan.add:
            if store.has_sha256(planned.sha256):
                _keep(store, profile, planned, planned.sha256)
                report.added.append(planned.entry.item.label)
                report.replaced += [line for line in [_replaced(planned, planned.sha256)] if line]
            elif finished:
                path = str(paths[planned.sha256])
                reason = reasons.get(path, "the PDF changed while it was read: sync again")
                reason = reason.removeprefix(f"{path}: ")
                _save_state(store, profile, planned, None, reason)
                report.failed.append((planned.entry.item.label, reason))


def sync_zotero(library: Library, snapshot: ZoteroSnapshot, model: RoleModel | None,
                ctx: JobContext | None = None, workers: int = 1) -> SyncReport:
    """Plan and apply a sync in one go (the comparison takes the first tenth of the progress)."""
    ctx = ensure_context(ctx)
    plan = plan_sync(library.store, snapshot, ctx.child(0.0, 0.1))
    return apply_sync(library, plan, model, ctx.child(0.1, 1.0), workers)
