"""How ``distbench compare`` cuts the fog family's rows (its ``Comparing.units`` hook):
unit = the game (seed, game index), group = the condition (board, forces, turn limit,
scouting and scout accuracy) and the opponent; its own metric: the raw score.
"""

from __future__ import annotations

from distbench.report.compare import (
    HEADLINE,
    FamilyUnits,
    Metric,
    answered_sums,
    select_items,
    unit_sql,
)

# Per seat and game: the score (win 1, draw 0.5); quality = the score when every answer of the
# seat was valid, 0 when one was not (forfeit), NULL when a model call failed (left out).
SQL = unit_sql(
    "scored",
    before="""WITH answers AS (
    SELECT run_id, shard_id, game_id, player AS seat,
           count(*) FILTER (WHERE report_status NOT IN ('ok', 'call_failed')) AS invalid,
           count(*) FILTER (WHERE report_status = 'call_failed')              AS failed
    FROM fog_reports GROUP BY ALL
),
per_agent AS (
    SELECT run_id, shard_id, game_id, 'a' AS seat, agent_a AS agent, agent_b AS opponent,
           seed, game_index, board_size, num_forces, max_turns, scouting, scout_accuracy,
           CASE winner WHEN 'a' THEN 1.0 WHEN 'draw' THEN 0.5 ELSE 0.0 END AS score
    FROM fog_games
    UNION ALL
    SELECT run_id, shard_id, game_id, 'b', agent_b, agent_a, seed, game_index, board_size,
           num_forces, max_turns, scouting, scout_accuracy,
           CASE winner WHEN 'b' THEN 1.0 WHEN 'draw' THEN 0.5 ELSE 0.0 END
    FROM fog_games
),
scored AS (
    SELECT p.*, coalesce(a.failed, 0) = 0 AS answered, coalesce(a.invalid, 0) = 0 AS valid,
           CASE WHEN coalesce(a.failed, 0) > 0 THEN NULL
                WHEN coalesce(a.invalid, 0) > 0 THEN 0.0 ELSE p.score END AS quality
    FROM per_agent AS p
    LEFT JOIN answers AS a USING (run_id, shard_id, game_id, seat)
)""",
    player="agent",
    grp="board_size || 'x' || board_size || ' k' || num_forces || ' t' || max_turns || ' '"
        " || CASE WHEN scouting THEN 'scout ' || CAST(scout_accuracy AS VARCHAR)"
        " ELSE 'no scouting' END"
        " || ' vs ' || CASE WHEN opponent = agent THEN 'self' ELSE opponent END",
    unit="'s' || CAST(seed AS VARCHAR) || '/g' || CAST(game_index AS VARCHAR)",
    sums=answered_sums("answered", "valid") + ",\n" + select_items(
        ("sum(score) FILTER (WHERE answered)", "score_sum"),
        ("count(*) FILTER (WHERE answered)", "score_n")))

UNITS = FamilyUnits("fog", "fog_games", "games", SQL,
                    (*HEADLINE, Metric("score", "higher")),
                    "seeds, conditions or opponents", ("fog_games", "fog_reports"))
