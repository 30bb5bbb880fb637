"""Invariance metrics: does a model's answer depend on how the game is written?

Inputs are answers to several presentations of the same games (:mod:`.presentation`), each
answer as a vector over the model's actions, both *underlying* (mapped back to the original
game) and *presented* (by the position the model saw): a pure answer is a one-hot vector, a
mixed one its strategy. Per game, the base presentation (``none``) gives the model's
reference choice distribution ``q_g`` (the mean of its valid base answers over underlying
actions). For each other presentation ``p``:

- **consistency** (does the model pick the same underlying action?): per game with valid
  answers in both, pure answers: ``sum_a q_g(a) q_{g,p}(a)``, the probability that a random
  base answer and a random answer under ``p`` pick the same underlying action (1.0 for a
  deterministic invariant player; ``1/m`` for a uniformly random one); mixed answers:
  ``1 - TV(q_g, q_{g,p})`` (1 minus the total-variation distance of the mean strategies). The
  figure is the mean over games, with a bootstrap interval over games.
- **position-only consistency** (the chance level of the presentation): the share of positions
  that show the same underlying action as in the base presentation, averaged over the same
  games: what a player that chooses by position alone scores in expectation (``1/m`` for
  uniform label permutations, 1 for presentations that keep the order). A player that always
  answers the first label scores ``1[row_order_p[0] = row_order_base[0]]`` per game.
- **position bias** (only where the order changes: ``labels``): over the valid answers under
  ``p`` of games with a base reference, the observed share of each position ``k``,
  ``obs_k``, against the share the presentation order predicts for an invariant player,
  ``pred_k = mean over answers of q_g(row_order[k])`` (the model's own base choices, moved
  to where ``p`` shows them). The bias of position ``k`` is
  ``(obs_k - pred_k) / (1 - pred_k)`` when ``obs_k >= pred_k`` (the share of the room above
  the prediction taken), else ``(obs_k - pred_k) / pred_k``: in [-1, 1], 0 for an invariant
  player, 1.0 for a player that always answers position ``k``. The headline
  ``position_bias`` is position 1's (the first label, where models lean); every position's is
  kept. Intervals: percentile bootstrap resampling whole games (answers of a game share its
  presentation), seeded.

Family-neutral: it takes arrays, so ``bimatrix`` can call it on its own answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from distbench.games.answers.presentation import BASE, PERTURBATIONS
from distbench.report.bootstrap import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from distbench.report.stats import bootstrap_diff_ci

__all__ = ["invariance_records", "position_bias"]


def _num(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def _ci(lo_hi: tuple[float, float] | None) -> list[float | None] | None:
    return None if lo_hi is None else [_num(lo_hi[0]), _num(lo_hi[1])]


def _bias(obs: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Normalised bias per position (module docstring), NaN where undefined."""
    with np.errstate(invalid="ignore", divide="ignore"):
        up = (obs - pred) / (1.0 - pred)
        down = (obs - pred) / pred
        out = np.where(obs >= pred, up, down)
    return np.where(np.isclose(obs, pred, rtol=0, atol=1e-12), 0.0, out)


def position_bias(obs_counts: np.ndarray, pred_counts: np.ndarray, totals: np.ndarray, *,
                  resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
                  ) -> dict[str, Any]:
    """Position shares and biases with bootstrap intervals over games.

    Args:
        obs_counts: (G, m) per game, the summed presented answer vectors (counts of each
            chosen position for pure answers).
        pred_counts: (G, m) per game, the summed predictions ``q_g(row_order[k])``.
        totals: (G,) per game, the number of answers summed.
        resamples: Bootstrap resamples.
        seed: Seed of the resampling.

    Returns:
        ``shares``, ``predicted``, ``bias`` (per position), ``bias_ci95`` (per position).
    """
    obs_counts = np.asarray(obs_counts, dtype=np.float64)
    pred_counts = np.asarray(pred_counts, dtype=np.float64)
    totals = np.asarray(totals, dtype=np.float64)
    total = totals.sum()
    obs = obs_counts.sum(axis=0) / total
    pred = pred_counts.sum(axis=0) / total
    bias = _bias(obs, pred)
    games = len(totals)
    cis: list[list[float | None] | None] = [None] * obs.size
    if games >= 2:
        rng = np.random.default_rng(seed)
        weights = np.zeros((resamples, games))
        draws = rng.integers(0, games, size=(resamples, games))
        np.add.at(weights, (np.repeat(np.arange(resamples), games), draws.ravel()), 1.0)
        n = weights @ totals
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = _bias((weights @ obs_counts) / n[:, None], (weights @ pred_counts) / n[:, None])
        lo, hi = np.nanquantile(boot, [0.025, 0.975], axis=0)
        cis = [[_num(a), _num(b)] for a, b in zip(lo, hi, strict=True)]
    return {"shares": [_num(x) for x in obs], "predicted": [_num(x) for x in pred],
            "bias": [_num(x) for x in bias], "bias_ci95": cis}


