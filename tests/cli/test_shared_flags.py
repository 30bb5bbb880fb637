"""A flag two families declare (``--game``: openspiel's and gama's) is one click parameter
with the first family's default; each family still gets its own default when the flag is not
given, and a value given is read by the family chosen (never swapped for another's)."""

from __future__ import annotations

from cli_server import distbench

from distbench.cli.run import run


def _defaults(*args: str) -> dict:
    ctx = run.make_context("run", list(args))
    family = ctx.params["family"]
    return run.own_defaults(ctx, family, dict(ctx.params))


def test_each_family_gets_its_own_default_of_a_shared_flag():
    assert _defaults("--family", "openspiel")["game"] == "kuhn_poker"
    assert _defaults("--family", "gama")["game"] is None  # gama's: guessing
    assert _defaults("--family", "gama", "--game", "bar")["game"] == "bar"


def test_gama_reads_the_game_it_is_given_not_openspiels_default(tmp_path):
    out = distbench("run", "--family", "gama", "--llm-type", "dummy", "--num-games", "1",
                    "--option", "rounds=1", "--no-parallel", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "gama | guessing" in out.stdout + out.stderr
    bad = distbench("run", "--family", "gama", "--game", "kuhn_poker", "--llm-type", "dummy",
                    "--no-parallel", cwd=tmp_path)
    assert bad.returncode != 0 and "--game kuhn_poker" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
