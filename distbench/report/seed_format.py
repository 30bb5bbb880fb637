"""The seed tool's JSON files, from a matrix run or a sweep, with exactly the seed's keys.

The seed tool (the LLM game-theory benchmark distbench replaces: its ``main.py`` and its
``run_tiered_research_suite.py``) wrote JSON files that users' scripts read by key. This module
writes them from a run's tables, in the seed's layouts:

- a run of one model in one mode (``main.py``): ``games.json``, ``trials.json``,
  ``summary.json``;
- a run of one model in pure and mixed mode (``main.py --combined``): ``games.json``,
  ``trials_pure_actions.json``, ``summary_pure_actions.json``, ``trials_mixed_strategy.json``,
  ``summary_mixed_strategy.json`` (a logprob mode beside them: ``*_logprob_strategy.json``);
- a sweep, or a run of several models (the tiered suite): ``games/seed_<S>/<bucket>.json`` and
  ``model_runs/seed_<S>/<bucket>/<provider>/<model with / as __>/{trials,summary}_{pure,
  mixed}.json``.

The objects, as the seed wrote them:

- a game: ``game_id`` (an int: the game's position in the run, or in its bucket and seed in the
  tiered layout), ``payoff_matrix``, ``nash_equilibrium_row``, ``nash_equilibrium_col``; the
  tiered layout adds ``bucket_id``, ``seed`` (here the seed of the bucket's game stream),
  ``equilibrium_type`` and ``payoff_std``;
- a trial (:data:`TRIAL_KEYS`): ``llm_decision`` is the 0-based action index in pure mode and
  the probability list in mixed (and logprob) mode; ``best_response_value`` is the best
  response's payoff against the Nash opponent (in mixed mode the seed stored the game's value
  there, the same number); ``decision_source`` is ``parsed`` (``dummy_random`` for the dummy)
  for a valid answer, else distbench's ``parse_status``. The seed replaced an unreadable answer
  by a random action; distbench keeps it as it is, so an invalid trial has ``llm_decision``,
  ``llm_value`` and ``nash_gap`` null;
- a summary (:data:`PURE_SUMMARY_KEYS`, :data:`MIXED_SUMMARY_KEYS`): one flat object; its
  statistics are over the valid trials (``std`` is the population standard deviation, as
  numpy's default), null when there is none; ``total_trials`` counts every trial.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from distbench.store.catalog import fetch_records
from distbench.store.writer import strict_json

GAME_KEYS = ("game_id", "payoff_matrix", "nash_equilibrium_row", "nash_equilibrium_col")
"""A game of ``games.json`` (``main.py``)."""
TIERED_GAME_KEYS = ("game_id", "bucket_id", "seed", "payoff_matrix", "nash_equilibrium_row",
                    "nash_equilibrium_col", "equilibrium_type", "payoff_std")
"""A game of ``games/seed_<S>/<bucket>.json`` (the tiered suite)."""
TRIAL_KEYS = ("game_id", "trial_id", "llm_decision", "llm_value", "best_response_value",
              "nash_gap", "decision_source")
"""A trial, in every layout and mode."""
_STATS = ("mean_nash_gap", "median_nash_gap", "std_nash_gap", "min_nash_gap", "max_nash_gap",
          "mean_llm_value")
PURE_SUMMARY_KEYS = ("num_games", "num_trials_per_game", "total_trials", *_STATS,
                     "mean_br_value", "decision_source_counts", "parse_success_rate")
"""A pure-mode summary."""
MIXED_SUMMARY_KEYS = ("num_games", "num_trials_per_game", "total_trials", "mode", *_STATS,
                      "mean_nash_value", "decision_source_counts", "parse_success_rate")
"""A mixed-mode summary (``mode`` is ``mixed_strategy``; logprob mode: ``logprob_strategy``)."""

RUN_SUFFIX = {"pure": "pure_actions", "mixed": "mixed_strategy", "logprob": "logprob_strategy"}
"""File name suffix per mode in a run of several modes (``trials_<suffix>.json``)."""
MODE_ORDER = ("pure", "mixed", "logprob")


class NotMatrixError(ValueError):
    """The run holds no matrix games: the seed's files do not apply."""