def invariance_records(
    game_ids: Sequence[Any],
    presentations: Sequence[str],
    underlying: np.ndarray,
    presented: np.ndarray,
    row_orders: np.ndarray,
    valid: np.ndarray,
    *,
    kind: str = "pure",
) -> list[dict[str, Any]]:
    """Consistency and position bias of each non-base presentation against the base one.

    Args:
        game_ids: (T,) each answer's game.
        presentations: (T,) each answer's presentation name (``none`` for the base).
        underlying: (T, m) the answer over underlying actions (one-hot for a pure answer).
        presented: (T, m) the answer over presented positions.
        row_orders: (T, m) the presentation order of each answer (identity for the base).
        valid: (T,) the answer is valid (invalid rows' vectors are ignored).
        kind: ``pure`` (consistency = agreement probability) or ``mixed`` (1 - TV).

    Returns:
        One record per presentation other than the base, in :data:`PERTURBATIONS` order:
        ``presentation``, ``games`` (with a valid answer in both), ``consistency`` and
        ``consistency_ci95``, ``position_only_consistency``, ``order_changed``, and where the
        order changed ``position_bias`` (position 1's) with ``position_bias_ci95`` and the per
        position ``position_shares``, ``predicted_shares``, ``position_bias_by_position``,
        ``position_bias_by_position_ci95``.
    """
    if kind not in ("pure", "mixed"):
        raise ValueError(f"kind must be 'pure' or 'mixed', got {kind!r}")
    names = np.asarray(presentations, dtype=object)
    keys, game = np.unique(np.asarray(game_ids, dtype=object).astype(str), return_inverse=True)
    under = np.asarray(underlying, dtype=np.float64)
    shown = np.asarray(presented, dtype=np.float64)
    orders = np.asarray(row_orders, dtype=np.int64)
    ok = np.asarray(valid, dtype=bool)
    num_games, m = len(keys), under.shape[1]

    def per_game(rows: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per game over ``rows``: the valid answers' sums (underlying, presented), their
        count, the game's order (its rows share one) and whether it has any row."""
        use = rows & ok
        sums = np.zeros((num_games, m))
        shown_sums = np.zeros((num_games, m))
        np.add.at(sums, game[use], under[use])
        np.add.at(shown_sums, game[use], shown[use])
        counts = np.bincount(game[use], minlength=num_games).astype(np.float64)
        order = np.tile(np.arange(m), (num_games, 1))
        order[game[rows]] = orders[rows]
        present = np.bincount(game[rows], minlength=num_games) > 0
        return sums, shown_sums, counts, order, present

    base_sums, _, base_counts, base_order, base_present = per_game(names == BASE)
    with np.errstate(invalid="ignore", divide="ignore"):
        reference = base_sums / base_counts[:, None]
    out = []
    order_of = {p: k for k, p in enumerate(PERTURBATIONS)}
    for name in sorted(set(names.tolist()) - {BASE}, key=lambda p: (order_of.get(p, 99), p)):
        sums, shown_sums, counts, order, present = per_game(names == name)
        changed = bool((present & base_present & (order != base_order).any(axis=1)).any())
        used = present & (counts > 0) & (base_counts > 0)
        q_base = reference[used]
        with np.errstate(invalid="ignore", divide="ignore"):
            q_here = sums[used] / counts[used, None]
        if kind == "pure":
            agree = (q_base * q_here).sum(axis=1)
        else:
            agree = 1.0 - 0.5 * np.abs(q_base - q_here).sum(axis=1)
        fixed = (order[used] == base_order[used]).mean(axis=1)
        record: dict[str, Any] = {"presentation": name, "games": int(used.sum()),
                                  "order_changed": changed}
        if agree.size:
            record["consistency"] = _num(agree.mean())
            record["consistency_ci95"] = _ci(bootstrap_diff_ci(agree)) if agree.size > 1 \
                else None
            record["position_only_consistency"] = _num(fixed.mean())
        else:
            record.update(consistency=None, consistency_ci95=None,
                          position_only_consistency=None)
        if changed and agree.size:
            predicted = counts[used, None] * np.take_along_axis(q_base, order[used], axis=1)
            bias = position_bias(shown_sums[used], predicted, counts[used])
            record["position_bias"] = bias["bias"][0]
            record["position_bias_ci95"] = bias["bias_ci95"][0]
            record["position_shares"] = bias["shares"]
            record["predicted_shares"] = bias["predicted"]
            record["position_bias_by_position"] = bias["bias"]
            record["position_bias_by_position_ci95"] = bias["bias_ci95"]
        else:
            record.update(position_bias=None, position_bias_ci95=None)
        out.append(record)
    return out
