"""Exact references of a game, computed once per game string and cached.

- **Perfect information** (tic-tac-toe): minimax. ``q[key][a]`` is the game value, for the
  player to move, of playing ``a`` in the position ``key`` (``str(state)`` with the player to
  move) and both playing perfectly afterwards. Positions are memoised, so tic-tac-toe's 5,478
  positions are solved once (not its 549,946 histories).
- **Imperfect information, two-player zero-sum** (Kuhn, Leduc, small Liar's Dice,
  goofspiel): an equilibrium from OpenSpiel's CFR+ (:data:`CFR_ITERATIONS`), with
  probabilities below :data:`PURIFY` set to 0 and the rest renormalised (CFR+ leaves tiny
  weights on dominated actions, which a player sampling the equilibrium would otherwise play),
  and the action values under it: ``q[I][a]`` is the expected return of the player to move
  at information state ``I`` for playing ``a`` and then everybody following the equilibrium,
  the histories of ``I`` weighted by their counterfactual reach (chance and the opponent's
  probabilities). At an information state the equilibrium opponent never reaches, the
  histories are weighted by chance alone.
- **Otherwise** (too large: longer than :data:`MAX_LENGTH` moves, more than
  :data:`MAX_POSITIONS` positions, :data:`MAX_HISTORIES` histories or :data:`MAX_INFOSTATES`
  information states; or not zero-sum): no reference; regrets are NULL.

The **regret** of a move is ``max_b q[key][b] - q[key][a]`` over the legal actions (0 for a
best move), in the game's utility units.

**Which equilibrium.** An imperfect-information game can have many equilibria, and a move's
regret depends on which one is the reference (Kuhn poker's first player has a one-parameter
family; another exact equilibrium changes about a third of the moves' regrets, by up to one
chip). :attr:`Reference.name` says which one is used, and the ``matches`` table carries it
(``reference_name``): the CFR+ average policy, purified, with its NashConv; for Kuhn poker also
its parameter ``alpha`` (the first player bets a jack with probability ``alpha``, a king with
``3 alpha``, and calls a bet with a queen with ``alpha + 1/3``; the second player's strategy is
unique). Minimax values are unique, so perfect-information references need no such name.

**Regret against the set of equilibria** (exact for Kuhn poker, two players): :attr:`Reference.set_regret`
is, for each information state and action, the least regret over *every* equilibrium of the
game, which the ``moves`` table stores as ``set_regret``. Kuhn poker's equilibria are
``alpha in [0, 1/3]`` for the first player times the second player's unique strategy (Kuhn
1950); every action value is an affine function of ``alpha`` over a positive affine weight
(the counterfactual reach), so each regret ``max(0, (N_b - N_a) / w)`` is monotone in
``alpha`` on ``(0, 1/3]`` and its least value over the set is the least of its values at
``alpha = 0`` (where the second player's information states after a bet are unreached and the
fallback weights of chance apply), just above 0 (``alpha = 1e-9``: the limit, to 1e-8) and
``1/3``. ``tests/games/openspiel/test_set_regret.py`` checks it against a fine grid of the
family.

Leduc poker and Liar's Dice (two players, with an equilibrium reference: one small die each)
get an upper bound of it, by a sequence-form LP
(:mod:`distbench.games.openspiel.sequence_form`, a few seconds for Leduc, once per game):
``set_regret`` is the least regret over four equilibria, the reference, the exact equilibrium
whose strategies have the largest support (every move that some equilibrium plays, it plays)
and the two pairs mixing their players' strategies. So ``set_regret <= regret``, and a move
that some equilibrium plays at a state the widest equilibrium's opponent reaches has
``set_regret`` 0; a positive value may exceed the least over the whole set (the least over a
continuum is not computed there; on Kuhn poker the bound is within 0.15 chip of the exact
value). Other games keep it NULL. The reference is cached in memory and on
disk under
``<user cache>/openspiel/`` (:func:`distbench.cache_dir`), one JSON file per game string and
format version, written through a temporary file and an atomic rename.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import dataclass, field, replace
from typing import Any

from distbench.games.base import stable_hash
from distbench.games.openspiel.spiel import load_game, perfect_information, pyspiel, zero_sum

log = logging.getLogger(__name__)

FORMAT = 2
"""Version of the cache files' format (a new version ignores older files)."""
MAX_POSITIONS = 200_000
"""Positions minimax solves at most."""
MAX_LENGTH = 60
"""Longest game (OpenSpiel's ``max_game_length``) given a reference: chess and go are refused
at once rather than after exploring :data:`MAX_POSITIONS` positions."""
MAX_HISTORIES = 2_000_000
"""Histories of an imperfect-information game's tree at most for CFR+."""
MAX_INFOSTATES = 5_000
"""Information states at most for CFR+ (Leduc poker has 936; Liar's Dice with one six-sided
die each, 24,576, is left without a reference)."""
CFR_ITERATIONS = 1000
"""CFR+ iterations (Leduc: NashConv about 0.003, 25 s; Liar's Dice with one four-sided die:
5e-5, 6 s)."""
SMALL_GAME = 200
"""Games with at most this many information states get :data:`SMALL_ITERATIONS`."""
SMALL_ITERATIONS = 10_000
"""CFR+ iterations of small games (Kuhn poker: 0.4 s)."""
PURIFY = 1e-3
"""Equilibrium probabilities below this are set to 0 (then renormalised)."""


