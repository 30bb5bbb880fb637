"""Tournaments: a population of players x a family whose seats they fill x instances, rated.

Every unordered pair of the population is one pairing, planned by the family
(``Family.plan_pairing``: both seat orders on the same instances); the tournament's plan is
the union of the pairings' shards, so it is a run like any other (planned shards, Ray or in
process, exactly-once resume, progress, the store). After the run, the family's outcome per
seat (``Family.seat_outcomes``) gives one *match* per game: its result (the higher seat score
wins; equal scores tie) and its margin (the difference of the seat scores). From them
:func:`rate` fits the ratings of :mod:`distbench.report.ratings` and writes the ``ratings``
and ``pairings`` tables, committed like a shard (marker ``tournament-ratings``), so a resume
or a rerun rewrites them exactly once.

The engine names no family: the family comes from the registry by name.
"""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from distbench.games.base import MAX_PLANNED_SHARDS, FieldTypeError, PairingSettings, RunPlan
from distbench.games.family import Family
from distbench.report.ratings import (
    DEFAULT_ALPHA,
    MAX_RESAMPLES,
    bootstrap_bradley_terry,
    bootstrap_plackett_luce,
    elo,
    meta_game,
    nash_average,
    pair_stats,
)
from distbench.store.schema import PAIRINGS, RATINGS

logger = logging.getLogger(__name__)

__all__ = ["RATINGS_MARKER", "Separation", "Tournament", "TournamentRatings", "allocate_round",
           "next_pairs", "ratings_tables", "refit",
           "plan_schedule", "plan_tournament", "rate", "round_seed", "separation",
           "stop_reason", "write_ratings"]

RATINGS_MARKER = "tournament-ratings"
"""The commit marker of a tournament's ``ratings`` and ``pairings`` files."""


@dataclass(frozen=True)
class Tournament:
    """A population of players in one family.

    Attributes:
        family: The family (pairable: it declares seats, players, pairings and outcomes).
        players: The family's players, in the order given.
        labels: Their labels, as the family's tables write them (distinct).
        settings: What every pairing shares.
        resamples: Bootstrap resamples of the intervals.
        confidence: Confidence level of the intervals.
    """

    family: Family
    players: tuple[Any, ...]
    labels: tuple[str, ...]
    settings: PairingSettings
    resamples: int = 1000
    confidence: float = 0.95

    @classmethod
    def build(cls, family: Family, texts: list[str], settings: PairingSettings,
              **kwargs: Any) -> Tournament:
        """Resolves ``--players`` entries through the family (ValueError: one line)."""
        if not family.pairable:
            from distbench.games.registry import families

            seated = ", ".join(name for name, f in families().items() if f.pairable)
            raise ValueError(f"the {family.name} family has no seats for players to fill "
                             f"(tournaments need a family with seats: {seated})")
        if settings.num_instances < 1:
            raise ValueError(f"--num-instances must be at least 1, got {settings.num_instances}")
        players, labels = [], []
        for text in texts:
            player, label = family.tournament_player(text)
            if label in labels:
                raise ValueError(f"--players: {text!r} is given twice (as {label})")
            players.append(player)
            labels.append(label)
        if len(players) < 2:
            raise ValueError(f"a tournament needs at least two players, got {len(players)}")
        known = family.tournaments.options if family.tournaments else {}
        unknown = [k for k in settings.options if k not in known]
        if unknown:
            takes = f"takes {', '.join(known)}" if known else "takes none"
            raise ValueError(f"--option {unknown[0]}: not a setting of the {family.name} "
                             f"family's tournaments (it {takes})")
        resamples = kwargs.get("resamples", 1000)
        if not 0 <= resamples <= MAX_RESAMPLES:
            raise ValueError(f"--resamples must be from 0 to {MAX_RESAMPLES:,} (the bootstrap "
                             f"holds every resample's table of wins at once), got {resamples:,}")
        pairs = len(players) * (len(players) - 1) // 2
        _check_size(pairs, 1, len(players))  # each pairing plans a shard at least
        tabled = family.tournaments is not None and family.tournaments.table is not None
        try:  # a bad value fails here, in one line, before anything runs
            per = len((family.plan_table(players, settings) if tabled else
                       family.plan_pairing(players[0], players[1], settings)).plan("").shards)
        except (TypeError, KeyError, FieldTypeError) as exc:
            named = getattr(exc, "field", None)
            names = named if named in settings.options else ", ".join(settings.options)
            raise ValueError(f"--option {names}: a value of the wrong kind ({exc})") from None
        _check_size(pairs, per, len(players))
        return cls(family, tuple(players), tuple(labels), settings, **kwargs)

    def with_model_options(self, **options: Any) -> Tournament:
        """The tournament with ``options`` (e.g. ``price_in``, ``price_out``, ``base_url``)
        set on every model player (a player that is a backend spec; scripted players and
        agents are left alone). None values are ignored.

        Raises:
            ValueError: a bad option value (one line naming the option), or options with no
                model in the population.
        """
        from dataclasses import replace

        from distbench.llm.base import BackendSpec, check_option

        given = {k: v for k, v in options.items() if v is not None}
        if not given:
            return self
        for key, value in given.items():
            check_option(key, value)
        models = [k for k, p in enumerate(self.players) if isinstance(p, BackendSpec)]
        if not models:
            key = next(iter(given))
            flag = "--price" if key.startswith("price") else f"--{key.replace('_', '-')}"
            raise ValueError(f"{flag}: no player of the population is a model")
        players = list(self.players)
        for k in models:
            merged = {**dict(players[k].options), **given}
            players[k] = replace(players[k], options=tuple(sorted(merged.items())))
        return replace(self, players=tuple(players))

    def pairs(self) -> list[tuple[int, int]]:
        """Every unordered pair ``i < j`` of the population."""
        n = len(self.players)
        return [(i, j) for i in range(n) for j in range(i + 1, n)]

    def describe(self) -> dict[str, Any]:
        """JSON of the tournament itself (recorded in the manifest)."""
        settings = asdict(self.settings)
        settings["options"] = dict(self.settings.options)
        return {"family": self.family.name, "players": list(self.labels),
                "settings": settings, "resamples": self.resamples,
                "confidence": self.confidence}


