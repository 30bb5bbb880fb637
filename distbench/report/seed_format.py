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

A sweep also gets the suite's tables in the folder itself, with the seed's columns and keys
(read off ``run_tiered_research_suite.py`` of github.com/zehao-zhao/reasoning_in_game, commit
7b3d251): ``big_table_all_runs.csv`` (:data:`SUITE_ROW_KEYS`: one row per seed x bucket x
model x mode, in that order of loops, a row's figures those of its ``summary_<mode>.json``),
``big_table_aggregated.csv`` (:data:`SUITE_AGG_KEYS`: per provider x bucket x tier x model x
mode, the mean and the population std across seeds of six figures, and the seeds; sorted by
provider, bucket, mode, tier, model), ``big_table_aggregated.md`` (:data:`SUITE_MD_KEYS`) and
``suite_metadata.json`` (:data:`SUITE_METADATA_KEYS`). A figure with no valid trial is an
empty cell (the seed had no such case: it replaced unreadable answers); the aggregate of a
figure is over the seeds that have it.

Names as the seed wrote them: a bucket drawing the seed's floats (``2x2_lowVarFloat_pure``)
is the seed's ``2x2_lowVar_pure``; a sweep run with ``--use-dummy`` keeps each model's
provider (``together``, ``openai``) and names the model ``dummy_tier_<tier>`` as the seed did
(``dummy_tier_<tier>_<k>`` for the k-th model of a tier with several, which the seed wrote over
one another). ``together_model_tiers`` and ``openai_model_tiers`` hold the tiers played, or,
for a provider the sweep did not play, the seed's defaults (the caller's ``default_tiers``).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterable, Mapping
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

_SUITE_GROUP = ("provider", "bucket_id", "equilibrium_target", "num_rows", "num_cols",
                "payoff_min", "payoff_max", "tier", "model", "mode")
SUITE_ROW_KEYS = ("seed", "provider", "bucket_id", "equilibrium_target", "num_rows", "num_cols",
                  "payoff_min", "payoff_max", "tier", "model", "mode", "num_games",
                  "num_trials_per_game", "total_trials", "mean_nash_gap", "median_nash_gap",
                  "std_nash_gap", "min_nash_gap", "max_nash_gap", "mean_llm_value",
                  "reference_value", "parse_success_rate", "decision_source_counts")
"""The columns of the seed suite's ``big_table_all_runs.csv``."""
_SUITE_METRICS = ("mean_nash_gap", "median_nash_gap", "std_nash_gap", "mean_llm_value",
                  "reference_value", "parse_success_rate")
SUITE_AGG_KEYS = (*_SUITE_GROUP,
                  *(f"{m}_{s}" for m in _SUITE_METRICS for s in ("mean", "std_across_seeds")),
                  "seeds")
"""The columns of the seed suite's ``big_table_aggregated.csv``."""
SUITE_MD_KEYS = ("provider", "bucket_id", "mode", "tier", "model", "mean_nash_gap_mean",
                 "mean_nash_gap_std_across_seeds", "mean_llm_value_mean",
                 "reference_value_mean", "parse_success_rate_mean")
"""The columns of the seed suite's ``big_table_aggregated.md``."""
SUITE_METADATA_KEYS = ("created_at", "num_games_per_bucket", "num_trials", "seeds",
                       "temperature", "num_workers", "providers", "buckets",
                       "together_model_tiers", "openai_model_tiers")
"""The keys of the seed suite's ``suite_metadata.json`` (``buckets``: objects of
:data:`SUITE_BUCKET_KEYS`)."""
SUITE_BUCKET_KEYS = ("bucket_id", "num_rows", "num_cols", "payoff_range", "nash_type")
BucketInfo = Callable[[str], dict[str, Any]]
"""bucket id -> the seed's bucket object (:data:`SUITE_BUCKET_KEYS`), e.g.
``distbench.games.matrix.buckets.seed_bucket``."""

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


