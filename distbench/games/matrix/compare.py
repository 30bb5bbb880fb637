"""How ``distbench compare`` cuts the matrix family's rows (its ``Comparing.units`` hook):
unit = the game (``game_id`` = bucket, seed, game index), group = the answer mode; its own
metrics: exploitability and Nash gap over valid answers.
"""

from __future__ import annotations

from distbench.report.compare import HEADLINE, VALID_ONLY, FamilyUnits, Metric

# quality_of_valid: the mean quality of the valid answers (a valid answer's quality).
SQL = """
SELECT
    run_id,
    provider || ':' || model                                         AS player,
    mode                                                             AS grp,
    game_id                                                          AS unit,
    sum(quality) FILTER (WHERE isfinite(quality))                    AS quality_sum,
    count(quality) FILTER (WHERE isfinite(quality))                  AS quality_n,
    CAST(count(*) FILTER (WHERE parse_status = 'ok') AS DOUBLE)      AS valid_rate_sum,
    count(*) FILTER (WHERE answered)                                 AS valid_rate_n,
    sum(quality) FILTER (WHERE parse_status = 'ok' AND isfinite(quality)) AS quality_of_valid_sum,
    count(quality) FILTER (WHERE parse_status = 'ok' AND isfinite(quality)) AS quality_of_valid_n,
    sum(exploitability) FILTER (WHERE parse_status = 'ok' AND isfinite(exploitability)) AS exploitability_sum,
    count(exploitability) FILTER (WHERE parse_status = 'ok' AND isfinite(exploitability)) AS exploitability_n,
    sum(nash_gap) FILTER (WHERE parse_status = 'ok' AND isfinite(nash_gap))             AS nash_gap_sum,
    count(nash_gap) FILTER (WHERE parse_status = 'ok' AND isfinite(nash_gap))           AS nash_gap_n
FROM matrix_scored
GROUP BY ALL
ORDER BY run_id, player, grp, unit
"""

UNITS = FamilyUnits("matrix", "trials", "games", SQL,
                    (*HEADLINE, Metric("exploitability", "lower", VALID_ONLY),
                     Metric("nash_gap", "lower", VALID_ONLY)),
                    "buckets, seeds or answer modes", ("trials", "games"))
