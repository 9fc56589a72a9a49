"""Shared machinery of the bench/vs-* scripts: the ratio of two tools' medians over
alternating pairs, its 95% bootstrap interval, and the verdict it allows.

Each bench runs its rows as pairs (one run of each tool, the order swapped from pair to pair)
and calls `compare` with the per-pair figures of both tools (higher is better)."""

import math
import random
import statistics
import sys
from collections import defaultdict

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


def table(results, ours, theirs, unit, floor=None, median=False):
    """Prints the rows of a results file ("ROW TOOL VALUE" lines, TOOL `ours` or `theirs`) as
    a table of medians, ratio, interval and verdict, then how many rows are slower beyond
    their interval (or, with `floor`, whose interval's upper bound is below floor x the
    reference), with `median` the median of the rows' ratios (3 decimals) and, last, the
    worst ratio. Returns the worst ratio."""
    runs = defaultdict(lambda: defaultdict(list))
    order = []
    for line in open(results):
        row, tool, value = line.split()
        if row not in order:
            order.append(row)
        runs[row][tool].append(float(value))
    width = max([len(r) for r in order] + [3])
    print(f"{'row':<{width}} {ours:>11} {theirs:>11} {'ratio':>6} {'95% interval':>13} {'verdict':>8}  ({unit})")
    worst, short, ratios = math.inf, [], []
    for row in order:
        a, b = runs[row]["ours"], runs[row]["theirs"]
        if len(a) != len(b) or not a:
            print(f"{row:<{width}} skipped: {len(a)} runs against {len(b)}")
            continue
        ma, mb, ratio, lo, hi, verdict = compare(row, a, b)
        worst = min(worst, ratio)
        ratios.append(ratio)
        if (floor is None and verdict == "slower") or (floor is not None and hi < floor):
            short.append(row)
        print(f"{row:<{width}} {ma:>11.0f} {mb:>11.0f} {ratio:>6.3f} {f'{lo:.3f}-{hi:.3f}':>13} {verdict:>8}")
    what = "slower beyond the 95% interval" if floor is None else f"below {floor:.2f} of {theirs} at the interval's top"
    print(f"rows {what}: {len(short)}" + (f" ({' '.join(short)})" if short else ""))
    if median:
        m = f"{statistics.median(ratios):.3f}" if ratios else "n/a"
        print(f"median ratio {ours}/{theirs}: {m} over {len(ratios)} rows")
    print(f"worst ratio {ours}/{theirs}: {math.floor(round(worst * 100, 9)) / 100:.2f}")
    return worst


if __name__ == "__main__":
    # pairs.py [--median] RESULTS OURS THEIRS UNIT [FLOOR]
    args = [a for a in sys.argv[1:] if a != "--median"]
    table(args[0], args[1], args[2], args[3], float(args[4]) if len(args) > 4 else None,
          median="--median" in sys.argv[1:])
