"""The bundled model plays a gama game through the real CLI and the summary prints GAMA's score
with its interval, the distance to equilibrium and the invalid answers (skipped without the
model, as the other local tests; a small table and one round keep it to a minute on 2 cores)."""

from __future__ import annotations

import pytest
from cli_server import distbench

from distbench.llm.local import INSTALL_HINT, local_available

needs_model = pytest.mark.skipif(
    not local_available(),
    reason=f"llama-cpp-python or the SmolLM2 model file is missing: {INSTALL_HINT}",
)


@needs_model
@pytest.mark.slow
def test_the_bundled_model_plays_guessing_and_the_summary_has_the_figures(tmp_path):
    out = distbench("run", "--family", "gama", "--game", "guessing", "--llm-type", "local",
                    "--num-games", "5", "--option", "players=3", "--option", "rounds=1",
                    "--max-tokens", "12", "--no-parallel", "--run-id", "l", cwd=tmp_path,
                    timeout=900)
    assert out.returncode == 0, out.stderr
    for column in ("GAMA score [95% CI]", "distance to eq. [95% CI]", "invalid", "forfeit"):
        assert column in out.stdout
    line = next(x for x in out.stdout.splitlines() if x.startswith("guessing"))
    assert "local:" in line and "/15" in line  # 5 games x 3 seats answered round 1
