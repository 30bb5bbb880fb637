"""Rules engine of the fog-of-war skirmish: board, deployment, simultaneous orders, combat,
noisy scouting, the noose and the win conditions.

Rules chosen where GAMES.md section 3 leaves a choice (each one is pinned by a test):

- **Board and visibility.** An N x N grid, rows 0..N-1, cells ``(row, col)``. Player 0 (``a``)
  deploys on row 0, player 1 (``b``) on row N-1, one force per cell. Positions of every force
  are public; *powers* and *which force is the sovereign* are hidden.
- **Power rule.** Each force gets a power 1..5 and each value is used **at most twice** (so K
  <= 10). The scripted agents deploy a power vector drawn uniformly from all valid vectors,
  which is the deployment prior the Bayesian agents use. The sovereign is one of the forces.
- **Orders** (one per force, simultaneous): ``hold``, ``move D`` (one step, D in N/S/E/W,
  N = towards row 0), ``charge D`` (two steps in a line, one at the board's edge; +1 power in
  a fight it moves into), ``scout J`` (reveal enemy force J when it is within Chebyshev
  distance ``scout_range`` at the start of the turn; the scout stays put), ``fortify`` (+1
  power when it fights without having moved), ``ambush`` (stays put; strikes first at an enemy
  that ends its move within Chebyshev distance 1, winning ties). An illegal order (off the
  board, scouting a dead force or with scouting off, ...) is a hold.
- **Order of resolution within a turn** (each step simultaneous for both players, so the rules
  are symmetric under swapping the players):
  1. scouting, on the positions at the start of the turn;
  2. movement; two forces of one player ending in one cell: the ones that moved go back to
     their start cells (a force that stayed keeps the cell; between movers only the lowest
     index keeps it), repeated until no two friendly forces share a cell;
  3. ambushes: each ambusher fights the lowest-index enemy that moved and ended within
     distance 1 of it; the ambusher wins ties; all ambush fights use the same state;
  4. head-on collisions: two enemy forces whose paths cross (each ends in a cell the other
     passed through or started from) fight; the winner goes on to its end cell;
  5. cell fights: an enemy pair sharing a cell fights.
  Effective power = power + 1 (charge that moved into the fight) + 1 (fortify, did not move).
  Higher wins, the loser is removed, a tie removes both. Fighting costs the winner nothing.
- **Noisy scouting.** Exact power with probability ``scout_accuracy``, otherwise the band that
  holds the true power: ``band_low`` = 1..2, ``band_mid`` = 3, ``band_high`` = 4..5. A reveal is
  seen by the scouting player only. Fights are public: both players see who fought whom, the
  bonuses (charge/fortify) and the outcome, but not the powers.
- **Noose.** At the end of turn t with t >= ``noose_start`` and (t - noose_start) divisible by
  ``noose_every``, every force on the outermost ring dies (``noose_kill``). The safe zone
  (everything but the outer ring) never kills.
- **Win.** After each turn: a player whose sovereign died loses (both: a draw,
  ``mutual_sovereign_kill``); otherwise a player without forces loses. After ``max_turns``
  turns the higher total surviving power wins, equal totals draw.
- **Events** (``fog_events.details``, JSON): a fight (``combat``, ``ambush``) names both forces
  (``force_a``, ``force_b``), the ``cell``, the effective powers (``eff_a``, ``eff_b``), the
  ``winner`` (``a``, ``b``, ``tie``) and the roles: ``attacker`` is the player whose force moved
  into the fight (the ambusher for an ambush), ``both`` when both forces moved (head-on, or both
  entering the cell); ``defender`` is the other player (null for ``both``); ``result`` is
  ``attacker_wins``, ``defender_wins`` or ``tie`` (null for ``both``: read ``winner``). A
  ``scout_reveal`` holds what the scout saw (``kind``, ``low``, ``high``) and the
  ``actual_power``; a ``noose_kill`` its ``cell`` and ``was_sovereign``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

POWERS = (1, 2, 3, 4, 5)
MAX_PER_VALUE = 2
ORDER_KINDS = ("hold", "move", "charge", "scout", "fortify", "ambush")
DIRS: dict[str, tuple[int, int]] = {"N": (-1, 0), "S": (1, 0), "E": (0, 1), "W": (0, -1)}
BANDS: dict[str, tuple[int, int]] = {"band_low": (1, 2), "band_mid": (3, 3), "band_high": (4, 5)}

Order = tuple[str, object]
"""``(kind, arg)``: arg is a direction for move/charge, an enemy index for scout, else None."""

HOLD: Order = ("hold", None)


def band_of(power: int) -> str:
    """The band that holds ``power``."""
    for name, (lo, hi) in BANDS.items():
        if lo <= power <= hi:
            return name
    raise ValueError(f"power must be in 1..5, got {power}")


@lru_cache(maxsize=16)
def valid_power_vectors(num_forces: int) -> np.ndarray:
    """Every power vector allowed by the power rule: (M, K) int8, lexicographic order."""
    if not 1 <= num_forces <= len(POWERS) * MAX_PER_VALUE:
        raise ValueError(f"num_forces must be in 1..{len(POWERS) * MAX_PER_VALUE}")
    rows = [v for v in itertools.product(POWERS, repeat=num_forces)
            if max(v.count(p) for p in POWERS) <= MAX_PER_VALUE]
    out = np.array(rows, dtype=np.int8)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, slots=True)
class Deployment:
    """A player's deployment: home-row columns, powers and the sovereign's index."""

    cols: tuple[int, ...]
    powers: tuple[int, ...]
    sovereign: int


def check_deployment(dep: Deployment, board_size: int, num_forces: int) -> None:
    """Raises ValueError naming what breaks the rules."""
    if len(dep.cols) != num_forces or len(dep.powers) != num_forces:
        raise ValueError(f"a deployment needs {num_forces} columns and powers")
    if len(set(dep.cols)) != num_forces or not all(0 <= c < board_size for c in dep.cols):
        raise ValueError("deployment columns must be distinct cells of the home row")
    if not all(p in POWERS for p in dep.powers):
        raise ValueError("powers must be in 1..5")
    if max(dep.powers.count(p) for p in POWERS) > MAX_PER_VALUE:
        raise ValueError(f"each power value may be used at most {MAX_PER_VALUE} times")
    if not 0 <= dep.sovereign < num_forces:
        raise ValueError("the sovereign must be one of the forces")


def random_deployment(board_size: int, num_forces: int, rng: np.random.Generator) -> Deployment:
    """Uniform valid power vector, random columns and sovereign."""
    vectors = valid_power_vectors(num_forces)
    powers = tuple(int(p) for p in vectors[rng.integers(len(vectors))])
    cols = tuple(int(c) for c in rng.choice(board_size, size=num_forces, replace=False))
    return Deployment(cols=cols, powers=powers, sovereign=int(rng.integers(num_forces)))


@dataclass(frozen=True, slots=True)
class Rules:
    """Game parameters."""

    board_size: int = 7
    num_forces: int = 5
    max_turns: int = 20
    scout_accuracy: float = 0.7
    scouting: bool = True
    scout_range: int = 3
    noose_start: int = 8
    noose_every: int = 2

    def __post_init__(self) -> None:
        if self.board_size < 3:
            raise ValueError("board_size must be at least 3")
        if not 1 <= self.num_forces <= min(self.board_size, len(POWERS) * MAX_PER_VALUE):
            raise ValueError("num_forces must fit on the home row and the power rule (<= 10)")
        if self.max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        if not 0.0 <= self.scout_accuracy <= 1.0:
            raise ValueError("scout_accuracy must be in [0, 1]")
        if self.scout_range < 1:
            raise ValueError("scout_range must be at least 1")
        if self.noose_start < 1 or self.noose_every < 1:
            raise ValueError("noose_start and noose_every must be at least 1")

    def noose_turn(self, turn: int) -> bool:
        """Whether the noose strikes at the end of ``turn`` (1-based)."""
        return turn >= self.noose_start and (turn - self.noose_start) % self.noose_every == 0

    def on_ring(self, row: int, col: int) -> bool:
        """Whether ``(row, col)`` is on the outermost ring (outside the safe zone)."""
        n = self.board_size - 1
        return row == 0 or col == 0 or row == n or col == n


@dataclass(frozen=True, slots=True)
class Reveal:
    """A scout report: the enemy force's power is in ``[low, high]`` (exact: low == high)."""

    turn: int
    enemy: int
    kind: str  # "exact" or a band name
    low: int
    high: int