def _check_size(pairs: int, per_pairing: int, players: int) -> None:
    """Refuses, in one line, a tournament whose pairings would plan more than
    :data:`~distbench.games.base.MAX_PLANNED_SHARDS` shards in all (the bound of one run's
    plan), before any pairing is planned."""
    if pairs * per_pairing > MAX_PLANNED_SHARDS:
        raise ValueError(
            f"--players: {players:,} players make {pairs:,} pairings x {per_pairing:,} "
            f"shard(s) = {pairs * per_pairing:,} shards, more than {MAX_PLANNED_SHARDS:,} a "
            "run may plan: fewer players or --num-instances (or several tournaments)")


def tables(tournament: Tournament) -> list[tuple[int, ...]]:
    """An n-seat tournament's tables: every player at each, the seats rotated one place per
    table (each player in each seat once), on the same instances."""
    n = len(tournament.players)
    return [tuple((k + r) % n for k in range(n)) for r in range(n)]


def plan_tournament(tournament: Tournament, run_id: str) -> RunPlan:
    """The run of every pairing: the union of the pairings' shards, in pair order (an n-seat
    family's: of its :func:`tables`)."""
    if tournament.family.tournaments.table is not None:
        key = "tables"
        configs = [tournament.family.plan_table([tournament.players[k] for k in t],
                                                tournament.settings)
                   for t in tables(tournament)]
    else:
        key = "pairings"
        configs = [tournament.family.plan_pairing(tournament.players[i], tournament.players[j],
                                                  tournament.settings)
                   for i, j in tournament.pairs()]
    plans = [c.plan(run_id) for c in configs]
    return _union_plan(
        tournament, plans,
        config={"tournament": tournament.describe(), key: [p.config for p in plans]},
        identity={"tournament": tournament.describe(), key: [c.identity() for c in configs]})


