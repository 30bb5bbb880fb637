"""The classic repeated-game strategies as small finite-state machines, by axelrod's names.

A strategy is a machine ``(start, coop, next)``: in state ``s`` it cooperates with probability
``coop[s]`` (0 or 1 for a deterministic strategy); after a round where it played ``own`` and
its opponent played ``opp`` (0 = C, 1 = D) it moves to ``next[s, own, opp]``. Each machine
plays exactly like the ``axelrod`` (4.13.0) strategy of the same name, checked move for move
over 200 rounds against every other (``tests/games/repeated/test_strategies.py``); the
stochastic ones (``Random``, ``GTFT``) draw as axelrod does (one uniform per move whose
probability is neither 0 nor 1), so given axelrod's random streams they also move as it does.

=====================  ==========================================================  ======
name                   rule                                                        states
=====================  ==========================================================  ======
Cooperator             always C                                                    1
Defector               always D                                                    1
TitForTat              C first, then the opponent's last move                      2
SuspiciousTitForTat    D first, then the opponent's last move                      2
Grudger                C until the opponent defects, then D forever                2
WinStayLoseShift       C first; C after (C,C) or (D,D), else D                     2
Alternator             C, D, C, D, ...                                             2
TitFor2Tats            D only after two D of the opponent in a row                 3
TwoTitsForTat          D if the opponent defected in either of the last two rounds 3
GTFT                   C after C; after D, C with prob. 1/3 in every stage game     2
                       (axelrod's generous tit for tat, see below)
Random                 C with probability 1/2                                      1
GTFTPayoff             C after C; after D, C with prob. p(R, S, T, P) of the        2
                       stage game (ours: the payoff-derived generous tit for tat)
=====================  ==========================================================  ======

**GTFT and GTFTPayoff.** axelrod's ``GTFT`` computes its forgiveness
``p = min(1 - (T - R) / (R - S), (R - P) / (T - P))`` once, from its default game
(R, S, T, P) = (3, 0, 5, 1), when it is created; a ``Match`` with another game does not
change it (4.13.0), so axelrod's GTFT forgives with p = 1/3 in every stage game, and so does
ours (checked move for move over 200 rounds in every named stage game). ``GTFTPayoff`` takes
``p`` from the stage game itself, which is what the formula means. It is clamped to [0, 1]:
the formula gives p > 1 in a stag hunt (R > T: GTFTPayoff becomes a Cooperator after its
first move) and p < 0 in chicken (S > P: it becomes TitForTat); when the stage game is not
prisoner's-dilemma-shaped (R <= S or T <= P) the formula does not apply and p = 1/3. The
dynamic-programming optimum (:mod:`.optimum`) uses the machine, so the same p.

``NAMES`` are axelrod's strategies; ``VARIANTS`` are ours (not in axelrod); both are opponents.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from distbench.errors import did_you_mean

__all__ = ["AXELROD_GTFT_P", "DETERMINISTIC", "NAMES", "STRATEGIES", "VARIANTS", "Machine", "get_machine",
           "gtft_probability", "play"]

C, D = 0, 1


@dataclass(frozen=True)
class Machine:
    """A strategy as a finite-state machine (see the module docstring).

    Attributes:
        name: axelrod's class name.
        start: Initial state.
        coop: (S,) probability of C in each state.
        next: (S, 2, 2) int, the state after (own move, opponent's move).
    """

    name: str
    start: int
    coop: np.ndarray
    next: np.ndarray

    @property
    def deterministic(self) -> bool:
        return bool(np.isin(self.coop, (0.0, 1.0)).all())

    @property
    def states(self) -> int:
        return len(self.coop)

    def move(self, state: int, rng=None) -> int:
        """The move in ``state``; a stochastic machine draws ``rng.random() < coop[state]``
        (as axelrod's ``random_choice`` does, and only when the probability is not 0 or 1)."""
        p = self.coop[state]
        if p in (0.0, 1.0):
            return C if p == 1.0 else D
        if rng is None:
            raise ValueError(f"{self.name} is stochastic: pass a random generator")
        return C if rng.random() < p else D


def _machine(name: str, start: int, coop: list[float], rule) -> Machine:
    """Builds ``next`` from ``rule(state, own, opp) -> state``."""
    states = len(coop)
    nxt = np.array([[[rule(s, own, opp) for opp in (C, D)] for own in (C, D)]
                    for s in range(states)], dtype=np.int64)
    return Machine(name, start, np.array(coop, dtype=np.float64), nxt)


def _tft_rule(s, own, opp):
    return opp  # state = the move to play = the opponent's last move


def gtft_probability(payoffs: tuple[float, float, float, float]) -> float:
    """Generous tit for tat's forgiveness ``min(1 - (T - R) / (R - S), (R - P) / (T - P))``
    for stage payoffs ``(R, S, T, P)``, clamped to [0, 1] (stag hunt: > 1; chicken: < 0);
    1/3 when the game is not prisoner's-dilemma-shaped (``R <= S`` or ``T <= P``)."""
    r, s_, t, p = (float(x) for x in payoffs)
    if not (r > s_ and t > p):
        return 1 / 3
    return float(min(1.0, max(0.0, min(1 - (t - r) / (r - s_), (r - p) / (t - p)))))


#: axelrod's GTFT forgiveness in every game: the formula on its default game (3, 0, 5, 1).
AXELROD_GTFT_P = gtft_probability((3, 0, 5, 1))


def get_machine(name: str, payoffs: tuple[float, float, float, float] = (3, 0, 5, 1)) -> Machine:
    """The machine of strategy ``name``; ``payoffs`` ``(R, S, T, P)`` of the stage game (only
    GTFTPayoff's probability depends on them; GTFT keeps axelrod's 1/3 in every game).

    Raises:
        ValueError: an unknown name, with a hint.
    """
    r, s_, t, p = payoffs
    if name == "Cooperator":
        return _machine(name, 0, [1.0], lambda s, own, opp: 0)
    if name == "Defector":
        return _machine(name, 0, [0.0], lambda s, own, opp: 0)
    if name == "Random":
        return _machine(name, 0, [0.5], lambda s, own, opp: 0)
    if name == "TitForTat":
        return _machine(name, 0, [1.0, 0.0], _tft_rule)
    if name == "SuspiciousTitForTat":
        return _machine(name, 1, [1.0, 0.0], _tft_rule)
    if name == "Grudger":
        return _machine(name, 0, [1.0, 0.0], lambda s, own, opp: 1 if s == 1 or opp == D else 0)
    if name == "WinStayLoseShift":
        return _machine(name, 0, [1.0, 0.0], lambda s, own, opp: 0 if own == opp else 1)
    if name == "Alternator":
        return _machine(name, 0, [1.0, 0.0], lambda s, own, opp: 1 - own)
    if name == "TitFor2Tats":
        return _machine(name, 0, [1.0, 1.0, 0.0],
                        lambda s, own, opp: min(s + 1, 2) if opp == D else 0)
    if name == "TwoTitsForTat":
        # 0: no D in the last two rounds; 1: D last round; 2: D two rounds ago only
        return _machine(name, 0, [1.0, 0.0, 0.0],
                        lambda s, own, opp: 1 if opp == D else (2 if s == 1 else 0))
    if name == "GTFT":
        return _machine(name, 0, [1.0, AXELROD_GTFT_P], _tft_rule)
    if name == "GTFTPayoff":
        return _machine(name, 0, [1.0, gtft_probability((r, s_, t, p))], _tft_rule)
    raise ValueError(f"unknown strategy {name!r}; use one of {', '.join(STRATEGIES)}."
                     f"{did_you_mean(name, list(STRATEGIES))}")


#: axelrod's strategies, by its class names.
NAMES: tuple[str, ...] = ("Cooperator", "Defector", "TitForTat", "SuspiciousTitForTat",
                          "Grudger", "WinStayLoseShift", "Alternator", "TitFor2Tats",
                          "TwoTitsForTat", "GTFT", "Random")
#: Our variants, not in axelrod (see the module docstring).
VARIANTS: tuple[str, ...] = ("GTFTPayoff",)
#: Every scripted opponent: axelrod's and ours.
STRATEGIES: tuple[str, ...] = (*NAMES, *VARIANTS)
DETERMINISTIC: tuple[str, ...] = tuple(n for n in NAMES if n not in ("GTFT", "Random"))


def play(a: Machine, b: Machine, rounds: int, rng=None,
         rng_b=None) -> tuple[list[int], list[int]]:
    """The moves of two machines against each other over ``rounds`` rounds; a stochastic
    machine draws from ``rng`` (``a``) and ``rng_b`` (``b``; default ``rng``): anything with a
    ``random()`` method giving uniforms in [0, 1)."""
    sa, sb = a.start, b.start
    ma: list[int] = []
    mb: list[int] = []
    rng_b = rng if rng_b is None else rng_b
    for _ in range(rounds):
        x, y = a.move(sa, rng), b.move(sb, rng_b)
        ma.append(x)
        mb.append(y)
        sa, sb = int(a.next[sa, x, y]), int(b.next[sb, y, x])
    return ma, mb
