"""The run summary of the fog family: one record per pairing and scouting condition."""

from __future__ import annotations

from typing import Any

import numpy as np

from distbench.games.fog.metrics import game_quality, score_rate_ci, winner_scores

PREDICTION_COLUMNS = ("action_brier_a", "action_brier_b", "objective_brier_a",
                      "objective_brier_b")
"""Mean Brier scores of the predicted enemy actions and objectives, per seat."""


def fog_summary(con, offload: Any = None) -> list[dict[str, Any]]:
    """One record per (agent_a, agent_b, scout_accuracy, scouting): outcomes with the 95%
    Wilson interval of player a's score rate (draws count half; within [0, 1], as every rate
    of :mod:`distbench.report.stats`), and mean belief metrics per seat (computed here: ``offload``,
    a run's place for numeric work, is not used)."""
    tables = {r[0] for r in con.execute("select view_name from duckdb_views()").fetchall()}
    if "fog_games" not in tables:
        return []
    columns = {d[0] for d in con.execute("select * from fog_games limit 0").description}
    # the prediction scores (runs made before they existed lack them: NULL)
    extra = [c if c in columns else f"NULL AS {c}" for c in PREDICTION_COLUMNS]
    rows = con.execute(
        "select agent_a, agent_b, scout_accuracy, scouting, winner, turns, brier_a, brier_b, "
        "log_loss_a, log_loss_b, calibration_error_a, calibration_error_b, valid_reports_a, "
        f"valid_reports_b, reports_a, reports_b, {', '.join(extra)}, run_id, shard_id, game_id "
        "from fog_games order by game_id, run_id, shard_id").fetchall()
    answers = _answer_counts(con, tables)
    groups: dict[tuple, list[tuple]] = {}
    for row in rows:
        groups.setdefault(tuple(row[:4]), []).append(row)
    out = []
    for key, members in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        arr = list(zip(*members, strict=True))
        winners = np.array(arr[4], dtype=object)
        mean, low, high = score_rate_ci(winner_scores(winners, np.ones(len(winners), bool)))

        def avg(values) -> float | None:
            v = np.array([np.nan if x is None else x for x in values], dtype=np.float64)
            return float(np.nanmean(v)) if np.isfinite(v).any() else None

        out.append({
            "agent_a": key[0], "agent_b": key[1], "scout_accuracy": key[2], "scouting": key[3],
            "games": len(members), "wins_a": int((winners == "a").sum()),
            "wins_b": int((winners == "b").sum()), "draws": int((winners == "draw").sum()),
            "score_a": mean, "score_a_ci_low": low, "score_a_ci_high": high,
            "mean_turns": avg(arr[5]),
            "brier_a": avg(arr[6]), "brier_b": avg(arr[7]),
            "log_loss_a": avg(arr[8]), "log_loss_b": avg(arr[9]),
            "calibration_error_a": avg(arr[10]), "calibration_error_b": avg(arr[11]),
            "valid_report_rate_a": (sum(arr[12]) / sum(arr[14])) if sum(arr[14]) else None,
            "valid_report_rate_b": (sum(arr[13]) / sum(arr[15])) if sum(arr[15]) else None,
            **{c: avg(arr[16 + i]) for i, c in enumerate(PREDICTION_COLUMNS)},
        })
        games = [tuple(m[-3:]) for m in members]
        # self-play (one player in both seats): either seat's answers are the player's own,
        # so an invalid answer in either seat forfeits the game for both (GAMES.md)
        both = key[0] == key[1]
        for seat in ("a", "b"):
            invalid, failed = (np.array([sum(answers.get((*g, s), (0, 0))[i]
                                             for s in (("a", "b") if both else (seat,)))
                                         for g in games]) for i in (0, 1))
            scores = winner_scores(winners, np.full(len(winners), seat == "a"))
            out[-1].update(_seat_headline(game_quality(scores, invalid, failed), invalid,
                                          failed, seat))
    return out


