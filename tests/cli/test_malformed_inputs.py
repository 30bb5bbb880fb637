"""Malformed invocations and specs, as an attacker or an unlucky user types them.

Every case goes through the real entry point (:func:`distbench.cli.main.main`, in this process
for speed; a few as real subprocesses) and must end the same way: a non-zero exit, exactly one
``error:`` line, no traceback, nothing written outside the output folder and no manifest left
at ``running``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from pathlib import Path

import pytest
from cli_server import distbench

from distbench.cli.main import main

DEAD = "http://127.0.0.1:9"
"""A base URL nothing listens on."""

SPEC = """\
name = "t"
seeds = [1]
games_per_bucket = 2
trials_per_game = 2
buckets = ["2x2_lowVar_pure"]
"""
DUMMY = '[providers.dummy]\ntiers.A = ["random"]\n'
MOCK = f'[providers.mock]\ntype = "llamacpp"\nbase_url = "{DEAD}"\ntiers.A = ["m"]\n'


def spec(top: str = "", providers: str = DUMMY, tail: str = "") -> str:
    """A small valid spec with ``top`` added to its top-level keys (a key given twice is
    replaced), its providers and ``tail`` (family tables)."""
    lines = SPEC.splitlines()
    for line in top.splitlines():
        key = line.split("=")[0].strip()
        lines = [x for x in lines if x.split("=")[0].strip() != key]
    return "\n".join(lines + top.splitlines()) + "\n" + providers + tail


def mock(option: str) -> str:
    return MOCK + option + "\n"


SPECS: dict[str, str] = {
    # the file itself
    "not_toml": "name = \n[[[",
    "binary": "\x00\x01\x02",
    "unknown_top_key": spec("gamez_per_bucket = 3"),
    "array_top": "[[providers]]\nx = 1\n",
    # seeds
    "seeds_empty": spec("seeds = []"),
    "seeds_string": spec('seeds = "42"'),
    "seeds_negative": spec("seeds = [-1]"),
    "seeds_float": spec("seeds = [1.5]"),
    "seeds_nan": spec("seeds = [nan]"),
    "seeds_bool": spec("seeds = [true]"),
    # sizes
    "games_zero": spec("games_per_bucket = 0"),
    "games_negative": spec("games_per_bucket = -1"),
    "games_string": spec('games_per_bucket = "10"'),
    "games_inf": spec("games_per_bucket = inf"),
    "games_float": spec("games_per_bucket = 2.5"),
    "games_huge": spec("games_per_bucket = 1000000000000"),
    "trials_zero": spec("trials_per_game = 0"),
    "trials_nan": spec("trials_per_game = nan"),
    "trials_huge": spec("trials_per_game = 10000000000"),
    "shard_trials_zero": spec("shard_trials = 0"),
    "max_tokens_zero": spec("max_tokens = 0"),
    "max_tokens_string": spec('max_tokens = "x"'),
    "llm_seed_negative": spec("llm_seed = -1"),
    # numbers
    "temperature_nan": spec("temperature = nan"),
    "temperature_inf": spec("temperature = inf"),
    "temperature_negative": spec("temperature = -1"),
    "temperature_string": spec('temperature = "hot"'),
    "min_label_mass_nan": spec('modes = ["logprob"]\nmin_label_mass = nan'),
    "min_label_mass_two": spec('modes = ["logprob"]\nmin_label_mass = 2'),
    "logprob_cue_blank": spec('modes = ["logprob"]\nlogprob_cue = "  "'),
    # modes and buckets
    "modes_empty": spec("modes = []"),
    "modes_unknown": spec('modes = ["nope"]'),
    "modes_string": spec('modes = "pure"'),
    "buckets_empty": spec("buckets = []"),
    "buckets_unknown": spec('buckets = ["9x9_nope_pure"]'),
    "buckets_number": spec("buckets = [3]"),
    "bucket_table_partial": spec("buckets = [{rows = 2}]"),
    "bucket_table_bad_spread": spec(
        'buckets = [{rows = 2, cols = 2, spread = "x", kind = "pure"}]'),
    "bucket_table_extra_key": spec(
        'buckets = [{rows = 2, cols = 2, spread = "lowVar", kind = "pure", x = 1}]'),
    # providers
    "providers_missing": SPEC,
    "providers_empty": spec(providers="[providers]\n"),
    "provider_unknown": spec(providers='[providers.nope]\ntiers.A = ["m"]\n'),
    "provider_type_unknown": spec(providers='[providers.x]\ntype = "nope"\ntiers.A = ["m"]\n'),
    "provider_not_table": spec(providers='providers = {dummy = 3}\n'),
    "tiers_missing": spec(providers="[providers.dummy]\nrpm = 5\n"),
    "tiers_string": spec(providers='[providers.dummy]\ntiers.A = "random"\n'),
    "tiers_numbers": spec(providers="[providers.dummy]\ntiers.A = [1]\n"),
    "tiers_all_empty": spec(providers="[providers.dummy]\ntiers.A = []\n"),
    "models_not_table": spec(providers=DUMMY + "models = 3\n"),
    "model_unknown_key": spec(providers=DUMMY + '[providers.dummy.models.random]\nrpmm = 3\n'),
    "provider_unknown_key": spec(providers=DUMMY + "frobnicate = 1\n"),
    # provider options
    "rpm_string": spec(providers=mock('rpm = "fast"')),
    "rpm_negative": spec(providers=mock("rpm = -5")),
    "rpm_zero": spec(providers=mock("rpm = 0")),
    "rpm_nan": spec(providers=mock("rpm = nan")),
    "rpm_inf": spec(providers=mock("rpm = inf")),
    "tpm_negative": spec(providers=mock("tpm = -1")),
    "max_concurrency_zero": spec(providers=mock("max_concurrency = 0")),
    "max_concurrency_float": spec(providers=mock("max_concurrency = 1.5")),
    "timeout_zero": spec(providers=mock("timeout = 0")),
    "timeout_nan": spec(providers=mock("timeout = nan")),
    "max_retries_negative": spec(providers=mock("max_retries = -1")),
    "max_retries_bool": spec(providers=mock("max_retries = true")),
    "base_url_number": spec(providers=MOCK.replace(f'"{DEAD}"', "8000")),
    "base_url_not_url": spec(providers=MOCK.replace(DEAD, "not a url")),
    "base_url_bad_port": spec(providers=MOCK.replace(DEAD, "http://127.0.0.1:99999")),
    "base_url_ftp": spec(providers=MOCK.replace(DEAD, "ftp://127.0.0.1:21")),
    "cache_string": spec(providers=mock('cache = "yes"')),
    "style_unknown": spec(providers=mock('style = "poem"')),
    "price_negative": spec(providers=mock("price_in = -1\nprice_out = 1")),
    "price_string": spec(providers=mock('price_in = "cheap"')),
    "price_nan": spec(providers=mock("price_out = nan")),
    "model_rpm_nan": spec(providers=MOCK + '[providers.mock.models.m]\nrpm = nan\n'),
    # family tables
    "negotiation_not_table": spec(tail="negotiation = 3\n"),
    "negotiation_unknown_key": spec(tail="[negotiation]\ngamez = 2\n"),
    "negotiation_games_zero": spec(tail="[negotiation]\ngames = 0\n"),
    "negotiation_modes_unknown": spec(tail='[negotiation]\nmodes = ["nope"]\n'),
    "negotiation_langs_unknown": spec(tail='[negotiation]\nlangs = ["xx"]\n'),
    "negotiation_opponent_unknown": spec(tail='[negotiation]\nopponents = ["scripted:nope"]\n'),
    "negotiation_max_messages": spec(tail="[negotiation]\nmax_messages = -1\n"),
    "fog_unknown_key": spec(tail="[fog]\nfrobnicate = 1\n"),
    "fog_max_turns_negative": spec(tail="[fog]\nmax_turns = -1\n"),
    "fog_max_tokens_string": spec(tail='[fog]\nmax_tokens = "x"\n'),
    "fog_scout_accuracy_nan": spec(tail="[fog]\nscout_accuracy = nan\n"),
    "fog_scout_accuracy_two": spec(tail="[fog]\nscout_accuracy = 2\n"),
    "fog_scouting_string": spec(tail='[fog]\nscouting = "yes"\n'),
    "fog_opponent_unknown": spec(tail='[fog]\nopponents = ["tier9"]\n'),
    "fog_games_zero": spec(tail="[fog]\ngames = 0\n"),
    "fog_games_huge": spec(providers=MOCK, tail="[fog]\ngames = 1000000000000\n"),
}
"""Spec files, each with one thing wrong, for ``sweep plan``."""

SWEEP_RUN_SPECS = ["rpm_string", "base_url_not_url", "cache_string", "fog_max_turns_negative",
                   "temperature_nan", "games_huge", "provider_unknown"]
"""Those also given to ``sweep run`` (which must start nothing)."""

NEGOTIATION = ["--family", "negotiation", "--llm-type", "scripted:fair"]
FOG = ["--family", "fog", "--agent", "tier1"]
BEAUTY = ["--family", "beauty"]

RUN: list[list[str]] = [
    # sizes and counts
    ["--num-games", "0"], ["--num-games", "-3"], ["--num-games", "abc"],
    ["--num-games", "1000000000000"], ["--num-trials", "0"], ["--num-trials", "1.5"],
    ["--num-games", "1", "--num-trials", "10000000000"], ["--limit", "0"],
    ["--shard-trials", "0"], ["--num-rows", "0"], ["--num-cols", "-2"],
    ["--num-rows", "1000"], ["--max-tokens", "0"], ["--num-workers", "0"],
    # numbers: finite and in range
    ["--temperature", "nan"], ["--temperature", "inf"], ["--temperature", "-1"],
    ["--temperature", "hot"], ["--seed", "-1"], ["--seed", str(2**80)], ["--seed", "x"],
    ["--llm-seed", "-1"], ["--llm-seed", str(2**80)],
    ["--rpm", "0"], ["--rpm", "nan"], ["--rpm", "inf"], ["--rpm", "-5"], ["--rpm", "fast"],
    ["--tpm", "nan"], ["--tpm", "0"], ["--max-concurrency", "0"], ["--timeout", "0"],
    ["--timeout", "nan"], ["--timeout", "inf"], ["--max-retries", "-1"],
    ["--keep-warm", "-1"], ["--keep-warm", "nan"], ["--min-label-mass", "nan"],
    ["--min-label-mass", "2"], ["--price", "abc"], ["--price", "1"], ["--price", "-1,2"],
    ["--price", "nan,1"], ["--price", "1,inf"],
    # names and choices
    ["--family", "nope"], ["--family", ""], ["--mode", "nope"], ["--combined", "--mode", "pure"],
    ["--bucket", "3x3_midVar_mixd"], ["--bucket", ""], ["--style", "poem"],
    ["--output-format", "nope"], ["--llm-type", "gpt5000"], ["--llm-type", ""],
    ["--llm-type", "scripted:nope"], ["--logprob-cue", ""], ["--frobnicate"], ["extra"],
    ["--num-trials"], ["--family", "fog", "--num-trials", "3"],
    ["--lang", "en"],
    # run folders
    ["--run-id", "run*"], ["--run-id", "a/b"], ["--run-id", ""], ["--run-id", "x" * 300],
    ["--run-id", "a\nb"], ["--run-id", ".."], ["--run-id", "-x"],
    ["--address", "nope"], ["--address", "127.0.0.1:99999"], ["--address", "http://x:1"],
    ["--address", "127.0.0.1:1"],
    # endpoints
    ["--llm-type", "openai"], ["--llm-type", "llamacpp", "--base-url", DEAD],
    ["--llm-type", "llamacpp", "--base-url", "http://127.0.0.1:99999"],
    ["--llm-type", "llamacpp", "--base-url", "not a url"],
    ["--llm-type", "llamacpp", "--base-url", "ftp://127.0.0.1:21"],
    ["--llm-type", "llamacpp", "--base-url", "http://user:secret@127.0.0.1:9"],
    ["--llm-type", "llamacpp", "--base-url", "http://[::1"],
    ["--llm-type", "llamacpp"],
    # negotiation
    [*NEGOTIATION, "--lang", "xx"], [*NEGOTIATION, "--max-messages", "0"],
    [*NEGOTIATION, "--instances", "/nonexistent/instances"], [*NEGOTIATION, "--mode", "nope"],
    [*NEGOTIATION, "--opponent", "scripted:nope"], [*NEGOTIATION, "--num-games", "0"],
    [*NEGOTIATION, "--temperature", "nan"], ["--family", "negotiation", "--llm-type", "dummy"],
    [*NEGOTIATION, "--bucket", "2x2_lowVar_pure"],
    # fog
    [*FOG, "--scout-accuracy", "2"], [*FOG, "--scout-accuracy", "nan"],
    ["--family", "fog", "--agent", "tier9"], ["--family", "fog", "--agent", "nomodule:Nope"],
    [*FOG, "--opponent", "tier9"], [*FOG, "--num-games", "0"], ["--family", "fog"],
    [*FOG, "--mode", "nope"], ["--family", "fog", "--llm-type", "scripted:fair"],
    # beauty (a plugin-shaped family)
    [*BEAUTY, "--num-players", "0"], [*BEAUTY, "--fraction", "nan"],
    [*BEAUTY, "--fraction", "-1"],
]
"""``distbench run`` arguments (``--llm-type dummy`` is added where none is given)."""

OTHER: list[list[str]] = [
    # sweep flags
    ["sweep", "plan", "--seeds", "abc"], ["sweep", "plan", "--providers", "nope"],
    ["sweep", "plan", "--bucket-ids", "nope"], ["sweep", "plan", "--num-trials", "0"],
    ["sweep", "plan", "--openai-model-tiers-json", "{"],
    ["sweep", "plan", "--openai-model-tiers-json", "[1]"], ["sweep", "plan", "missing.toml"],
    ["sweep", "run", "--resume", "nowhere"], ["sweep", "run", "--use-dummy", "--run-id", "a*"],
    ["sweep", "run", "--output-format", "nope"], ["sweep", "nope"],
    ["sweep", "report", "nowhere"],
    # query
    ["query", "nowhere", "select 1"], ["query"], ["query", "RUN", "select nope from trials"],
    ["query", "RUN", "select 1", "--format", "nope"], ["query", "RUN", "select 1", "--timeout", "0"],
    ["query", "RUN", "select 1", "--timeout", "nan"], ["query", "RUN", "--file", "missing.sql"],
    ["query", "RUN", "select * from read_text('/etc/passwd')"], ["query", "RUN"],
    # compare, report, view, export, check
    ["compare", "nowhere"], ["compare", "RUN", "--format", "nope"],
    ["compare", "RUN", "--out", "afile"], ["report", "nowhere"], ["report", "RUN", "--out", "afile"],
    ["view", "nowhere"], ["view", "RUN", "--sample", "0"], ["view", "RUN", "--seed", "-1"],
    ["export", "nowhere"], ["export", "RUN", "--format", "nope"],
    ["export", "RUN", "--out", "afile"], ["check", "nowhere"], ["check"],
    # fog tournament and study
    ["fog", "tournament", "--games-per-pairing", "0", "--run-id", "t", "--output-dir", "results"],
    ["fog", "tournament", "--run-id", "t", "--output-dir", "results"],
    ["fog", "tournament", "--games-per-pairing", "2", "--scout-accuracy", "nan", "--run-id", "t",
     "--output-dir", "results"],
    ["fog", "tournament", "--games-per-pairing", "2", "--scout-accuracy", "2", "--run-id", "t",
     "--output-dir", "results"],
    ["fog", "tournament", "--games-per-pairing", "2", "--seed", "-1", "--run-id", "t",
     "--output-dir", "results"],
    ["fog", "tournament", "--games-per-pairing", "2", "--agents", "tier1", "--run-id", "t",
     "--output-dir", "results"],
    ["fog", "tournament", "--games-per-pairing", "2", "--agents", "tier1,nope", "--run-id", "t",
     "--output-dir", "results"],
    ["fog", "tournament", "--games-per-pairing", "2", "--run-id", "a*", "--output-dir", "results"],
    ["fog", "study", "--games-per-pairing", "1", "--run-id", "s"],
    ["fog", "study", "--accuracies", "x", "--run-id", "s"],
    ["fog", "study", "--accuracies", "2", "--run-id", "s"],
    ["fog", "study", "--accuracies", "nan", "--run-id", "s"],
    ["fog", "study", "--accuracies", "0.4,0.7", "--reference-accuracy", "0.5", "--run-id", "s"],
    ["fog", "study", "--run-id", "s/../x"], ["fog", "nope"],
    # serve
    ["serve", "mock", "--port", "99999"], ["serve", "mock", "--port", "-1"],
    ["serve", "mock", "--port", "0", "--fail-429", "2"],
    ["serve", "mock", "--port", "0", "--fail-500", "nan"],
    ["serve", "mock", "--port", "0", "--latency-ms", "-1"],
    ["serve", "mock", "--port", "0", "--latency-ms", "inf"],
    ["serve", "mock", "--port", "0", "--rate-limit-rps", "nan"],
    ["serve", "local", "--port", "0", "--model-path", "/nonexistent/model.gguf"],
    ["serve", "nope"],
    # the group
    ["frobnicate"], ["--frobnicate"],
]
"""Every other command; ``RUN`` stands for a small finished run."""


def _cases() -> list:
    out = []
    for args in RUN:
        args = args if "--llm-type" in args else [*args, "--llm-type", "dummy"]
        out.append(pytest.param(["run", *args], None, id="run " + " ".join(args)[:60]))
    for name in SPECS:
        out.append(pytest.param(["sweep", "plan", "SPEC"], name, id=f"sweep plan {name}"))
    for name in SWEEP_RUN_SPECS:
        out.append(pytest.param(["sweep", "run", "SPEC", "--run-id", "sw"], name,
                                id=f"sweep run {name}"))
    for args in OTHER:
        out.append(pytest.param(args, None, id=" ".join(args)[:60]))
    return out


CASES = _cases()


def test_the_table_has_at_least_120_cases():
    assert len(CASES) >= 120


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A small finished run of the dummy (made in this process)."""
    cwd = tmp_path_factory.mktemp("finished")
    old = os.getcwd()
    os.chdir(cwd)
    try:
        main(["run", "--llm-type", "dummy", "--num-games", "2", "--num-trials", "2",
              "--no-parallel", "--run-id", "done"])
    finally:
        os.chdir(old)
    return cwd / "results" / "done"