def _union_plan(tournament: Tournament, plans: list[RunPlan], config: dict[str, Any],
                identity: dict[str, Any]) -> RunPlan:
    """One run of the pairings' plans: their shards (each once), their estimates summed, and a
    per-shard estimate for the budgets (the shard's own plan's hook, else its share of that
    plan's estimates by units)."""
    from distbench.engine.budget import proportional

    shards: dict[str, Any] = {}
    hooks: dict[str, Any] = {}
    for plan in plans:
        hook = plan.shard_estimate or proportional(plan)
        for shard in plan.shards:
            shards.setdefault(shard.shard_id, shard)
            if hook is not None:
                hooks.setdefault(shard.shard_id, hook)

    def total(name: str) -> Any:
        values = [getattr(p, name) for p in plans]
        return None if any(v is None for v in values) else sum(values)

    def shard_estimate(shard: Any) -> tuple[int, int, float | None]:
        hook = hooks.get(shard.shard_id)
        return hook(shard) if hook is not None else (0, 0, None)

    tokens = [p.expected_tokens for p in plans]
    head = plans[0]
    return RunPlan(
        family=tournament.family.name, config=config, identity=identity,
        shards=list(shards.values()),
        seeds=head.seeds,
        summarize=head.summarize,
        unit=head.unit,
        summary_threads=head.summary_threads,
        summary_tables=head.summary_tables,
        extra_styles=head.extra_styles,
        expected_calls=total("expected_calls"),
        expected_tokens=None if any(t is None for t in tokens) else
        (sum(t[0] for t in tokens), sum(t[1] for t in tokens)),
        expected_cost=total("expected_cost"),
        expected_requests=total("expected_requests"),
        shard_estimate=shard_estimate if hooks else None,
    )


@dataclass(frozen=True)
class TournamentRatings:
    """A tournament's ratings and pairwise table, as rows of ``ratings`` and ``pairings``."""

    ratings: list[dict[str, Any]]
    pairings: list[dict[str, Any]]