@dataclass(frozen=True)
class Reference:
    """A game's exact reference.

    Attributes:
        game: The game string.
        kind: ``"minimax"``, ``"equilibrium"`` or ``"none"``.
        q: key -> {action: value for the player to move} (see the module docstring).
        policy: information state -> {action: probability} of the equilibrium (empty for
            minimax and none).
        infostates: information state -> (player, legal actions, their names), every
            information state of the game (equilibrium references only; the model's policy
            tables and logprob mode's questions are over these).
        nash_conv: NashConv of ``policy`` (None without one).
        detail: Why there is no reference, or how it was made.
        name: Which reference exactly (see "Which equilibrium" in the module docstring).
        set_regret: key -> {action: least regret over every equilibrium} (Kuhn poker), or
            over four equilibria (Leduc poker, Liar's Dice); empty elsewhere.
    """

    game: str
    kind: str
    q: dict[str, dict[int, float]]
    policy: dict[str, dict[int, float]]
    infostates: dict[str, tuple[int, tuple[int, ...], tuple[str, ...]]]
    nash_conv: float | None
    detail: str
    name: str = ""
    set_regret: dict[str, dict[int, float]] = field(default_factory=dict)

    def key(self, state: Any) -> str:
        """The key of ``state`` in :attr:`q` (its position, or the mover's information state)."""
        return state_key(self.kind, state)

    def regret(self, state: Any, action: int) -> float | None:
        """``max_b q - q[action]`` at ``state``, or None where there is no value."""
        values = self.q.get(self.key(state))
        if not values or action not in values:
            return None
        return max(0.0, max(values.values()) - values[action])

    def least_regret(self, state: Any, action: int) -> float | None:
        """The least regret of ``action`` at ``state`` over every equilibrium, or None where
        it is not computed."""
        values = self.set_regret.get(self.key(state))
        return None if not values else values.get(action)

    def values(self, state: Any) -> dict[int, float] | None:
        """The action values at ``state``, or None."""
        return self.q.get(self.key(state))


def state_key(kind: str, state: Any) -> str:
    """The key of a state: ``str(state)`` and the mover for minimax, else the mover's
    information state string."""
    player = state.current_player()
    if kind == "minimax":
        return f"{player}|{state}"
    return state.information_state_string(player)


_MEMO: dict[str, Reference] = {}


def reference(game: str) -> Reference:
    """The reference of ``game`` (computed once per process, read from the disk cache when
    there); see the module docstring."""
    if game in _MEMO:
        return _MEMO[game]
    path = _cache_path(game)
    ref = _read(path, game)
    if ref is not None and _lp_game(ref) and not ref.set_regret:  # cached before it had one
        ref = replace(ref, set_regret=sampled_set_regret(load_game(game), ref))
        _write(path, ref)
    if ref is None:
        ref = compute(game)
        _write(path, ref)
    _MEMO[game] = ref
    return ref


def _cache_path(game: str) -> str:
    from distbench import cache_dir

    return os.path.join(str(cache_dir()), "openspiel", f"ref-v{FORMAT}-{stable_hash(game)}.json")


