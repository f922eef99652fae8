"""Correcting a sentence's role or function (issue 15): the GUI side of ``core.library.corrections``.

:class:`CorrectionController` knows the session (the open paper, its analysis, the selected sentence)
and the library folder, and nothing else. It builds a :class:`~core.library.corrections.Correction`
(the sentence, the sentences before and after it in its section, its section kind, the label the
model gave and the model's id), stores it in the library's database and remembers the open paper's
corrections so the page view, the inspector and the draft pane can show the corrected label.

It offers the "Correct role ▸ / Correct function ▸" submenus the context menus add
(:meth:`add_to_menu`), the Alt+1…Alt+6 shortcuts (the selected sentence's role, in ``ROLES`` order)
and the JSONL export/import behind File › Corrections.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

import core.paths
from app.gui.sentence_overlays import SentenceItem
from app.gui.widgets import one_line
from core.library.corrections import Correction, CorrectionCounts, Corrections
from core.library.store import LibraryError
from core.taxonomy.functions import default_taxonomy
from core.taxonomy.labels import ROLES

ROLE_SHORTCUTS = {role: f"Alt+{number}" for number, role in enumerate(ROLES, 1)}
DRAFT_DOC_ID = "draft:current"
NOT_SAVED = "Your correction was not saved"
NOT_READ = "Your corrections cannot be read"
LIBRARY_FAILURES = (LibraryError, OSError)  # the library folder or its database cannot be used


def library_problem(error: Exception) -> tuple[str, bool]:
    """Why the library cannot be used, in the Library panel's words, and whether "Repair library…" helps
    (a damaged or missing database)."""
    from app.gui.panels.library_text import damage_message

    damage = damage_message(error)
    return (damage, True) if damage is not None else (one_line(str(error), 300), False)


@dataclass(frozen=True)
class SentenceTarget:
    """A sentence the user may correct, with what a correction keeps of it."""

    doc_id: str
    text: str
    role: str = ""  # the model's role ("" before labelling)
    function: str = ""  # the model's function ("" without a function head)
    section_kind: str = ""
    context_before: str = ""
    context_after: str = ""
    title: str = ""
    position: int = -1  # sentence index in the open paper (-1: a draft sentence)
    model_id: str = ""


def known_functions() -> frozenset[str]:
    return frozenset(f.id for f in default_taxonomy().functions)


def functions_of_role(role: str) -> list[tuple[str, str]]:
    """(id, name) of the taxonomy's functions of ``role`` (every function when it has none)."""
    taxonomy = default_taxonomy()
    found = taxonomy.of_role(role) if role else ()
    return [(f.id, f.name) for f in (found or taxonomy.functions)]


