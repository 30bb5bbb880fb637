"""The beauty family's summary (one record per model) and its SQL."""

from __future__ import annotations

from typing import Any

SUMMARY_SQL = """
select player, num_players, round(fraction, 4) as fraction,
       count(*) as games,
       avg((parse_status = 'ok')::int) as valid_rate,
       avg(distance) as mean_distance,
       avg(regret) as mean_regret,
       avg(won::int) as win_rate,
       avg(guess) as mean_guess
from beauty_games
group by all
order by player, num_players, fraction
"""


def summarize(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """Per model: games, valid rate, mean distance to the target, mean regret against the
    best response, win rate and mean guess (over valid answers)."""
    views = {r[0] for r in con.execute("select view_name from duckdb_views()").fetchall()}
    if "beauty_games" not in views:
        return []
    cur = con.execute(SUMMARY_SQL)
    columns = [d[0] for d in cur.description]
    return [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]
