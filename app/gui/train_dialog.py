"""Train on my corrections (issue 15): one background job, a before/after table, a hot model swap.

:class:`TrainDialog` shows how many corrections the library holds and refuses politely below
``MIN_ROLE_CORRECTIONS`` role corrections (saying how many more are needed). "Train" runs
``models.training.corrections.train_on_corrections`` from the bundle in use in a child process
(``app.gui.train_job``, issue 26: training in a GUI thread stalled the UI for up to 281 ms), waited on
by one :class:`~app.gui.workers.Worker` started through the session's job tracker (progress bar, the
"about N s left" line, Cancel, which stops the child); only one such job runs at a time. The new
bundle goes to ``user_data_dir()/models/corrections-<time>`` (installed whole or not at all). When it
is done the dialog shows the accuracy before and after on the held-out corrections and the standard
dev sets, and offers "Use the new model" only when the report is *accepted* (not worse on the dev
sets). :class:`ModelSwitch` does the swap (and the one-click roll back) without a restart: the
settings remember the previous bundle, the model holder loads the new one and the open paper is
labelled again (analyses are cached by model id).
No bundle folder is ever deleted, except a cancelled or failed run's own unfinished one.
"""

from __future__ import annotations

import html
import logging
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

import core.paths
from app.gui.corrections import LIBRARY_FAILURES, NOT_READ, CorrectionController
from app.gui.job_tracker import JobTracker
from app.gui.settings import AppSettings
from app.gui.train_job import (
    TRAINING_TARGET,
    TrainingOutcome,
    TrainingRequest,
    discard_unfinished,
    one_line,
    run_training,
)
from app.gui.workers import Worker
from core.library.corrections import MIN_ROLE_CORRECTIONS

log = logging.getLogger(__name__)

TRAINING_MISSING = ("Training needs the training extra (torch), which this installation does not have: "
                    "run Rhetorica from a source install with 'pip install -e .[train]' to train; your "
                    "corrections are kept in the library meanwhile.")


def can_train() -> bool:
    """True when torch is installed (the packaged app leaves it out)."""
    import importlib.util

    return importlib.util.find_spec("torch") is not None


JOB_LABEL = "Training on my corrections"


def models_dir() -> Path:
    """Where the bundles trained here go (and the shared vector cache, ``work/``)."""
    return core.paths.user_data_dir() / "models"


class ModelSwitch(QObject):
    """Uses a bundle now (remembering the one in use) and rolls back to it, both hot.

    ``apply(path)`` is the window's: set ``model_path``, reconfigure the model holder, label the open
    paper again; ``current()`` is the bundle in use ("" for the bundled default)."""

    switched = Signal(str)  # the bundle now in use ("": the bundled default)

    def __init__(self, settings: AppSettings, apply: Callable[[str], None], current: Callable[[], str],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self._apply = apply
        self._current = current

    def current(self) -> str:
        return self._current()

    @property
    def can_roll_back(self) -> bool:
        return self.settings.has_previous_model

    def use(self, path: str | Path) -> None:
        self.settings.previous_model_path = self._current()
        self.settings.has_previous_model = True
        self._apply(str(path))
        self.switched.emit(str(path))

    def roll_back(self) -> bool:
        """Go back to the bundle in use before the last ``use`` (kept on disk); False if there is none."""
        if not self.settings.has_previous_model:
            return False
        previous = self.settings.previous_model_path
        self.settings.has_previous_model = False
        self.settings.previous_model_path = ""
        self._apply(previous)
        self.switched.emit(previous)
        return True


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f} %"


def _report_table() -> QTableWidget:
    """The before/after table: one row per measurement, read-only, as tall as its rows."""
    table = QTableWidget(0, 4)
    table.setHorizontalHeaderLabels(["Measured on", "Model in use", "New model", "Change"])
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    table.setSizeAdjustPolicy(QAbstractItemView.SizeAdjustPolicy.AdjustToContents)
    table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    header = table.horizontalHeader()
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for column in (1, 2, 3):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    return table