@dataclass(frozen=True, slots=True)
class Fight:
    """A public fight as one player sees it.

    ``outcome`` is ``win``, ``loss`` or ``tie`` for the observing player; ``ambush`` is
    ``own``, ``enemy`` or ``""``. The enemy's base power is constrained by :meth:`bounds`.
    """

    turn: int
    own: int
    enemy: int
    own_eff: int
    enemy_bonus: int
    outcome: str
    ambush: str = ""

    def bounds(self) -> tuple[int, int]:
        """Interval of the enemy's *base* power consistent with this fight (may be empty)."""
        b = self.enemy_bonus
        e = self.own_eff
        if self.ambush == "own":  # ambusher (us) wins ties
            lo, hi = (1, e) if self.outcome == "win" else (e + 1, 9)
        elif self.ambush == "enemy":
            lo, hi = (1, e - 1) if self.outcome == "win" else (e, 9)
        elif self.outcome == "win":
            lo, hi = 1, e - 1
        elif self.outcome == "loss":
            lo, hi = e + 1, 9
        else:
            lo, hi = e, e
        return lo - b, hi - b


@dataclass(frozen=True, slots=True)
class Observation:
    """What one player knows at the start of a turn (no hidden enemy power, ever)."""

    player: int
    turn: int
    rules: Rules
    own_pos: tuple[tuple[int, int], ...]
    own_power: tuple[int, ...]
    own_alive: tuple[bool, ...]
    sovereign: int
    enemy_pos: tuple[tuple[int, int], ...]
    enemy_alive: tuple[bool, ...]
    reveals: tuple[Reveal, ...]
    fights: tuple[Fight, ...]
    enemy_moved: tuple[tuple[int, int], ...] = ()  # last turn's displacement per enemy force


