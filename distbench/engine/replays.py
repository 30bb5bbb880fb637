"""Replays of a run with every registered family's renderer: the entry point ``distbench view``
and ``distbench publish`` call (the family lookup sits above ``report``)."""

from __future__ import annotations

from pathlib import Path


def write_replays(run_dir: Path, out_dir: Path, per_game: int, seed: int) -> dict[str, str]:
    """``"<family>/<game>"`` -> the replay page's path relative to ``out_dir``, for every
    family of the run that draws replays; up to ``per_game`` replays per game, sampled by
    ``seed`` (see :func:`distbench.report.replay.write_replays`)."""
    from distbench.games.registry import replay_sources
    from distbench.report.replay import write_replays as write

    return write(Path(run_dir), Path(out_dir), per_game, seed, replay_sources())
