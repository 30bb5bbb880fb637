"""A run asks before thousands of model calls (refuses off a terminal unless --yes), and
--limit N caps the games per cell."""

from __future__ import annotations

import textwrap

from cli_server import distbench as _cli

from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run


def test_a_large_run_is_refused_off_a_terminal_and_limit_makes_it_small(tmp_path):
    with start_server(ServerConfig()) as server:
        model = ["--llm-type", "llamacpp", "--base-url", server.url, "--no-parallel"]
        # one request per trial: 10,000 requests
        big = _cli("run", *model, "--max-n", "1", "--num-games", "100", "--num-trials", "100",
                   "--run-id", "big", cwd=tmp_path)
        assert big.returncode == 2
        assert big.stderr.strip() == (
            "error: this run sends about 10,000 model requests (more than 5,000): add --yes to "
            "start it, or --limit N to play at most N games per cell")
        assert not (tmp_path / "results" / "big").exists()  # nothing started, nothing written
        # the guard counts requests as they are sent: the same trials in 100 requests of 100
        # samples (--max-n 128, the provider's) are not asked about
        many = _cli("run", *model, "--num-games", "100", "--num-trials", "100", "--limit", "60",
                    "--max-n", "50", "--run-id", "many", cwd=tmp_path)
        assert many.returncode == 0, many.stderr
        assert "about 120 model requests (6,000 samples" in many.stderr
        small = _cli("run", *model, "--num-games", "100", "--num-trials", "10", "--limit", "3",
                     "--run-id", "small", cwd=tmp_path)
        assert small.returncode == 0, small.stderr
        assert "about 3 model requests (30 samples" in small.stderr
        con = open_run(tmp_path / "results" / "small")
        assert con.execute("select count(distinct game_id), count(*) from trials").fetchone() == (3, 30)
        # the dummy is free: no question whatever the size
        free = _cli("run", "--llm-type", "dummy", "--num-games", "100", "--num-trials", "100",
                    "--no-parallel", "--run-id", "free", cwd=tmp_path)
        assert free.returncode == 0, free.stderr


def test_sweep_limit_caps_every_family_table(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(textwrap.dedent("""
        games_per_bucket = 50
        trials_per_game = 2
        buckets = ["2x2_lowVar_pure"]
        modes = ["pure"]
        [providers."scripted-free"]
        type = "dummy"
        tiers.A = ["random"]
        [fog]
        games = 9
    """))
    out = _cli("sweep", "run", str(spec), "--limit", "2", "--run-id", "s", "--no-parallel",
               cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    con = open_run(tmp_path / "results" / "s")
    assert con.execute("select count(distinct game_id) from trials").fetchone()[0] == 2
    from distbench.cli.sweep import limit_games

    capped = limit_games({"games_per_bucket": 50, "fog": {"games": 9}, "beauty": {"games": 1},
                          "seeds": [1]}, 2)
    assert capped == {"games_per_bucket": 2, "fog": {"games": 2}, "beauty": {"games": 1},
                      "seeds": [1]}
