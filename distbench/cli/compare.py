"""``distbench compare``: a leaderboard and paired comparisons across runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click

from distbench.errors import UserError
from distbench.games.registry import compare_units
from distbench.report.compare import (
    LEADERBOARD_COLUMNS,
    PAIRED_COLUMNS,
    Comparison,
    compare_runs,
    format_p,
    headline_lines,
    summary_lines,
)
from distbench.report.headline import MIN_SHARED_UNITS, rounded
from distbench.report.sql import render

_TITLES = {
    "leaderboard": "{family}: leaderboard by the headline (quality), then its components "
                   "(mean over each player's own {unit}; 95% bootstrap CI over {unit}; rank: "
                   "players whose headline intervals overlap share it)",
    "shared": "{family}: {unit} shared by each pair of players",
    "paired": "{family}: paired comparisons, a - b over the shared {unit} "
              "(paired bootstrap 95% CI; p two-sided; p holm: Holm-corrected across the "
              "metrics of each pair)",
}
_NOTE = ("quality (the headline): per answer in [0, 1], an invalid answer 0, calls that failed "
         "at the server left out (README, 'The headline').\nsubset 'all trials': every answered "
         "trial; 'valid only in both runs': the units where both players have a valid "
         "answer.\nHolm's correction is applied across the {k} metrics tested for each pair "
         "in a group; verdict: Holm-corrected p < 0.05.")


@click.command()
@click.argument("run_dirs", nargs=-1, required=True, metavar="RUN_DIR...",
                type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "markdown"]),
              default="table", show_default=True,
              help="csv: the tables one after another, a blank line between them; json: one "
                   "object with a list per table.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also write runs.csv, leaderboard.csv, shared.csv and paired.csv here.")
def compare(run_dirs: tuple[Path, ...], fmt: str, out_dir: Path | None) -> None:
    """Compare runs: RUN_DIRs are runs, or folders of runs such as results/.

    For each family that declares its comparison units: the headline difference of each pair of
    players first, a leaderboard ranked by the headline (quality; then its components), the
    number of instances each pair of players shares (the same instances under the same
    conditions, against the same opponent, as each family cuts them), and
    paired differences with bootstrap 95% CIs over those shared instances, Holm-corrected
    across metrics, each row saying on how many units and which subset it rests.

    Two tournaments (``distbench tournament``) of one family: per player in both, the
    difference of its Bradley–Terry strength and of its Nash-averaging rating (second run
    minus first) with 95% simultaneous bootstrap bands over the games of both runs; the
    players of one run only are listed.
    """
    if _compare_tournaments(run_dirs, fmt, out_dir):
        harness_note(run_dirs)
        return
    result = compare_runs(run_dirs, compare_units())
    tables = result.tables()
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, (columns, rows) in tables.items():
            (out_dir / f"{name}.csv").write_text(render(columns, rows, "csv") + "\n",
                                                 encoding="utf-8")
    if fmt == "json":
        doc = {name: json.loads(render(columns, rows, "json"))
               for name, (columns, rows) in tables.items()}
        click.echo(json.dumps(doc, indent=2))
    elif fmt == "csv":
        click.echo("\n\n".join(render(columns, rows, "csv") for columns, rows in tables.values()))
    else:
        click.echo(_readable(result, fmt))
    if out_dir is not None and fmt in ("table", "markdown"):
        click.echo(f"\nTables written to {out_dir}/ (runs, leaderboard, shared, paired .csv)")
    harness_note(run_dirs)  # after the comparison: a refusal stays its one line


def _shown(columns: list[str], rows: list[tuple]) -> list[tuple]:
    """Rows as printed: each mean and difference rounded to what its interval supports,
    p-values to two significant digits."""
    out = []
    for row in rows:
        r = dict(zip(columns, row, strict=True))
        low, high = r.get("ci95_low"), r.get("ci95_high")
        for key in ("mean", "mean_a", "mean_b", "diff", "ci95_low", "ci95_high"):
            if key in r:
                r[key] = rounded(r[key], low, high)
        for key in ("p", "p_holm"):
            if key in r:
                r[key] = format_p(r[key])
        out.append(tuple(r[c] for c in columns))
    return out


# On the console: (the columns in the order shown, how many name a row): what names a row
# first, then the value and its interval, the rest after (cut into blocks to fit).
_CONSOLE = {
    "leaderboard": (["group", "metric", "run_id", "player", "rank", "mean", "ci95_low",
                     "ci95_high", "units", "n", "better", "subset"], 4),
    "paired": (["group", "metric", "a", "b", "diff", "ci95_low", "ci95_high", "p", "p_holm",
                "verdict", "shared", "mean_a", "mean_b", "subset", "warning"], 2),
}


def _table(columns: list[str], rows: list[tuple], fmt: str,
           console: tuple[list[str], int] | None = None) -> str:
    """One table as printed: markdown as rendered; on the console (``table``) in words, each
    value and its interval one cell ``0.214 [0.145, 0.282]`` under ``diff [95% CI]``, in the
    order ``console`` gives (its columns, and how many lead each block), cut into blocks of
    columns to fit the terminal (at most 100 columns:
    :func:`distbench.report.document.format_console`)."""
    if fmt != "table":
        return render(columns, rows, fmt)
    from distbench.cli.run import summary_width
    from distbench.report.document import Table, format_console

    keys = 1
    if console is not None:
        order, keys = console
        pick = [columns.index(c) for c in order if c in columns]
        columns = [columns[i] for i in pick]
        rows = [tuple(row[i] for i in pick) for row in rows]
    return format_console(Table(id="compare", title="", columns=columns, rows=rows, keys=keys),
                          summary_width())


def _readable(result: Comparison, fmt: str) -> str:
    """Per family: the headline differences first, then the leaderboard by the headline, the
    shared units and the paired table, numbers rounded to their intervals."""
    heading = "### " if fmt == "markdown" else ""
    parts = [heading + "runs", _table(*result.tables()["runs"], fmt)]
    if not result.families:
        parts.append("No results to compare: the runs hold no rows of "
                     + ", ".join(result.units) + ".")
    units = {name: f.unit for name, f in result.units.items()}
    metrics = {name: len(f.metrics) for name, f in result.units.items()}
    lines = summary_lines(result)
    for family in result.families:
        heads = headline_lines(result, family)
        if heads:
            parts += [heading + f"{family}: headline differences", "\n".join(heads)]
        for name in ("leaderboard", "shared", "paired"):
            columns, rows = result.tables()[name]
            rows = [r[1:] for r in rows if r[0] == family]
            title = heading + _TITLES[name].format(family=family, unit=units[family])
            if name == "shared" and not rows:
                parts += [title, f"Only one run has {family} results: no pair to compare."]
                continue
            if name == "paired" and not rows:
                parts += [title, f"No two players share {units[family]}: no paired comparison."]
                continue
            if name in ("leaderboard", "paired"):
                rows = _shown(columns[1:], rows)
            parts += [title, _table(columns[1:], rows, fmt, _CONSOLE.get(name))]
            if name == "shared":
                mine = [line for line in lines if line.startswith(f"{family}: ")]
                if mine:
                    parts.append("\n".join(mine))
            if name == "paired":
                few = sum(1 for r in rows if r[-1])
                note = _NOTE.format(k=metrics[family])
                if few:
                    note += (f"\nwarning: {few} row(s) rest on fewer than {MIN_SHARED_UNITS} "
                             f"shared {units[family]}: their intervals are too narrow to trust.")
                parts.append(note)
    text = "\n\n".join(parts)
    return _wrapped(text) if fmt == "table" else text


def _wrapped(text: str) -> str:
    """The console's prose (titles, headlines, notes) wrapped to the terminal, continued
    lines indented (the tables fit already)."""
    import textwrap

    from distbench.cli.run import summary_width

    width = summary_width()
    out: list[str] = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        # an interval "[low, high]" stays on one line
        kept = re.sub(r"\[[^\]\s]*, [^\]\s]*\]", lambda m: m[0].replace(" ", "\0"), line)
        out += [part.replace("\0", " ") for part in textwrap.wrap(
            kept, width, subsequent_indent="  ", break_long_words=False,
            break_on_hyphens=False)]
    return "\n".join(out)


assert LEADERBOARD_COLUMNS[0] == PAIRED_COLUMNS[0] == "family"  # the tables drop it per family


TOURNAMENT_COLUMNS = ["player", "games_a", "games_b", "bt_a", "bt_b", "bt_diff", "bt_low",
                      "bt_high", "nash_a", "nash_b", "nash_diff", "nash_low", "nash_high"]
TOURNAMENT_RESAMPLES = 500
"""Bootstrap resamples per run of a tournament comparison (Nash averaging is solved once per
resample: about 2-20 ms each)."""


def harness_note(paths: Any) -> None:
    """Says on stderr, in one line, when the runs under ``paths`` mix harness hashes (numbers
    made by different prompts, parsers or scorers): ``runs differ in harness: <a> vs <b>``;
    nothing otherwise. A note, not an error."""
    from distbench.store.catalog import NotARunError, find_runs
    from distbench.store.harness import harness_line, runs_harness

    try:
        run_dirs = find_runs([Path(p) for p in paths])
    except NotARunError:
        return  # the command says why in its own words
    line = harness_line(runs_harness(run_dirs))
    if line:
        click.echo(line, err=True)


def _compare_tournaments(paths: tuple[Path, ...], fmt: str, out_dir: Path | None) -> bool:
    """Compares two tournaments when every run given is one (True: done). Mixed runs: a note
    that says why there is no rating comparison, then the comparison by family (False)."""
    from distbench.engine.tournament import load_matches, tournament_of
    from distbench.report.bootstrap import BOOTSTRAP_SEED
    from distbench.report.ratings import compare_ratings
    from distbench.store.catalog import NotARunError, find_runs

    try:
        run_dirs = find_runs(list(paths))
    except NotARunError as exc:
        raise UserError(str(exc)) from None
    described = [tournament_of(d) for d in run_dirs]
    if not any(described):
        return False

    def what(run_dir: Path, desc: dict | None) -> str:
        return (f"{run_dir.name} is a {desc['family']} tournament" if desc
                else f"{run_dir.name} is not a tournament")

    if not all(described):
        click.echo("note: no rating comparison: it takes two tournaments of one family ("
                   + ", ".join(what(d, t) for d, t in zip(run_dirs, described, strict=True))
                   + "); comparing the runs' games by family", err=True)
        return False
    if len(run_dirs) != 2 or described[0]["family"] != described[1]["family"]:
        raise UserError("compare takes two tournaments of one family to compare ratings; got "
                        + ", ".join(what(d, t) for d, t in zip(run_dirs, described, strict=True)))
    (labels_a, m_a), (labels_b, m_b) = (load_matches(d, t)
                                        for d, t in zip(run_dirs, described, strict=True))
    try:
        cmp = compare_ratings(labels_a, m_a, labels_b, m_b, seed=BOOTSTRAP_SEED,
                              resamples=TOURNAMENT_RESAMPLES)
    except ValueError as exc:
        raise UserError(f"compare {run_dirs[0].name} {run_dirs[1].name}: {exc}") from None

    def num(x: float) -> float | None:
        return None if x != x else round(float(x), 3) + 0.0  # no -0.0

    rows = [(p, int(ga), int(gb), num(ba), num(bb), num(bd), num(bl), num(bh), num(na),
             num(nb), num(nd), num(nl), num(nh))
            for p, ga, gb, ba, bb, bd, bl, bh, na, nb, nd, nl, nh in zip(
                cmp.players, cmp.matches_a, cmp.matches_b, cmp.bt_a, cmp.bt_b, cmp.bt_diff,
                cmp.bt_low, cmp.bt_high, cmp.nash_a, cmp.nash_b, cmp.nash_diff, cmp.nash_low,
                cmp.nash_high, strict=True)]
    a_name, b_name = run_dirs[0].name, run_dirs[1].name
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "ratings.csv").write_text(render(TOURNAMENT_COLUMNS, rows, "csv") + "\n",
                                             encoding="utf-8")
    if fmt in ("csv", "json"):
        click.echo(render(TOURNAMENT_COLUMNS, rows, fmt))
        return True
    level = round(100 * cmp.level)
    heading = "### " if fmt == "markdown" else ""
    click.echo(f"{heading}{described[0]['family']} tournaments: a = {a_name}, b = {b_name}; "
               f"rating differences b - a of the {len(rows)} player(s) in both (bt: "
               f"Bradley–Terry strengths re-centred over those players; nash: Nash-averaging "
               f"ratings); low/high: {level}% simultaneous bands, bootstrap over the games of "
               f"both runs ({cmp.resamples} resamples)")
    click.echo(render(TOURNAMENT_COLUMNS, rows, fmt))
    click.echo(f"only in a ({a_name}): {', '.join(cmp.only_a) or 'none'}; "
               f"only in b ({b_name}): {', '.join(cmp.only_b) or 'none'}")
    if out_dir is not None:
        click.echo(f"\nTable written to {out_dir}/ratings.csv")
    return True
