"""A fog-of-war agent of your own, as docs/families/fog.md describes: a class with
``observe_and_plan(player_id, observation, rng) -> (orders, AgentReport)``, constructible
without arguments. This one starts from the greedy tier and keeps its sovereign fortified;
the docs test plays it with this folder on PYTHONPATH:

    PYTHONPATH=examples/fog_agent distbench run --family fog --agent mypkg.agents:MyAgent --opponent tier3
"""

from distbench.games.fog.agents import GreedyAgent


class MyAgent(GreedyAgent):
    """Tier 2's orders, except that the sovereign fortifies every turn."""

    def observe_and_plan(self, player_id, observation, rng):
        orders, report = super().observe_and_plan(player_id, observation, rng)
        sovereign = observation.sovereign
        if observation.own_alive[sovereign]:
            orders[sovereign] = ("fortify", None)
        return orders, report
