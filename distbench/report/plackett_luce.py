"""Plackett–Luce ratings from the finishing orders of games of any number of players, ties as
ties, with the bootstrap band of :mod:`.bands` (:mod:`.ratings` re-exports every name)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from distbench.report.bands import DEFAULT_ALPHA, BradleyTerry, banded, strongly_connected

# -- Plackett–Luce: ratings from the finishing orders of games of any number of players ------
#
# A game of n seats gives a finishing order by score (higher first; equal scores tie). Under
# Plackett–Luce the order is drawn top down: the first is seat s with probability
# exp(theta_s) / sum over the seats still in play of exp(theta), then the next among the rest,
# and so on. For two seats it is Bradley–Terry. A player may fill several seats of one game
# (ten seats of one model, or five and five): each seat enters with its player's strength.
#
# Ties as ties: a group of k tied seats counts as the mean over its k! orders of the
# log-likelihood of each (every tie-break equally likely), which for two seats is Bradley–Terry's
# "half a win each way" (``win_matrix``). The mean is exact and cheap: after (k - m) of the group
# have been drawn, the m left are a uniformly random sub-multiset of it (hypergeometric over the
# players' seats), and each of them is drawn next with probability 1/m; the choice events
# (winner, the seats still in play, weight) of all those stages are summed with their
# probabilities (:func:`ranking_events`). Without ties it is the plain likelihood, equal to
# ``choix``'s ``opt_rankings`` / ``ilsr_rankings`` on the same rankings (tests).
#
# Nash averaging for n players: it rates from an antisymmetric two-player meta-game, and a game
# of n seats is not one. From n-player games one can still form the pairwise meta-game of
# mean score differences between two players at the same table, but that averages over
# whoever else sat there, so its "does not reward beating copies of one style" guarantee holds
# only for the pairwise projection, not for the n-player game. The tournament reports
# Plackett–Luce for n-player games and leaves Nash averaging to two-seat families.


@dataclass(frozen=True)
class RankingEvents:
    """The choice events of a set of games, merged (see :func:`ranking_events`).

    Attributes:
        winner: (U,) the player drawn at each distinct event.
        counts: (U, n) the seats of each player still in play at that event.
        weights: (G, U) each game's weight on each event (0 when it has none).
    """

    winner: np.ndarray
    counts: np.ndarray
    weights: np.ndarray


Game = tuple[Sequence[int], Sequence[float]]
"""One game: the player of each seat (indices, repeats allowed) and each seat's score."""


def _tie_groups(players: np.ndarray, scores: np.ndarray) -> list[np.ndarray]:
    order = np.argsort(-scores, kind="stable")
    groups: list[list[int]] = []
    last = None
    for s in order.tolist():
        if last is None or scores[s] != last:
            groups.append([])
            last = scores[s]
        groups[-1].append(int(players[s]))
    return [np.asarray(g, dtype=np.int64) for g in groups]


def _sub_multisets(tied: dict[int, int]) -> list[tuple[dict[int, int], float]]:
    """Each non-empty sub-multiset of ``tied`` (player -> seats) with its probability of being
    the part left after the rest of the group was drawn in a uniformly random order."""
    from itertools import product
    from math import comb

    players = sorted(tied)
    k = sum(tied.values())
    out = []
    for take in product(*(range(tied[p] + 1) for p in players)):
        m = sum(take)
        if m == 0:
            continue
        ways = 1
        for p, u in zip(players, take, strict=True):
            ways *= comb(tied[p], u)
        out.append(({p: u for p, u in zip(players, take, strict=True) if u}, ways / comb(k, m)))
    return out


def ranking_events(n: int, games: Sequence[Game]) -> RankingEvents:
    """The Plackett–Luce choice events of ``games``, ties as the mean over their orders.

    Args:
        n: players.
        games: each game's (seat players, seat scores); higher scores finish first.

    Raises:
        ValueError: a game of fewer than two seats, a bad player index, a non-finite score.
    """
    keys: dict[tuple[int, tuple[int, ...]], int] = {}
    per_game: list[dict[int, float]] = []
    for players, scores in games:
        p = np.asarray(players, dtype=np.int64)
        s = np.asarray(scores, dtype=np.float64)
        if p.ndim != 1 or p.shape != s.shape or p.size < 2:
            raise ValueError("each game needs at least two seats, one score per seat")
        if p.min() < 0 or p.max() >= n:
            raise ValueError(f"player indices must lie in [0, {n})")
        if not np.all(np.isfinite(s)):
            raise ValueError("scores must be finite")
        left = np.bincount(p, minlength=n)
        events: dict[int, float] = {}
        for group in _tie_groups(p, s):
            tied = np.bincount(group, minlength=n)
            rest = left - tied
            for sub, prob in _sub_multisets({int(q): int(tied[q]) for q in np.flatnonzero(tied)}):
                counts = rest.copy()
                for q, u in sub.items():
                    counts[q] += u
                m = sum(sub.values())
                for q, u in sub.items():
                    if counts.sum() == counts[q]:
                        continue  # only the winner's own seats in play: probability 1
                    key = (q, tuple(counts.tolist()))
                    idx = keys.setdefault(key, len(keys))
                    events[idx] = events.get(idx, 0.0) + prob * u / m
            left = rest
        per_game.append(events)
    weights = np.zeros((len(per_game), len(keys)))
    for g, events in enumerate(per_game):
        for idx, w in events.items():
            weights[g, idx] = w
    winner = np.array([k[0] for k in keys], dtype=np.int64)
    counts = np.array([k[1] for k in keys], dtype=np.float64).reshape(len(keys), n)
    return RankingEvents(winner, counts, weights)