def matches_from(outcomes: list[Any], labels: tuple[str, ...]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, outcome, margin) arrays of the games between players of the population.

    Raises:
        ValueError: a game of a player not in ``labels`` (the run is not this tournament).
    """
    index = {label: k for k, label in enumerate(labels)}
    a, b, result, margin = [], [], [], []
    for o in outcomes:
        if o.player_a not in index or o.player_b not in index:
            raise ValueError(f"game {o.game_id} has a player outside the population "
                             f"({o.player_a} vs {o.player_b})")
        if o.player_a == o.player_b:
            continue
        a.append(index[o.player_a])
        b.append(index[o.player_b])
        diff = float(o.score_a) - float(o.score_b)
        result.append(1.0 if diff > 0 else 0.0 if diff < 0 else 0.5)
        margin.append(diff)
    return (np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64),
            np.asarray(result, dtype=np.float64), np.asarray(margin, dtype=np.float64))


def rate_matches(labels: tuple[str, ...], family: str, run_id: str, a: np.ndarray,
                 b: np.ndarray, outcome: np.ndarray, margin: np.ndarray, *, seed: int,
                 resamples: int = 1000, confidence: float = 0.95) -> TournamentRatings:
    """The ``ratings`` and ``pairings`` rows of a set of matches (pure)."""
    n = len(labels)
    bt = bootstrap_bradley_terry(n, a, b, outcome, seed=seed, alpha=DEFAULT_ALPHA,
                                 resamples=resamples, level=confidence)
    # A player without games (a budget stop, or every game lost to failed calls) has no
    # rating to speak of: it is ranked after the rated players, and the meta-game is that of
    # the players who played (its mass 0, its Nash rating NULL).
    played = np.zeros(n, dtype=bool)
    played[a] = True
    played[b] = True
    idx = np.flatnonzero(played)
    nash_mass, nash_rating = np.zeros(n), np.full(n, np.nan)
    if idx.size:
        remap = np.full(n, -1, dtype=np.int64)
        remap[idx] = np.arange(idx.size)
        nash = nash_average(meta_game(idx.size, remap[a], remap[b], margin))
        nash_mass[idx], nash_rating[idx] = nash.mass, nash.rating
    pairs = pair_stats(n, a, b, outcome, margin, seed=seed, resamples=resamples,
                       level=confidence)
    order = np.lexsort((np.arange(n), -bt.theta, ~played))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(1, n + 1)
    elos, lows, highs = elo(bt.theta), elo(bt.low), elo(bt.high)

    def opt(x: float) -> float | None:
        return None if np.isnan(x) else float(x)

    ratings = []
    for k in order:
        mine = (a == k) | (b == k)
        has_games = bool(played[k])
        wins = float(np.where(a == k, outcome, 1.0 - outcome)[mine].sum())
        margins = np.where(a == k, margin, -margin)[mine]
        ratings.append({
            "run_id": run_id, "family": family, "player": labels[k], "rank": int(rank[k]),
            "matches": int(mine.sum()), "wins": wins,
            "mean_margin": float(margins.mean()) if margins.size else 0.0,
            "bt_strength": float(bt.theta[k]),
            "bt_low": opt(bt.low[k]) if has_games else None,
            "bt_high": opt(bt.high[k]) if has_games else None, "elo": float(elos[k]),
            "elo_low": opt(lows[k]) if has_games else None,
            "elo_high": opt(highs[k]) if has_games else None,
            "nash_mass": float(nash_mass[k]), "nash_rating": opt(nash_rating[k]),
            "confidence": confidence,
        })
    pairings = [{
        "run_id": run_id, "family": family, "player_i": labels[int(i)],
        "player_j": labels[int(j)], "matches": int(m), "wins_i": float(w),
        "score_diff": float(d), "diff_low": opt(lo), "diff_high": opt(hi),
    } for i, j, m, w, d, lo, hi in zip(pairs.i, pairs.j, pairs.matches, pairs.wins_i,
                                       pairs.diff, pairs.low, pairs.high, strict=True)]
    return TournamentRatings(ratings, pairings)


def read_matches(tournament: Tournament, run_dir: Path, shard_ids: set[str] | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, outcome, margin) of the run's committed games (see :func:`matches_from`); with
    ``shard_ids``, of those shards' games only (an adaptive round resumed in a run that went
    further reads the games of its own schedule, not the later rounds')."""
    from distbench.store.catalog import open_run

    con = open_run(run_dir, threads=1, tables=list(tournament.family.tables))
    try:
        outcomes = tournament.family.seat_outcomes(con)
    finally:
        con.close()
    if shard_ids is not None:
        outcomes = [o for o in outcomes if o.shard_id in shard_ids]
    return matches_from(outcomes, tournament.labels)


def rate_tables(labels: tuple[str, ...], family: str, run_id: str,
                games: list[tuple[list[int], list[float]]], *, seed: int,
                resamples: int = 1000, confidence: float = 0.95) -> TournamentRatings:
    """The ``ratings`` and ``pairings`` rows of n-seat games (pure): Plackett–Luce over each
    game's finishing order (ties as ties) with the simultaneous band, in the ``bt_*``
    columns; ``pairings`` from every two seats of a game (who finished ahead); Nash
    averaging is not defined for n players (NULL)."""
    n = len(labels)
    pl = bootstrap_plackett_luce(n, games, seed=seed, alpha=DEFAULT_ALPHA,
                                 resamples=resamples, level=confidence)
    a, b, outcome, margin = [], [], [], []
    for players, scores in games:
        for s in range(len(players)):
            for t in range(s + 1, len(players)):
                if players[s] != players[t]:
                    diff = float(scores[s]) - float(scores[t])
                    a.append(players[s])
                    b.append(players[t])
                    outcome.append(1.0 if diff > 0 else 0.0 if diff < 0 else 0.5)
                    margin.append(diff)
    result = rate_matches(labels, family, run_id, np.asarray(a, dtype=np.int64),
                          np.asarray(b, dtype=np.int64), np.asarray(outcome),
                          np.asarray(margin), seed=seed, resamples=resamples,
                          confidence=confidence)
    elos, lows, highs = elo(pl.theta), elo(pl.low), elo(pl.high)
    index = {label: k for k, label in enumerate(labels)}
    rows = [{**r, "bt_strength": float(pl.theta[index[r["player"]]]),
             "bt_low": float(pl.low[index[r["player"]]]),
             "bt_high": float(pl.high[index[r["player"]]]),
             "elo": float(elos[index[r["player"]]]),
             "elo_low": float(lows[index[r["player"]]]),
             "elo_high": float(highs[index[r["player"]]]),
             "nash_mass": 0.0, "nash_rating": None} for r in result.ratings]
    rows.sort(key=lambda r: (-r["bt_strength"], index[r["player"]]))
    for k, r in enumerate(rows):
        r["rank"] = k + 1
        r["matches"] = sum(index[r["player"]] in p for p, _ in games)
    return TournamentRatings(rows, result.pairings)