@dataclass(slots=True)
class Event:
    """A row of the event log."""

    turn: int
    kind: str
    player: int | None
    force: int | None
    details: dict = field(default_factory=dict)


def chebyshev(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


class Game:
    """One game's state. ``step`` plays a turn of simultaneous orders."""

    def __init__(self, rules: Rules, deployments: tuple[Deployment, Deployment],
                 rng: np.random.Generator) -> None:
        k = rules.num_forces
        for dep in deployments:
            check_deployment(dep, rules.board_size, k)
        self.rules = rules
        self.rng = rng
        home = (0, rules.board_size - 1)
        self.pos = [[(home[p], c) for c in deployments[p].cols] for p in (0, 1)]
        self.power = [list(deployments[p].powers) for p in (0, 1)]
        self.alive = [[True] * k for _ in (0, 1)]
        self.sovereign = [deployments[0].sovereign, deployments[1].sovereign]
        self.turn = 0
        self.reveals: list[list[Reveal]] = [[], []]
        self.fights: list[list[Fight]] = [[], []]
        self.moved: list[list[tuple[int, int]]] = [[(0, 0)] * k, [(0, 0)] * k]
        self.done = False
        self.winner: str | None = None
        self.end_reason = ""
        self.last_orders: list[list[Order]] = [[], []]

    # -- observation -------------------------------------------------------------------
    def observation(self, player: int) -> Observation:
        e = 1 - player
        return Observation(
            player=player,
            turn=self.turn + 1,
            rules=self.rules,
            own_pos=tuple(self.pos[player]),
            own_power=tuple(self.power[player]),
            own_alive=tuple(self.alive[player]),
            sovereign=self.sovereign[player],
            enemy_pos=tuple(self.pos[e]),
            enemy_alive=tuple(self.alive[e]),
            reveals=tuple(self.reveals[player]),
            fights=tuple(self.fights[player]),
            enemy_moved=tuple(self.moved[e]),
        )

    # -- orders ------------------------------------------------------------------------
    def legal(self, player: int, force: int, order: Order) -> bool:
        """Whether ``order`` is legal for ``force`` now (illegal orders are holds)."""
        if not self.alive[player][force]:
            return False
        kind, arg = order
        if kind in ("hold", "fortify", "ambush"):
            return arg is None
        if kind in ("move", "charge"):
            if arg not in DIRS:
                return False
            r, c = self.pos[player][force]
            dr, dc = DIRS[arg]
            n = self.rules.board_size
            return 0 <= r + dr < n and 0 <= c + dc < n
        if kind == "scout":
            return (self.rules.scouting and isinstance(arg, int)
                    and 0 <= arg < self.rules.num_forces and self.alive[1 - player][arg])
        return False

    def _path(self, player: int, force: int, order: Order) -> list[tuple[int, int]]:
        r, c = self.pos[player][force]
        kind, arg = order
        if kind not in ("move", "charge"):
            return [(r, c)]
        dr, dc = DIRS[arg]
        n = self.rules.board_size
        path = [(r, c)]
        for _ in range(2 if kind == "charge" else 1):
            nr, nc = path[-1][0] + dr, path[-1][1] + dc
            if not (0 <= nr < n and 0 <= nc < n):
                break
            path.append((nr, nc))
        return path

    # -- turn --------------------------------------------------------------------------
    def step(self, orders: tuple[list[Order], list[Order]]) -> list[Event]:
        """Plays one turn; returns its events. ``orders[p][i]`` is force i's order."""
        if self.done:
            raise ValueError("the game is over")
        self.turn += 1
        t = self.turn
        k = self.rules.num_forces
        events: list[Event] = []
        ords: list[list[Order]] = [[], []]
        for p in (0, 1):
            given = list(orders[p]) + [HOLD] * (k - len(orders[p]))
            for i in range(k):
                o = given[i]
                if not self.legal(p, i, o):
                    if self.alive[p][i] and o != HOLD:
                        events.append(Event(t, "invalid_order", p, i, {"order": _fmt(o)}))
                    o = HOLD
                ords[p].append(o)
        self.last_orders = ords
        # 1. scouting
        for p in (0, 1):
            for i in range(k):
                kind, arg = ords[p][i]
                if kind != "scout":
                    continue
                j = int(arg)
                if chebyshev(self.pos[p][i], self.pos[1 - p][j]) > self.rules.scout_range:
                    events.append(Event(t, "scout_miss", p, i, {"enemy": j, "why": "out_of_range"}))
                    continue
                true = self.power[1 - p][j]
                if self.rng.random() < self.rules.scout_accuracy:
                    rev = Reveal(t, j, "exact", true, true)
                else:
                    name = band_of(true)
                    rev = Reveal(t, j, name, *BANDS[name])
                self.reveals[p].append(rev)
                events.append(Event(t, "scout_reveal", p, i, {
                    "enemy": j, "kind": rev.kind, "low": rev.low, "high": rev.high,
                    "actual_power": true}))
        # 2. movement
        paths = [[self._path(p, i, ords[p][i]) for i in range(k)] for p in (0, 1)]
        for p in (0, 1):
            self._resolve_friendly(p, paths[p])
        moved = [[len(paths[p][i]) > 1 and self.alive[p][i] for i in range(k)] for p in (0, 1)]
        start = [list(self.pos[0]), list(self.pos[1])]
        for p in (0, 1):
            for i in range(k):
                if self.alive[p][i]:
                    self.pos[p][i] = paths[p][i][-1]
            self.moved[p] = [(self.pos[p][i][0] - start[p][i][0], self.pos[p][i][1] - start[p][i][1])
                             for i in range(k)]

        def bonus(p: int, i: int) -> int:
            kind = ords[p][i][0]
            if kind == "charge" and moved[p][i]:
                return 1
            if kind == "fortify" and not moved[p][i]:
                return 1
            return 0

        # 3. ambushes (simultaneous)
        deaths: set[tuple[int, int]] = set()
        for p in (0, 1):
            e = 1 - p
            for i in range(k):
                if not self.alive[p][i] or ords[p][i][0] != "ambush":
                    continue
                targets = [j for j in range(k) if self.alive[e][j] and moved[e][j]
                           and chebyshev(self.pos[p][i], self.pos[e][j]) <= 1]
                if not targets:
                    continue
                j = targets[0]
                mine, theirs = self.power[p][i], self.power[e][j]
                win = mine >= theirs
                deaths.add((e, j) if win else (p, i))
                self._record_fight(t, events, p, i, mine, e, j, theirs, 0, 0,
                                   "win" if win else "loss", ambusher=p, attacker=p)
        self._kill(deaths)
        # 4. head-on collisions
        deaths = set()
        for i in range(k):
            for j in range(k):
                if not (self.alive[0][i] and self.alive[1][j] and moved[0][i] and moved[1][j]):
                    continue
                pa, pb = paths[0][i], paths[1][j]
                if pa[-1] in pb[:-1] and pb[-1] in pa[:-1]:
                    self._fight(t, events, deaths, i, j, bonus(0, i), bonus(1, j), "head_on",
                                _attacker(moved[0][i], moved[1][j]))
        self._kill(deaths)
        # 5. cell fights
        deaths = set()
        for i in range(k):
            for j in range(k):
                if self.alive[0][i] and self.alive[1][j] and self.pos[0][i] == self.pos[1][j]:
                    self._fight(t, events, deaths, i, j, bonus(0, i), bonus(1, j), "cell",
                                _attacker(moved[0][i], moved[1][j]))
        self._kill(deaths)
        # noose
        if self.rules.noose_turn(t):
            for p in (0, 1):
                for i in range(k):
                    if self.alive[p][i] and self.rules.on_ring(*self.pos[p][i]):
                        self.alive[p][i] = False
                        events.append(Event(t, "noose_kill", p, i, {
                            "cell": list(self.pos[p][i]),
                            "was_sovereign": i == self.sovereign[p]}))
        self._check_end(events)
        return events

    def _resolve_friendly(self, p: int, paths: list[list[tuple[int, int]]]) -> None:
        k = len(paths)
        while True:
            cells: dict[tuple[int, int], list[int]] = {}
            for i in range(k):
                if self.alive[p][i]:
                    cells.setdefault(paths[i][-1], []).append(i)
            clash = False
            for members in cells.values():
                if len(members) < 2:
                    continue
                stayers = [i for i in members if len(paths[i]) == 1]
                keep = stayers[0] if stayers else members[0]
                for i in members:
                    if i != keep and len(paths[i]) > 1:
                        paths[i] = [paths[i][0]]
                        clash = True
            if not clash:
                return

    def _record_fight(self, t, events, p, i, eff_p, e, j, eff_e, bonus_p, bonus_e, outcome,
                      ambusher=None, how="ambush", attacker=None) -> None:
        other = {"win": "loss", "loss": "win", "tie": "tie"}[outcome]
        amb_p = "" if ambusher is None else ("own" if ambusher == p else "enemy")
        amb_e = "" if ambusher is None else ("own" if ambusher == e else "enemy")
        self.fights[p].append(Fight(t, i, j, eff_p, bonus_e, outcome, amb_p))
        self.fights[e].append(Fight(t, j, i, eff_e, bonus_p, other, amb_e))
        a_i, b_i = (i, j) if p == 0 else (j, i)
        a_out = outcome if p == 0 else other
        winner = {"win": "a", "loss": "b", "tie": "tie"}[a_out]
        eff_a, eff_b = (eff_p, eff_e) if p == 0 else (eff_e, eff_p)
        events.append(Event(t, "ambush" if ambusher is not None else "combat", ambusher, None, {
            "how": how, "force_a": a_i, "force_b": b_i, "cell": list(self.pos[0][a_i]),
            "eff_a": eff_a, "eff_b": eff_b,
            "winner": winner, **_roles(attacker, winner),
            **seed_combat_fields(attacker, (a_i, b_i), (eff_a, eff_b))}))

    def _fight(self, t, events, deaths, i, j, bonus_a, bonus_b, how, attacker=None) -> None:
        ea, eb = self.power[0][i] + bonus_a, self.power[1][j] + bonus_b
        outcome = "win" if ea > eb else "loss" if ea < eb else "tie"
        if outcome != "win":
            deaths.add((0, i))
        if outcome != "loss":
            deaths.add((1, j))
        self._record_fight(t, events, 0, i, ea, 1, j, eb, bonus_a, bonus_b, outcome, how=how,
                           attacker=attacker)

    def _kill(self, deaths: set[tuple[int, int]]) -> None:
        for p, i in deaths:
            self.alive[p][i] = False

    def _check_end(self, events: list[Event]) -> None:
        lost = [not self.alive[p][self.sovereign[p]] for p in (0, 1)]
        empty = [not any(self.alive[p]) for p in (0, 1)]
        if lost[0] and lost[1]:
            self._end("draw", "mutual_sovereign_kill")
        elif lost[0] or lost[1]:
            self._end("b" if lost[0] else "a", "sovereign_killed")
        elif empty[0] or empty[1]:
            self._end("draw" if all(empty) else ("b" if empty[0] else "a"), "annihilation")
        elif self.turn >= self.rules.max_turns:
            totals = [self.total_power(p) for p in (0, 1)]
            winner = "a" if totals[0] > totals[1] else "b" if totals[1] > totals[0] else "draw"
            self._end(winner, "turn_limit")
        if self.done:
            events.append(Event(self.turn, "game_end", None, None,
                                {"winner": self.winner, "reason": self.end_reason}))

    def _end(self, winner: str, reason: str) -> None:
        self.done, self.winner, self.end_reason = True, winner, reason

    def total_power(self, player: int) -> int:
        return sum(p for p, a in zip(self.power[player], self.alive[player], strict=True) if a)


def _attacker(moved_a: bool, moved_b: bool) -> int | None:
    """The attacking player of a fight: the one whose force moved into it (None: both did)."""
    if moved_a and not moved_b:
        return 0
    if moved_b and not moved_a:
        return 1
    return None


def _roles(attacker: int | None, winner: str) -> dict:
    """The ``attacker`` / ``defender`` / ``result`` fields of a fight event."""
    if attacker is None:
        return {"attacker": "both", "defender": None, "result": None}
    side, other = "ab"[attacker], "ab"[1 - attacker]
    result = "tie" if winner == "tie" else "attacker_wins" if winner == side else "defender_wins"
    return {"attacker": side, "defender": other, "result": result}


def seed_force_id(side: int, force: int) -> str:
    """The fog seed's name of a force: ``p1_f1`` .. ``p2_f5`` (seat a is ``p1``; 1-based)."""
    return f"p{side + 1}_f{force + 1}"


def seed_combat_fields(attacker: int | None, forces: tuple[int, int],
                       powers: tuple[int, int]) -> dict:
    """The fog seed's combat event fields (its ``EventLog.add_combat``), beside distbench's:
    ``attacker_id`` / ``defender_id`` (``p1_f3``; in a head-on clash, where both attack,
    seat a's force is the attacker), ``attacker_power`` / ``defender_power`` (the effective
    powers, bonuses included). The seed's ``result`` is distbench's (``attacker_wins``,
    ``defender_wins``, ``tie``; null in a head-on clash); its ``attacker`` / ``defender`` are
    distbench's seats (``a`` / ``b``), hence the ``_id`` names."""
    side = 0 if attacker is None else attacker
    other = 1 - side
    return {"attacker_id": seed_force_id(side, forces[side]),
            "defender_id": seed_force_id(other, forces[other]),
            "attacker_power": int(powers[side]), "defender_power": int(powers[other])}


def _fmt(order: Order) -> str:
    kind, arg = order
    return kind if arg is None else f"{kind} {arg}"


def format_order(order: Order) -> str:
    """``("move", "S")`` -> ``"move S"``; ``("scout", 2)`` -> ``"scout E2"``."""
    kind, arg = order
    if kind == "scout":
        return f"scout E{arg}"
    return _fmt(order)
