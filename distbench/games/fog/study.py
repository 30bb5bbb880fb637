"""The benchmark-level fog study: round robins of the tiers under several scouting conditions,
and the four benchmark metrics of GAMES.md computed from the ``fog_games`` table.

Conditions: scouting on at each accuracy of ``accuracies``, plus scouting off. Metrics:

* tier gradient per condition (each tier's score against the one below, with its 95% Wilson
  interval) and its verdict from the intervals (:func:`~distbench.games.fog.metrics.gradient_verdict`:
  ``holds`` only when every adjacent tier's interval lies above 0.5);
* scouting value of each tier: its mean score with scouting on (at ``reference_accuracy``)
  minus with scouting off, over all its games against the other tiers;
* belief quality vs winning: the correlation of negative Brier score and game score over every
  (game, seat) of the Bayesian tiers (3 and 4), whose beliefs are informative;
* anti-calculability: the slope of Tier 4's edge over Tier 3 (score rate − 0.5) against scout
  accuracy; positive means lookahead gains less as scouting gets noisier.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from distbench.games.fog.metrics import (
    anti_calculability,
    belief_quality_vs_winning,
    gradient_holds,
    gradient_verdict,
    scouting_value,
    tier_gradient,
    winner_scores,
)
from distbench.games.fog.plan import FogRunConfig, plan_fog_shards, tournament_config
from distbench.games.fog.summary import fog_summary

# A game of a study is (game_id, condition): game_id repeats across the scouting conditions,
# so the order (and every grouping) names the condition too.
STUDY_SQL = """
SELECT agent_a, agent_b, winner, scout_accuracy, scouting, brier_a, brier_b
FROM fog_games ORDER BY scouting DESC, scout_accuracy, game_id
"""


def study_configs(games_per_pairing: int, seed: int, accuracies: tuple[float, ...]) -> list[FogRunConfig]:
    """One round robin per condition (each accuracy with scouting, then scouting off)."""
    configs = [tournament_config(games_per_pairing, seed=seed, scout_accuracy=a) for a in accuracies]
    configs.append(tournament_config(games_per_pairing, seed=seed, scouting=False))
    return configs


def plan_study(games_per_pairing: int, seed: int, accuracies: tuple[float, ...], run_id: str):
    """The :class:`~distbench.engine.driver.RunPlan` of a study."""
    from distbench.games.base import RunPlan

    configs = study_configs(games_per_pairing, seed, accuracies)
    shards = [s for c in configs for s in plan_fog_shards(c, run_id)]
    return RunPlan(
        family="fog",
        config={"study": [c.to_dict() for c in configs]},
        identity={"study": [c.identity() for c in configs]},
        shards=shards,
        seeds={"game_seeds": [seed]},
        summarize=fog_summary,
        unit="games",
    )


def _seat_rows(rows: list[dict]) -> list[dict]:
    """One record per (game, seat): agent, opponent, score, brier, condition."""
    out = []
    for r in rows:
        for seat, agent, other, brier in (("a", r["agent_a"], r["agent_b"], r["brier_a"]),
                                          ("b", r["agent_b"], r["agent_a"], r["brier_b"])):
            score = float(winner_scores(np.array([r["winner"]]), np.array([seat == "a"]))[0])
            out.append({"agent": agent, "opponent": other, "score": score, "brier": brier,
                        "scouting": r["scouting"], "accuracy": r["scout_accuracy"]})
    return out


def study_metrics(rows: list[dict], reference_accuracy: float) -> dict[str, Any]:
    """The four benchmark metrics from ``fog_games`` rows (see the module docstring)."""
    conditions: dict[str, list[dict]] = {}
    for r in rows:
        key = f"scouting on, accuracy {r['scout_accuracy']:g}" if r["scouting"] else "scouting off"
        conditions.setdefault(key, []).append(r)
    gradients = {}
    for key, group in sorted(conditions.items()):
        g = tier_gradient(group)
        gradients[key] = {"pairs": g, "holds": gradient_holds(g), "verdict": gradient_verdict(g)}

    seats = _seat_rows(rows)
    values = {}
    for tier in sorted({s["agent"] for s in seats}):
        on = [s["score"] for s in seats if s["agent"] == tier and s["scouting"]
              and math.isclose(s["accuracy"], reference_accuracy)]
        off = [s["score"] for s in seats if s["agent"] == tier and not s["scouting"]]
        values[tier] = scouting_value(np.array(on), np.array(off)) if on and off else math.nan

    bayes = [s for s in seats if s["agent"] in ("tier3", "tier4") and s["brier"] is not None]
    correlation = belief_quality_vs_winning(np.array([s["brier"] for s in bayes], dtype=float),
                                            np.array([s["score"] for s in bayes]))

    accuracies, edges = [], []
    for _, group in sorted(conditions.items()):
        if not group[0]["scouting"]:
            continue
        pair = [p for p in tier_gradient(group) if (p["higher"], p["lower"]) == ("tier4", "tier3")]
        if pair:
            accuracies.append(group[0]["scout_accuracy"])
            edges.append(pair[0]["score_rate"] - 0.5)
    slope = anti_calculability(np.array(accuracies), np.array(edges))
    return {
        "tier_gradient": gradients,
        "scouting_value": values,
        "belief_quality_vs_winning": correlation,
        "anti_calculability": {"accuracies": accuracies, "tier4_edge_over_tier3": edges,
                               "slope": slope},
    }
