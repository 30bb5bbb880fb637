"""Reading a model's answer to a choice among labelled actions, shared by the families that ask
for one (``matrix`` today; ``bimatrix`` and ``repeated`` use the same): strict parsing of a pure
action or a mixed strategy (:mod:`.parse`) and the strategy read from next-token probabilities
(:mod:`.logprob`). Part of the family contract: any family may import it; it imports no family.
"""
