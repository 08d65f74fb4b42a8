"""Decision times summed over many games: median, 99th percentile and max.

Each game line keeps, per seat, the count, median and max of its answer
times and a histogram on a log scale (``arena.decision_times``, made by the
referee).  Histograms add up across games, so a bot's percentiles over a
whole tournament come out within half a bucket (about 9%); the max is exact.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from arena.decision_times import bucket, bucket_middle, histogram

__all__ = ["TimeSummary", "bucket", "bucket_middle", "histogram", "time_summaries"]


class TimeSummary:
    """Adds up per-game summaries; ``percentile`` reads the summed histogram."""

    def __init__(self) -> None:
        self.n = 0
        self.max: float | None = None
        self.counts: dict[int, int] = {}
        self.without_hist = 0  # decisions of games stored before histograms
        self._medians: list[tuple[float, int]] = []

    def add(self, summary: Mapping[str, Any] | None) -> None:
        if not summary or not summary.get("n"):
            return
        n = int(summary["n"])
        self.n += n
        top = summary.get("max")
        if isinstance(top, (int, float)):
            self.max = top if self.max is None else max(self.max, top)
        hist = summary.get("hist")
        if hist:
            for offset, count in enumerate(hist[1:]):
                if count:
                    self.counts[hist[0] + offset] = self.counts.get(hist[0] + offset, 0) + count
        else:
            self.without_hist += n
            if isinstance(summary.get("median"), (int, float)):
                self._medians.append((float(summary["median"]), n))

    def percentile(self, q: float) -> float | None:
        """The q-th percentile (0-100) in ms; None without histograms."""
        total = sum(self.counts.values())
        if not total or self.without_hist:
            return None
        rank = math.ceil(q / 100.0 * total)
        seen = 0
        for index in sorted(self.counts):
            seen += self.counts[index]
            if seen >= max(rank, 1):
                return round(min(bucket_middle(index), self.max or math.inf), 3)
        return None

    def median(self) -> float | None:
        found = self.percentile(50)
        if found is not None or not self._medians:
            return found
        # Old lines: the median of the games' medians, weighted by their decisions.
        ordered = sorted(self._medians)
        half = sum(n for _, n in ordered) / 2
        seen = 0
        for value, n in ordered:
            seen += n
            if seen >= half:
                return value
        return ordered[-1][0]


def time_summaries(
    games: Iterable[Mapping[str, Any]], found: dict[str, TimeSummary] | None = None
) -> dict[str, TimeSummary]:
    """bot -> its decision times over the game lines (as in games.jsonl), added
    to ``found`` if given."""
    found = {} if found is None else found
    for game in games:
        per_seat = game.get("decision_ms") or []
        for name, summary in zip(game.get("seats", ()), per_seat, strict=False):
            found.setdefault(name, TimeSummary()).add(summary)
    return found