def _read(path: str, game: str) -> Reference | None:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if data.get("format") != FORMAT or data.get("game") != game:
        return None
    return Reference(
        game=game, kind=data["kind"],
        q={k: {int(a): float(v) for a, v in d.items()} for k, d in data["q"].items()},
        policy={k: {int(a): float(p) for a, p in d.items()} for k, d in data["policy"].items()},
        infostates={k: (int(p), tuple(a), tuple(n)) for k, (p, a, n) in data["infostates"].items()},
        nash_conv=data["nash_conv"], detail=data["detail"], name=data["name"],
        set_regret={k: {int(a): float(v) for a, v in d.items()}
                    for k, d in data["set_regret"].items()}
        if data.get("set_regret_method") == SET_REGRET_METHOD
        or not _lp_game_name(game) else {})


def _write(path: str, ref: Reference) -> None:
    data = {"format": FORMAT, "game": ref.game, "kind": ref.kind, "q": ref.q,
            "policy": ref.policy,
            "infostates": {k: [p, list(a), list(n)] for k, (p, a, n) in ref.infostates.items()},
            "nash_conv": ref.nash_conv, "detail": ref.detail, "name": ref.name,
            "set_regret": ref.set_regret, "set_regret_method": SET_REGRET_METHOD}
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError as exc:  # a read-only cache only costs the next process a recomputation
        log.warning("cannot cache the reference of %s in %s: %s", ref.game, folder, exc)


def compute(game_string: str) -> Reference:
    """Computes the reference of ``game_string`` (no cache), named."""
    ref = _compute(game_string)
    name = {"none": f"none ({ref.detail})", "minimax": "minimax values (unique)"}.get(ref.kind)
    set_regret: dict[str, dict[int, float]] = {}
    if name is None:
        name = f"equilibrium: {ref.detail}, NashConv {ref.nash_conv:.2g}"
        if _is_kuhn(ref):
            alpha = ref.policy["0"].get(1, 0.0)
            name += (f"; Kuhn alpha = {alpha:.4f} (the first player bets a jack with alpha, "
                     "a king with 3 alpha)")
            set_regret = kuhn_set_regret(load_game(game_string), ref.infostates)
        elif _lp_game(ref):
            set_regret = sampled_set_regret(load_game(game_string), ref)
    return Reference(ref.game, ref.kind, ref.q, ref.policy, ref.infostates, ref.nash_conv,
                     ref.detail, name, set_regret)


LP_GAMES = ("leduc_poker", "liars_dice")
"""Games whose ``set_regret`` is bounded by the sequence-form LP (module docstring)."""


SET_REGRET_METHOD = 1
"""Version of :func:`sampled_set_regret`: a cached reference whose ``set_regret`` another
version made has it computed again (the equilibrium itself is kept)."""


def _lp_game_name(game: str) -> bool:
    return game.split("(")[0] in LP_GAMES


def _lp_game(ref: Reference) -> bool:
    """A two-player game of :data:`LP_GAMES` with an equilibrium reference."""
    return ref.kind == "equilibrium" and _lp_game_name(ref.game) \
        and {p for p, _, _ in ref.infostates.values()} <= {0, 1}


def _is_kuhn(ref: Reference) -> bool:
    """Two-player Kuhn poker (its 12 information states, cards 0..2, actions pass/bet)."""
    return (ref.game.split("(")[0] == "kuhn_poker" and len(ref.infostates) == 12
            and "0" in ref.infostates and "2pb" in ref.infostates)


#: Kuhn poker's first-player parameters at which its least regrets are attained (see the
#: module docstring): the end 0, the limit just above it, and the other end 1/3.
KUHN_ALPHAS = (0.0, 1e-9, 1.0 / 3.0)


def kuhn_policy(alpha: float) -> dict[str, dict[int, float]]:
    """Kuhn poker's equilibrium of parameter ``alpha`` in [0, 1/3] (Kuhn 1950), by
    information state (card 0 = jack, 1 = queen, 2 = king; action 0 = pass, 1 = bet). The
    first player bets a jack with ``alpha``, never a queen, a king with ``3 alpha``; after
    passing and facing a bet it calls with a queen with ``alpha + 1/3``, a king always, a jack
    never. The second player bets after a pass with a king, and with a jack with 1/3; facing a
    bet it calls with a king, with a queen with 1/3, never with a jack."""
    def mix(bet: float) -> dict[int, float]:
        return {0: 1.0 - bet, 1: bet}

    return {"0": mix(alpha), "1": mix(0.0), "2": mix(3 * alpha),
            "0pb": mix(0.0), "1pb": mix(alpha + 1 / 3), "2pb": mix(1.0),
            "0p": mix(1 / 3), "1p": mix(0.0), "2p": mix(1.0),
            "0b": mix(0.0), "1b": mix(1 / 3), "2b": mix(1.0)}


