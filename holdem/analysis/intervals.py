"""The 95% interval of a mean: the one helper behind every match and LBR figure.

:func:`mean_ci` gives the mean of independent samples (deals, or groups of deals' means) and
the half-width of its 95% confidence interval. A match or an LBR run has thousands of deals or
more, and takes the normal quantile 1.96; a re-solving run has few samples when its deals are
grouped by board (``--resolve-per-board``), and takes Student's t (:func:`t95`) with as many
degrees of freedom as it has samples less one.
"""

import numpy as np

Z95 = 1.96
"""The normal distribution's 97.5% quantile, to the two decimals the figures use."""

T95_SMALL = (12.7062, 4.3027, 3.1824, 2.7764)       # Student's t, 97.5%, 1-4 degrees of freedom


def t95(df):
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom: the half-width of a 95%
    interval in standard errors when the standard error is estimated from ``df + 1`` samples
    (1.96 is right only for many: ten boards' means need 2.26). Within 0.0005: a table below 5
    degrees of freedom, Hill's expansion in 1/df from there."""
    if df < 1:
        raise ValueError(f"a t quantile needs at least one degree of freedom, not {df}")
    if df <= len(T95_SMALL):
        return T95_SMALL[df - 1]
    z = 1.959963984540054
    terms = ((z ** 3 + z) / 4,
             (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96,
             (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384,
             (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160)
    return z + sum(g / df ** (k + 1) for k, g in enumerate(terms))


def mean_ci(samples, scale=1.0, student=False):
    """(mean, half-width of its 95% interval), floats, of independent ``samples`` (float64[n]),
    both times ``scale`` (e.g. mbb per chip). The half-width is ``Z95`` standard errors, or with
    ``student`` Student's t's (:func:`t95`, n - 1 degrees of freedom: for few samples). Fewer
    than two samples: an infinite half-width (and a mean of 0 for none)."""
    samples = np.asarray(samples, dtype=np.float64)
    n = samples.shape[0]
    if n < 2:
        return (float(samples.mean()) * scale if n else 0.0), float("inf")
    z = t95(n - 1) if student else Z95
    return (float(samples.mean()) * scale,
            float(z * float(samples.std(ddof=1)) / np.sqrt(n) * scale))
