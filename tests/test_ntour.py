"""n-seat tournaments (issue 35): gama tables rated by Plackett–Luce through
``distbench tournament``."""

from __future__ import annotations

import numpy as np
from click.testing import CliRunner

from distbench.cli import main as cli_main
from distbench.engine.tournament import rate_tables
from distbench.report.ratings import DEFAULT_ALPHA


def test_gama_tournament_rates_players_by_plackett_luce(tmp_path):
    args = ["tournament", "--family", "gama", "--players", "scripted:equilibrium,scripted:random",
            "--option", "game=guessing", "--option", "rounds=3", "--num-instances", "4",
            "--output-dir", str(tmp_path), "--run-id", "nt"]
    result = CliRunner().invoke(cli_main.cli, args)
    assert result.exit_code == 0, result.output
    assert "Nash averaging is not defined" in result.output
    lines = [ln.split() for ln in result.output.splitlines() if ln.strip().startswith(("1 ", "2 "))]
    assert lines[0][1] == "scripted:equilibrium"  # planted: 0 is nearer U/3 than U is


def test_rate_tables_equals_choix():
    import choix

    rng = np.random.default_rng(3)
    games, rankings = [], []
    for _ in range(60):
        players = list(rng.permutation(4))
        scores = list(-np.arange(4) + rng.normal(0, 0.1, 4) - 0.5 * np.asarray(players))
        games.append((players, scores))
        rankings.append([players[k] for k in np.argsort(-np.asarray(scores))])
    out = rate_tables(("a", "b", "c", "d"), "gama", "r", games, seed=0, resamples=20)
    ours = {r["player"]: r["bt_strength"] for r in out.ratings}
    ref = choix.opt_rankings(4, rankings, alpha=DEFAULT_ALPHA)
    ref = ref - ref.mean()
    assert np.allclose([ours[x] for x in "abcd"], ref, atol=1e-6)
    assert all(r["nash_rating"] is None for r in out.ratings)
