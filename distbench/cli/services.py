"""What the CLI lends a family's own commands (:class:`distbench.games.base.CommandServices`):
the run folder checks, the progress line, the model preflight and ``distbench tournament``, so a family's command
parses and prints while the same code plays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from distbench.games.base import PairingSettings, RunPlan
from distbench.llm.base import BackendSpec


class CliServices:
    """The CLI's :class:`~distbench.games.base.CommandServices`."""

    def run_folder(self, output_dir: Path, run_id: str) -> Path:
        """``output_dir/run_id``, both checked (one line on bad input), the folder made."""
        from distbench.cli.options import check_run_id, make_output_dir

        check_run_id(run_id)
        return make_output_dir(output_dir) / run_id

    def play(self, plan: RunPlan, run_dir: Path, *, parallel: bool | None,
             num_workers: int | None = None) -> Any:
        """Plays ``plan`` with the progress line (errors and Ctrl-C as one line)."""
        from distbench.cli.tournament import _play

        return _play(plan, run_dir, parallel=parallel, num_workers=num_workers)

    def preflight(self, spec: BackendSpec) -> None:
        """:func:`distbench.engine.driver.preflight` of the model."""
        from distbench.engine.driver import preflight

        preflight(spec, ())

    def tournament(self, family: str, players: list[str], settings: PairingSettings,
                   output_dir: Path, run_id: str, *, parallel: bool | None) -> None:
        """``distbench tournament --family <family>`` with these players and settings."""
        from distbench.cli.tournament import play_tournament_command

        play_tournament_command(family, players, settings, output_dir, run_id,
                                parallel=parallel)
