"""The 95% interval of a mean (holdem/analysis/intervals.py): Student's t against its table,
the normal quantile for many samples, and the degenerate sample counts."""

import numpy as np
import pytest

from holdem.analysis.intervals import Z95, mean_ci, t95


def test_intervals_over_few_groups_use_students_t():
    known = {1: 12.7062, 2: 4.3027, 5: 2.5706, 6: 2.4469, 9: 2.2622, 19: 2.0930, 29: 2.0452,
             60: 2.0003, 120: 1.9799, 1000: 1.9623}     # Student's t, 97.5%
    for df, t in known.items():
        assert t95(df) == pytest.approx(t, abs=5e-4)
    assert all(t95(d) > t95(d + 1) for d in range(1, 200))
    assert t95(10 ** 7) == pytest.approx(1.96, abs=1e-3)
    mean, half = mean_ci([1.0, 2.0, 3.0, 4.0], student=True)    # sd 1.291, se 0.6455, t(3) 3.18
    assert mean == 2.5 and half == pytest.approx(3.1824 * np.sqrt(5 / 3) / 2, rel=1e-4)
    assert mean_ci([5.0], student=True) == (5.0, float("inf"))
    with pytest.raises(ValueError, match="degree of freedom"):
        t95(0)


def test_intervals_of_many_samples_use_the_normal_quantile_and_scale_both():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    mean, half = mean_ci(x, scale=10.0)
    assert mean == 25.0 and half == pytest.approx(Z95 * x.std(ddof=1) / 2 * 10.0, rel=1e-15)
    assert mean_ci(np.zeros(0)) == (0.0, float("inf"))
