"""``distbench tournament``: every pair of a population plays both seats of a family on the
same instances; the players are rated (Bradley–Terry with intervals, Elo display, Nash
averaging) and the ranking printed."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from distbench.cli.compare import harness_note
from distbench.cli.errors import UserError, interrupted
from distbench.cli.options import check_run_id, make_output_dir, output_dir_option


def _play(plan: Any, run_dir: Path, **kwargs: Any) -> Any:
    from distbench.cli.progress import run_with_progress
    from distbench.engine.driver import RunDirectoryError

    try:
        return run_with_progress(plan, run_dir, command=["distbench", *sys.argv[1:]], **kwargs)
    except RunDirectoryError as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        raise interrupted(["distbench", *sys.argv[1:]]) from None


def budget_line(figures: dict[str, Any]) -> str:
    """Which budget limit stopped a tournament and how much of it was spent, in words (the
    engine's wording, :func:`distbench.engine.tournament_run.budget_line`)."""
    from distbench.engine.tournament_run import budget_line as line

    return line(figures)


def _player(**kwargs: Any) -> Any:
    """How the CLI plays a tournament's plans: with the progress line, its errors as one line."""
    return lambda plan, run_dir: _play(plan, run_dir, **kwargs)


def run_tournament(tournament: Any, run_dir: Path, *, parallel: bool | None,
                   num_workers: int | None = None, address: str | None = None,
                   max_cost: float | None = None, max_tokens_total: int | None = None,
                   retry_failed: bool = False) -> Any:
    """Plays (or resumes) a tournament into ``run_dir`` with the progress line
    (:func:`distbench.engine.tournament_run.play_tournament`).

    Returns:
        (the run outcome, the :class:`~distbench.engine.tournament.TournamentRatings`).
    """
    from distbench.engine.tournament_run import play_tournament

    play = _player(parallel=parallel, num_workers=num_workers, address=address,
                   max_cost=max_cost, max_tokens_total=max_tokens_total,
                   retry_failed=retry_failed)
    try:
        return play_tournament(tournament, run_dir, play)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _family_options(items: tuple[str, ...]) -> dict[str, Any]:
    """``--option NAME=VALUE`` entries as a dict (VALUE as JSON when it parses, else text)."""
    out: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UserError(f"--option {item!r}: expected NAME=VALUE (e.g. game=tic_tac_toe)")
        if name in out:
            raise UserError(f"--option {name} is given twice")
        try:
            out[name] = json.loads(text)
        except ValueError:
            out[name] = text
    return out


class _TournamentCommand(click.Command):
    """``--family``, ``--players`` and ``--option`` list, in ``--help``, what each registered
    family with seats declares (``Family.tournaments``): its name, anchors and settings."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from distbench.games.registry import families

        seated = {name: f.tournaments for name, f in families().items() if f.tournaments}
        extra = {
            "family": ", ".join(seated),
            "players": "; ".join(f"{name}: {'|'.join(t.anchors)}"
                                 for name, t in seated.items() if t.anchors),
            "family_options": "; ".join(f"{name} {', '.join(t.options)}"
                                        for name, t in seated.items() if t.options),
        }
        for param in self.params:
            text = extra.get(param.name or "")
            if text and isinstance(param, click.Option) and param.help \
                    and not param.help.endswith(f" ({text})."):
                param.help = param.help.rstrip(".") + f" ({text})."
        super().format_options(ctx, formatter)


@click.command(cls=_TournamentCommand)
@click.option("--family", required=True,
              help="The game family whose seats the players fill.")
@click.option("--players", required=True,
              help="The population (comma list): models as PROVIDER[:MODEL] "
                   "(local:smollm2-135m, openai:gpt-4o-mini, ...) and the family's scripted "
                   "players as anchors.")
@click.option("--option", "family_options", multiple=True, metavar="NAME=VALUE",
              help="A setting of the family's games, repeatable (VALUE read as JSON when it "
                   "parses, else as text; e.g. game=tic_tac_toe).")
@click.option("--num-instances", type=click.IntRange(min=1), default=10, show_default=True,
              help="Instances every pair plays, each in both seat orders.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the instances (the same for every pair).")
@click.option("--llm-seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the models' sampling.")
@click.option("--temperature", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Sampling temperature sent to the models.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None,
              help="Completion budget per answer.  [default: the family's]")
@click.option("--resamples", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap resamples (over games) of the intervals; 0: none.")
@click.option("--confidence", type=click.FloatRange(0.5, 0.999), default=0.95,
              show_default=True, help="Confidence level of the intervals.")
@click.option("--adaptive", is_flag=True,
              help="Schedule in rounds of blocks of --num-instances instances: first every "
                   "pair, then one block per adjacent pair of ranks not separated yet (the "
                   "interval of their difference contains 0), handed out in proportion to how "
                   "far each is from separating, until every adjacent pair of ranks is "
                   "separated at --confidence, --max-matches games were played, or the budget "
                   "(--max-cost, --max-tokens-total) is reached.")
@click.option("--max-matches", type=click.IntRange(min=1), default=2000, show_default=True,
              help="With --adaptive: stop after the round that reaches this many games.")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None, metavar="USD",
              help="Stop sending games before the tournament's spend (the endpoints' token "
                   "counts at --price, every round and earlier attempts included) could cross "
                   "USD: games in flight finish, the games played are rated, exit status 4; the "
                   "same command with a larger budget continues it.")
@click.option("--max-tokens-total", type=click.IntRange(min=1), default=None, metavar="N",
              help="As --max-cost, in tokens (prompt + completion) as the endpoints reported "
                   "them.")
@click.option("--price", default=None, metavar="IN,OUT",
              help="Price in USD per million prompt and completion tokens of every model "
                   "player, e.g. 2.5,10 (needed by --max-cost; no price is assumed).")
@click.option("--base-url", default=None,
              help="Base URL of the OpenAI-compatible server answering every model player "
                   "(e.g. a llamacpp: or vllm: player; default: the provider's).")
@click.option("--retry-failed", is_flag=True,
              help="Resuming a tournament: also play again the shards whose model calls "
                   "failed (their games are not rated until then).")
@click.option("--allow-failed-calls", is_flag=True,
              help="Exit 0 even when some model calls failed (their games are left out of "
                   "the ratings either way).  [default: exit status 3 with the command that "
                   "plays them again]")
@click.option("--run-id", default=None,
              help="Run folder name (re-running it resumes).  [default: "
                   "tournament-<family>-<timestamp>]")
@output_dir_option
@click.option("--parallel/--no-parallel", default=None,
              help="Run shards as Ray tasks, or one by one in this process.  [default: auto]")
@click.option("--num-workers", type=click.IntRange(min=1), default=None,
              help="CPUs of the local Ray instance.  [default: all]")
@click.option("--address", default=None,
              help="Existing Ray cluster to use ('auto', HOST:PORT or ray://HOST:PORT).")
def tournament(family: str, players: str, family_options: tuple[str, ...], num_instances: int, seed: int, llm_seed: int,
               temperature: float, max_tokens: int | None, resamples: int, confidence: float,
               adaptive: bool, max_matches: int, max_cost: float | None,
               max_tokens_total: int | None, price: str | None, base_url: str | None,
               retry_failed: bool, allow_failed_calls: bool, run_id: str | None, output_dir: Path, parallel: bool | None,
               num_workers: int | None, address: str | None) -> None:
    """Every pair of PLAYERS plays both seats of FAMILY on the same instances; prints the
    ranking by Bradley–Terry strength with its intervals, the Elo display and Nash averaging,
    and stores the ratings and pairings tables."""
    from distbench.games.base import PairingSettings

    texts = [p.strip() for p in players.split(",") if p.strip()]
    settings = PairingSettings(num_instances=num_instances, seed=seed, llm_seed=llm_seed,
                               temperature=temperature, max_tokens=max_tokens,
                               options=_family_options(family_options))
    play_tournament_command(
        family, texts, settings, output_dir, run_id, resamples=resamples,
        confidence=confidence, price=price, base_url=base_url,
        max_matches=max_matches if adaptive else None, parallel=parallel,
        num_workers=num_workers, address=address, max_cost=max_cost,
        max_tokens_total=max_tokens_total, retry_failed=retry_failed,
        allow_failed_calls=allow_failed_calls)


def play_tournament_command(family: str, players: list[str], settings: Any, output_dir: Path,
                            run_id: str | None, *, resamples: int = 1000,
                            confidence: float = 0.95, price: str | None = None,
                            base_url: str | None = None, max_matches: int | None = None,
                            parallel: bool | None = None, num_workers: int | None = None,
                            address: str | None = None, max_cost: float | None = None,
                            max_tokens_total: int | None = None, retry_failed: bool = False,
                            allow_failed_calls: bool = False) -> None:
    """``distbench tournament``, parsed: builds the tournament (one line on bad input), plays
    it (plain, or adaptive with ``max_matches``) and prints the family's lines and the
    ranking; the exit statuses of a budget stop (4) and of failed calls (3)."""
    from distbench.engine.tournament import Tournament
    from distbench.games.registry import get_family

    try:
        fam = get_family(family)
    except (KeyError, ValueError) as exc:
        raise UserError(str(exc).strip("'\"")) from None
    try:
        tour = Tournament.build(fam, players, settings, resamples=resamples,
                                confidence=confidence)
        tour = tour.with_model_options(**_price(price), base_url=base_url)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    run_id = check_run_id(run_id or f"tournament-{family}-{time.strftime('%Y%m%d-%H%M%S')}")
    run_dir = make_output_dir(output_dir) / run_id
    click.echo(f"running a {family} tournament of {len(tour.labels)} players "
               f"({', '.join(tour.labels)}) as run {run_id}", err=True)
    budget = {"max_cost": max_cost, "max_tokens_total": max_tokens_total,
              "retry_failed": retry_failed}
    if max_matches is not None:
        from distbench.engine.tournament_run import play_adaptive

        play = _player(parallel=parallel, num_workers=num_workers, address=address, **budget)
        end = play_adaptive(tour, run_dir, play, max_matches=max_matches,
                            note=lambda line: click.echo(line, err=True))
        if end.ratings is not None:
            _print_ranking(fam, run_dir, end.ratings.ratings)
        harness_note([run_dir])
        click.echo(f"\nstopped after {end.rounds} round(s): {end.reason}")
        click.echo(f"{end.executed} shard(s) run. Results: {run_dir}", err=True)
        if end.budget is not None:
            raise _budget_stop(end.budget, end.executed, run_dir)
        _check_calls(run_dir, allow_failed_calls)
        return
    outcome, result = run_tournament(tour, run_dir, parallel=parallel,
                                     num_workers=num_workers, address=address, **budget)
    _print_ranking(fam, run_dir, result.ratings)
    harness_note([run_dir])
    click.echo(f"\n{outcome.executed} shard(s) run, {outcome.skipped} already committed, "
               f"{outcome.elapsed_s:.1f} s. Results: {outcome.run_dir}", err=True)
    click.echo(f'Query them: distbench query {outcome.run_dir} "select * from ratings"',
               err=True)
    if outcome.budget_reached is not None:
        raise _budget_stop(outcome.budget_reached, outcome.executed, run_dir)
    _check_calls(run_dir, allow_failed_calls)


def _print_ranking(family: Any, run_dir: Path, ratings: list[dict[str, Any]]) -> None:
    """The family's own lines about the tournament's games (if it has any), then the ranking."""
    from distbench.store.catalog import open_run

    if family.tournaments.report:
        con = open_run(run_dir, threads=1, tables=list(family.tables))
        try:
            click.echo(family.tournament_report(con) + "\n")
        finally:
            con.close()
    click.echo(format_ranking(ratings))


def _check_calls(run_dir: Path, allow_failed: bool) -> None:
    """Failed model calls of the whole tournament (every round): their games are not rated;
    exit status 3 with the command that plays them again, as ``distbench run``."""
    from distbench.cli.run import check_calls, resume_command
    from distbench.engine.driver import call_health
    from distbench.store.catalog import open_run

    con = open_run(run_dir, threads=1, tables=["calls"])
    try:
        health = call_health(con)
    finally:
        con.close()
    retry = resume_command(sys.argv[1:], run_dir.name)
    check_calls(health, allow_failed=allow_failed,
                retry=retry if "--retry-failed" in retry else [*retry, "--retry-failed"])


def _price(text: str | None) -> dict[str, float]:
    from distbench.cli.run import _price as parse_price

    return parse_price(text)


def _budget_stop(figures: dict[str, Any], executed: int, run_dir: Path) -> Exception:
    """The budget stop of a tournament: one line (which limit, what was spent, the command
    that continues it with a budget covering the rest of the round), exit status 4."""
    from types import SimpleNamespace

    from distbench.cli.run import budget_stop, resume_command

    return budget_stop(SimpleNamespace(budget_reached=figures, executed=executed),
                       resume_command(sys.argv[1:], run_dir.name))


def format_ranking(ratings: list[dict[str, Any]]) -> str:
    """The ranking with intervals, as text for the terminal: Bradley–Terry's strength and its
    interval one cell ``+0.52 [+0.10, +0.90]``, cut into blocks of columns (rank and player
    repeated) to fit the terminal, at most 100 columns."""
    from distbench.cli.run import summary_width
    from distbench.report.document import fit_lines

    if not ratings:
        return "no games were rated"
    level = round(100 * ratings[0]["confidence"])
    header = ["rank", "player", "games", "wins", f"BT [{level}% interval]", "Elo", "Nash mass",
              "Nash rating"]
    cells = []
    for r in ratings:
        ci = (" [{:+.2f}, {:+.2f}]".format(r["bt_low"], r["bt_high"])
              if r["bt_low"] is not None else "" if r["matches"] else " (no games)")
        cells.append([str(r["rank"]), str(r["player"]), str(r["matches"]), f"{r['wins']:.1f}",
                      f"{r['bt_strength']:+.2f}{ci}", f"{r['elo']:.0f}",
                      f"{r['nash_mass']:.3f}",
                      f"{r['nash_rating']:+.3f}" if r["nash_rating"] is not None else ""])
    width = summary_width()
    lines = [ln for ln in fit_lines(header, cells, width, keys=2,
                                    right=[True, False, True, True, True, True, True, True])
             if not (ln.strip() and set(ln) <= {"-", " "})]  # no rule: a player per line 2..
    notes = []
    if any(r["bt_low"] is not None for r in ratings):
        notes.append(f"BT intervals: simultaneous at {level}% (all players' intervals hold at "
                     "once; a bootstrap max-|t| band over games)")
    if all(r["nash_rating"] is None for r in ratings) and any(r["matches"] for r in ratings):
        notes.append("n-seat tables: BT is the Plackett–Luce strength over each game's "
                     "finishing order (ties as ties); Nash averaging is not defined for n "
                     "players (left NULL)")
    import textwrap

    return "\n".join(lines + [w for note in notes for w in textwrap.wrap(note, width)])
