"""Belief and outcome metrics of the fog-of-war skirmish (vectorized numpy).

Per turn: belief entropy (bits, mean over enemy forces), prediction confidence (mean top
probability), information gain of a reveal (entropy before minus after).
Prediction confidence (the design's "max p"): the top probability of an action or objective
distribution. Action and objective distributions are scored like the power beliefs, by
:func:`brier_index` and :func:`log_loss_index` against the index of what happened.
Per game (over one player's valid reports, every enemy force, every turn):
    - Brier score: mean over (turn, force) of sum_v (p_v - [v = true])^2, in [0, 2];
    - log loss: mean of -ln p_true (p clipped at 1e-12);
    - calibration error: expected calibration error over every (turn, force, value)
      probability with 10 equal-width bins: sum_b (n_b / N) |mean p - mean outcome|;
    - ToM delta: accuracy of the predicted enemy order kinds minus the accuracy of a baseline
      that always predicts ``move``;
    - uncertainty reduction: (H_first - H_last) / H_first of the mean belief entropy.
Benchmark level: tier gradient (score rate of the higher tier with its 95% Wilson interval,
draws count half; the verdict is read from the intervals, see :func:`gradient_verdict`),
scouting value, belief quality vs winning (Pearson correlation), anti-calculability
(slope of Tier 4's edge over Tier 3 against scout accuracy).
"""

from __future__ import annotations

import math

import numpy as np

from distbench.report.stats import Verdict, rate_interval, verdict

EPS = 1e-12


