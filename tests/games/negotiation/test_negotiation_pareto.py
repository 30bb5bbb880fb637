"""The Pareto kernel against a brute-force pure-Python reference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from distbench.games.negotiation.instances import generate_instances
from distbench.games.negotiation.pareto import pareto_batch


def reference(counts, va, vb, outcome):
    splits = []
    for x in itertools.product(*(range(c + 1) for c in counts)):
        sa = sum(xi * v for xi, v in zip(x, va, strict=True))
        sb = sum((c - xi) * v for xi, c, v in zip(x, counts, vb, strict=True))
        splits.append((sa, sb))
    pairs = set(splits)
    frontier = {p for p in pairs
                if not any(q[0] >= p[0] and q[1] >= p[1] and q != p for q in pairs)}
    out = {
        "max_sum": max(a + b for a, b in splits),
        "max_a": max(a for a, _ in splits),
        "max_b": max(b for _, b in splits),
        "frontier": len(frontier),
    }
    oa, ob = outcome
    gains = [max(a - oa, b - ob) for a, b in splits if a >= oa and b >= ob]
    out["improve"] = max(gains) if gains else 0
    out["optimal"] = not any(a >= oa and b >= ob and (a > oa or b > ob) for a, b in splits)
    return out


def test_kernel_agrees_with_brute_force_on_random_instances():
    insts = generate_instances(99, 0, 400)
    rng = np.random.default_rng(0)
    # Outcomes: random partial allocations (compatible proposals) and (0, 0) (a lose).
    oa, ob = [], []
    for k, inst in enumerate(insts):
        if k % 5 == 0:
            oa.append(0)
            ob.append(0)
            continue
        xa = [int(rng.integers(0, c + 1)) for c in inst.counts]
        xb = [int(rng.integers(0, c - a + 1)) for c, a in zip(inst.counts, xa, strict=True)]
        oa.append(sum(a * v for a, v in zip(xa, inst.values_a, strict=True)))
        ob.append(sum(b * v for b, v in zip(xb, inst.values_b, strict=True)))
    res = pareto_batch([i.counts for i in insts], [i.values_a for i in insts],
                       [i.values_b for i in insts], oa, ob)
    for k, inst in enumerate(insts):
        ref = reference(inst.counts, inst.values_a, inst.values_b, (oa[k], ob[k]))
        assert res.max_sum[k] == ref["max_sum"]
        assert res.max_a[k] == ref["max_a"] == 10
        assert res.max_b[k] == ref["max_b"] == 10
        assert res.frontier_size[k] == ref["frontier"]
        assert res.max_improvement[k] == ref["improve"]
        assert bool(res.pareto_optimal[k]) == ref["optimal"]


def test_hand_computed_instance():
    # a takes 1 of type 0 and type 1 (2 + 6 = 8), b one of type 0 and two of type 2 (1 + 4 = 5).
    res = pareto_batch([(2, 1, 3)], [(2, 6, 0)], [(1, 2, 2)], [8], [5])
    assert res.max_sum.tolist() == [16]  # (10, 6): each type to whoever values it more
    assert res.max_improvement.tolist() == [2] and res.pareto_optimal.tolist() == [False]


def test_no_outcome_gives_minus_one():
    res = pareto_batch([(1, 1, 3)], [(4, 3, 1)], [(1, 3, 2)])
    assert res.max_improvement.tolist() == [-1] and not res.pareto_optimal[0]


@pytest.mark.parametrize(
    "args, match",
    [
        (([(1, 2)], [(1, 2)], [(1, 2, 3)]), "different lengths"),
        (([(1, 2)], [(1, -2)], [(1, 2)]), "non-negative"),
        (([(1, 2)], [(1, 2)], []), "same length"),
        (([(3, 3, 3, 3, 3)], [(0,) * 5], [(0,) * 5]), "more than 256 splits"),
    ],
)
def test_bad_input_is_refused(args, match):
    with pytest.raises(ValueError, match=match):
        pareto_batch(*args)
