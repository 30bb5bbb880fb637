"""A seed never depends on an address: the same OpenSpiel run against the mock server on two
ports (two servers of one seed) writes the same matches and moves, the random opponent's
draws included."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspiel")

from cli_server import distbench  # noqa: E402

from distbench.mockserver import ServerConfig, start_server  # noqa: E402
from distbench.store.catalog import open_run  # noqa: E402

ADDRESS_BOUND = ("run_id", "shard_id", "call_id", "latency_ms")
"""Columns that name the run or a call (whose id hashes the endpoint), not what was played."""


def _rows(run_dir, table: str, order: str) -> list[dict]:
    con = open_run(run_dir)
    try:
        rows = con.sql(f"select * from {table} order by {order}").to_arrow_table()
    finally:
        con.close()
    return [{k: v for k, v in row.items() if k not in ADDRESS_BOUND} for row in rows.to_pylist()]


def test_two_servers_on_two_ports_give_the_same_rows(tmp_path):
    runs = []
    for name in ("a", "b"):
        with start_server(ServerConfig(seed=5)) as server:
            out = distbench("run", "--family", "openspiel", "--game", "tic_tac_toe",
                            "--opponent", "random", "--llm-type", "llamacpp", "--llm-model",
                            "mock", "--base-url", server.url, "--num-games", "3", "--no-cache",
                            "--no-parallel", "--run-id", name, cwd=tmp_path)
            assert out.returncode == 0, out.stderr
            runs.append((server.url, tmp_path / "results" / name))
    (url_a, run_a), (url_b, run_b) = runs
    assert url_a != url_b
    assert _rows(run_a, "matches", "match_id") == _rows(run_b, "matches", "match_id")
    moves_a = _rows(run_a, "moves", "match_id, ply")
    assert moves_a == _rows(run_b, "moves", "match_id, ply")
    assert any(m["player_label"] == "random" for m in moves_a)
