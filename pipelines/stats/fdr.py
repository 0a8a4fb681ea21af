"""Benjamini-Hochberg: the false discovery rate over every entity tested in one night's audit.

The tests of one night are positively dependent (a table's 7-day window contains its night; a
dealer's wagers are some table's wagers), and BH controls the FDR under that positive regression
dependence (Benjamini & Yekutieli 2001, PRDS), so the plain step-up procedure is used; under the
global null (a fair floor) it also bounds the chance of any flag at all by the level.
"""

from __future__ import annotations

import numpy as np


def bh_adjust(p: np.ndarray) -> np.ndarray:
    """BH-adjusted p-values (q-values): q_(i) = min_{j >= i} p_(j) m / j, capped at 1; NaN stays NaN."""
    p = np.asarray(p, dtype=float)
    q = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    m = int(ok.sum())
    if m == 0:
        return q
    pv = p[ok]
    order = np.argsort(pv, kind="mergesort")
    ranked = pv[order] * m / np.arange(1, m + 1)
    ranked = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(ranked, 1.0)
    q[ok] = out
    return q


def bh_reject(p: np.ndarray, level: float) -> np.ndarray:
    """Which hypotheses BH rejects at ``level`` (q <= level)."""
    return bh_adjust(p) <= level