def resolve_run(path: Path) -> Path:
    """The distbench run of ``path``: the folder itself, or, for a folder written with
    ``--output-format seed``, the run folder of the same name inside it."""
    inner = path / path.name
    if not (path / "manifest.json").exists() and (inner / "manifest.json").exists():
        return inner
    return path






def seed_trial(row: dict[str, Any], game_id: int) -> dict[str, Any]:
    """One trial row of the ``trials`` table as the seed's trial object."""
    valid = row["parse_status"] == "ok"
    if row["mode"] == "pure":
        decision = row["decision"]
    else:
        decision = list(row["strategy"]) if row["strategy"] is not None else None
    source = ("dummy_random" if row["provider"] == "dummy" else "parsed") if valid \
        else row["parse_status"]
    return {
        "game_id": game_id,
        "trial_id": int(row["trial"]),
        "llm_decision": strict_json(decision) if valid else None,
        "llm_value": strict_json(row["llm_value"]) if valid else None,
        "best_response_value": strict_json(row["br_value"]),
        "nash_gap": strict_json(row["nash_gap"]) if valid else None,
        "decision_source": source,
    }


def seed_summary(trials: list[dict[str, Any]], mode: str, num_games: int) -> dict[str, Any]:
    """The seed's summary of one mode's trial objects (as :func:`seed_trial` makes them)."""
    valid = [t for t in trials if t["nash_gap"] is not None and t["llm_value"] is not None]
    gaps = np.array([t["nash_gap"] for t in valid], dtype=np.float64)
    values = np.array([t["llm_value"] for t in valid], dtype=np.float64)
    refs = np.array([t["best_response_value"] for t in trials
                     if t["best_response_value"] is not None], dtype=np.float64)

    def stat(fn: Any, xs: np.ndarray) -> float | None:
        return strict_json(float(fn(xs))) if xs.size else None

    counts: dict[str, int] = {}
    for t in trials:
        counts[t["decision_source"]] = counts.get(t["decision_source"], 0) + 1
    out: dict[str, Any] = {
        "num_games": num_games,
        "num_trials_per_game": max((t["trial_id"] for t in trials), default=-1) + 1,
        "total_trials": len(trials),
    }
    if mode != "pure":
        out["mode"] = f"{mode}_strategy"
    out.update({
        "mean_nash_gap": stat(np.mean, gaps),
        "median_nash_gap": stat(np.median, gaps),
        "std_nash_gap": stat(np.std, gaps),
        "min_nash_gap": stat(np.min, gaps),
        "max_nash_gap": stat(np.max, gaps),
        "mean_llm_value": stat(np.mean, values),
        ("mean_br_value" if mode == "pure" else "mean_nash_value"): stat(np.mean, refs),
        "decision_source_counts": counts,
        "parse_success_rate": len(valid) / len(trials) if trials else 0.0,
    })
    return out


