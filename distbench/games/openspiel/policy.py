"""The model's behavioural policy per information state and its NashConv.

NashConv (OpenSpiel's ``nash_conv``: the sum over players of what a best response gains
against the policy) is the zero-sum matrix family's exploitability carried to sequential
games: 0 for an equilibrium. Two estimates:

- **from play** (``play`` mode): at each information state where the model moved, the share
  of its legal moves that chose each action (its forfeiting answers are not moves); at the
  information states it never reached, uniform. The interval is a percentile bootstrap over
  matches (:data:`RESAMPLES` resamples, fewer for large games: :data:`LARGE_RESAMPLES`), each
  resample's policy rebuilt from the matches drawn. From few samples the estimate is biased
  upward (a frequency of 1 where the policy is mixed); the interval says how far to trust it.
- **from next-token probabilities** (``logprob`` mode): one question per information state;
  the policy is the probabilities read there (a reading that is not ok counts as uniform, and
  the summary says how many were ok). Exact for the model (no interval).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from distbench.games.openspiel.reference import Reference, as_pyspiel
from distbench.games.openspiel.spiel import load_game, pyspiel

RESAMPLES = 200
LARGE_RESAMPLES = 40
LARGE_GAME = 200
"""Games with more information states than this get :data:`LARGE_RESAMPLES` (Leduc poker's
NashConv takes about 0.25 s)."""


def nash_conv(ref: Reference, policy: dict[str, dict[int, float]]) -> float:
    """NashConv of ``policy`` (missing information states uniform)."""
    game = load_game(ref.game)
    return float(pyspiel().nash_conv(game, as_pyspiel(policy, ref.infostates)))


def counts_policy(counts: dict[str, dict[int, float]]) -> dict[str, dict[int, float]]:
    """Action counts per information state -> frequencies."""
    out = {}
    for key, c in counts.items():
        total = sum(c.values())
        if total > 0:
            out[key] = {a: v / total for a, v in c.items()}
    return out


def play_nash_conv(ref: Reference, matches: Sequence[Sequence[tuple[str, int]]], *,
                   seed: int, level: float = 0.95
                   ) -> tuple[float | None, tuple[float, float] | None]:
    """NashConv of the policy seen in ``matches`` (per match, its (information state, action)
    moves) and its bootstrap interval over matches; (None, None) without a reference
    equilibrium or a move."""
    if ref.kind != "equilibrium" or not any(matches):
        return None, None

    def policy_of(chosen: Sequence[int]) -> dict[str, dict[int, float]]:
        counts: dict[str, dict[int, float]] = {}
        for i in chosen:
            for key, action in matches[i]:
                c = counts.setdefault(key, {})
                c[action] = c.get(action, 0.0) + 1.0
        return counts_policy(counts)

    n = len(matches)
    point = nash_conv(ref, policy_of(range(n)))
    resamples = RESAMPLES if len(ref.infostates) <= LARGE_GAME else LARGE_RESAMPLES
    rng = np.random.default_rng(seed)
    values = np.sort([nash_conv(ref, policy_of(rng.integers(0, n, n).tolist()))
                      for _ in range(resamples)])
    alpha = (1 - level) / 2
    return point, (float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha)))