def _files(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*")}


def _check_one_error_line(code, stderr: str, records: list[logging.LogRecord]) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    lines += [r.getMessage() for r in records if r.levelno >= logging.WARNING]
    assert code not in (0, None), stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert "Traceback" not in stderr
    return lines[0]


def _check_nothing_left(cwd: Path, before: set[Path]) -> None:
    for path in _files(cwd) - before:
        assert path.parts[0] == "results", f"{path} written outside the output folder"
    for manifest in cwd.rglob("manifest.json"):
        assert json.loads(manifest.read_text()).get("state") != "running", manifest


def _no_default_server(monkeypatch) -> None:
    """The llamacpp provider's default address (127.0.0.1:8080) made :data:`DEAD` for the
    test: a server the user left running there must not answer a case meant to find none."""
    from distbench.llm import registry

    llamacpp = registry.get_provider("llamacpp")
    defaults = tuple((k, DEAD if k == "base_url" else v) for k, v in llamacpp.defaults)
    monkeypatch.setitem(registry._PROVIDERS, "llamacpp",
                        dataclasses.replace(llamacpp, defaults=defaults))


@pytest.mark.parametrize("args, spec_name", CASES)
def test_malformed_input_is_one_error_line(args, spec_name, tmp_path, monkeypatch, capsys,
                                           caplog, finished_run):
    monkeypatch.chdir(tmp_path)
    for key in ("OPENAI_API_KEY", "TOGETHER_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    _no_default_server(monkeypatch)
    (tmp_path / "afile").write_text("a file, not a folder")
    if spec_name is not None:
        (tmp_path / "spec.toml").write_text(SPECS[spec_name])
    args = [{"SPEC": "spec.toml", "RUN": str(finished_run)}.get(a, a) for a in args]
    before = _files(tmp_path)
    caplog.set_level(logging.WARNING)
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    line = _check_one_error_line(exit_info.value.code, capsys.readouterr().err, caplog.records)
    assert "secret" not in line
    _check_nothing_left(tmp_path, before)


@pytest.mark.parametrize("args", [
    ["run", "--llm-type", "dummy", "--temperature", "nan", "--no-parallel"],
    ["run", "--llm-type", "dummy", "--seed", str(2**80), "--no-parallel"],
    ["run", "--llm-type", "llamacpp", "--base-url", "http://user:secret@127.0.0.1:99999"],
    ["run", "--llm-type", "dummy", "--num-games", "2", "--num-trials", "2", "--run-id", "r",
     "--address", "ray://127.0.0.1:1"],
    ["sweep", "plan", "spec.toml"],
], ids=["temperature nan", "seed 2**80", "credentials in base url", "ray client address",
        "sweep plan rpm fast"])
def test_malformed_input_in_a_subprocess_is_one_error_line(args, tmp_path):
    (tmp_path / "spec.toml").write_text(SPECS["rpm_string"])
    before = _files(tmp_path)
    out = distbench(*args, cwd=tmp_path, timeout=120)
    _check_one_error_line(out.returncode, out.stderr, [])
    assert "secret" not in out.stdout + out.stderr
    _check_nothing_left(tmp_path, before)


def test_a_late_failure_marks_the_manifest_failed_with_the_reason(tmp_path, monkeypatch, capsys):
    import distbench.engine.driver as driver

    def boom(shard, backends):
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(driver, "execute_shard", boom)
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--llm-type", "dummy", "--num-games", "2", "--num-trials", "2",
              "--no-parallel", "--run-id", "late"])
    assert exit_info.value.code == 1
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: RuntimeError")
    manifest = json.loads((tmp_path / "results" / "late" / "manifest.json").read_text())
    assert manifest["state"] == "failed"
    assert manifest["error"] == "RuntimeError: disk on fire"


