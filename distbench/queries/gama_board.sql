-- GAMA-Bench's leaderboard from imported records (`distbench import gama`): per board model, the
-- eight games' cells (the mean GAMA score of its five runs _v1_1.._5; Bar from the implicit
-- records, Auction from the first-price ones) and Overall (the mean of the eight unrounded
-- cells), rounded to one decimal half to even as numpy rounds GAMA's board (x * 10 rounded to an
-- even integer, over 10: 83.55, stored as 835.5 tenths, rounds up); `runs`
-- counts the run scores found (40 for a full row).
WITH cells AS (
    SELECT model_label, game, avg(gama_score) AS cell, count(*) AS runs
    FROM gama_games
    WHERE harness = 'gama-bench' AND model_label IS NOT NULL AND version = 'v1'
      AND run_index BETWEEN 1 AND 5 AND variant IN ('', 'implicit', 'first') AND status = 'ok'
    GROUP BY model_label, game
)
SELECT model_label AS model,
       round_even(avg(cell) * 10, 0) / 10 AS overall,
       round_even(max(cell) FILTER (WHERE game = 'guessing') * 10, 0) / 10 AS guessing,
       round_even(max(cell) FILTER (WHERE game = 'bar') * 10, 0) / 10 AS bar,
       round_even(max(cell) FILTER (WHERE game = 'dollar') * 10, 0) / 10 AS dollar,
       round_even(max(cell) FILTER (WHERE game = 'goods') * 10, 0) / 10 AS goods,
       round_even(max(cell) FILTER (WHERE game = 'diner') * 10, 0) / 10 AS diner,
       round_even(max(cell) FILTER (WHERE game = 'auction') * 10, 0) / 10 AS auction,
       round_even(max(cell) FILTER (WHERE game = 'battle') * 10, 0) / 10 AS battle,
       round_even(max(cell) FILTER (WHERE game = 'pirate') * 10, 0) / 10 AS pirate,
       sum(runs) AS runs
FROM cells
GROUP BY model_label
ORDER BY avg(cell) DESC;