def entropy_bits(beliefs: np.ndarray) -> np.ndarray:
    """Entropy in bits over the last axis: (..., 5) -> (...)."""
    p = np.asarray(beliefs, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return terms.sum(axis=-1)


def confidence(beliefs: np.ndarray) -> np.ndarray:
    """Top probability over the last axis."""
    return np.asarray(beliefs, dtype=np.float64).max(axis=-1)


def information_gain(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Entropy drop (bits) from ``before`` to ``after`` (same shapes, (..., 5))."""
    return entropy_bits(before) - entropy_bits(after)


def one_hot(truth: np.ndarray, num_values: int = 5) -> np.ndarray:
    """(...,) powers 1..num_values -> (..., num_values) indicator."""
    truth = np.asarray(truth, dtype=np.int64)
    return (truth[..., None] == np.arange(1, num_values + 1)).astype(np.float64)


def brier(beliefs: np.ndarray, truth: np.ndarray) -> float:
    """Mean multi-class Brier score; ``beliefs`` (N, 5), ``truth`` (N,) powers 1..5."""
    b = np.asarray(beliefs, dtype=np.float64)
    if b.size == 0:
        return math.nan
    return float(((b - one_hot(truth, b.shape[-1])) ** 2).sum(axis=-1).mean())


def log_loss(beliefs: np.ndarray, truth: np.ndarray) -> float:
    """Mean negative log-likelihood of the true power (nats)."""
    b = np.asarray(beliefs, dtype=np.float64)
    if b.size == 0:
        return math.nan
    p = np.take_along_axis(b, np.asarray(truth, dtype=np.int64)[:, None] - 1, axis=1)[:, 0]
    return float(-np.log(np.clip(p, EPS, 1.0)).mean())


def brier_index(probs: np.ndarray, outcome: np.ndarray) -> float:
    """Mean multi-class Brier score of distributions ``probs`` (N, C) against the outcomes'
    0-based indices ``outcome`` (N,): mean of sum_c (p_c - [c = outcome])^2, in [0, 2];
    NaN when N = 0."""
    p = np.asarray(probs, dtype=np.float64)
    if p.size == 0:
        return math.nan
    y = np.asarray(outcome, dtype=np.int64)[:, None] == np.arange(p.shape[-1])
    return float(((p - y) ** 2).sum(axis=-1).mean())


def log_loss_index(probs: np.ndarray, outcome: np.ndarray) -> float:
    """Mean -ln p(outcome) (nats, p clipped at 1e-12) of distributions ``probs`` (N, C)
    against 0-based outcome indices (N,); NaN when N = 0."""
    p = np.asarray(probs, dtype=np.float64)
    if p.size == 0:
        return math.nan
    q = np.take_along_axis(p, np.asarray(outcome, dtype=np.int64)[:, None], axis=1)[:, 0]
    return float(-np.log(np.clip(q, EPS, 1.0)).mean()) + 0.0  # + 0.0: no -0.0


def calibration_error(probs: np.ndarray, outcomes: np.ndarray, num_bins: int = 10) -> float:
    """Expected calibration error of probabilities ``probs`` (N,) against 0/1 ``outcomes``."""
    p = np.asarray(probs, dtype=np.float64).ravel()
    y = np.asarray(outcomes, dtype=np.float64).ravel()
    if p.size == 0:
        return math.nan
    bins = np.minimum((p * num_bins).astype(np.int64), num_bins - 1)
    sum_p = np.bincount(bins, weights=p, minlength=num_bins)
    sum_y = np.bincount(bins, weights=y, minlength=num_bins)
    return float(np.abs(sum_p - sum_y).sum() / p.size)


def belief_calibration_error(beliefs: np.ndarray, truth: np.ndarray, num_bins: int = 10) -> float:
    """Calibration error over every (row, value) probability of (N, 5) beliefs."""
    b = np.asarray(beliefs, dtype=np.float64)
    return calibration_error(b.ravel(), one_hot(truth, b.shape[-1]).ravel(), num_bins)


def tom_delta(predicted: np.ndarray, actual: np.ndarray, baseline: str = "move") -> float:
    """Prediction accuracy minus the constant ``baseline`` predictor's (NaN when nothing to
    score). ``predicted`` and ``actual`` are (N,) order kinds of living enemy forces."""
    pred = np.asarray(predicted, dtype=object)
    act = np.asarray(actual, dtype=object)
    if act.size == 0:
        return math.nan
    return float((pred == act).mean() - (act == baseline).mean())


def uncertainty_reduction(entropies: np.ndarray) -> float:
    """(H_first - H_last) / H_first of a per-turn entropy series (NaN if H_first is 0)."""
    h = np.asarray(entropies, dtype=np.float64)
    if h.size == 0 or h[0] <= 0:
        return math.nan
    return float((h[0] - h[-1]) / h[0])


def score_rate_ci(scores: np.ndarray) -> tuple[float, float, float]:
    """Mean score (win 1, draw 0.5, loss 0) with its 95% Wilson interval (within [0, 1]):
    :func:`distbench.report.stats.rate_interval`, the interval of every fog rate."""
    return rate_interval(scores)


def winner_scores(winner: np.ndarray, seat_is_a: np.ndarray) -> np.ndarray:
    """Score of the player in seat a (``seat_is_a`` True) or b for each game's winner."""
    w = np.asarray(winner, dtype=object)
    a = np.asarray(seat_is_a, dtype=bool)
    return np.where(w == "draw", 0.5, np.where((w == "a") == a, 1.0, 0.0))


def game_quality(scores: np.ndarray, invalid: np.ndarray, failed: np.ndarray) -> np.ndarray:
    """The headline's quality of one seat per game (README, "The headline"): its score (win
    1, draw 0.5, loss 0) when every answer it gave was valid, 0 when any was invalid (the game
    is forfeited: an invalid answer, replaced by holds, can change the game in the seat's
    favour, so only forfeiting keeps "an invalid answer never scores better"), NaN when a
    model call failed at the server (not the model's: the game is left out).

    Args:
        scores: (G,) the seat's score per game.
        invalid: (G,) its invalid reports per game (failed calls not counted).
        failed: (G,) its reports whose model call failed.
    """
    s = np.asarray(scores, dtype=np.float64)
    q = np.where(np.asarray(invalid) > 0, 0.0, s)
    return np.where(np.asarray(failed) > 0, np.nan, q)


def tier_gradient(rows: list[dict]) -> list[dict]:
    """Per pair of agents (higher tier first), the higher tier's score rate with its CI.

    Args:
        rows: Game records with ``agent_a``, ``agent_b``, ``winner``.
    """
    def rank(name: str) -> int:
        return int(name[4:]) if name.startswith("tier") and name[4:].isdigit() else 0

    groups: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        a, b = row["agent_a"], row["agent_b"]
        hi, lo = (a, b) if rank(a) >= rank(b) else (b, a)
        score = winner_scores(np.array([row["winner"]]), np.array([hi == a]))[0]
        groups.setdefault((hi, lo), []).append(float(score))
    out = []
    for (hi, lo), scores in sorted(groups.items()):
        mean, low, high = score_rate_ci(np.array(scores))
        out.append({"higher": hi, "lower": lo, "games": len(scores), "score_rate": mean,
                    "ci_low": low, "ci_high": high,
                    "higher_wins": verdict(low, high, 0.5) == "holds"})
    return out


def adjacent_pairs(gradient: list[dict]) -> list[dict]:
    """The pairs of adjacent tiers (tier k+1 vs tier k) of a tier gradient."""
    return [g for g in gradient if g["higher"].startswith("tier") and g["lower"].startswith("tier")
            and g["higher"][4:].isdigit() and g["lower"][4:].isdigit()
            and int(g["higher"][4:]) == int(g["lower"][4:]) + 1]


def gradient_verdict(gradient: list[dict]) -> Verdict:
    """The tier-gradient verdict, read from the intervals (never from the point estimates).

    ``"holds"``: every adjacent pair (tier k+1 vs tier k) has its 95% Wilson interval of the
    higher tier's score rate wholly above 0.5; ``"fails"``: some adjacent pair's interval lies
    wholly below 0.5 (the lower tier is shown to win); ``"inconclusive"`` otherwise (some
    interval contains 0.5, or there is no adjacent pair): the gradient is not shown.
    """
    pairs = adjacent_pairs(gradient)
    if not pairs:
        return "inconclusive"
    verdicts = [verdict(g["ci_low"], g["ci_high"], 0.5) for g in pairs]
    if "fails" in verdicts:
        return "fails"
    return "holds" if all(v == "holds" for v in verdicts) else "inconclusive"


def gradient_holds(gradient: list[dict]) -> bool:
    """The gradient is shown: :func:`gradient_verdict` is ``"holds"`` (every adjacent tier's
    interval lies above 50%)."""
    return gradient_verdict(gradient) == "holds"


def scouting_value(scores_on: np.ndarray, scores_off: np.ndarray) -> float:
    """Mean score with scouting on minus with it off (for the same agent and opponent)."""
    return float(np.mean(scores_on) - np.mean(scores_off))


def belief_quality_vs_winning(brier_scores: np.ndarray, scores: np.ndarray) -> float:
    """Pearson correlation of (negative) Brier score and game score; NaN when degenerate."""
    x = -np.asarray(brier_scores, dtype=np.float64)
    y = np.asarray(scores, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size < 2 or x.std() == 0 or y.std() == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def anti_calculability(accuracies: np.ndarray, edges: np.ndarray) -> float:
    """Least-squares slope of Tier 4's edge over Tier 3 (score rate - 0.5) against scout
    accuracy: positive means lookahead gains less as scouting gets noisier."""
    x = np.asarray(accuracies, dtype=np.float64)
    y = np.asarray(edges, dtype=np.float64)
    if x.size < 2 or x.std() == 0:
        return math.nan
    return float(np.polyfit(x, y, 1)[0])


def game_metrics(beliefs: np.ndarray, truth: np.ndarray, valid: np.ndarray, turn_entropy: np.ndarray,
                 predicted: np.ndarray, actual: np.ndarray) -> dict[str, float]:
    """One player's per-game metrics.

    Args:
        beliefs: (T, K, 5) beliefs per report (NaN rows for invalid reports).
        truth: (K,) true enemy powers.
        valid: (T,) which reports have valid beliefs.
        turn_entropy: (T,) mean belief entropy per report (NaN when invalid).
        predicted: (N,) predicted kinds of living enemy forces, all turns.
        actual: (N,) their actual kinds.
    """
    b = np.asarray(beliefs, dtype=np.float64)[np.asarray(valid, dtype=bool)]
    flat = b.reshape(-1, b.shape[-1]) if b.size else np.zeros((0, 5))
    t = np.broadcast_to(np.asarray(truth), b.shape[:2]).ravel() if b.size else np.zeros(0, np.int64)
    h = np.asarray(turn_entropy, dtype=np.float64)
    return {
        "brier": brier(flat, t),
        "log_loss": log_loss(flat, t),
        "calibration_error": belief_calibration_error(flat, t),
        "tom_delta": tom_delta(predicted, actual),
        "uncertainty_reduction": uncertainty_reduction(h[np.isfinite(h)]),
        "valid_reports": int(np.asarray(valid, dtype=bool).sum()),
    }


def format_gradient(gradient: list[dict], verdict: str) -> str:
    """The tier-gradient table and its verdict (``gradient_verdict``: read from the 95%
    Wilson intervals of the adjacent tiers, never from the point estimates) as text."""
    width = max([18] + [len(f"{g['higher']} vs {g['lower']}") for g in gradient])
    lines = [f"{'pairing':<{width}} {'games':>6} {'higher-tier score':>18} {'95% CI':>16}"]
    for g in gradient:
        pair = f"{g['higher']} vs {g['lower']}"
        ci = "[{:.3f}, {:.3f}]".format(g["ci_low"], g["ci_high"])
        lines.append(f"{pair:<{width}} {g['games']:>6} {g['score_rate']:>18.3f} {ci:>16}")

    def pairs(keep) -> str:
        return "; ".join(f"{g['higher']} vs {g['lower']} [{g['ci_low']:.3f}, {g['ci_high']:.3f}]"
                         for g in adjacent_pairs(gradient) if keep(g))

    if verdict == "holds":
        line = "HOLDS (every adjacent tier's 95% interval lies above 0.5)"
    elif verdict == "fails":
        line = "FAILS (interval below 0.5: " + pairs(lambda g: g["ci_high"] < 0.5) + ")"
    elif adjacent_pairs(gradient):
        line = ("NOT SHOWN (inconclusive, interval contains 0.5: "
                + pairs(lambda g: not g["ci_low"] > 0.5) + ")")
    else:
        line = "NOT SHOWN (no pair of adjacent tiers)"
    lines.append("tier gradient: " + line)
    return "\n".join(lines)
