"""The ``gama`` family's summary.

Per (game, variant, table): ``games`` played; ``complete`` / ``forfeit`` / ``failed`` games;
**GAMA's score** (0-100, :mod:`.scoring`) as the mean over the complete games (a forfeited game
is not a GAMA game: GAMA re-asks until an answer parses; it is counted, not scored) with its
95% interval (a bootstrap over games: the runs of GAMA's leaderboard cell); the mean distance
of the moves from the game's equilibrium with its interval (NULL where the game has none); the
invalid answers and their share of the moves, and the re-asks. A table of several players also
gets one record per player: its seats' mean finishing rank and payoff; and when the run has
mixed tables, one ``rating`` record per player: its Plackett–Luce strength from every mixed
game's finishing order (``gama_players.rank``, ties as ties; forfeiting seats last; games ended
by a failed call left out), with the simultaneous 95% band of
:func:`distbench.report.ratings.bootstrap_plackett_luce` (games resampled within each table
make-up). Nash averaging is not reported: it rates from a two-player meta-game, which a game of
n seats is not (see :mod:`distbench.report.ratings`).
"""

from __future__ import annotations

import math
import textwrap
from typing import Any

import numpy as np

from distbench.report.bootstrap import start_bootstrap_ci
from distbench.report.document import fit_lines

_GAMES_SQL = """
SELECT game, variant, model AS table_label, count(*) AS games,
       count(*) FILTER (WHERE status = 'ok') AS complete,
       count(*) FILTER (WHERE status = 'forfeit') AS forfeit,
       count(*) FILTER (WHERE status = 'failed') AS failed,
       list(gama_score ORDER BY game_id) FILTER (WHERE status = 'ok' AND gama_score IS NOT NULL)
           AS scores,
       list(equilibrium_distance ORDER BY game_id) FILTER (WHERE equilibrium_distance IS NOT NULL)
           AS distances,
       sum(invalid_answers) AS invalid, sum(reasks) AS reasks
FROM gama_games GROUP BY ALL ORDER BY ALL
"""
_MOVES_SQL = """
SELECT g.game, g.variant, g.model AS table_label, count(*) AS moves
FROM gama_moves m JOIN gama_games g USING (run_id, game_id) GROUP BY ALL
"""
_PLAYERS_SQL = """
SELECT g.game, g.variant, g.model AS table_label, p.player, count(*) AS seats,
       avg(p.rank) AS mean_rank, avg(p.total_payoff) AS mean_payoff
FROM gama_players p JOIN gama_games g USING (run_id, game_id)
WHERE g.model = 'mixed' AND g.status <> 'failed' GROUP BY ALL ORDER BY ALL
"""
_ORDERS_SQL = """
SELECT p.game_id, list(p.player ORDER BY p.seat), list(p.rank ORDER BY p.seat)
FROM gama_players p JOIN gama_games g USING (run_id, game_id)
WHERE g.model = 'mixed' AND g.status <> 'failed' GROUP BY ALL ORDER BY ALL
"""
RATING_RESAMPLES = 500


def plackett_luce_records(con: Any, *, resamples: int = RATING_RESAMPLES, seed: int = 0
                          ) -> list[dict[str, Any]]:
    """One ``rating`` record per player of the run's mixed tables (module docstring), best
    first: ``player``, ``games``, ``strength`` (centred natural-log), ``strength_lo``,
    ``strength_hi``; [] without two players."""
    rows = con.execute(_ORDERS_SQL).fetchall()
    labels = sorted({p for _, players, _ in rows for p in players})
    if len(labels) < 2:
        return []
    from distbench.report.ratings import bootstrap_plackett_luce  # numba: mixed tables only

    index = {p: i for i, p in enumerate(labels)}
    games = [([index[p] for p in players], [-float(r) for r in ranks])
             for _, players, ranks in rows]
    fit = bootstrap_plackett_luce(len(labels), games, seed=seed, resamples=resamples)
    played = {p: sum(p in players for _, players, _ in rows) for p in labels}
    out = [{"kind": "rating", "player": p, "games": played[p], "strength": float(fit.theta[i]),
            "strength_lo": float(fit.low[i]), "strength_hi": float(fit.high[i])}
           for i, p in enumerate(labels)]
    return sorted(out, key=lambda r: -r["strength"])


def _mean_ci(values: list[float], offload: Any) -> tuple[float | None, Any]:
    v = np.asarray([x for x in values if x is not None], dtype=np.float64)
    if not len(v):
        return None, lambda: None
    wait = start_bootstrap_ci(v, np.ones(len(v)), offload) if len(v) > 1 else (lambda: None)
    return float(v.mean()), wait


