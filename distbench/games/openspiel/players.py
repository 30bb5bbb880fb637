"""The scripted opponents: uniform random, the equilibrium of the reference, OpenSpiel's MCTS.

Each draws from its own ``numpy`` generator seeded per match and seat
(:func:`distbench.games.openspiel.plan.move_seed`), so a match's moves depend on its id alone.

- ``random``: uniform over the legal actions.
- ``equilibrium``: the reference's equilibrium (:mod:`.reference`): a draw from its policy at
  the information state (imperfect information), or uniform among the minimax-best actions
  (perfect information). Needs a reference.
- ``mcts``: OpenSpiel's ``MCTSBot`` (UCT constant 2, random rollouts, ``mcts_simulations``
  simulations per move, solving terminal subtrees). It searches the true state, so it is
  offered for perfect-information games only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from distbench.games.openspiel.reference import Reference


class Scripted:
    """A scripted player of one match and seat."""

    def __init__(self, kind: str, game: Any, ref: Reference, seed: int,
                 simulations: int = 100) -> None:
        self.kind = kind
        self.ref = ref
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, 7]))
        self.bot = None
        if kind == "equilibrium" and ref.kind == "none":
            raise ValueError(f"{ref.game}: no reference ({ref.detail}), so no equilibrium player")
        if kind == "mcts":
            from open_spiel.python.algorithms import mcts

            state_rng = np.random.RandomState(seed & 0xFFFF_FFFF)
            self.bot = mcts.MCTSBot(
                game, uct_c=2.0, max_simulations=simulations,
                evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=state_rng),
                solve=True, random_state=state_rng)

    def act(self, state: Any) -> int:
        """The action this player plays at ``state``."""
        legal = list(state.legal_actions())
        if self.kind == "random":
            return int(legal[self.rng.integers(len(legal))])
        if self.kind == "mcts":
            return int(self.bot.step(state))
        if self.ref.kind == "minimax":
            values = self.ref.values(state) or {}
            best = max(values.values())
            top = [a for a in legal if values.get(a, -np.inf) >= best - 1e-12]
            return int(top[self.rng.integers(len(top))])
        probs = self.ref.policy.get(state.information_state_string(state.current_player()), {})
        p = np.array([probs.get(a, 0.0) for a in legal], dtype=np.float64)
        p = p / p.sum() if p.sum() > 0 else np.full(len(legal), 1.0 / len(legal))
        return int(legal[self.rng.choice(len(legal), p=p)])