def rate(tournament: Tournament, run_dir: Path, run_id: str) -> TournamentRatings:
    """Reads the run's games through the family's outcomes and rates the population."""
    if tournament.family.tournaments.table is not None:
        from distbench.store.catalog import open_run

        con = open_run(run_dir, threads=1, tables=list(tournament.family.tables))
        try:
            found = tournament.family.seat_outcomes(con)
        finally:
            con.close()
        index = {label: k for k, label in enumerate(tournament.labels)}
        games = [([index[p] for p in players], list(scores))
                 for _, _, players, scores in found]
        return rate_tables(tournament.labels, tournament.family.name, run_id, games,
                           seed=tournament.settings.seed, resamples=tournament.resamples,
                           confidence=tournament.confidence)
    a, b, outcome, margin = read_matches(tournament, run_dir)
    return rate_matches(tournament.labels, tournament.family.name, run_id, a, b, outcome,
                        margin, seed=tournament.settings.seed, resamples=tournament.resamples,
                        confidence=tournament.confidence)


def ratings_tables(result: TournamentRatings) -> dict[str, tuple[str, pa.Table]]:
    """The ``ratings`` and ``pairings`` tables of a result, as a commit takes them."""
    return {
        "ratings": ("tournament", pa.Table.from_pylist(result.ratings, schema=RATINGS)),
        "pairings": ("tournament", pa.Table.from_pylist(result.pairings, schema=PAIRINGS)),
    }


def write_ratings(run_dir: Path, result: TournamentRatings) -> None:
    """Commits the ``ratings`` and ``pairings`` tables (one marker; a rerun overwrites)."""
    from distbench.store.writer import RunWriter, exclusive

    with exclusive(run_dir):
        RunWriter(run_dir).commit_shard(RATINGS_MARKER, ratings_tables(result),
                                        harness=games_harness(run_dir))


def games_harness(run_dir: Path) -> str | None:
    """The harness hash of a tournament's ratings: its games' one, or theirs joined with
    ``+`` when they mix (None before harness hashes)."""
    from distbench.store.harness import run_harness

    hashes = run_harness(run_dir)
    return "+".join(hashes) or None


# --- adaptive scheduling -------------------------------------------------------------------


SEPARATION_TOL = 1e-9
"""A difference interval separates two ranks when its lower end exceeds this (not merely 0:
two players who tied every game differ by rounding noise in every resample)."""


@dataclass(frozen=True)
class Separation:
    """Where a ranking stands: which adjacent ranks are separated, which pairs still overlap.

    Attributes:
        order: Player indices, best first (by Bradley–Terry strength).
        gaps: Per adjacent pair of ranks ``(higher, lower, low, high)``: the percentile
            bootstrap interval of ``theta[higher] - theta[lower]`` at the confidence.
        overlapping: Pairs ``i < j`` whose strength intervals overlap.
    """

    order: list[int]
    gaps: list[tuple[int, int, float, float]]
    overlapping: list[tuple[int, int]]

    @property
    def separated(self) -> bool:
        """Every adjacent pair of ranks is separated (its difference interval excludes 0, by
        more than :data:`SEPARATION_TOL`)."""
        return all(low > SEPARATION_TOL for _, _, low, _ in self.gaps)

    def unresolved(self) -> list[tuple[int, int]]:
        """The adjacent pairs not separated yet, as ``i < j``."""
        return [(min(h, lo), max(h, lo)) for h, lo, low, _ in self.gaps
                if not low > SEPARATION_TOL]


