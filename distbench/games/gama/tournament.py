"""``distbench tournament --family gama``: n-seat tables of mixed players, rated by
Plackett–Luce over each game's finishing order (the engine schedules the tables)."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from distbench.games.base import PairingSettings, seat_label
from distbench.games.gama.plan import GamaRunConfig
from distbench.games.gama.players import parse_seat, table_seats

_ORDERS_SQL = """
SELECT g.game_id, g.shard_id, list(p.player ORDER BY p.seat),
       list(p.rank ORDER BY p.seat)
FROM gama_players p JOIN gama_games g USING (run_id, shard_id, game_id)
WHERE g.status <> 'failed' GROUP BY g.shard_id, g.game_id ORDER BY g.shard_id, g.game_id
"""


_NO_BASE = SimpleNamespace(provider=None)
"""A tournament has no running model: every model entry names its provider."""


def player(text: str) -> tuple[Any, str]:
    """A ``--players`` entry: a scripted player or a model ``PROVIDER[:MODEL]``."""
    if text.strip() == "self":
        raise ValueError("--players self: name the model (PROVIDER[:MODEL])")
    seat = parse_seat(text, _NO_BASE)  # type: ignore[arg-type]
    return seat, seat_label(seat)


def table(players: Sequence[Any], settings: PairingSettings) -> GamaRunConfig:
    """A table of ``players`` (repeated to fill the seats) on the tournament's instances."""
    options = {k: str(v) for k, v in settings.options.items()}
    game = options.pop("game", "guessing")
    options.setdefault("players", str(len(players)))
    from distbench.games.gama import rules

    seats = table_seats(list(players), rules.make_params(game, options).players)
    return GamaRunConfig(game=game, seats=seats, options=tuple(sorted(options.items())),
                         seeds=(settings.seed,), num_games=settings.num_instances,
                         llm_seed=settings.llm_seed, temperature=settings.temperature,
                         max_tokens=settings.max_tokens)


def pairing(player_a: Any, player_b: Any, settings: PairingSettings) -> GamaRunConfig:
    """A table of two (the two-seat hook; the engine plays ``table``)."""
    return table([player_a, player_b], settings)


def outcomes(con: Any) -> list[tuple[str, str, tuple[str, ...], tuple[float, ...]]]:
    """Every game's (game_id, shard_id, player of each seat, score of each seat), the score
    minus the finishing rank (ties as ties)."""
    return [(gid, sid, tuple(ps), tuple(-float(r) for r in ranks))
            for gid, sid, ps, ranks in con.execute(_ORDERS_SQL).fetchall()]
