"""UI-thread responsiveness probe: a timer that should fire every 10 ms records the real gaps.

If the event loop is blocked (a long computation or a long GIL hold on the UI thread), the
timer fires late; the largest gap and the 99th percentile say how long the UI froze at worst.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from PySide6.QtCore import QObject, Qt, QTimer


@dataclass(frozen=True)
class LatencyStats:
    samples: int
    interval_ms: float
    max_ms: float
    p99_ms: float
    p95_ms: float
    mean_ms: float
    over_100ms: int  # gaps longer than 100 ms

    def to_dict(self) -> dict[str, float]:
        return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100]); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 100))))
    return ordered[rank - 1]


class LatencyProbe(QObject):
    def __init__(self, interval_ms: int = 10, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.interval_ms = interval_ms
        self.gaps_ms: list[float] = []
        self._last = 0.0
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self.gaps_ms = []
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> LatencyStats:
        self._timer.stop()
        return self.stats()

    @property
    def running(self) -> bool:
        return self._timer.isActive()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps_ms.append((now - self._last) * 1000.0)
        self._last = now

    def stats(self) -> LatencyStats:
        gaps = self.gaps_ms
        return LatencyStats(
            samples=len(gaps),
            interval_ms=float(self.interval_ms),
            max_ms=max(gaps, default=0.0),
            p99_ms=percentile(gaps, 99),
            p95_ms=percentile(gaps, 95),
            mean_ms=(sum(gaps) / len(gaps)) if gaps else 0.0,
            over_100ms=sum(1 for g in gaps if g > 100.0),
        )
