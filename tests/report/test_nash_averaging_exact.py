"""Nash averaging's maximum-entropy equilibrium is exact (issue 33: it was only approximately
the maximum-entropy one, 0.5007 / 0.2487 where the answer is 0.5 / 0.25)."""

from __future__ import annotations

import numpy as np
from numpy.testing import assert_allclose

from distbench.report.ratings import nash_average

RPS = np.array([
    [0.0, -1.0, 2.0, 0.5],
    [1.0, 0.0, -1.0, 0.5],
    [-2.0, 1.0, 0.0, 0.5],
    [-0.5, -0.5, -0.5, 0.0],
])


def _copies(meta: np.ndarray, *ks: int) -> np.ndarray:
    idx = list(range(meta.shape[0])) + list(ks)
    return meta[np.ix_(idx, idx)]


def test_rock_paper_scissors_masses_are_exact_to_1e_9() -> None:
    """The issue's example: 0.5 / 0.25 / 0.25 exactly (0.5007 / 0.2487 before)."""
    nash = nash_average(RPS)
    assert nash.max_entropy
    assert_allclose(nash.mass, [0.25, 0.5, 0.25, 0.0], atol=1e-9)
    # paper tripled: its half splits in three; rock and scissors keep a quarter each
    grown = nash_average(_copies(RPS, 1, 1))
    assert_allclose(grown.mass, [0.25, 1 / 6, 0.25, 0.0, 1 / 6, 1 / 6], atol=1e-9)
    # the weak player copied: still no mass
    assert_allclose(nash_average(_copies(RPS, 3)).mass, [0.25, 0.5, 0.25, 0.0, 0.0], atol=1e-9)


def test_rock_paper_scissors_with_a_copy_and_a_beaten_player() -> None:
    rps = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    assert_allclose(nash_average(_copies(rps, 2)).mass, [1 / 3, 1 / 3, 1 / 6, 1 / 6], atol=1e-9)
    # a third player beaten by two drawing players: the face is {p2 = 0}, split 1/2, 1/2
    meta = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [-1.0, -1.0, 0.0]])
    assert_allclose(nash_average(meta).mass, [0.5, 0.5, 0.0], atol=1e-9)
    assert_allclose(nash_average(_copies(meta, 1)).mass, [1 / 3, 1 / 3, 0.0, 1 / 3], atol=1e-9)


def test_an_inequality_of_the_face_binds() -> None:
    """Players 0 and 1 draw; player 2 beats 0 by 2 and loses to 1 by 1, so an equilibrium
    needs p1 >= 2 p0: the entropy's maximum on the face is on that boundary, (1/3, 2/3, 0)."""
    meta = np.array([[0.0, 0.0, -2.0], [0.0, 0.0, 1.0], [2.0, -1.0, 0.0]])
    nash = nash_average(meta)
    assert nash.max_entropy
    assert_allclose(nash.mass, [1 / 3, 2 / 3, 0.0], atol=1e-9)
    assert_allclose(nash.rating, [-0.0, 0.0, 0.0], atol=1e-9)


def test_random_faces_satisfy_the_optimality_conditions() -> None:
    """On random meta-games with copies (continua of equilibria), the result is an equilibrium
    and no feasible direction raises the entropy (checked against many random equilibria)."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(33_0604)
    for _ in range(20):
        k = int(rng.integers(2, 5))
        base = rng.integers(-3, 4, (k, k)).astype(float)
        base = base - base.T
        meta = _copies(base, *rng.integers(0, k, 2).tolist())
        n = meta.shape[0]
        nash = nash_average(meta)
        assert nash.max_entropy
        assert (meta @ nash.mass).max() <= 1e-9
        h = nash.entropy
        for _ in range(10):  # other equilibria: random LP objectives over the face
            res = linprog(rng.normal(size=n), A_ub=meta, b_ub=np.zeros(n),
                          A_eq=np.ones((1, n)), b_eq=[1.0], bounds=[(0, None)] * n,
                          method="highs")
            q = res.x
            for t in (1e-3, 1e-2, 0.1, 0.5):
                mix = (1 - t) * nash.mass + t * q
                w = mix[mix > 0]
                assert -(w * np.log(w)).sum() <= h + 1e-12
