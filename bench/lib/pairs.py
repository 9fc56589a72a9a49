"""Shared machinery of the bench/vs-* scripts: the ratio of two tools' medians over
alternating pairs, its 95% bootstrap interval, and the verdict it allows.

Each bench runs its rows as pairs (one run of each tool, the order swapped from pair to pair)
and calls `compare` with the per-pair figures of both tools (higher is better)."""

import random
import statistics

DRAWS = 2000  # bootstrap resamples per row


def interval(ours, theirs, seed):
    """95% bootstrap interval of median(ours) / median(theirs), the pairs resampled whole."""
    pairs = list(zip(ours, theirs))
    rng = random.Random(seed)  # the same data prints the same interval
    ratios = []
    for _ in range(DRAWS):
        draw = [rng.choice(pairs) for _ in pairs]
        ratios.append(statistics.median(a for a, _ in draw) / statistics.median(b for _, b in draw))
    ratios.sort()
    return ratios[DRAWS // 40], ratios[DRAWS - 1 - DRAWS // 40]


def verdict(lo, hi):
    """faster when the interval lies above 1, slower when below, tie when it holds 1."""
    return "faster" if lo > 1 else "slower" if hi < 1 else "tie"


def compare(row, ours, theirs):
    """(median ours, median theirs, ratio, lo, hi, verdict) of one row."""
    a, b = statistics.median(ours), statistics.median(theirs)
    lo, hi = interval(ours, theirs, row)
    return a, b, a / b, lo, hi, verdict(lo, hi)
