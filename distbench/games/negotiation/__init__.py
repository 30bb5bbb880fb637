"""Deal or No Deal: two players split a small set of items by talking, then each makes a
secret proposal (GAMES.md, section 2).

Modules: :mod:`.items` (the word lists), :mod:`.instances` (seeded instances),
:mod:`.prompts` (texts per language and mode), :mod:`.parse` (the proposal parser),
:mod:`.pareto` (exact optimum computations, a numba kernel), :mod:`.players` (scripted
baselines and the model player), :mod:`.game` (the game master), :mod:`.schema`,
:mod:`.plan`, :mod:`.runner` and :mod:`.summary` (the engine glue).
"""
