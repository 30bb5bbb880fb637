"""``distbench list KIND``: what exists, from the registries (plugins included), as a table
that fits the terminal or as JSON."""

from __future__ import annotations

import json

import pytest
from cli_server import distbench

SIX = {"matrix", "bimatrix", "repeated", "negotiation", "fog", "openspiel"}


def _json(tmp_path, *args: str) -> list[dict]:
    out = distbench("list", *args, "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_list_families_names_the_six_and_the_installed_plugin(tmp_path):
    rows = {r["name"]: r for r in _json(tmp_path, "families")}
    assert SIX <= set(rows)
    assert rows["beauty"]["origin"] == "plugin"  # examples/plugins/beauty, installed in the venv
    assert all(rows[name]["origin"] == "built-in" for name in SIX)
    assert rows["openspiel"]["tournaments"] and not rows["matrix"]["tournaments"]
    out = distbench("list", "families", cwd=tmp_path)
    assert out.returncode == 0 and "beauty" in out.stdout and "openspiel" in out.stdout


def test_list_games_of_openspiel_says_which_have_rules_texts_and_exact_references(tmp_path):
    rows = {r["name"]: r for r in _json(tmp_path, "games", "--family", "openspiel")}
    assert rows["kuhn_poker"]["rules"] is True
    assert rows["kuhn_poker"]["reference"] == "equilibrium"
    assert rows["tic_tac_toe"]["reference"] == "minimax"
    other = rows["any other OpenSpiel game"]
    assert other["rules"] is False and "first use" in other["reference"]
    table = distbench("list", "games", "--family", "openspiel", cwd=tmp_path).stdout
    header = table.splitlines()[0].split()
    assert header[:3] == ["name", "rules", "reference"]
    assert any(line.startswith("kuhn_poker") and " yes " in line and "equilibrium" in line
               for line in table.splitlines())


@pytest.mark.parametrize("kind, family, expected", [
    ("strategies", "repeated", "TitForTat"),
    ("classes", "bimatrix", "class:stag_hunt"),
    ("buckets", "matrix", "3x3_midVar_mixed"),
    ("players", "fog", "tier4"),
    ("players", "negotiation", "scripted:fair"),
])
def test_each_kind_lists_the_family_entries(tmp_path, kind, family, expected):
    names = [r["name"] for r in _json(tmp_path, kind, "--family", family)]
    assert expected in names
    if kind == "players":
        assert names[-1] == "PROVIDER[:MODEL]"


def test_providers_and_queries_come_from_the_registry_and_the_shipped_files(tmp_path):
    providers = {r["name"] for r in _json(tmp_path, "providers")}
    assert {"dummy", "openai", "anthropic", "local", "llamacpp"} <= providers
    queries = {r["name"]: r["description"] for r in _json(tmp_path, "queries")}
    assert "summary" in queries and "leaderboard" in queries and queries["leaderboard"]


def test_players_without_family_cover_every_tournament_family_only(tmp_path):
    from distbench.games.registry import families as registered

    families = {r["family"] for r in _json(tmp_path, "players")}
    assert families == {f.name for f in registered().values() if f.pairable}
    assert families >= SIX - {"matrix"} and "matrix" not in families


def test_the_table_fits_100_columns_and_a_bad_family_is_one_line(tmp_path):
    for kind in ("families", "providers", "queries", "strategies"):
        out = distbench("list", kind, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert max(len(line) for line in out.stdout.splitlines()) <= 100, kind
    bad = distbench("list", "games", "--family", "openspeil", cwd=tmp_path)
    assert bad.returncode != 0 and bad.stderr.count("\n") == 1
    assert bad.stderr.startswith("error: --family") and "openspiel" in bad.stderr


def test_the_declared_references_are_the_computed_ones(tmp_path, monkeypatch):
    """The catalog's reference column (rules.REFERENCES) is what the reference module computes
    (the cheap games here; the others were checked when the table was written)."""
    monkeypatch.setenv("DISTBENCH_CACHE_DIR", str(tmp_path / "cache"))
    from distbench.games.openspiel.reference import reference
    from distbench.games.openspiel.rules import REFERENCES, RULES

    assert set(REFERENCES) == set(RULES)
    for game in ("kuhn_poker", "tic_tac_toe"):
        assert reference(game).kind == REFERENCES[game]
