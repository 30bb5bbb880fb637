"""The ``openspiel`` family: games of OpenSpiel's registry played by a model through text.

OpenSpiel runs the game (its rules are the reference); distbench writes the ``matches`` and
``moves`` tables (and ``policies`` in logprob mode), scores every move against an exact
reference where one is affordable (:mod:`.reference`) and the model's behavioural policy by
its NashConv (:mod:`.policy`). Nothing here imports ``pyspiel`` at import time: without the
``openspiel`` extra the family is registered and says in one line how to install it.
"""
