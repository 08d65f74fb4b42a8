"""A game's decision times as a histogram on a log scale.

The referee makes one per seat and game (``hist`` in a game line: the first
bucket, then the count in each bucket from there; four buckets per doubling,
so a bucket is 19% wide), and the tournament adds them up
(``arena.tournament.times``): a bot's percentiles over a whole tournament come
out within half a bucket (about 9%).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

BUCKETS_PER_DOUBLING: Final = 4


def bucket(ms: float) -> int:
    """The histogram bucket of a time in milliseconds (bucket 0 holds all up to 1 us)."""
    us = ms * 1000.0
    return max(0, math.floor(BUCKETS_PER_DOUBLING * math.log2(us))) if us > 1.0 else 0


def bucket_middle(index: int) -> float:
    """The geometric middle of a bucket, in milliseconds."""
    return 2.0 ** ((index + 0.5) / BUCKETS_PER_DOUBLING) / 1000.0


def histogram(times_ms: Sequence[float]) -> list[int]:
    """``[first bucket, count, count, ...]``, dense from the first bucket used to the last."""
    if not times_ms:
        return []
    # bucket() inlined: the referee makes two or more of these every game.
    log2, floor = math.log2, math.floor
    buckets = [max(0, floor(BUCKETS_PER_DOUBLING * log2(t * 1000.0))) if t * 1000.0 > 1.0
               else 0 for t in times_ms]
    low = min(buckets)
    counts = [0] * (max(buckets) - low + 1)
    for b in buckets:
        counts[b - low] += 1
    return [low, *counts]
