"""The ``distbench run`` flags that the families asking for answers to a game in a payoff table
(``matrix``, ``bimatrix``) share: the same names and the same meaning, declared once. Each call
returns fresh :class:`click.Option` objects (each family's own declaration)."""

from __future__ import annotations

import click


def trials_option() -> click.Option:
    """``--num-trials``: answers asked per game and mode."""
    return click.Option(["--num-trials"], type=click.IntRange(min=1), default=100,
                        show_default=True, help="Answers asked per game (and mode).")


def bucket_option() -> click.Option:
    """``--bucket`` (repeatable): the buckets of games to play."""
    return click.Option(["--bucket", "buckets"], multiple=True, metavar="ID",
                        help="Bucket id such as 3x3_midVar_mixed (repeatable). Default: "
                             "<rows>x<cols>_midVar_any from --num-rows/--num-cols.")


def logprob_options() -> list[click.Option]:
    """``--logprob-cue`` and ``--min-label-mass``: how logprob mode asks and reads."""
    return [
        click.Option(["--logprob-cue"], default="I choose Action", show_default=True,
                     metavar="TEXT",
                     help="Logprob mode: the text the completion prompt ends with (white space "
                          "and multi-digit labels after it are followed automatically)."),
        click.Option(["--min-label-mass"], type=click.FloatRange(0, 1), default=0.5,
                     show_default=True,
                     help="Logprob mode: a reading with less probability on the action labels "
                          "is invalid (parse_status low_label_mass)."),
    ]
