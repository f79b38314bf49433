"""Vectorised helpers over runs of equal keys in sorted arrays, shared by the schedulers."""

from __future__ import annotations

import numpy as np


def segment_cumsum(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Inclusive running sum of ``values``, restarted wherever ``keys`` changes (keys sorted)."""
    total = np.cumsum(values)
    first = np.r_[True, keys[1:] != keys[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(keys.size), 0))
    return total - (total - values)[start]