def separation(n: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, *, seed: int,
               confidence: float = 0.95, resamples: int = 1000) -> Separation:
    """The ranking's separation from a set of matches (pure; the adaptive schedule's input)."""
    bt = bootstrap_bradley_terry(n, a, b, outcome, seed=seed, alpha=DEFAULT_ALPHA,
                                 resamples=max(resamples, 1), level=confidence)
    order = [int(k) for k in np.lexsort((np.arange(n), -bt.theta))]
    tail = (1.0 - confidence) / 2.0
    gaps = []
    for hi, lo in zip(order, order[1:], strict=False):
        diff = bt.samples[:, hi] - bt.samples[:, lo]
        if diff.size:
            low, high = (float(x) for x in np.quantile(diff, [tail, 1.0 - tail]))
        else:
            low = high = math.nan
        gaps.append((hi, lo, low, high))
    overlapping = [(i, j) for i in range(n) for j in range(i + 1, n)
                   if bt.low[i] <= bt.high[j] and bt.low[j] <= bt.high[i]]
    return Separation(order, gaps, overlapping)


def next_pairs(state: Separation) -> list[tuple[int, int]]:
    """The pairs the next round plays: the adjacent ranks whose intervals still overlap (the
    interval of their difference contains 0). A game between them is the one that moves the
    ranking most: it bears on an unsettled order directly, while a game between ranks far
    apart only tightens both players a little (``overlapping`` lists every pair whose strength
    intervals overlap, for a report)."""
    return sorted(set(state.unresolved()))


def allocate_round(state: Separation) -> list[tuple[int, int]]:
    """The blocks of the next adaptive round, as pairs ``i < j`` (a pair may appear more than
    once: each appearance is one block of ``--num-instances`` instances in both seat orders).

    The round has as many blocks as there are adjacent ranks not separated yet
    (:meth:`Separation.unresolved`); they go to those pairs in proportion to how far the lower
    end of their difference interval lies below 0 (largest remainders first, ties by rank), so a
    pair that has almost separated gets little or nothing and one far from it gets several.
    Pairs already separated are not re-played. Deterministic: a function of ``state`` only.
    """
    open_gaps = [(min(h, lo), max(h, lo), low) for h, lo, low, _ in state.gaps
                 if not low > SEPARATION_TOL]
    if not open_gaps:
        return []
    weights = np.array([-low if np.isfinite(low) and low < 0 else 0.0
                        for _, _, low in open_gaps])
    blocks = len(open_gaps)
    if weights.sum() <= 0:
        weights = np.ones(blocks)
    share = weights / weights.sum() * blocks
    count = np.floor(share).astype(np.int64)
    # largest remainders first; a stable sort keeps the rank order among equal remainders
    for k in np.argsort(-(share - count), kind="stable")[:blocks - int(count.sum())]:
        count[k] += 1
    return [(i, j) for (i, j, _), c in zip(open_gaps, count, strict=True) for _ in range(int(c))]


def round_seed(seed: int, round_index: int, block: int = 0) -> int:
    """The instance seed of block ``block`` of an adaptive round (round 0 plays ``seed``
    itself; a pair's first block of round ``r`` plays the round's instances, its further
    blocks instances of their own)."""
    from distbench.games.base import derive_seed

    if block:
        return derive_seed(seed, "round", round_index, "block", block) >> 2
    return seed if round_index == 0 else derive_seed(seed, "round", round_index) >> 2