def _regrets(q: dict[str, dict[int, float]]) -> dict[str, dict[int, float]]:
    return {k: {a: max(0.0, max(v.values()) - x) for a, x in v.items()} for k, v in q.items()}


def kuhn_set_regret(game: Any, infostates: dict[str, Any]) -> dict[str, dict[int, float]]:
    """The least regret of each action over Kuhn poker's equilibrium set (module docstring)."""
    best: dict[str, dict[int, float]] = {}
    for alpha in KUHN_ALPHAS:
        policy = kuhn_policy(alpha)
        for key, values in _regrets(_action_values(game, policy)).items():
            if key in infostates:
                row = best.setdefault(key, dict(values))
                for a, r in values.items():
                    row[a] = min(row[a], r)
    return best


def sampled_set_regret(game: Any, ref: Reference) -> dict[str, dict[int, float]]:
    """The least regret of each action over four equilibria of a two-player zero-sum game:
    the reference, the equilibrium of largest support (:func:`~distbench.games.openspiel.
    sequence_form.widest_equilibrium`) and the two pairs mixing their players' strategies
    (the equilibria are a product set); empty when the LP fails (module docstring)."""
    from distbench.games.openspiel.sequence_form import sequence_form, widest_equilibrium

    try:
        widest, _ = widest_equilibrium(sequence_form(game), ref.policy)
    except RuntimeError as exc:
        log.warning("no set_regret for %s: %s", ref.game, exc)
        return {}
    seat = {key: player for key, (player, _, _) in ref.infostates.items()}
    mixed = [{k: (widest if seat.get(k) == first else ref.policy).get(k, ref.policy.get(k, {}))
              for k in ref.infostates} for first in (0, 1)]
    best = {k: dict(v) for k, v in _regrets(ref.q).items() if k in ref.infostates}
    for policy in (widest, *mixed):
        for key, values in _regrets(_action_values(game, policy)).items():
            row = best.get(key)
            if row is not None:
                for a, r in values.items():
                    row[a] = min(row.get(a, r), r)
    return best


def _compute(game_string: str) -> Reference:
    game = load_game(game_string)
    if not zero_sum(game):
        return Reference(game_string, "none", {}, {}, {}, None, "not zero-sum")
    if game.max_game_length() > MAX_LENGTH:
        return Reference(game_string, "none", {}, {}, {}, None,
                         f"games of up to {game.max_game_length()} moves, more than {MAX_LENGTH}")
    if perfect_information(game):
        q = _minimax(game)
        if q is None:
            return Reference(game_string, "none", {}, {}, {}, None,
                             f"more than {MAX_POSITIONS:,} positions")
        return Reference(game_string, "minimax", q, {}, {}, None, "minimax")
    infostates = _infostates(game)
    if infostates is None or len(infostates) > MAX_INFOSTATES:
        return Reference(game_string, "none", {}, {}, {}, None,
                         f"more than {MAX_HISTORIES:,} histories or {MAX_INFOSTATES:,} "
                         "information states")
    iterations = SMALL_ITERATIONS if len(infostates) <= SMALL_GAME else CFR_ITERATIONS
    policy = _equilibrium(game, iterations)
    q = _action_values(game, policy)
    nash_conv = float(pyspiel().nash_conv(game, as_pyspiel(policy, infostates)))
    return Reference(game_string, "equilibrium", q, policy, infostates, nash_conv,
                     f"CFR+ {iterations} iterations, purified below {PURIFY:g}")


def as_pyspiel(policy: dict[str, dict[int, float]],
               infostates: dict[str, tuple[int, tuple[int, ...], tuple[str, ...]]]
               ) -> dict[str, list[tuple[int, float]]]:
    """A policy table as ``pyspiel.nash_conv`` takes it; information states it lacks are
    uniform over their legal actions."""
    out = {}
    for key, (_, actions, _) in infostates.items():
        probs = policy.get(key)
        if probs:
            out[key] = [(a, float(probs.get(a, 0.0))) for a in actions]
        else:
            out[key] = [(a, 1.0 / len(actions)) for a in actions]
    return out


