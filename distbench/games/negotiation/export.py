"""``distbench export`` of a negotiation run: one record per episode, for clembench users.

``episodes.json`` is a list of records in episode order (instance, mode, language, seat
order), each with the instance (``game_id``, ``item_types`` in the plural as the players saw
them, ``item_counts``, both players' values), the players, the ``dialogue`` (every answer in order: seat,
player, what was asked, the text verbatim, how it parsed, the proposal read from it), both
proposals, both scores, the outcome (``success``, ``lose``, ``aborted`` with its reason and
seat) and two score blocks:

- ``clembench``: the keys clembench's dond game master logs and its scorer writes, with its
  meanings (``max_pareto_improvement`` is clembench's normaliser, ``pareto_improvement`` the
  episode's gap, ``Main Score`` the 0-100 episode score, NaN there and ``null`` here when
  aborted; ``Sum of Points`` and ``Pareto Optimal`` are ``null`` when aborted, as clembench
  does not log them then);
- ``distbench``: the run's own columns (``main_score``, its ``max_pareto_improvement`` = the
  episode's gap, ``pareto_optimal``, ``sum_score_ratio``, ``comp_score``...).

``summary.json`` holds the run summary (``queries/negotiation_summary.sql``).

``--format clembench`` (:func:`export_clembench`) writes the results tree clembench writes and
its ``clemeval`` reads instead: ``<player a>--<player b>/dond/<experiment>/<episode>/`` with
``instance.json``, ``interactions.json`` and ``scores.json``, where

- the model folder names the player in seat a (clembench's player A, who speaks first), then
  the one in seat b, as clemcore's ``Model.to_identifier`` joins them (``/`` in a name is
  written ``_``: clemeval splits paths at it);
- the experiment is the instance file's experiment (``semi_en``) for clembench instances,
  ``<mode>_<lang>`` for generated ones;
- the episode folder is ``instance_<game_id>`` (5 digits, clembench's ``ResultsFolder``) when the
  experiment's instances have distinct game ids, else ``episode_<n>`` in episode order
  (``EpisodeResultsFolder``), ``n`` from 1;
- ``scores.json`` is ``{"meta", "players", "round scores", "episode scores"}``, the episode
  scores those of the ``clembench`` block above with clembench's ``NaN`` (not ``null``) for
  ``Main Score`` of an aborted episode, so clemeval's ``% Played`` and ``Quality Score`` are
  distbench's ``clem_pct_played`` and ``clem_quality_score`` of the pairing;
- ``interactions.json`` has clemcore's recorder keys (``meta``, ``player_models``,
  ``players`` GM / Player 1 / Player 2, ``turns``: one round per answer, each answer a
  ``get message`` event from its player to the GM, the proposal read from it a ``parse``
  event of the GM; timestamps are null: distbench keeps none per answer).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from distbench.games.negotiation.summary import negotiation_summary
from distbench.store.catalog import fetch_records
from distbench.store.writer import strict_json

_EPISODES_SQL = """
SELECT * FROM episodes ORDER BY seed, instance_index, instance_id, mode, lang, player_a,
                               player_b, seat_order, episode_id
"""
_TURNS_SQL = """
SELECT episode_id, turn, player, player_label, kind, raw_text, parse_status, parse_detail,
       proposal