def _read(run_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
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
    return games, trials, manifest


def write_seed_files(run_dir: Path, out_dir: Path, *, bucket_info: BucketInfo | None = None,
                     default_tiers: Mapping[str, Mapping[str, list[str]]] | None = None
                     ) -> list[Path]:
    """Writes the seed tool's JSON files of a matrix run or sweep into ``out_dir``.

    Args:
        run_dir: A distbench run folder (or a folder written with ``--output-format seed``,
            which holds its run folder).
        out_dir: Where the files go (created).
        bucket_info: For a sweep: the seed's object of a bucket id (the suite tables' bucket
            columns, ``suite_metadata.json``'s ``buckets``, the seed's bucket names). Without
            it the sweep's suite tables are not written.
        default_tiers: The seed's tiers per provider, for ``suite_metadata.json``'s
            ``together_model_tiers`` / ``openai_model_tiers`` of a provider not played.

    Returns:
        The files written.

    Raises:
        NotMatrixError: the run holds no matrix games.
        distbench.store.catalog.NotARunError: ``run_dir`` is not a run.
    """
    run_dir = resolve_run(run_dir)
    games, trials, manifest = _read(run_dir)
    family = str(manifest.get("family") or "")
    if not games:
        raise NotMatrixError(f"{run_dir} holds no games of the seed tool (payoff tables and "
                             "trials): its files do not apply to this run")
    models = {(t["provider"], t["model"]) for t in trials}
    if family == "sweep" or len(models) > 1:
        config = manifest.get("config") or {}
        names = _seed_names(trials, config)
        buckets = _seed_buckets({g["bucket"] for g in games}, bucket_info)
        written, summaries = _write_tiered(games, trials, out_dir, names, buckets)
        if family == "sweep" and bucket_info is not None:
            written += _write_suite(summaries, manifest, names, buckets, bucket_info,
                                    default_tiers or {}, out_dir)
        return written
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


def _seed_names(trials: list[dict[str, Any]], config: dict[str, Any]
                ) -> dict[tuple[str, str], tuple[str, str]]:
    """(provider, model) -> the seed's (provider, model). With ``--use-dummy`` every model is
    the dummy named ``<provider>/<model>``: the seed kept the provider and named the model
    ``dummy_tier_<tier>`` (numbered in the spec's order when a tier has several)."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    by_tier: dict[tuple[str, str], list[tuple[str, str]]] = {}
    use_dummy = bool(config.get("use_dummy"))
    listed = [(m["provider_name"], m["model"], m["tier"])
              for m in (config.get("sweep") or {}).get("models", [])]
    for provider, model, tier in listed + [(t["provider"], t["model"], t["tier"]) for t in trials]:
        key = (provider, model)
        if key in out:
            continue
        out[key] = key
        if use_dummy and provider == "dummy" and "/" in model:
            by_tier.setdefault((model.split("/", 1)[0], tier or ""), []).append(key)
    for (provider, tier), keys in by_tier.items():
        for k, key in enumerate(keys, start=1):
            out[key] = (provider, f"dummy_tier_{tier}" + (f"_{k}" if len(keys) > 1 else ""))
    return out


def _seed_buckets(ids: set[str], bucket_info: BucketInfo | None) -> dict[str, str]:
    """bucket id -> the seed's name (a ...Float bucket is the seed's own), kept when two
    buckets would share a name."""
    names = {b: str(bucket_info(b)["bucket_id"]) if bucket_info else b for b in ids}
    if len(set(names.values())) < len(names):
        return {b: b for b in ids}
    return names


def _write_tiered(games: list[dict[str, Any]], trials: list[dict[str, Any]], out_dir: Path,
                  names: dict[tuple[str, str], tuple[str, str]], buckets: dict[str, str]
                  ) -> tuple[list[Path], dict[tuple[Any, ...], dict[str, Any]]]:
    """``run_tiered_research_suite.py``'s layout: per seed and bucket, per model. Returns the
    files and the summaries by (seed, bucket, provider, model, tier, mode)."""
    written = []
    cells: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for g in games:
        cells.setdefault((g["seed"], g["bucket"]), []).append(g)
    for (seed, bucket), cell in sorted(cells.items()):
        written.append(_write(out_dir / "games" / f"seed_{seed}" / f"{buckets[bucket]}.json", [
            {"game_id": int(g["game_index"]), "bucket_id": buckets[bucket], "seed": int(seed),
             "payoff_matrix": strict_json(g["payoff"]),
             "nash_equilibrium_row": strict_json(g["nash_row"]),
             "nash_equilibrium_col": strict_json(g["nash_col"]),
             "equilibrium_type": "pure" if max(g["nash_row"]) >= 1.0 - 1e-6 else "mixed",
             "payoff_std": float(np.std(np.asarray(g["payoff"], dtype=np.float64)))}
            for g in cell]))
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for t in trials:
        key = (t["seed"], t["bucket"], t["provider"], t["model"], t["tier"], t["mode"])
        groups.setdefault(key, []).append(t)
    summaries: dict[tuple[Any, ...], dict[str, Any]] = {}
    for key, rows in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        seed, bucket, provider, model, _tier, mode = key
        seed_provider, seed_model = names[(provider, model)]
        folder = (out_dir / "model_runs" / f"seed_{seed}" / buckets[bucket] / seed_provider
                  / seed_model.replace("/", "__"))
        objs = sorted((seed_trial(t, int(t["game_index"])) for t in rows),
                      key=lambda r: (r["game_id"], r["trial_id"]))
        played = len({r["game_id"] for r in objs})
        summaries[key] = seed_summary(objs, mode, played)
        written.append(_write(folder / f"trials_{mode}.json", objs))
        written.append(_write(folder / f"summary_{mode}.json", summaries[key]))
    return written, summaries


def _write_csv(path: Path, rows: list[dict[str, Any]], keys: tuple[str, ...]) -> Path:
    """As the seed's ``write_csv``: a header of ``keys``, ``None`` as an empty cell."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(keys))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _write_suite(summaries: dict[tuple[Any, ...], dict[str, Any]], manifest: dict[str, Any],
                 names: dict[tuple[str, str], tuple[str, str]], buckets: dict[str, str],
                 bucket_info: BucketInfo,
                 default_tiers: Mapping[str, Mapping[str, list[str]]],
                 out_dir: Path) -> list[Path]:
    """The seed suite's tables and ``suite_metadata.json`` of a sweep's summaries."""
    config = manifest.get("config") or {}
    sweep = config.get("sweep") or {}
    seeds = list(sweep.get("seeds") or sorted({k[0] for k in summaries}))
    bucket_order = list(sweep.get("buckets") or sorted({k[1] for k in summaries}))
    model_order = [(m["provider_name"], m["model"], m["tier"]) for m in sweep.get("models", [])]
    # The seed's loops: seeds, buckets, models (provider by provider, tier by tier), modes.
    providers = list(dict.fromkeys(names.get((p, m), (p, m))[0] for p, m, _ in model_order))
    position = {key: i for i, key in enumerate(model_order)}
    mode_rank = {m: i for i, m in enumerate(MODE_ORDER)}

    def order(key: tuple[Any, ...]) -> tuple[Any, ...]:
        seed, bucket, provider, model, tier, mode = key
        seed_provider = names[(provider, model)][0]
        return (seeds.index(seed) if seed in seeds else len(seeds),
                bucket_order.index(bucket) if bucket in bucket_order else len(bucket_order),
                providers.index(seed_provider) if seed_provider in providers else len(providers),
                str(tier), position.get((provider, model, tier), len(position)), str(provider),
                str(model), mode_rank.get(mode, len(mode_rank)), str(mode))

    rows = []
    for key in sorted(summaries, key=order):
        seed, bucket, provider, model, tier, mode = key
        summary, info = summaries[key], bucket_info(bucket)
        seed_provider, seed_model = names[(provider, model)]
        low, high = info["payoff_range"]
        rows.append({
            "seed": seed, "provider": seed_provider, "bucket_id": buckets[bucket],
            "equilibrium_target": info["nash_type"], "num_rows": info["num_rows"],
            "num_cols": info["num_cols"], "payoff_min": low, "payoff_max": high,
            "tier": tier, "model": seed_model, "mode": mode,
            **{k: summary[k] for k in ("num_games", "num_trials_per_game", "total_trials",
                                       "mean_nash_gap", "median_nash_gap", "std_nash_gap",
                                       "min_nash_gap", "max_nash_gap", "mean_llm_value")},
            "reference_value": summary.get("mean_br_value", summary.get("mean_nash_value")),
            "parse_success_rate": summary["parse_success_rate"],
            "decision_source_counts": json.dumps(summary["decision_source_counts"],
                                                 sort_keys=True),
        })
    written = [_write_csv(out_dir / "big_table_all_runs.csv", rows, SUITE_ROW_KEYS)]

    grouped: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(tuple(row[k] for k in _SUITE_GROUP), []).append(row)
    agg = []
    for key, group in grouped.items():
        entry: dict[str, Any] = dict(zip(_SUITE_GROUP, key, strict=True))
        for metric in _SUITE_METRICS:
            vals = np.array([float(g[metric]) for g in group if g[metric] is not None])
            entry[f"{metric}_mean"] = float(np.mean(vals)) if vals.size else None
            entry[f"{metric}_std_across_seeds"] = float(np.std(vals)) if vals.size else None
        entry["seeds"] = ",".join(str(g["seed"]) for g in group)
        agg.append(entry)
    agg.sort(key=lambda r: (r["provider"], r["bucket_id"], r["mode"], str(r["tier"]),
                            r["model"]))
    written.append(_write_csv(out_dir / "big_table_aggregated.csv", agg, SUITE_AGG_KEYS))
    md = out_dir / "big_table_aggregated.md"
    if not agg:
        md.write_text("No rows generated.\n", encoding="utf-8")
    else:
        lines = ["| " + " | ".join(SUITE_MD_KEYS) + " |",
                 "|" + "|".join(["---"] * len(SUITE_MD_KEYS)) + "|"]
        lines += ["| " + " | ".join(str(r[h]) for h in SUITE_MD_KEYS) + " |" for r in agg]
        md.write_text("\n".join(lines) + "\n", encoding="utf-8")
    written.append(md)

    played: dict[str, dict[str, list[str]]] = {}
    for provider, model, tier in model_order:
        seed_provider, _ = names.get((provider, model), (provider, model))
        original = model.split("/", 1)[1] if (provider, model) in names and \
            names[(provider, model)][1].startswith("dummy_tier_") else model
        tiers = played.setdefault(seed_provider, {"A": [], "B": [], "C": []})
        tiers.setdefault(str(tier), []).append(original)
    stamp = re.search(r"(\d{8}_\d{6})$", manifest.get("run_id") or "")
    started = str(manifest.get("started_at") or "")
    metadata = {
        "created_at": stamp[1] if stamp else re.sub(r"[-:]", "", started[:19]).replace("T", "_"),
        "num_games_per_bucket": sweep.get("games_per_bucket"),
        "num_trials": sweep.get("trials_per_game"),
        "seeds": seeds,
        "temperature": sweep.get("temperature"),
        "num_workers": config.get("num_workers"),
        "providers": list(played),
        "buckets": [{k: bucket_info(b)[k] for k in SUITE_BUCKET_KEYS} | {"bucket_id": buckets[b]}
                    for b in bucket_order],
        "together_model_tiers": played.get("together", dict(default_tiers.get("together", {}))),
        "openai_model_tiers": played.get("openai", dict(default_tiers.get("openai", {}))),
    }
    written.append(_write(out_dir / "suite_metadata.json", metadata))
    return written