def summarize(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """One record per (game, variant, table) (``kind = 'table'``) and, for mixed tables, per
    player (``kind = 'player'``); see the module docstring."""
    names = {r[0] for r in con.execute("select view_name from duckdb_views()").fetchall()}
    names |= {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}
    if "gama_games" not in names:
        return []
    moves = {}
    if "gama_moves" in names:
        moves = {r[:3]: r[3] for r in con.execute(_MOVES_SQL).fetchall()}
    cur = con.execute(_GAMES_SQL)
    cols = [d[0] for d in cur.description]
    pending = []
    for row in cur.fetchall():
        rec = dict(zip(cols, row, strict=True))
        out = {"kind": "table", **{k: rec[k] for k in ("game", "variant", "table_label",
                                                       "games", "complete", "forfeit",
                                                       "failed", "invalid", "reasks")}}
        out["moves"] = moves.get((rec["game"], rec["variant"], rec["table_label"]), 0)
        out["invalid_rate"] = out["invalid"] / out["moves"] if out["moves"] else None
        out["gama_score"], score_ci = _mean_ci(list(rec["scores"] or []), offload)
        out["distance"], dist_ci = _mean_ci(list(rec["distances"] or []), offload)
        pending.append((out, score_ci, dist_ci))
    records = []
    for out, score_ci, dist_ci in pending:
        out["gama_score_lo"], out["gama_score_hi"] = score_ci() or (None, None)
        out["distance_lo"], out["distance_hi"] = dist_ci() or (None, None)
        records.append(out)
    if "gama_players" in names:
        cur = con.execute(_PLAYERS_SQL)
        cols = [d[0] for d in cur.description]
        records += [{"kind": "player", **dict(zip(cols, r, strict=True))}
                    for r in cur.fetchall()]
        records += plackett_luce_records(con)
    return records


def _cell(rec: dict[str, Any], name: str, digits: int = 1) -> str:
    value = rec.get(name)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    lo, hi = rec.get(f"{name}_lo"), rec.get(f"{name}_hi")
    text = f"{value:.{digits}f}"
    return text + (f" [{lo:.{digits}f}, {hi:.{digits}f}]" if lo is not None else "")


def _grid(head: tuple[str, ...], rows: list[tuple[str, ...]], width: int | None,
          keys: int) -> list[str]:
    return fit_lines(list(head), [list(x) for x in rows], width, keys=keys)


def format_summary(records: list[dict[str, Any]], width: int | None = None) -> str:
    """The console summary: per game and table, GAMA's score with its 95% interval over the
    complete games, the distance to equilibrium, the invalid answers; then, for mixed tables,
    each player's mean rank and payoff. ``width``: columns the lines may use (tables cut into
    blocks of columns, the note wrapped); None: one line per row however wide."""
    tables = [r for r in records if r.get("kind") == "table"]
    if not tables:
        return "no gama games"
    # the headline and the invalid answers first: the block a narrow console shows first
    head = ("game", "table", "GAMA score [95% CI]", "invalid", "forfeit",
            "distance to eq. [95% CI]", "games", "complete", "failed", "re-asks")
    rows = [(r["game"] + (f" ({r['variant']})" if r["variant"] else ""), r["table_label"],
             _cell(r, "gama_score"), f"{r['invalid']}/{r['moves']}", str(r["forfeit"]),
             _cell(r, "distance", 2), str(r["games"]), str(r["complete"]), str(r["failed"]),
             str(r["reasks"])) for r in tables]
    note = ("gama summary (GAMA's score 0-100 over the complete games, bootstrap interval over "
            "games; distance: mean distance of the moves from the equilibrium, '-' where the "
            "game has none; invalid: answers that did not parse or were out of range / all "
            "moves)")
    text = [*(textwrap.wrap(note, width) if width else [note]), *_grid(head, rows, width, 2)]
    players = [r for r in records if r.get("kind") == "player"]
    if players:
        head = ("game", "player", "seats", "mean rank", "mean payoff")
        rows = [(p["game"], p["player"], str(p["seats"]), f"{p['mean_rank']:.2f}",
                 "-" if p["mean_payoff"] is None else f"{p['mean_payoff']:.2f}")
                for p in players]
        text += ["", "players of mixed tables (rank 1 = best)", *_grid(head, rows, width, 2)]
    ratings = [r for r in records if r.get("kind") == "rating"]
    if ratings:
        head = ("player", "games", "Plackett-Luce strength [95% simultaneous band]")
        rows = [(r["player"], str(r["games"]), _cell(r, "strength", 2)) for r in ratings]
        text += ["", "ratings from each mixed game's finishing order (Plackett-Luce)",
                 *_grid(head, rows, width, 1)]
    return "\n".join(text)