def _fit_events(winner: np.ndarray, counts: np.ndarray, w: np.ndarray, alpha: float, *,
                tol: float = 1e-10, max_iter: int = 200) -> tuple[np.ndarray, bool]:
    """Newton's method with step halving on the penalised Plackett–Luce objective
    ``alpha * sum theta**2 - sum_e w_e (theta_winner - log sum_j counts_ej exp theta_j)``."""
    n = counts.shape[1]
    wins = np.bincount(winner, weights=w, minlength=n)
    theta = np.zeros(n)
    ones = np.full((n, n), 1.0 / n)

    def objective(t: np.ndarray) -> float:
        z = counts @ np.exp(t - t.max())
        return float(alpha * (t ** 2).sum() - wins @ t + w @ (np.log(z) + t.max()))

    f = objective(theta)
    for _ in range(max_iter):
        e = counts * np.exp(theta - theta.max())
        p = e / e.sum(axis=1, keepdims=True)
        grad = 2 * alpha * theta - wins + w @ p
        if np.abs(grad).max() < tol:
            return theta - theta.mean(), True
        hess = (2 * alpha * np.eye(n) + np.diag(w @ p) - (p * w[:, None]).T @ p + ones)
        step = np.linalg.solve(hess, grad)
        size = 1.0
        while size > 1e-10:
            cand = theta - size * step
            cand -= cand.mean()
            fc = objective(cand)
            if fc <= f + 1e-15 * max(1.0, abs(f)):
                theta, f = cand, fc
                break
            size /= 2
        else:
            break
    e = counts * np.exp(theta - theta.max())
    p = e / e.sum(axis=1, keepdims=True)
    grad = 2 * alpha * theta - wins + w @ p
    return theta - theta.mean(), bool(np.abs(grad).max() < tol)


def _beaten(n: int, ev: RankingEvents, w: np.ndarray) -> np.ndarray:
    out = np.zeros((n, n))
    for k in np.flatnonzero(w > 0):
        out[ev.winner[k]] += ev.counts[k] > 0
    np.fill_diagonal(out, 0.0)
    return out


def fit_plackett_luce(n: int, games: Sequence[Game], *, alpha: float = 0.0) -> np.ndarray:
    """Centred Plackett–Luce log-strengths from the finishing orders of ``games``.

    Args:
        n: players.
        games: each game's (seat players, seat scores); see :func:`ranking_events`.
        alpha: L2 penalty ``alpha * sum theta**2`` (``choix``'s); 0: maximum likelihood.

    Returns:
        (n,) float64, mean 0.

    Raises:
        ValueError: bad games; with ``alpha = 0``, data without a maximum (some players
            never finished ahead of, or never behind, the rest); no convergence.
    """
    if n < 2:
        raise ValueError(f"at least 2 players are needed, got {n}")
    if not alpha >= 0:
        raise ValueError(f"alpha must be >= 0, got {alpha}")
    ev = ranking_events(n, games)
    w = ev.weights.sum(axis=0)
    if alpha == 0 and not strongly_connected(_beaten(n, ev, w)):
        raise ValueError("the maximum-likelihood strengths do not exist: some players never "
                         "finished ahead of (or never behind) the rest; play more games or "
                         "pass alpha > 0")
    theta, ok = _fit_events(ev.winner, ev.counts, w, alpha)
    if not ok:
        raise ValueError("the Plackett–Luce fit did not converge")
    return theta


def bootstrap_plackett_luce(n: int, games: Sequence[Game], *, seed: int,
                            alpha: float = DEFAULT_ALPHA, resamples: int = 1000,
                            level: float = 0.95,
                            game_weights: Sequence[float] | None = None) -> BradleyTerry:
    """Plackett–Luce strengths with the simultaneous bootstrap band of
    :func:`bootstrap_bradley_terry`, in the same result type: games are resampled with
    replacement within each table make-up (the multiset of players seated; for two seats a
    pair of players, as the Bradley–Terry bootstrap resamples within each pair), each resample
    is fitted, and the band is :func:`simultaneous_band` of the converged fits.
    ``game_weights`` (one per game, > 0; None: all 1) weigh each game's likelihood term (e.g.
    so that each of several games counts equally, whatever its number of tables).

    Raises:
        ValueError: bad inputs (see :func:`fit_plackett_luce`).
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if resamples < 0:
        raise ValueError(f"resamples must be >= 0, got {resamples}")
    gw = np.ones(len(games)) if game_weights is None else np.asarray(game_weights, float)
    if gw.shape != (len(games),) or not np.all(gw > 0):
        raise ValueError("game_weights must hold one positive weight per game")
    ev = ranking_events(n, games)
    if game_weights is None:
        theta = fit_plackett_luce(n, games, alpha=alpha)
    else:
        theta, ok = _fit_events(ev.winner, ev.counts, gw @ ev.weights, alpha)
        if not ok:
            raise ValueError("the Plackett–Luce fit did not converge")
    tables: dict[tuple[int, ...], list[int]] = {}
    for g, (players, _) in enumerate(games):
        tables.setdefault(tuple(sorted(int(x) for x in players)), []).append(g)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 31])))
    multiplicity = np.zeros((resamples, len(games)))
    for _, idx in sorted(tables.items()):
        members = np.asarray(idx)
        draw = members[rng.integers(0, members.size, size=(resamples, members.size))]
        for r in range(resamples):
            np.add.at(multiplicity[r], draw[r], 1.0)
    fits = [_fit_events(ev.winner, ev.counts, (multiplicity[r] * gw) @ ev.weights, alpha)
            for r in range(resamples)]
    kept = np.asarray([t for t, ok in fits if ok]).reshape(-1, n)
    return banded(theta, kept, level, resamples, resamples - kept.shape[0])