FROM turns ORDER BY episode_id, turn
"""






def _slug(name: str) -> str:
    return str(name).replace("/", "_").replace("\\", "_")


def _experiment(e: dict[str, Any]) -> str:
    parts = str(e["instance_id"]).split("/")
    if e["seed"] == -1 and len(parts) >= 3:  # a clembench file: <file stem>/<experiment>/<id>
        return _slug(parts[-2])
    return f"{e['mode']}_{e['lang']}"


def _interactions(rec: dict[str, Any], experiment: str, folder: str) -> dict[str, Any]:
    players = {"GM": {"game_role": "Game Master", "model_name": "programmatic"},
               "Player 1": {"game_role": "Negotiator A", "model_name": rec["player_a"]},
               "Player 2": {"game_role": "Negotiator B", "model_name": rec["player_b"]}}
    name = {"a": "Player 1", "b": "Player 2"}
    turns = []
    for t in rec["dialogue"]:
        who = name.get(str(t.get("player") or "")[-1:], str(t.get("player")))
        events = [{"from": who, "to": "GM", "timestamp": None,
                   "action": {"type": "get message", "content": t["raw_text"],
                              "kind": t["kind"]}},
                  {"from": "GM", "to": "GM", "timestamp": None,
                   "action": {"type": "parse", "content": t["parse_status"],
                              "detail": t["parse_detail"], "proposal": t["proposal"]}}]
        turns.append(events)
    return {
        "meta": {"game_name": "dond", "experiment_name": experiment,
                 "game_id": rec["game_id"], "results_folder": folder,
                 "clem_version": None, "round_count": len(turns), "completed": True},
        "player_models": {"Player 1": rec["player_a"], "Player 2": rec["player_b"]},
        "players": players,
        "turns": turns or [[]],
    }


class TreeConflict(ValueError):
    """The results tree already holds another episode where this export would write one."""


def export_clembench(con: Any, out_dir: Path) -> list[Path]:
    """Writes a negotiation run as clembench's results tree (the module docstring) into
    ``out_dir``; ``clemeval`` reads it as it reads clembench's own.

    Several runs merge into one tree (their pairs and experiments side by side; a file already
    there with the same text is left as it is, so exporting a run again changes nothing); an
    episode file that would replace another's text is refused (:class:`TreeConflict`) before
    anything is written."""
    files = dict(_tree_files(episode_records(con), out_dir))
    conflicts = [path for path, text in files.items()
                 if path.exists() and path.read_text(encoding="utf-8") != text]
    if conflicts:
        raise TreeConflict(
            f"{out_dir} already holds {len(conflicts)} other episode file(s) where this run's "
            f"would go (e.g. {conflicts[0].relative_to(out_dir)}); nothing was written: export "
            "into another --out")
    for path, text in files.items():
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return list(files)


def _tree_files(records: list[dict[str, Any]], out_dir: Path) -> Iterator[tuple[Path, str]]:
    """(path, text) of every file of the tree of ``records`` under ``out_dir``."""
    folders: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for rec in records:
        pair = f"{_slug(rec['player_a'])}--{_slug(rec['player_b'])}"
        folders.setdefault((pair, _experiment(rec)), []).append(rec)
    for (pair, experiment), recs in folders.items():
        ids = [r["game_id"] for r in recs]
        by_id = len(set(ids)) == len(ids) and all(isinstance(i, int) and i >= 0 for i in ids)
        for n, rec in enumerate(recs, start=1):
            episode = f"instance_{rec['game_id']:05d}" if by_id else f"episode_{n:05d}"
            folder = out_dir / pair / "dond" / experiment / episode
            scores = dict(rec["clembench"])
            if scores["Main Score"] is None:
                scores["Main Score"] = float("nan")  # as clembench logs an aborted episode
            instance = {"game_id": rec["game_id"], "instance_id": rec["instance_id"],
                        "mode": rec["mode"], "lang": rec["lang"],
                        "item_types": rec["item_types"], "item_counts": rec["item_counts"],
                        "player_a_values": rec["player_a_values"],
                        "player_b_values": rec["player_b_values"],
                        "max_turns": rec["max_messages"], "episode_id": rec["episode_id"]}
            payloads = {
                "instance.json": instance,
                "interactions.json": _interactions(rec, experiment, pair),
                "scores.json": {"meta": {"game_name": "dond", "experiment_name": experiment,
                                         "episode_id": rec["episode_id"]},
                                "players": {"Player 1": rec["player_a"],
                                            "Player 2": rec["player_b"]},
                                "round scores": {}, "episode scores": scores},
            }
            for name, payload in payloads.items():
                yield folder / name, json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _clembench_scores(e: dict[str, Any]) -> dict[str, Any]:
    aborted = bool(e["aborted"])
    total = (e["score_a"] + e["score_b"]) if e["success"] else 0
    return {
        "Aborted": int(aborted), "Lose": int(e["lose"]), "Success": int(e["success"]),
        "Main Score": e["clem_quality"],
        "Sum of Points": None if aborted else total / e["max_sum_score"],
        "Pareto Optimal": None if aborted else int(e["clem_pareto_improvement"] == 0),
        "sum_of_scores": total,
        "max_sum_of_scores": e["max_sum_score"],
        "max_player_scores": max(e["max_score_a"], e["max_score_b"]),
        "max_pareto_improvement": e["clem_max_pareto_improvement"],
        "pareto_improvement": e["clem_pareto_improvement"],
        "episode_score": None if e["clem_quality"] is None else e["clem_quality"] / 100.0,
    }


def episode_records(con: Any) -> list[dict[str, Any]]:
    """The per-episode records of the run behind ``con`` (a catalog connection, whose
    ``episodes`` view has the derived ``clem_*`` columns)."""
    dialogue: dict[str, list[dict[str, Any]]] = {}
    for t in fetch_records(con, _TURNS_SQL):
        dialogue.setdefault(t.pop("episode_id"), []).append(t)
    out = []
    for e in fetch_records(con, _EPISODES_SQL):
        out.append({
            "episode_id": e["episode_id"], "instance_id": e["instance_id"],
            "game_id": e["instance_index"], "seed": e["seed"], "mode": e["mode"],
            "lang": e["lang"], "player_a": e["player_a"], "player_b": e["player_b"],
            "seat_order": e["seat_order"], "item_types": e["item_types"],
            "item_counts": e["counts"], "player_a_values": e["values_a"],
            "player_b_values": e["values_b"], "max_messages": e["max_messages"],
            "dialogue": dialogue.get(e["episode_id"], []),
            "player_a_proposal": e["proposal_a"], "player_b_proposal": e["proposal_b"],
            "score_a": e["score_a"], "score_b": e["score_b"], "success": e["success"],
            "lose": e["lose"], "aborted": e["aborted"], "abort_reason": e["abort_reason"],
            "abort_player": e["abort_player"],
            "clembench": _clembench_scores(e),
            "distbench": {k: e[k] for k in (
                "main_score", "max_pareto_improvement", "pareto_optimal", "sum_score_ratio",
                "comp_score", "max_sum_score", "max_score_a", "max_score_b",
                "pareto_frontier_size")},
        })
    return out


def export_json(con: Any, out_dir: Path, run_id: str) -> list[Path]:
    """Writes ``episodes.json`` and ``summary.json`` of a negotiation run into ``out_dir``."""
    episodes = episode_records(con)
    summary = [strict_json(r) for r in negotiation_summary(con)]
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, payload in (("episodes.json", episodes),
                          ("summary.json", {"run_id": run_id, "groups": summary})):
        path = out_dir / name
        path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
