"""GAMA-Bench's leaderboard protocol (``distbench suite gama``) and its table.

The protocol: for each model, the eight games, ``runs`` games each (GAMA: five), ten seats of
the model, GAMA's default parameters (Bar with implicit feedback, the first-price Auction),
distbench's prompts. The table is GAMA's ``leadboard.md`` layout: a row per model, the Overall
column then one per game, GAMA's units (0-100, one decimal): a cell is the mean GAMA score of
the model's complete games of that game, Overall the mean of the eight unrounded cells. Beside
each number distbench adds its 95% interval: a bootstrap over the runs, drawn within each game
for Overall (so Overall's interval is that of a mean of eight means), seeded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from distbench.games.base import RunPlan, seat_label, stable_hash
from distbench.games.gama import rules
from distbench.games.gama.plan import NAME, GamaRunConfig, GamaSuiteShard, expected_calls
from distbench.llm.base import BackendSpec

BOARD_RESAMPLES = 2000
BOARD_SEED = 35


def suite_configs(models: Sequence[BackendSpec], *, runs: int = 5,
                  seeds: tuple[int, ...] = (42,), reask: int = 0, llm_seed: int = 0,
                  temperature: float = 1.0, max_tokens: int | None = None,
                  games: Sequence[str] = rules.GAME_NAMES) -> list[GamaRunConfig]:
    """The protocol's configurations: every game for every model, ten seats of the model."""
    if not models:
        raise ValueError("--players: at least one model")
    players = rules.Params().players
    return [GamaRunConfig(game=game, seats=(model,) * players, seeds=seeds, num_games=runs,
                          reask=reask, llm_seed=llm_seed, temperature=temperature,
                          max_tokens=max_tokens, shard_games=runs)
            for model in models for game in games]


def suite_shards(configs: Sequence[GamaRunConfig], run_id: str) -> list[GamaSuiteShard]:
    """One shard per (model table, seed): all its games at once, so that the eight games'
    rounds overlap and the protocol takes about as long as its longest game."""
    groups: dict[tuple[Any, int], list[GamaRunConfig]] = {}
    for c in configs:
        for seed in c.seeds:
            groups.setdefault((tuple(seat_label(s) for s in c.seats), seed), []).append(c)
    shards = []
    for (_, seed), group in groups.items():
        parts = tuple((c, seed, 0, c.num_games) for c in group)
        key = {"family": NAME, "suite": [c.identity() for c in group], "seed": seed}
        shards.append(GamaSuiteShard(f"gs-{stable_hash(key)}", run_id, parts))
    return shards


def suite_plan(configs: Sequence[GamaRunConfig], run_id: str) -> RunPlan:
    """One plan of all the protocol's games (:func:`suite_shards`)."""
    from distbench.games.gama.summary import summarize

    identity = {"suite": "gama", "configs": [c.identity() for c in configs]}
    return RunPlan(
        family=NAME, config=identity, identity=identity, shards=suite_shards(configs, run_id),
        seeds={"game_seeds": sorted({s for c in configs for s in c.seeds}),
               "llm_seed": configs[0].llm_seed},
        summarize=summarize, unit="games",
        expected_calls=sum(expected_calls(c) for c in configs) or None)


_SQL = """SELECT model, game, list(gama_score ORDER BY game_id)
FROM gama_games WHERE status = 'ok' AND gama_score IS NOT NULL
  AND variant IN ('', 'implicit', 'first') GROUP BY ALL ORDER BY ALL"""


def board(con: Any, *, resamples: int = BOARD_RESAMPLES, seed: int = BOARD_SEED
          ) -> list[dict[str, Any]]:
    """One record per model: ``cells`` game -> (mean, low, high, runs) and ``overall``
    (mean of the cells present, low, high), best Overall first."""
    scores: dict[str, dict[str, np.ndarray]] = {}
    for model, game, values in con.execute(_SQL).fetchall():
        scores.setdefault(model, {})[game] = np.asarray(values, dtype=np.float64)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed])))
    out = []
    for model, games in scores.items():
        cells, boots = {}, []
        for game in rules.GAME_NAMES:
            v = games.get(game)
            if v is None or not len(v):
                continue
            draws = v[rng.integers(0, len(v), size=(resamples, len(v)))].mean(axis=1)
            lo, hi = np.quantile(draws, [0.025, 0.975]) if len(v) > 1 else (np.nan, np.nan)
            cells[game] = (float(v.mean()), float(lo), float(hi), len(v))
            boots.append(draws)
        overall = float(np.mean([c[0] for c in cells.values()]))
        lo, hi = np.quantile(np.mean(boots, axis=0), [0.025, 0.975])
        out.append({"model": model, "cells": cells, "overall": (overall, float(lo), float(hi)),
                    "complete": len(cells) == len(rules.GAME_NAMES)})
    return sorted(out, key=lambda r: -r["overall"][0])


def _cell(value: tuple[float, ...] | None) -> str:
    if value is None:
        return "-"
    mean, lo, hi = value[:3]
    text = f"{np.round(mean, 1):.1f}"
    return text if np.isnan(lo) else f"{text} [{np.round(lo, 1):.1f}, {np.round(hi, 1):.1f}]"


def format_board(records: list[dict[str, Any]]) -> str:
    """GAMA's table (markdown, its column order and one decimal, rounded half to even as numpy
    does), each number with its 95% interval."""
    head = ["", "Overall", *(rules.GAMA_LABELS[g] for g in rules.GAME_NAMES)]
    rows = [[r["model"] + ("" if r["complete"] else " (games missing)"), _cell(r["overall"]),
             *(_cell(r["cells"].get(g)) for g in rules.GAME_NAMES)] for r in records]
    widths = [max(len(x[i]) for x in [head, *rows]) for i in range(len(head))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(head, widths, strict=True)) + " |",
             "|" + "|".join(":" + "-" * (w + 1) if i == 0 else "-" * (w + 1) + ":"
                            for i, w in enumerate(widths)) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                for i, (c, w) in enumerate(zip(row, widths, strict=True))) + " |"
              for row in rows]
    return "\n".join(lines)


def model_label(spec: BackendSpec) -> str:
    """A model's row label (its seats' label)."""
    return seat_label(spec)
