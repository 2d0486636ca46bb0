"""The one percentile rule of Tandem's reports, for the Python benchmarks: nearest rank, exactly
as `percentile_sorted` and `median` in src/core/stats.hpp define it, so a median or p99 a script
computes is the one the runtime's own reports would give for the same samples
(tests/core/test_stats.cpp checks the C++ side with the same values).

Nearest rank: the value at rank ceil(q * n) (1-based) of the n sorted samples, the first for
q = 0, 0 when there is none. For an even count the median is the lower of the middle two.

>>> percentile([4.0, 1.0, 3.0, 2.0], 0.5)
2.0
>>> percentile([3.0, 1.0, 2.0], 0.5)
2.0
>>> [percentile([float(v) for v in range(1, 101)], q) for q in (0.0, 0.5, 0.95, 0.99, 1.0)]
[1.0, 50.0, 95.0, 99.0, 100.0]
>>> percentile([], 0.5)
0.0
>>> rank_index(4, 0.5), rank_index(5, 0.5), rank_index(1, 0.99)
(1, 2, 0)
>>> median([3.0, 1.0, 2.0]), median([4.0, 1.0, 3.0, 2.0]), median([7.5]), median([])
(2.0, 2.0, 7.5, 0.0)
"""
import math

RULE = "nearest rank"


def rank_index(n, q):
    """0-based index of the nearest-rank q-percentile among n sorted samples (n >= 1);
    `percentile_index` in src/core/stats.hpp."""
    rank = math.ceil(q * n)
    return min(0 if rank < 1 else rank - 1, n - 1)


def percentile(samples, q):
    """Nearest-rank percentile (q in [0, 1]) of the samples; 0.0 when there is none."""
    ordered = sorted(samples)
    if not ordered:
        return 0.0
    return float(ordered[rank_index(len(ordered), q)])


def median(samples):
    """The 0.5-percentile: the middle value, the lower middle one for an even count."""
    return percentile(samples, 0.5)