class CorrectionController(QObject):
    """Stores corrections of the open paper's (or the draft's) sentences and reports them."""

    changed = Signal()  # corrections were added or imported
    corrected = Signal(object, str, str)  # the SentenceTarget, field, label
    message = Signal(str)  # a line for the status bar
    # the library could not be read or written: one line, whether "Repair library…" helps, and whether
    # it was the author's own action (a correction, an export) that failed
    libraryFailed = Signal(str, bool, bool)

    def __init__(self, session: object, library_folder: Path | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self._folder = Path(library_folder) if library_folder is not None else None
        self._doc_id = ""
        self._of_doc: dict[tuple[str, str], Correction] = {}

    # -- the database ---------------------------------------------------------------------
    @property
    def folder(self) -> Path:
        return self._folder if self._folder is not None else core.paths.library_dir()

    @contextlib.contextmanager
    def table(self) -> Iterator[Corrections]:
        from core.library.library import Library

        self.folder.mkdir(parents=True, exist_ok=True)
        with Library(self.folder) as library:
            yield Corrections(library.store)

    def report(self, error: Exception, what: str, asked: bool = True) -> str:
        """Say (``libraryFailed``) that ``what`` failed as the library cannot be used; returns the line."""
        problem, repairable = library_problem(error)
        line = f"{what}: {problem}"
        self.libraryFailed.emit(line, repairable, asked)
        return line

    def counts(self) -> CorrectionCounts:
        with self.table() as table:
            return table.counts()

    def all(self) -> list[Correction]:
        with self.table() as table:
            return table.all()

    def export_to(self, path: str | Path) -> int:
        """Every correction as JSONL at ``path``; returns how many."""
        with self.table() as table:
            count = table.export_jsonl(Path(path))
        self.message.emit(f"Exported {count} correction{'s' if count != 1 else ''} to {Path(path).name}")
        return count

    def import_from(self, path: str | Path) -> int:
        """Add the corrections of a JSONL file (raises CorrectionError on a bad line); returns how many."""
        with self.table() as table:
            count = table.import_jsonl(Path(path), known_functions())
        self._doc_id = ""  # reread the open paper's corrections
        self.changed.emit()
        self.message.emit(f"Imported {count} correction{'s' if count != 1 else ''} from {Path(path).name}")
        return count

    # -- the open paper ---------------------------------------------------------------------
    def doc_id(self) -> str:
        paper = getattr(self.session, "paper", None)
        document = getattr(self.session, "document", None)
        return (getattr(paper, "sha256", "") or getattr(document, "sha256", "")) if paper is not None else ""

    def _corrections_of_open(self) -> dict[tuple[str, str], Correction]:
        doc_id = self.doc_id()
        if doc_id != self._doc_id:
            self._doc_id = doc_id
            self._of_doc = {}
            if doc_id:
                try:
                    with self.table() as table:
                        self._of_doc = table.of_document(doc_id)
                except LIBRARY_FAILURES as error:  # shown without corrections, said once per paper
                    self.report(error, NOT_READ, asked=False)
        return self._of_doc

    def target(self, index: int) -> SentenceTarget | None:
        """Sentence ``index`` of the open paper as a correction target (None: no such sentence)."""
        paper = getattr(self.session, "paper", None)
        if paper is None or not (0 <= index < len(paper.sentences)):
            return None
        sentences = paper.sentences
        sentence = sentences[index]

        def neighbour(other: int) -> str:
            if 0 <= other < len(sentences) and sentences[other].section_index == sentence.section_index:
                return sentences[other].text
            return ""

        analysis = getattr(self.session, "analysis", None)
        role = self.session.role_of(index)  # type: ignore[attr-defined]
        function = self.session.function_of(index)  # type: ignore[attr-defined]
        model = getattr(getattr(self.session, "models", None), "model", None)
        model_id = analysis.model_id if analysis is not None else getattr(model, "model_id", "")
        return SentenceTarget(
            doc_id=self.doc_id(), text=sentence.text, role=role.label if role is not None else "",
            function=function.label if function is not None else "",
            section_kind=paper.section_of(sentence).kind.value, context_before=neighbour(index - 1),
            context_after=neighbour(index + 1), title=paper.title or "", position=index, model_id=model_id)

    def correct(self, target: SentenceTarget, field: str, label: str) -> Correction | None:
        """Store the correction of ``target``'s ``field`` to ``label`` (replacing an earlier one); None
        (said through ``libraryFailed``) when the library cannot store it."""
        correction = Correction(
            doc_id=target.doc_id, text=target.text, field=field, corrected=label,
            predicted=target.role if field == "role" else target.function,
            section_kind=target.section_kind, context_before=target.context_before,
            context_after=target.context_after, title=target.title, position=target.position,
            model_id=target.model_id)
        try:
            with self.table() as table:
                stored = table.add(correction, known_functions())
        except LIBRARY_FAILURES as error:
            self.report(error, NOT_SAVED)
            return None
        if target.doc_id and target.doc_id == self._doc_id:
            self._of_doc[(target.text, field)] = stored
        shown = default_taxonomy().name_of(label) if field == "function" else label
        self.message.emit(f"Corrected the sentence's {field} to {shown} "
                          f"(the model said {correction.predicted or 'nothing'})")
        self.corrected.emit(target, field, label)
        self.changed.emit()
        return stored

    def correct_role(self, sentence_index: int, role: str) -> Correction | None:
        target = self.target(sentence_index)
        return self.correct(target, "role", role) if target is not None else None

    def correct_function(self, sentence_index: int, function_id: str) -> Correction | None:
        target = self.target(sentence_index)
        return self.correct(target, "function", function_id) if target is not None else None

    def correction_of(self, sentence_index: int, field: str = "role") -> Correction | None:
        paper = getattr(self.session, "paper", None)
        if paper is None or not (0 <= sentence_index < len(paper.sentences)):
            return None
        return self._corrections_of_open().get((paper.sentences[sentence_index].text, field))

    def corrected_label(self, sentence_index: int, field: str = "role") -> str | None:
        """The user's label of the open paper's sentence (None: not corrected)."""
        correction = self.correction_of(sentence_index, field)
        return correction.corrected if correction is not None else None

    def is_open_paper(self, target: SentenceTarget) -> bool:
        return target.position >= 0 and bool(target.doc_id) and target.doc_id == self.doc_id()

    def apply_to_overlays(self, items: Sequence[SentenceItem]) -> int:
        """Colour the page view's sentence items of corrected sentences by the corrected role."""
        paper = getattr(self.session, "paper", None)
        if paper is None:
            return 0
        changed = 0
        for item in items:
            label = self.corrected_label(item.index) if item.role is not None else None
            if label is not None and label != item.role:
                item.set_role(label, 1.0, f"<b>{label}</b> — your correction")
                changed += 1
        return changed

    # -- menus and shortcuts ----------------------------------------------------------------
    def add_to_menu(self, menu: QMenu, target: SentenceTarget | int | None) -> list[QMenu]:
        """Add "Correct role ▸" and "Correct function ▸" for ``target`` (a sentence index of the
        open paper or a draft sentence) to ``menu``; nothing for an unlabelled sentence."""
        if isinstance(target, int):
            target = self.target(target)
        if target is None or not target.role:
            return []
        current = self._current(target)
        roles = menu.addMenu("Correct &role")
        for role in ROLES:
            keys = f"\t{ROLE_SHORTCUTS[role]}" if target.position >= 0 else ""  # shown, not bound here
            action = roles.addAction(role + keys, partial(self.correct, target, "role", role))
            action.setCheckable(True)
            action.setChecked(role == current.get("role"))
        functions = menu.addMenu("Correct &function")
        for function_id, name in functions_of_role(current.get("role", "")):
            action = functions.addAction(name, partial(self.correct, target, "function", function_id))
            action.setCheckable(True)
            action.setChecked(function_id == current.get("function"))
        return [roles, functions]

    def _current(self, target: SentenceTarget) -> dict[str, str]:
        labels = {"role": target.role, "function": target.function}
        if target.position >= 0 and target.doc_id == self.doc_id():
            for field in labels:
                label = self.corrected_label(target.position, field)
                labels[field] = label or labels[field]
        return labels

    def menu(self, target: SentenceTarget | int, parent: QWidget | None = None) -> QMenu:
        """A menu of its own with the two submenus (the inspector's "Correct…" button)."""
        menu = QMenu(parent)
        self.add_to_menu(menu, target)
        return menu

    def install_shortcuts(self, widget: QWidget) -> list[QAction]:
        """Alt+1…Alt+6 on ``widget``: the selected sentence's role becomes ROLES[0…5]."""
        actions = []
        for role, keys in ROLE_SHORTCUTS.items():
            action = QAction(f"Correct the selected sentence's role to {role}", widget)
            action.setShortcut(QKeySequence(keys))
            action.triggered.connect(lambda _checked=False, r=role: self.correct_selected(r))
            widget.addAction(action)
            actions.append(action)
        return actions

    def correct_selected(self, role: str) -> Correction | None:
        index = getattr(self.session, "selected", -1)
        if self.target(index) is None or self.session.role_of(index) is None:  # type: ignore[attr-defined]
            self.message.emit("Select a labelled sentence first to correct its role")
            return None
        return self.correct_role(index, role)