def _write(path: Path, payload: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return path


def _modes(rows: Iterable[dict[str, Any]]) -> list[str]:
    found = {r["mode"] for r in rows}
    return [m for m in MODE_ORDER if m in found] + sorted(found - set(MODE_ORDER))


def _read(run_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    from distbench.store.catalog import open_run
    from distbench.store.writer import read_json

    manifest = read_json(run_dir / "manifest.json") if (run_dir / "manifest.json").exists() else {}
    con = open_run(run_dir, threads=1, tables=("games", "trials"))
    try:
        games = fetch_records(con, """SELECT bucket, seed, game_index, game_id, payoff, nash_row,
                                        nash_col, has_saddle
                                 FROM games ORDER BY bucket, seed, game_index""")
        trials = fetch_records(con, """SELECT provider, model, tier, mode, bucket, seed, game_index,
                                         game_id, trial, decision, strategy, parse_status,
                                         llm_value, br_value, nash_gap
                                  FROM trials
                                  ORDER BY provider, model, mode, bucket, seed, game_index,
                                           trial""")
    finally:
        con.close()
    return games, trials, str(manifest.get("family") or "")


def write_seed_files(run_dir: Path, out_dir: Path) -> list[Path]:
    """Writes the seed tool's JSON files of a matrix run or sweep into ``out_dir``.

    Args:
        run_dir: A distbench run folder (or a folder written with ``--output-format seed``,
            which holds its run folder).
        out_dir: Where the files go (created).

    Returns:
        The files written.

    Raises:
        NotMatrixError: the run holds no matrix games.
        distbench.store.catalog.NotARunError: ``run_dir`` is not a run.
    """
    run_dir = resolve_run(run_dir)
    games, trials, family = _read(run_dir)
    if not games:
        raise NotMatrixError(f"{run_dir} holds no matrix games: the seed tool's files are "
                             "those of the matrix family")
    models = {(t["provider"], t["model"]) for t in trials}
    if family == "sweep" or len(models) > 1:
        return _write_tiered(games, trials, out_dir)
    return _write_run(games, trials, out_dir)


def _write_run(games: list[dict[str, Any]], trials: list[dict[str, Any]],
               out_dir: Path) -> list[Path]:
    """``main.py``'s layout: one model, game ids 0..N-1 in (bucket, seed, game) order."""
    ids = {g["game_id"]: i for i, g in enumerate(games)}
    written = [_write(out_dir / "games.json", [
        {"game_id": ids[g["game_id"]], "payoff_matrix": strict_json(g["payoff"]),
         "nash_equilibrium_row": strict_json(g["nash_row"]),
         "nash_equilibrium_col": strict_json(g["nash_col"])}
        for g in games])]
    modes = _modes(trials)
    for mode in modes:
        rows = [seed_trial(t, ids[t["game_id"]]) for t in trials if t["mode"] == mode]
        rows.sort(key=lambda r: (r["game_id"], r["trial_id"]))
        played = len({r["game_id"] for r in rows})
        suffix = "" if len(modes) == 1 else f"_{RUN_SUFFIX.get(mode, mode)}"
        written.append(_write(out_dir / f"trials{suffix}.json", rows))
        written.append(_write(out_dir / f"summary{suffix}.json",
                              seed_summary(rows, mode, played)))
    return written


def _write_tiered(games: list[dict[str, Any]], trials: list[dict[str, Any]],
                  out_dir: Path) -> list[Path]:
    """``run_tiered_research_suite.py``'s layout: per seed and bucket, per model."""
    written = []
    cells: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for g in games:
        cells.setdefault((g["seed"], g["bucket"]), []).append(g)
    for (seed, bucket), cell in sorted(cells.items()):
        written.append(_write(out_dir / "games" / f"seed_{seed}" / f"{bucket}.json", [
            {"game_id": int(g["game_index"]), "bucket_id": bucket, "seed": int(seed),
             "payoff_matrix": strict_json(g["payoff"]),
             "nash_equilibrium_row": strict_json(g["nash_row"]),
             "nash_equilibrium_col": strict_json(g["nash_col"]),
             "equilibrium_type": "pure" if max(g["nash_row"]) >= 1.0 - 1e-6 else "mixed",
             "payoff_std": float(np.std(np.asarray(g["payoff"], dtype=np.float64)))}
            for g in cell]))
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for t in trials:
        key = (t["seed"], t["bucket"], t["provider"], t["model"], t["mode"])
        groups.setdefault(key, []).append(t)
    for (seed, bucket, provider, model, mode), rows in sorted(groups.items()):
        folder = (out_dir / "model_runs" / f"seed_{seed}" / bucket / provider
                  / model.replace("/", "__"))
        objs = sorted((seed_trial(t, int(t["game_index"])) for t in rows),
                      key=lambda r: (r["game_id"], r["trial_id"]))
        played = len({r["game_id"] for r in objs})
        written.append(_write(folder / f"trials_{mode}.json", objs))
        written.append(_write(folder / f"summary_{mode}.json", seed_summary(objs, mode, played)))
    return written
