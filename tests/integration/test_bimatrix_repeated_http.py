"""The bimatrix and repeated families against a real HTTP endpoint: the project's mock server
over loopback (pure, mixed and logprob answers; every call a row of the calls table)."""

from __future__ import annotations

from distbench.engine.driver import run_plan
from distbench.games.bimatrix.plan import BimatrixRunConfig, plan_bimatrix
from distbench.games.repeated.plan import RepeatedRunConfig, plan_repeated
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run


def test_bimatrix_and_repeated_over_http(tmp_path):
    with start_server(ServerConfig()) as server:
        spec = make_spec("llamacpp", "mock-a", base_url=server.url, cache=False)
        cfg = BimatrixRunConfig(sets=("class:battle_of_the_sexes", "3x2_lowVar"), llm=spec,
                                num_games=3, num_trials=2, modes=("pure", "mixed", "logprob"),
                                opponents=("eq", "self"))
        out = run_plan(plan_bimatrix(cfg, "b"), tmp_path / "b", parallel=False)
        rcfg = RepeatedRunConfig(llm=spec, opponents=("TitForTat", "self"), num_games=2,
                                 rounds=3, predict=True)
        rout = run_plan(plan_repeated(rcfg, "r"), tmp_path / "r", parallel=False)
    con = open_run(out.run_dir)
    statuses = dict(con.execute("select mode, avg((parse_status = 'ok')::int) "
                                "from bimatrix_trials group by mode").fetchall())
    assert statuses == {"pure": 1.0, "mixed": 1.0, "logprob": 1.0}
    # pure and mixed: 2 sets x 3 games x 2 seats x 2 trials each; logprob: one reading a game
    # and seat (and its follow-up calls)
    calls = dict(con.execute("select mode, count(*) from calls group by mode").fetchall())
    assert calls["pure"] == calls["mixed"] == 24 and calls["logprob"] >= 12
    joined = con.execute("select count(*) from bimatrix_trials t join calls c "
                         "on c.call_id = t.call_id where t.mode = 'pure'").fetchone()[0]
    assert joined > 0
    rcon = open_run(rout.run_dir)
    assert rcon.execute("select count(*) from calls").fetchone()[0] == 2 * 3 + 2 * 3 * 2
    assert rcon.execute("select min(status), max(status) from repeated_matches").fetchone() == (
        "complete", "complete")
    assert rcon.execute("select distinct prediction_status from rounds").fetchall() == [
        ("missing",)]
