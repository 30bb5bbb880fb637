"""The ``gama`` family: GAMA-Bench's eight games of ten players (γ-Bench, ICLR 2025).

Modules: :mod:`.rules` (the games as pure state machines, GAMA's defaults, equilibria),
:mod:`.scoring` (GAMA's score of each game), :mod:`.records` (GAMA's ``raw_results`` files),
:mod:`.templates` (GAMA's own prompts from a checkout), :mod:`.importer` (``distbench import
gama``) and :mod:`.schema` (the ``gama_*`` tables). GAMA-Bench is GPL-3.0: its rules and
formulas are implemented here from their description; its prompt texts, code and records are
read from a checkout the user points to, never shipped.
"""
