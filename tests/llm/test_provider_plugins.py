"""Model providers from installed packages (the ``distbench.providers`` entry points), and a
provider registered by a script, which a parallel run must refuse before any work."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from distbench.engine.driver import run_config
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.llm import registry
from distbench.llm.base import BackendUnavailable
from distbench.store.catalog import open_run


@pytest.fixture
def plugin_dist(tmp_path, monkeypatch):
    """An installed distribution (a .dist-info on sys.path) whose entry point names a
    provider that answers a fixed text: what ``pip install`` of a plugin package leaves."""
    pkg = tmp_path / "site"
    (pkg / "fixed_provider").mkdir(parents=True)
    (pkg / "fixed_provider" / "__init__.py").write_text(textwrap.dedent('''
        from distbench.llm.base import Backend, Response
        from distbench.llm.registry import Provider

        class FixedBackend(Backend):
            async def generate(self, requests):
                return [Response(text=self.spec.model) for _ in requests]

        PROVIDER = Provider("fixed", "fixed_provider:FixedBackend", "Action: 1", "chat",
                            "answers its model name as the text")
    '''))
    info = pkg / "fixed_provider-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fixed-provider\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[distbench.providers]\nfixed = fixed_provider:PROVIDER\n")
    monkeypatch.syspath_prepend(str(pkg))
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    yield
    for name in ("fixed", "scripted-here"):
        registry._PROVIDERS.pop(name, None)
        registry._ORIGINS.pop(name, None)
    sys.modules.pop("fixed_provider", None)


def _config(provider: str, model: str) -> MatrixRunConfig:
    return MatrixRunConfig(buckets=("2x2_lowVar_mixed",), seeds=(1,), num_games=3, num_trials=2,
                           modes=("pure",), llm=registry.make_spec(provider, model))


def test_an_installed_plugin_provider_is_found_by_name_and_plays(plugin_dist, tmp_path):
    assert "fixed" in registry.providers()
    assert not registry.runtime_only("fixed")
    out = run_config(_config("fixed", "Action: 2"), tmp_path / "r", parallel=False)
    rows = open_run(out.run_dir).execute(
        "select distinct provider, decision, parse_status from trials").fetchall()
    assert rows == [("fixed", 1, "ok")]


def test_a_broken_plugin_is_skipped_with_a_warning(tmp_path, monkeypatch, caplog):
    info = tmp_path / "broken-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[distbench.providers]\nbroken = no_such_module:X\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    registry.load_plugins()
    assert "broken" not in registry.providers()
    assert "cannot load model provider plugin broken" in caplog.text


def test_a_provider_registered_by_a_script_is_refused_by_a_parallel_run(plugin_dist, tmp_path):
    registry.register(registry.Provider("scripted-here", "distbench.llm.dummy:DummyBackend",
                                        "random", "chat", "registered in this process only"))
    assert registry.runtime_only("scripted-here")
    config = _config("scripted-here", "random")
    with pytest.raises(BackendUnavailable, match="registered in this process only"):
        run_config(config, tmp_path / "par", parallel=True)
    # Refused before any work: nothing was written, so no run is left marked "running".
    manifest = tmp_path / "par" / "manifest.json"
    assert not manifest.exists() or json.loads(manifest.read_text())["state"] != "running"
    out = run_config(config, tmp_path / "seq", parallel=False)  # in this process it works
    assert open_run(out.run_dir).execute("select count(*) from trials").fetchone() == (6,)
