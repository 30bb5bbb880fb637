"""The run summary of the openspiel family: one record per (game, player, opponent, mode).

Play mode: matches and those left out (a failed call), the rates of win / draw / loss /
forfeit over the answered matches with 95% Wilson intervals, the headline quality (win 1, draw
0.5, loss 0, forfeit 0) with its bootstrap interval over matches, the mean regret per move of
the evaluated player with its bootstrap interval over matches, and the NashConv of its policy
seen in play with its bootstrap interval (:mod:`.policy`). Logprob mode: the NashConv of the
policy read from next-token probabilities.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from distbench.report.bootstrap import BOOTSTRAP_SEED, bootstrap_mean_ci


def _views(con: Any) -> set[str]:
    return {r[0] for r in con.execute("select view_name from duckdb_views()").fetchall()}


def openspiel_summary(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """Summary records (see the module docstring); ``offload`` is not used."""
    views = _views(con)
    out = []
    if "matches" in views:
        out.extend(_play_records(con))
    if "openspiel_policies" in views:
        out.extend(_logprob_records(con))
    return out


def _play_records(con: Any) -> list[dict[str, Any]]:
    from distbench.games.openspiel.policy import play_nash_conv
    from distbench.games.openspiel.reference import reference
    from distbench.report.headline import headline
    from distbench.report.stats import wilson_interval

    rows = con.execute(
        "select game, player_a, player_b, match_id, game_index, seed, outcome_a, quality_a "
        "from matches order by game, player_a, player_b, match_id").fetchall()
    moves: dict[str, list[tuple[str, int, float | None]]] = {}
    for match_id, info, action, regret in con.execute(
            "select match_id, info_state, action, regret from moves "
            "where is_a and parse_status = 'ok' order by match_id, ply").fetchall():
        moves.setdefault(match_id, []).append((info, int(action), regret))
    groups: dict[tuple, list[tuple]] = {}
    for row in rows:
        groups.setdefault(tuple(row[:3]), []).append(row)
    out = []
    for (game, a, b), members in groups.items():
        answered = [m for m in members if m[6] != "call_failed"]
        n = len(answered)
        count = {k: sum(m[6] == k for m in answered) for k in ("win", "draw", "loss", "forfeit")}
        units: dict[tuple, list[float]] = {}
        for m in answered:
            u = units.setdefault((m[5], m[4]), [0.0, 0.0, 0.0])
            u[0] += m[7]
            u[1] += m[6] != "forfeit"
            u[2] += 1
        h = headline(*(list(x) for x in zip(*units.values(), strict=True))
                     if units else ([], [], []), len(members) - n)
        sums = np.array([sum(r for *_, r in moves.get(m[3], []) if r is not None)
                         for m in answered])
        cnt = np.array([sum(r is not None for *_, r in moves.get(m[3], [])) for m in answered])
        regret = float(sums.sum() / cnt.sum()) if n and cnt.sum() else None
        regret_ci = bootstrap_mean_ci(sums, cnt) if regret is not None else None
        try:
            ref = reference(game)
        except ValueError:
            ref = None
        nc, nc_ci = (None, None) if ref is None else play_nash_conv(
            ref, [[(i, act) for i, act, _ in moves.get(m[3], [])] for m in answered],
            seed=BOOTSTRAP_SEED)
        rec: dict[str, Any] = {
            "game": game, "player": a, "opponent": b, "mode": "play", "matches": len(members),
            "missing_matches": len(members) - n,
        }
        for k, c in count.items():
            rec[f"{k}_rate"] = c / n if n else None
            rec[f"{k}_rate_ci95"] = list(wilson_interval(c, n)) if n else None
        rec.update({
            "quality": h.quality, "quality_ci95": list(h.quality_ci95) if h.quality_ci95 else None,
            "valid_rate": h.valid_rate, "quality_of_valid": h.quality_of_valid,
            "regret_per_move": regret, "regret_per_move_ci95": list(regret_ci) if regret_ci else None,
            "moves_scored": int(cnt.sum()) if n else 0,
            "reference": ref.kind if ref else "none",
            "nash_conv": nc, "nash_conv_ci95": list(nc_ci) if nc_ci else None,
        })
        out.append(rec)
    return out


def _logprob_records(con: Any) -> list[dict[str, Any]]:
    from distbench.games.openspiel.policy import nash_conv
    from distbench.games.openspiel.reference import reference

    rows = con.execute(
        "select game, player_a, info_state, legal_action_ids, probs, parse_status "
        "from openspiel_policies order by game, player_a, info_state").fetchall()
    groups: dict[tuple, list[tuple]] = {}
    for row in rows:
        groups.setdefault(tuple(row[:2]), []).append(row)
    out = []
    for (game, a), members in groups.items():
        policy = {m[2]: dict(zip(m[3], m[4], strict=True)) for m in members
                  if m[5] == "ok" and m[4] is not None}
        out.append({
            "game": game, "player": a, "opponent": None, "mode": "logprob",
            "info_states": len(members), "valid_info_states": len(policy),
            "nash_conv": nash_conv(reference(game), policy), "nash_conv_ci95": None,
        })
    return out


def _fmt(value: Any, ci: Any = None) -> str:
    from distbench.report.headline import with_interval

    return with_interval(value, *(ci or (None, None)))


def format_summary(records: list[dict[str, Any]], width: int | None = None) -> str:
    """The openspiel summary for the terminal: per game, player and opponent, the headline
    quality, win and forfeit rates, mean regret per move and NashConv, each with its 95%
    interval."""
    from distbench.report.document import Table, format_console

    if not records:
        return "no matches"
    rows = []
    for r in records:
        if r["mode"] == "logprob":
            rows.append((r["game"], r["player"], "-", "logprob", r["info_states"], "-", "-",
                         "-", "-", "-", _fmt(r["nash_conv"]),
                         f"{r['valid_info_states']}/{r['info_states']} states read"))
            continue
        rows.append((r["game"], r["player"], r["opponent"], "play", r["matches"],
                     r["missing_matches"], _fmt(r["quality"], r["quality_ci95"]),
                     _fmt(r["win_rate"], r["win_rate_ci95"]),
                     _fmt(r["forfeit_rate"], r["forfeit_rate_ci95"]),
                     _fmt(r["regret_per_move"], r["regret_per_move_ci95"]),
                     _fmt(r["nash_conv"], r["nash_conv_ci95"]), r["reference"]))
    return format_console(Table(
        "openspiel_summary", "OpenSpiel games",
        ["game", "player", "opponent", "mode", "matches", "missing", "quality [95% CI]",
         "win rate [95% CI]", "forfeit rate [95% CI]", "regret/move [95% CI]",
         "NashConv [95% CI]", "reference"], rows,
        note="quality: win 1, draw 0.5, loss 0, forfeit 0 (an illegal or unparsable answer "
             "forfeits), over matches whose calls went through (missing: a call failed). "
             "regret/move: the best action's value minus the played one's under the reference "
             "(minimax, or an equilibrium from CFR+), over the player's legal moves. NashConv: "
             "of the player's policy (from its moves in play, unseen information states "
             "uniform; or read from next-token probabilities), the matrix family's "
             "exploitability carried to sequential games.", keys=3), width)
