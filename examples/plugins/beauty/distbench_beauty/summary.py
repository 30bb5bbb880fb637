"""The beauty family's summary (one record per model) and its SQL."""

from __future__ import annotations

from typing import Any

SUMMARY_SQL = """
select player, num_players, round(fraction, 4) as fraction,
       count(*) filter (where parse_status <> 'call_failed') as games,
       count(*) filter (where parse_status = 'call_failed') as missing_games,
       avg(case when parse_status = 'call_failed' then null
                when parse_status <> 'ok' then 0.0
                else greatest(0.0, least(1.0, 1.0 - regret / 100.0)) end) as quality,
       avg((parse_status = 'ok')::int) filter (where parse_status <> 'call_failed')
           as valid_rate,
       avg(greatest(0.0, least(1.0, 1.0 - regret / 100.0))) filter (where parse_status = 'ok')
           as quality_of_valid,
       avg(distance) as mean_distance,
       avg(regret) as mean_regret,
       avg(won::int) as win_rate,
       avg(guess) as mean_guess
from beauty_games
group by all
order by player, num_players, fraction
"""


def summarize(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """Per model: the headline first (quality: 1 - regret / 100 for a valid guess, the
    largest regret on 0-100 being 100; 0 for an invalid answer; over the answered games, a
    failed call left out and counted in ``missing_games``), the valid rate and the quality of
    valid answers; then the mean distance to the target, mean regret against the best
    response, win rate and mean guess (over valid answers)."""
    views = {r[0] for r in con.execute("select view_name from duckdb_views()").fetchall()}
    if "beauty_games" not in views:
        return []
    cur = con.execute(SUMMARY_SQL)
    columns = [d[0] for d in cur.description]
    return [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]
