"""What the training child reports (no Qt, no torch): its steps named, and no progress bars on stderr.

``models.training.corrections.train_on_corrections`` gives its steps these parts of its progress:
reading and encoding the training sentences [0, 0.3], training the role heads [0.3, 0.8], then exporting,
checking and writing the new bundle [0.8, 1]. The last step reports only which sub-step it has started
(its parity checks took minutes on a loaded machine with the bar at 92 % under "Epoch 4/4 … about 0 s
left"); so :class:`TrainingSteps` says which step of three runs, and reports the last one as busy (a
total of 0: a moving bar in the dialog and the status bar) with its sub-step named.
"""

from __future__ import annotations

import os

from app.gui.job_progress import Forward, Part
from core.jobs import JobContext

#: (where the step ends in ``train_on_corrections``'s progress, what it is called)
STEPS = ((0.3, "reading and encoding the training sentences"), (0.8, "training the role heads"),
         (1.0, "checking and saving the new model"))


def step_words(number: int, message: str) -> str:
    """"Step 2 of 3, training the role heads: epoch 4/4 …"."""
    words = f"Step {number} of {len(STEPS)}, {STEPS[number - 1][1]}"
    return f"{words}: {message}" if message else words


def step_at(fraction: float) -> int:
    """The step (from 1) that starts at or runs through ``fraction`` of the training's progress."""
    return next((n for n, (end, _) in enumerate(STEPS, 1) if fraction < end), len(STEPS))


class TrainingSteps(Part):
    """The context given to ``train_on_corrections`` in the child: the first two steps on one forward
    scale, the last one busy; every message says its step (a ``child`` context's step is the one it
    starts: the training's last report, at the end of its part, is still the training's)."""

    def __init__(self, ctx: JobContext) -> None:
        super().__init__(ctx, lambda fraction, message: self._show(step_at(fraction), fraction, message))
        self.forward = Forward(ctx)

    def child(self, start: float, end: float) -> JobContext:
        number = step_at(start)
        return Part(self.parent, lambda fraction, message: self._show(number, fraction, message), start, end)

    def _show(self, number: int, fraction: float, message: str) -> None:
        if number == len(STEPS):  # it says which sub-step it starts, not how far it is
            self.parent.progress(0, 0, step_words(number, message))
        else:
            self.forward.report(fraction, step_words(number, message))


QUIET = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}


def quiet_progress_bars() -> None:
    """No tqdm bars ("Loading weights: 100%|███…") from this process on the GUI's terminal: the
    switches tqdm and huggingface_hub read when they are imported. The training child is a fresh
    process that sets them before it imports torch and transformers (only ``models.training`` may
    import those: tests/test_boundaries.py)."""
    os.environ.update(QUIET)
