"""The exact tail of a sum at the edge of its support (``MoneySums.edge_tails``): the product of each draw's chance of
its extreme value, with draws padded by atoms of probability 0 as the games' draws are (padded to the widest payout
distribution of a window's entities)."""

import numpy as np

from pipelines.stats.distributions import MoneySums


def _sums(x, p, c):
    rows = len(x)
    return MoneySums(ent=np.zeros(rows, dtype=np.int64), x=np.asarray(x, dtype=float), p=np.asarray(p, dtype=float),
                     a=np.ones(rows), c=np.asarray(c, dtype=float), n=1)


def test_every_draw_at_its_top_is_the_product_of_the_tops_chances():
    # 3 draws paying +1 with 0.45, -1 with 0.55; and 2 draws paying +5 with 0.1, 0 with 0.2, -1 with 0.7
    sums = _sums([[1.0, -1.0, 0.0], [5.0, 0.0, -1.0]], [[0.45, 0.55, 0.0], [0.1, 0.2, 0.7]], [3, 2])
    assert np.isclose(sums.edge_tails(np.array([True]))[0], 0.45 ** 3 * 0.1 ** 2, rtol=1e-12)
    assert np.isclose(sums.edge_tails(np.array([False]))[0], 0.55 ** 3 * 0.7 ** 2, rtol=1e-12)


def test_a_padded_atom_is_never_extreme():
    # the first draw padded with an atom of probability 0 at a value beyond its support: before the fix its -inf
    # made the tolerance infinite and the tail 1 (an entity whose every wager won was never flagged)
    padded = _sums([[1.0, -1.0, 9.0]], [[0.45, 0.55, 0.0]], [4])
    plain = _sums([[1.0, -1.0]], [[0.45, 0.55]], [4])
    for up in (True, False):
        got = padded.edge_tails(np.array([up]))[0]
        assert got < 1.0
        assert got == plain.edge_tails(np.array([up]))[0]
