"""The Suggestions panel's filter row: a function, a section kind and the sources to search (remembered from
one session to the next; the row wraps in a narrow panel)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QLabel, QWidget

from app.gui.flow_layout import control_group, flow_row
from app.gui.panel_choices import remember
from core.document import SectionKind
from core.taxonomy.functions import default_taxonomy
from core.taxonomy.labels import ROLES

SOURCE_CHOICES = (("Corpus and library", ("corpus", "library")), ("Phrase corpus", ("corpus",)),
                  ("My library", ("library",)))


class SuggestionFilters(QWidget):
    """Function, section and source combo boxes in one row; ``changed`` when any of them changes."""

    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.function = QComboBox()
        self.function.setToolTip("Only sentences with this communicative function")
        self._fill_functions()
        self.section = QComboBox()
        self.section.setToolTip("Only sentences from this kind of section")
        self.section.addItem("All sections", None)
        for kind in SectionKind:
            self.section.addItem(kind.value.replace("-", " "), kind.value)
        self.source = QComboBox()
        self.source.setToolTip("Search the phrase corpus, your library, or both")
        for label, kinds in SOURCE_CHOICES:
            self.source.addItem(label, kinds)
        for combo, key in ((self.function, "function"), (self.section, "section"), (self.source, "source")):
            remember(combo, key)
            combo.currentIndexChanged.connect(lambda _i: self.changed.emit())
        flow_row(self, control_group(QLabel("Function"), self.function),
                 control_group(QLabel("Section"), self.section, self.source))  # (two rows at most)

    def _fill_functions(self) -> None:
        self.function.addItem("All functions", None)
        try:
            taxonomy = default_taxonomy()
        except Exception as error:  # a broken taxonomy file must not take the panel down
            self.function.setToolTip(f"No function filter: {error}")
            return
        for role in ROLES:
            infos = taxonomy.of_role(role)
            if not infos:
                continue
            self.function.insertSeparator(self.function.count())
            for info in infos:
                self.function.addItem(info.name, info.id)
                self.function.setItemData(self.function.count() - 1, f"{role}: {info.description}",
                                          Qt.ItemDataRole.ToolTipRole)

    def kinds(self) -> tuple[str, ...]:
        """The source kinds to search ("corpus", "library")."""
        return tuple(self.source.currentData() or ("corpus", "library"))

    def in_use(self) -> list[str]:
        """The names of the function and section filters that are set (for "no suggestions" hints)."""
        return [combo.currentText() for combo in (self.function, self.section) if combo.currentIndex() > 0]