def plan_schedule(tournament: Tournament, schedule: list[list[tuple[int, int]]], run_id: str,
                  adaptive: dict[str, Any]) -> RunPlan:
    """The run of the rounds scheduled so far: the ``b``-th appearance of a pair in round ``r``
    plays ``settings.num_instances`` instances of :func:`round_seed` ``(seed, r, b)``, both
    seat orders. The identity is the tournament's and the adaptive settings' only (not the
    schedule, which the results decide), so each round resumes the same run: committed shards
    are skipped."""
    from dataclasses import replace

    configs = []
    for r, pairs in enumerate(schedule):
        seen: dict[tuple[int, int], int] = {}
        for i, j in pairs:
            block = seen.get((i, j), 0)
            seen[(i, j)] = block + 1
            settings = replace(tournament.settings,
                               seed=round_seed(tournament.settings.seed, r, block))
            configs.append(tournament.family.plan_pairing(tournament.players[i],
                                                          tournament.players[j], settings))
    plans = [c.plan(run_id) for c in configs]
    identity = {"tournament": tournament.describe(), "adaptive": adaptive}
    return _union_plan(
        tournament, plans, identity=identity,
        config={**identity, "schedule": [[list(p) for p in pairs] for pairs in schedule]})


def stop_reason(state: Separation, matches: int, max_matches: int | None,
                labels: tuple[str, ...], confidence: float) -> str | None:
    """Why an adaptive tournament stops now, in one line, or None: go on."""
    level = f"{round(100 * confidence)}%"
    if state.separated:
        return (f"separated: every adjacent pair of ranks is separated at {level} "
                f"({matches:,} games)")
    if max_matches is not None and matches >= max_matches:
        open_gaps = "; ".join(f"{labels[h]} vs {labels[lo]} [{low:+.2f}, {high:+.2f}]"
                              for h, lo, low, high in state.gaps
                              if not low > SEPARATION_TOL)
        return (f"max-matches: {matches:,} games reached --max-matches {max_matches:,} with "
                f"adjacent ranks not separated at {level}: {open_gaps}")
    return None


# --- comparing two tournaments -----------------------------------------------------------


def tournament_of(run_dir: Path) -> dict[str, Any] | None:
    """The tournament a run played (its manifest's ``config.tournament``: family, players,
    settings), or None when the run is not a tournament (no rated tournament in it)."""
    import json

    if not (run_dir / "_commits" / f"{RATINGS_MARKER}.json").is_file():
        return None
    try:
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    config = manifest.get("config")
    described = config.get("tournament") if isinstance(config, dict) else None
    if not isinstance(described, dict) or "family" not in described \
            or "players" not in described:
        return None
    return described


def load_matches(run_dir: Path, described: dict[str, Any], family: Family | None = None
                 ) -> tuple[tuple[str, ...], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """(players, (a, b, outcome, margin)) of a tournament run's committed games, read through
    its family's outcome per seat (``family``, or the registered one of the tournament's
    name) (ValueError: a game outside the population)."""
    from distbench.games.registry import get_family
    from distbench.store.catalog import open_run

    family = family or get_family(described["family"])
    labels = tuple(str(p) for p in described["players"])
    con = open_run(run_dir, threads=1, tables=list(family.tables))
    try:
        outcomes = family.seat_outcomes(con)
    finally:
        con.close()
    return labels, matches_from(outcomes, labels)


def refit(run_dir: Path, described: dict[str, Any], run_id: str,
          family: Family | None = None) -> TournamentRatings | None:
    """The ratings of the tournament ``described`` (:func:`tournament_of`) fitted again over
    the games committed in ``run_dir`` (e.g. a rescored copy of its run), with its own seed,
    resamples and confidence; None when no game was rated. Writes nothing."""
    labels, (a, b, outcome, margin) = load_matches(run_dir, described, family)
    if not len(a):
        return None
    settings = described.get("settings") or {}
    return rate_matches(labels, described["family"], run_id, a, b, outcome, margin,
                        seed=int(settings.get("seed", 0)),
                        resamples=int(described.get("resamples", 1000)),
                        confidence=float(described.get("confidence", 0.95)))