def test_credentials_in_a_base_url_reach_no_message_or_file(tmp_path, monkeypatch, capsys):
    from distbench.mockserver import ServerConfig, start_server

    monkeypatch.chdir(tmp_path)
    with start_server(ServerConfig(seed=1)) as server:
        url = server.url.replace("://", "://alice:hunter2@")
        main_args = ["run", "--llm-type", "llamacpp", "--base-url", url, "--num-games", "2",
                     "--num-trials", "2", "--no-parallel", "--no-cache", "--run-id", "cred"]
        try:
            main(main_args)
        except SystemExit as exc:
            assert exc.code in (0, None), capsys.readouterr().err
    out = capsys.readouterr()
    assert "hunter2" not in out.out + out.err
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files)
    for path in files:
        assert b"hunter2" not in path.read_bytes(), path
    manifest = json.loads((tmp_path / "results" / "cred" / "manifest.json").read_text())
    assert manifest["models"][0]["base_url"].startswith("http://***@")


def test_ctrl_c_is_one_line_with_the_resume_command(tmp_path, monkeypatch, capsys):
    import sys

    import distbench.engine.driver as driver

    def interrupt(shard, backends):
        raise KeyboardInterrupt

    argv = ["run", "--llm-type", "dummy", "--num-games", "2", "--num-trials", "2",
            "--no-parallel", "--overwrite"]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["distbench", *argv])
    monkeypatch.setattr(driver, "execute_shard", interrupt)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("error: interrupted; committed shards are kept, resume with: distbench "
                       "run --llm-type dummy --num-games 2 --num-trials 2 --no-parallel "
                       "--run-id pure_latest")
    manifest = json.loads((tmp_path / "results" / "pure_latest" / "manifest.json").read_text())
    assert manifest["state"] == "interrupted"