def _answer_counts(con, tables: set[str]) -> dict[tuple, tuple[int, int]]:
    """(run_id, shard_id, game_id, seat) -> (invalid reports, failed calls) of that seat."""
    if "fog_reports" not in tables:
        return {}
    return {tuple(r[:4]): (int(r[4]), int(r[5])) for r in con.execute(
        "select run_id, shard_id, game_id, player, "
        "count(*) filter (where report_status not in ('ok', 'call_failed')), "
        "count(*) filter (where report_status = 'call_failed') "
        "from fog_reports group by all").fetchall()}


def _seat_headline(quality: np.ndarray, invalid: np.ndarray, failed: np.ndarray,
                   seat: str) -> dict[str, Any]:
    """The headline of one seat over a group's games (a game is one unit): ``quality_<seat>``
    over the answered games, ``valid_rate_<seat>`` (games without an invalid answer),
    ``quality_of_valid_<seat>``, ``missing_<seat>`` (games left out: a model call failed)."""
    from distbench.report.headline import headline

    answered = ~np.isnan(quality)
    valid = answered & (invalid == 0)
    h = headline(np.where(answered, quality, 0.0), valid.astype(float),
                 answered.astype(float), int((failed > 0).sum()))
    out = h.record()
    return {(f"{k}_{seat}" if not k.endswith("_ci95") else f"{k[:-5]}_{seat}_ci95"): v
            for k, v in out.items()}


def format_summary(records: list[dict[str, Any]], width: int | None = None) -> str:
    """The fog summary for the terminal: per pairing and scouting condition, the games and
    outcomes, player a's score rate with its Wilson interval, and both seats' belief scores
    (rounded to what the intervals support)."""
    from distbench.report.document import Table, format_console

    if not records:
        return "no games"
    rows = []
    for r in records:
        scouting = f"acc {r['scout_accuracy']:g}" if r["scouting"] else "off"
        qa_low, qa_high = r.get("quality_a_ci95") or (None, None)
        qb_low, qb_high = r.get("quality_b_ci95") or (None, None)
        rows.append((r["agent_a"], r["agent_b"], scouting, r["games"],
                     r.get("missing_a", 0) + r.get("missing_b", 0),
                     r.get("quality_a"), qa_low, qa_high, r.get("valid_rate_a"),
                     r.get("quality_b"), qb_low, qb_high, r.get("valid_rate_b"),
                     f"{r['wins_a']}-{r['draws']}-{r['wins_b']}", r["score_a"],
                     r["score_a_ci_low"], r["score_a_ci_high"], r["brier_a"], r["brier_b"],
                     r["log_loss_a"], r["log_loss_b"], r["valid_report_rate_a"],
                     r["valid_report_rate_b"], r.get("action_brier_a"),
                     r.get("action_brier_b"), r.get("objective_brier_a"),
                     r.get("objective_brier_b")))
    return format_console(Table(
        "fog_summary", "Fog of war",
        ["agent a", "agent b", "scouting", "games", "missing", "quality_a", "quality_a_ci95_low",
         "quality_a_ci95_high", "valid a", "quality_b", "quality_b_ci95_low",
         "quality_b_ci95_high", "valid b", "W-D-L (a)", "score_a", "score_a_ci95_low",
         "score_a_ci95_high", "brier a", "brier b", "log loss a", "log loss b",
         "valid reports a", "valid reports b", "action brier a", "action brier b",
         "objective brier a", "objective brier b"], rows,
        note="quality (the headline, per seat): the game's score (win 1, draw 1/2) when "
             "every answer of the seat was valid, 0 when one was not (forfeit), over the "
             "answered games (missing: games where a model call failed, left out); valid: "
             "share of games without an invalid answer. score a: player a's score rate (win 1, draw 1/2), 95% Wilson interval; Brier "
             "and log loss of the power beliefs, and Brier of the predicted enemy actions "
             "and objectives (lower is better), over valid reports.", keys=3), width)