class TrainDialog(QDialog):
    """See the module docstring. ``bundle()`` is the bundle training starts from."""

    finishedRun = Signal(object)  # the TrainingOutcome, or None when cancelled or failed (emitted last)
    training_target = TRAINING_TARGET  # "module:function" run in the child process (tests swap it)

    def __init__(self, corrections: CorrectionController, tracker: JobTracker, switch: ModelSwitch,
                 bundle: Callable[[], Path], threads: int = 2, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Train on my corrections")
        self.setModal(False)
        self.corrections = corrections
        self.tracker = tracker
        self.switch = switch
        self._bundle = bundle
        self.threads = threads
        self.worker: Worker | None = None
        self.report: TrainingOutcome | None = None
        self.request: TrainingRequest | None = None
        self.out: Path | None = None
        self._started = 0.0

        self._build_texts()
        self.table = _report_table()
        close = self._build_buttons()
        self._lay_out(close)
        self.resize(660, 470)
        switch.switched.connect(lambda _path: self._update())
        corrections.changed.connect(self.refresh)
        self.refresh()

    # -- building the dialog ------------------------------------------------------------------
    def _build_texts(self) -> None:
        """The explanation, the counts, what is still needed, the progress bar, status and verdict lines."""
        self.intro = QLabel(
            "Trains the model's role heads on the roles you corrected, mixed with the standard training "
            "data so it forgets nothing, then compares it with the model in use on a held-out quarter of "
            "your corrections and on the standard dev sets. The model in use is kept.")
        self.intro.setWordWrap(True)
        self.counts = QLabel()
        self.counts.setWordWrap(True)
        self.counts.setTextFormat(Qt.TextFormat.RichText)
        self.need = QLabel()
        self.need.setWordWrap(True)
        self.need.setStyleSheet("color: #a15c00;")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setStyleSheet("color: #555;")
        self.verdict = QLabel("")
        self.verdict.setWordWrap(True)
        self.verdict.setTextFormat(Qt.TextFormat.RichText)

    def _build_buttons(self) -> QDialogButtonBox:
        """Train, Cancel, Use the new model, Roll back (connected); returns the Close box."""
        self.train_button = QPushButton("Train")
        self.train_button.setDefault(True)
        self.train_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel training")
        self.cancel_button.clicked.connect(self.cancel)
        self.use_button = QPushButton("Use the new model")
        self.use_button.clicked.connect(self.use_new_model)
        self.rollback_button = QPushButton("Roll back to the previous model")
        self.rollback_button.clicked.connect(self.roll_back)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        return close

    def _lay_out(self, close: QDialogButtonBox) -> None:
        buttons = QHBoxLayout()
        buttons.addWidget(self.train_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        buttons.addWidget(self.use_button)
        buttons.addWidget(self.rollback_button)
        layout = QVBoxLayout(self)
        for widget in (self.intro, self.counts, self.need, self.progress, self.status, self.table,
                       self.verdict):
            layout.addWidget(widget)
        layout.addStretch(1)
        layout.addLayout(buttons)
        layout.addWidget(close)

    # -- state ----------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.worker is not None

    def refresh(self) -> None:
        """Count the corrections again (and say whether training may start; not when the library cannot
        be read: that is said in the dialog and, with "Repair library…", in the window's banner)."""
        try:
            counts = self.corrections.counts()
        except LIBRARY_FAILURES as error:
            self.role_count = self.function_count = 0
            self.counts.setText(html.escape(self.corrections.report(error, NOT_READ), quote=False))
            self.need.setVisible(False)
            self._update()
            return
        self.role_count, self.function_count = counts.role, counts.function
        self.counts.setText(f"Your library holds <b>{counts.role}</b> role correction"
                            f"{'s' if counts.role != 1 else ''} and <b>{counts.function}</b> function "
                            f"correction{'s' if counts.function != 1 else ''}.")
        missing = MIN_ROLE_CORRECTIONS - counts.role
        self.need.setText(
            f"{missing} more role correction{'s' if missing != 1 else ''} needed: training needs at least "
            f"{MIN_ROLE_CORRECTIONS}. Right-click a sentence on the page (or select it and press "
            "Alt+1…Alt+6) to correct its role." if missing > 0 else "")
        if not can_train():
            self.need.setText(TRAINING_MISSING)
        self.need.setVisible(missing > 0 or not can_train())
        self._update()

    def _update(self) -> None:
        enough = self.role_count >= MIN_ROLE_CORRECTIONS and can_train()
        self.train_button.setEnabled(enough and not self.running)
        self.train_button.setToolTip("" if enough else self.need.text())
        self.cancel_button.setVisible(self.running)
        self.progress.setVisible(self.running or self.report is not None)
        accepted = self.report is not None and bool(self.report.accepted) and self.out is not None
        in_use = self.out is not None and self.switch.current() == str(self.out)
        self.use_button.setEnabled(accepted and not in_use and not self.running)
        self.rollback_button.setEnabled(self.switch.can_roll_back and not self.running)
        self.table.setVisible(self.report is not None)

    # -- the job --------------------------------------------------------------------------
    def start(self) -> bool:
        """Start training (False when one runs already or there are too few corrections)."""
        if self.running or any(label == JOB_LABEL for label in self.tracker.labels()):
            self.raise_()
            return False
        self.refresh()
        if self.role_count < MIN_ROLE_CORRECTIONS or not can_train():
            return False
        try:
            corrections = self.corrections.all()
        except LIBRARY_FAILURES as error:
            self.status.setText(self.corrections.report(error, NOT_READ))
            return False
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.out = models_dir() / f"corrections-{stamp}"
        request = TrainingRequest(bundle=self._bundle(), corrections=corrections, out=self.out,
                                  work=models_dir() / "work", threads=self.threads)
        request.work.mkdir(parents=True, exist_ok=True)
        self.request = request
        self.report = None
        self.table.setRowCount(0)
        self.verdict.setText("")
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.status.setText("Starting…")
        # The worker thread only waits on the child process (issue 26): no training in this process.
        worker = Worker(run_training, request, self.training_target, name="train corrections")
        worker.progress.connect(self._on_progress)
        worker.result.connect(self._on_result)
        worker.error.connect(self._on_error)
        worker.cancelled.connect(self._on_cancelled)
        worker.finished.connect(self._on_finished)
        self.worker = worker
        self._started = time.monotonic()
        self.tracker.start(worker, JOB_LABEL)
        self._update()
        return True

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
            self.status.setText("Cancelling… (stopping the training process)")
            self.cancel_button.setEnabled(False)

    def _on_progress(self, done: int, total: int, message: str) -> None:
        """A measured report moves the bar (never back); one without a total (0: the last step, whose
        parity checks say nothing of how far they are) makes it a moving bar, the step named."""
        if total > 0:
            value = int(1000 * done / total)
            self.progress.setRange(0, 1000)
            self.progress.setValue(max(value, self.progress.value()))
        else:
            self.progress.setRange(0, 0)
        self.status.setText(message[:1].upper() + message[1:] if message else "")

    def _on_result(self, report: TrainingOutcome) -> None:
        self.report = report
        self.progress.setRange(0, 1000)
        self.progress.setValue(1000)
        minutes = (time.monotonic() - self._started) / 60
        self.status.setText(f"Trained on {report.corrections.get('trained_on', '?')} corrections, "
                            f"{report.corrections.get('held_out', '?')} held out ({minutes:.1f} min).")
        self._show_report(report)

    def _on_error(self, error: Exception) -> None:
        self._discard_unfinished()
        log.warning("training on corrections failed: %s", error)
        self.status.setText(f"Training failed: {one_line(error)}")

    def _on_cancelled(self) -> None:
        self._discard_unfinished()
        self.status.setText("Training was cancelled; the model in use is unchanged.")

    def _on_finished(self) -> None:
        """The worker's last signal: the dialog's state is final before ``finishedRun`` tells anyone."""
        self.worker = None
        self.cancel_button.setEnabled(True)
        self._update()
        self.finishedRun.emit(self.report)

    def _discard_unfinished(self) -> None:
        """Remove this run's own unfinished bundle (never one in use or from before); the child process
        has been stopped by then (``core.procjobs`` joins it before the worker reports)."""
        request, self.request, self.out = self.request, None, None
        if request is not None and request.out.parent == models_dir():
            discard_unfinished(request, keep=lambda out: self.switch.current() == str(out))

    def _show_report(self, report: TrainingOutcome) -> None:
        names = list(report.before) + [n for n in report.after if n not in report.before]
        self.table.setRowCount(len(names))
        for row, name in enumerate(names):
            before, after = report.before.get(name), report.after.get(name)
            change = "" if before is None or after is None else f"{after - before:+.1f}"
            cells = [name, _percent(before), _percent(after), change]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)
        self.table.resizeRowsToContents()
        header = self.table.horizontalHeader().sizeHint().height()
        self.table.setFixedHeight(header + 2 * self.table.frameWidth()
                                  + sum(self.table.rowHeight(r) for r in range(len(names))) + 2)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        if report.accepted:
            self.verdict.setText("<b style='color:#1b7a2e'>Not worse on the standard dev sets</b> — you can "
                                 "use the new model now; the model in use is kept and one click rolls back.")
        else:
            self.verdict.setText(f"<b style='color:#a11'>Not offered</b>: the new model is {report.reason}. "
                                 "The model in use stays; more (and more varied) corrections may help.")

    # -- the swap -------------------------------------------------------------------------
    def use_new_model(self) -> bool:
        if self.report is None or not self.report.accepted or self.out is None:
            return False
        self.switch.use(self.out)
        self.status.setText(f"Now using the new model ({self.out.name}); the open paper is labelled again.")
        return True

    def roll_back(self) -> bool:
        done = self.switch.roll_back()
        if done:
            self.status.setText("Rolled back to the previous model.")
        return done