def _minimax(game: Any) -> dict[str, dict[int, float]] | None:
    q: dict[str, dict[int, float]] = {}
    value: dict[str, tuple[float, ...]] = {}
    too_big = False

    def solve(state: Any) -> tuple[float, ...]:
        nonlocal too_big
        if state.is_terminal():
            return tuple(state.returns())
        key = state_key("minimax", state)
        if key in value:
            return value[key]
        if len(value) >= MAX_POSITIONS:
            too_big = True
            return tuple(0.0 for _ in range(game.num_players()))
        if state.is_chance_node():
            total = [0.0] * game.num_players()
            for a, p in state.chance_outcomes():
                child = solve(state.child(a))
                total = [t + p * c for t, c in zip(total, child, strict=True)]
            value[key] = tuple(total)
            return value[key]
        player = state.current_player()
        children = {a: solve(state.child(a)) for a in state.legal_actions()}
        q[key] = {a: float(v[player]) for a, v in children.items()}
        best = max(children, key=lambda a: children[a][player])
        value[key] = children[best]
        return value[key]

    solve(game.new_initial_state())
    return None if too_big else q


def _infostates(game: Any) -> dict[str, tuple[int, tuple[int, ...], tuple[str, ...]]] | None:
    out: dict[str, tuple[int, tuple[int, ...], tuple[str, ...]]] = {}
    count = 0
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        count += 1
        if count > MAX_HISTORIES:
            return None
        if state.is_terminal():
            continue
        if not state.is_chance_node():
            player = state.current_player()
            key = state.information_state_string(player)
            if key not in out:
                actions = tuple(state.legal_actions())
                out[key] = (player, actions,
                            tuple(state.action_to_string(player, a) for a in actions))
        stack.extend(state.child(a) for a in state.legal_actions())
    return out


def _equilibrium(game: Any, iterations: int) -> dict[str, dict[int, float]]:
    solver = pyspiel().CFRPlusSolver(game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    table = solver.tabular_average_policy().policy_table()
    policy = {}
    for key, pairs in table.items():
        probs = {int(a): float(p) for a, p in pairs}
        kept = {a: p for a, p in probs.items() if p >= PURIFY}
        total = sum(kept.values())
        policy[key] = {a: kept.get(a, 0.0) / total for a in probs}
    return policy


def _action_values(game: Any, policy: dict[str, dict[int, float]]) -> dict[str, dict[int, float]]:
    """Counterfactual-reach-weighted action values under ``policy`` (module docstring)."""
    n = game.num_players()
    # per information state: summed weight and weighted value per action, with the fallback
    # weights of chance alone
    sums: dict[str, list[Any]] = {}

    def walk(state: Any, reach: list[float], chance: float) -> list[float]:
        if state.is_terminal():
            return list(state.returns())
        if state.is_chance_node():
            total = [0.0] * n
            for a, p in state.chance_outcomes():
                child = walk(state.child(a), reach, chance * p)
                total = [t + p * c for t, c in zip(total, child, strict=True)]
            return total
        player = state.current_player()
        key = state.information_state_string(player)
        probs = policy[key]
        cf = chance
        for other in range(n):
            if other != player:
                cf *= reach[other]
        entry = sums.setdefault(key, [0.0, {}, 0.0, {}])
        total = [0.0] * n
        for a in state.legal_actions():
            p = probs.get(a, 0.0)
            child_reach = list(reach)
            child_reach[player] *= p
            child = walk(state.child(a), child_reach, chance)
            entry[1][a] = entry[1].get(a, 0.0) + cf * child[player]
            entry[3][a] = entry[3].get(a, 0.0) + chance * child[player]
            total = [t + p * c for t, c in zip(total, child, strict=True)]
        entry[0] += cf
        entry[2] += chance
        return total

    walk(game.new_initial_state(), [1.0] * n, 1.0)
    q = {}
    for key, (weight, values, chance_weight, chance_values) in sums.items():
        if weight > 0:
            q[key] = {a: v / weight for a, v in values.items()}
        else:
            q[key] = {a: v / chance_weight for a, v in chance_values.items()}
    return q
