"""Planning: expand a run configuration into shards with stable ids.

Planning is pure: the same configuration always gives the same shards, in the same order, with
the same ids. A shard id is a hash of everything that decides the shard's rows (family, bucket,
seed, game range, modes, trials, model, llm seed, prompt settings), so a resumed run recognises
the shards it has already committed.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from distbench.games.answers.lengths import answer_tokens, approx_tokens
from distbench.games.answers.presentation import parse_perturb
from distbench.games.base import RunPlan, check_config, check_plan_size, config_plan, stable_hash
from distbench.games.family import Identity, declare
from distbench.games.matrix.buckets import get_bucket
from distbench.games.matrix.generate import BLOCK
from distbench.games.matrix.schema import TABLES, VIEWS
from distbench.games.registry import register
from distbench.llm.base import BackendSpec, cost_usd

MODES: tuple[str, ...] = ("pure", "mixed", "logprob")

MAX_TRIALS_PER_GAME = 1_000_000_000
"""Largest ``num_trials``. A game with more trials than a shard holds is split across shards
(:func:`trial_ranges`), so no shard holds more than ``shard_trials`` rows whatever the number
of trials; the plan-size bound (:data:`distbench.games.base.MAX_PLANNED_SHARDS`) applies to
the parts."""


@dataclass(frozen=True, slots=True)
class MatrixRunConfig:
    """What a matrix run plays.

    Attributes:
        buckets: Bucket ids.
        seeds: Game-stream seeds; each (bucket, seed) cell plays ``num_games`` games.
        num_games: Games per (bucket, seed).
        num_trials: Answers asked per game and mode.
        modes: Answer modes, a subset of :data:`MODES`; several modes play the same games.
        llm: The model.
        llm_seed: Seed of the model's sampling (per-request seeds derive from it).
        tier: Optional tier label of the model.
        temperature: Sampling temperature sent to the model.
        max_tokens: Completion budget per answer; None: by mode and style (see
            ``games.matrix.prompts.answer_policy``).
        shard_trials: Target number of trials per shard (shards hold whole games, or part of
            one game's trials when a game has more, see :func:`trial_ranges`); None:
            :func:`default_shard_trials` of the model (set at construction).
        logprob_cue: Logprob mode: the text the completion prompt ends with (default
            ``I choose Action``, see ``games.answers.logprob.DEFAULT_CUE``).
        min_label_mass: Logprob mode: a reading with less probability on the action labels
            is invalid (``low_label_mass``).
        perturb: Other presentations of every game (``--perturb``: ``labels``, ``seat``,
            ``affine``, ``framing``; see ``games.answers.presentation``), each played with
            the same modes and trials as the base presentation; their trials go to
            ``perturb_trials``. Empty: none (the run is what it always was).
    """

    buckets: tuple[str, ...]
    seeds: tuple[int, ...]
    num_games: int
    num_trials: int
    modes: tuple[str, ...]
    llm: BackendSpec
    llm_seed: int = 0
    tier: str | None = None
    temperature: float = 1.0
    max_tokens: int | None = None
    shard_trials: int | None = None
    logprob_cue: str = "I choose Action"
    min_label_mass: float = 0.5
    perturb: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "perturb", parse_perturb(self.perturb))
        if self.shard_trials is None:
            object.__setattr__(self, "shard_trials", default_shard_trials(self.llm))
        if not self.buckets:
            raise ValueError("at least one bucket is needed")
        for bucket in self.buckets:
            get_bucket(bucket)
        check_config(self)
        bad = [m for m in self.modes if m not in MODES]
        if not self.modes or bad:
            raise ValueError(f"modes must be among {', '.join(MODES)}, got {list(self.modes)}")
        if "logprob" in self.modes and self.llm.option("reasoning", None) == "cot":
            raise ValueError("--reasoning cot does not apply to logprob mode (its strategy "
                             "is read from the next tokens, not from an answer)")
        if not self.logprob_cue.strip():
            raise ValueError("the logprob cue must hold some text, e.g. 'Action:'")
        if not 0.0 <= self.min_label_mass <= 1.0:
            raise ValueError(f"min_label_mass must be in [0, 1], got {self.min_label_mass}")
        if self.num_trials > MAX_TRIALS_PER_GAME:
            raise ValueError(f"num_trials must be at most {MAX_TRIALS_PER_GAME:,}, got "
                             f"{self.num_trials:,}: play more games or seeds instead")
        step = trial_step(self)  # counted, not listed: a bad size is refused at once
        parts = 1 if step is None else math.ceil(self.num_trials / step)
        if parts > 1:  # one game per shard, its trials split
            check_plan_size(len(self.buckets) * len(self.seeds) * self.num_games * parts,
                            f"{len(self.buckets)} bucket(s) x {len(self.seeds)} seed(s) x "
                            f"{self.num_games:,} game(s) x {parts:,} parts of a game's trials")
        else:
            chunks = math.ceil(self.num_games / games_per_shard(self))
            check_plan_size(len(self.buckets) * len(self.seeds) * chunks,
                            f"{len(self.buckets)} bucket(s) x {len(self.seeds)} seed(s) x "
                            f"{chunks:,} shard(s) of {games_per_shard(self):,} games")

    def to_dict(self) -> dict:
        """JSON-shaped (lists, not tuples), so it compares equal to a manifest's copy. The
        logprob settings appear only when logprob mode is played (they decide nothing else)."""
        out = json.loads(json.dumps(asdict(self)))
        if "logprob" not in self.modes:
            del out["logprob_cue"], out["min_label_mass"]
        if not self.perturb:  # a run without presentations keeps its old identity
            del out["perturb"]
        return out

    def plan(self, run_id: str) -> RunPlan:
        """The :class:`RunPlan` of this configuration."""
        return matrix_plan(self, run_id)

    def identity(self) -> dict:
        """:meth:`to_dict` without the execution-only settings (rate limits, cache): two
        configurations with the same identity plan the same shards and produce the same rows.
        (The shard size stays in: it decides the shards.)"""
        out = self.to_dict()
        out["llm"] = json.loads(json.dumps(self.llm.identity()))
        return out


@dataclass(frozen=True, slots=True)
class Shard:
    """A unit of work: a chunk of games of one (bucket, seed), played by one model (or a range
    of one game's trials, when a game has more trials than a shard holds).

    Attributes:
        shard_id: Stable id (hash of every field below except ``run_id``).
        chunk_id: Stable id of the chunk of games (bucket, seed, range): shards of different
            models over the same games share it, and so the games file.
        family: Game family.
        bucket: Bucket id.
        seed: Game-stream seed.
        start: First game index.
        stop: One past the last game index.
        modes: Answer modes played on these games.
        num_trials: Answers per game and mode.
        llm: The model.
        llm_seed: Model sampling seed.
        tier: Tier label or None.
        temperature: Sampling temperature.
        max_tokens: Completion budget (None: by mode and style).
        logprob_cue: Logprob mode's cue (None when the shard plays no logprob mode).
        min_label_mass: Logprob mode's minimum probability on the labels.
        trial_lo: First trial of each game this shard plays (0 unless the game's trials are
            split across shards, see :func:`trial_ranges`).
        trial_hi: One past its last trial; None: ``num_trials``.
        perturb: Other presentations played on the same games (``--perturb``).
        run_id: The run the rows belong to.
    """

    shard_id: str
    chunk_id: str
    family: str
    bucket: str
    seed: int
    start: int
    stop: int
    modes: tuple[str, ...]
    num_trials: int
    llm: BackendSpec
    llm_seed: int
    tier: str | None
    temperature: float
    max_tokens: int | None
    logprob_cue: str | None = None
    min_label_mass: float = 0.5
    trial_lo: int = 0
    trial_hi: int | None = None
    perturb: tuple[str, ...] = ()
    run_id: str = field(default="", compare=False)

    @property
    def num_games(self) -> int:
        return self.stop - self.start

    @property
    def trials(self) -> tuple[int, int]:
        """(first, one past the last) trial of each game this shard plays (logprob mode's one
        reading belongs to the part that starts at 0)."""
        return self.trial_lo, self.num_trials if self.trial_hi is None else self.trial_hi

    @property
    def num_units(self) -> int:
        """Progress units of this shard: its trial rows."""
        return self.num_trials_total

    @property
    def num_trials_total(self) -> int:
        """Trial rows this shard produces (logprob mode: one per game)."""
        lo, hi = self.trials
        per_game = sum(1 if m == "logprob" else hi - lo for m in self.modes)
        return self.num_games * per_game * (1 + len(self.perturb))


FREE_SHARD_TRIALS = 20_000
"""Trials per shard for a model answered in the shard's process (the dummy): coarse, fast."""
MODEL_SHARD_TRIALS = 500
"""Trials per shard for a model behind an endpoint: a crash or a stop loses at most this
much work, and a resume redoes no more (a real model answers a few calls per second)."""


def default_shard_trials(llm: BackendSpec) -> int:
    """:data:`FREE_SHARD_TRIALS` for an in-process model, else :data:`MODEL_SHARD_TRIALS`."""
    return FREE_SHARD_TRIALS if _free(llm) else MODEL_SHARD_TRIALS


def default_max_tokens(style: str, mode: str = "pure") -> int:
    """Completion budget of a mode when none is given: room to reason in chat style; a short
    answer after the cue in completion style; one token in logprob mode."""
    if mode == "logprob":
        return 1
    from distbench.games.matrix.prompts import answer_policy

    return answer_policy(mode, style)[1]


def games_per_shard(config: MatrixRunConfig) -> int:
    """Whole games per shard: about ``shard_trials`` trials, aligned to generation blocks."""
    per_game = sum(1 if m == "logprob" else config.num_trials for m in config.modes)
    per_game *= 1 + len(config.perturb)
    games = max(1, config.shard_trials // per_game)
    if games >= BLOCK:
        games -= games % BLOCK
    return games


def trial_step(config: MatrixRunConfig) -> int | None:
    """Trials of each sampled mode in one part of a split game; None when a game's trials fit
    in a shard (see :func:`trial_ranges`)."""
    shown = 1 + len(config.perturb)  # presentations of each game
    sampled = sum(1 for m in config.modes if m != "logprob")
    per_game = sum(1 if m == "logprob" else config.num_trials for m in config.modes) * shown
    if not sampled or per_game <= config.shard_trials:
        return None
    return max(1, (config.shard_trials - ("logprob" in config.modes) * shown) // (sampled * shown))


def trial_ranges(config: MatrixRunConfig) -> list[tuple[int, int]]:
    """The parts a game's trials are split into: one part, ``(0, num_trials)``, when a game's
    trials fit in a shard (``shard_trials``), else ranges of ``shard_trials`` divided among
    the sampled modes (pure, mixed), each part one shard of one game. Logprob mode's one
    reading per game goes with the first part (and has its row there)."""
    step = trial_step(config)
    if step is None:
        return [(0, config.num_trials)]
    return [(lo, min(config.num_trials, lo + step)) for lo in range(0, config.num_trials, step)]


def plan_matrix(config: MatrixRunConfig, run_id: str = "") -> list[Shard]:
    """Expands ``config`` into shards, in a stable order (bucket, seed, game range, trial
    range)."""
    size = games_per_shard(config)
    ranges = trial_ranges(config)
    split = len(ranges) > 1
    shards: list[Shard] = []
    for bucket in config.buckets:
        for seed in config.seeds:
            for chunk, (lo, hi) in itertools.product(
                    range(math.ceil(config.num_games / size)), ranges):
                start = chunk * size
                stop = min(config.num_games, start + size)
                chunk_key = {"family": "matrix", "bucket": bucket, "seed": seed,
                             "start": start, "stop": stop}
                modes = tuple(m for m in config.modes if lo == 0 or m != "logprob")
                shard_key = {
                    **chunk_key,
                    "modes": list(modes),
                    "num_trials": config.num_trials,
                    "llm": config.llm.identity(),
                    "llm_seed": config.llm_seed,
                    "tier": config.tier,
                    "temperature": config.temperature,
                    "max_tokens": config.max_tokens,
                }
                if split:  # (an unsplit game's shard keeps the id it always had)
                    shard_key["trials"] = [lo, hi]
                if config.perturb:
                    shard_key["perturb"] = list(config.perturb)
                logprob = "logprob" in modes
                if logprob:
                    shard_key["logprob"] = [config.logprob_cue, config.min_label_mass]
                shards.append(
                    Shard(
                        shard_id=f"m-{stable_hash(shard_key)}",
                        chunk_id=f"g-{stable_hash(chunk_key)}",
                        family="matrix",
                        bucket=bucket,
                        seed=seed,
                        start=start,
                        stop=stop,
                        modes=modes,
                        num_trials=config.num_trials,
                        llm=config.llm,
                        llm_seed=config.llm_seed,
                        tier=config.tier,
                        temperature=config.temperature,
                        max_tokens=config.max_tokens,
                        logprob_cue=config.logprob_cue if logprob else None,
                        min_label_mass=config.min_label_mass,
                        trial_lo=lo,
                        trial_hi=hi if split else None,
                        perturb=config.perturb,
                        run_id=run_id,
                    )
                )
    return shards


def matrix_plan(config: MatrixRunConfig, run_id: str) -> RunPlan:
    """The :class:`RunPlan` of a matrix configuration."""
    from distbench.games.matrix.summary import matrix_summary

    shards = plan_matrix(config, run_id=run_id)
    free = _free(config.llm)
    estimate = call_estimate(shards, tokens=not free)
    tokens = (estimate.prompt_tokens, estimate.completion_tokens)
    return config_plan(
        config, "matrix", shards, recorded=config.to_dict(), summarize=matrix_summary,
        summary_threads=None,  # its sums run in a fixed order: the same on any thread count
        summary_tables=("game_scores", "trials", "games", "perturb_trials"),
        extra_styles=("completion",) if "logprob" in config.modes else (),
        expected_calls=None if free else estimate.samples,
        expected_tokens=None if free else tokens,
        expected_cost=None if free else cost_usd(config.llm, *tokens),
        expected_requests=None if free else estimate.requests,
        shard_estimate=shard_estimate,
        shard_expected=expected_estimate,
        batchable=True,  # single-turn: a shard's requests are all known before any answer
    )


def shard_estimate(shard: Shard) -> tuple[int, int, float | None]:
    """(prompt tokens about, completion tokens at most, cost at most) of one shard's calls,
    for the budgets."""
    one = call_estimate([shard])
    return one.prompt_tokens, one.completion_tokens, cost_usd(
        shard.llm, one.prompt_tokens, one.completion_tokens)


def _free(llm: BackendSpec) -> bool:
    from distbench.llm.registry import backend_class

    return backend_class(llm.provider).in_process


def sweep_configs(spec: Any, entry: Any) -> list[MatrixRunConfig]:
    """The matrix configuration of one model entry of a sweep spec."""
    return [MatrixRunConfig(
        buckets=spec.buckets,
        seeds=spec.seeds,
        num_games=spec.games_per_bucket,
        num_trials=spec.trials_per_game,
        modes=spec.modes,
        llm=entry.spec,
        llm_seed=spec.llm_seed,
        tier=entry.tier,
        temperature=spec.temperature,
        max_tokens=spec.max_tokens,
        shard_trials=spec.shard_trials,
        logprob_cue=spec.logprob_cue,
        min_label_mass=spec.min_label_mass,
        perturb=getattr(spec, "perturb", ()),
    )]


def requests_per_game(trials: int, max_n: int) -> int:
    """Requests that ask one game's ``trials`` samples of a mode: one per trial when the
    endpoint takes one sample per request (``max_n`` 1), else ``ceil(trials / max_n)``
    (:func:`distbench.games.matrix.runner.sample_chunks` cuts them so)."""
    if max_n <= 1 or trials <= 1:
        return trials
    return -(-trials // max_n)


SAMPLE_GAMES = 32
"""Games of a (bucket, seed) whose prompts are rendered to estimate the prompt tokens of its
requests (their mean; a prompt's length varies only with its payoffs' digits)."""


@functools.lru_cache(maxsize=4096)
def prompt_tokens(bucket: str, seed: int, mode: str, style: str, reasoning: str,
                  presentation: str | None, cue: str | None) -> float:
    """Mean prompt tokens (:func:`approx_tokens`) of a request of ``mode`` on the games of
    (``bucket``, ``seed``): the prompts of its first :data:`SAMPLE_GAMES` games rendered as the
    runner renders them (``presentation``: a ``--perturb`` name; logprob mode: the completion
    prompt ending with ``cue``)."""
    from distbench.games.answers.presentation import make_presentation
    from distbench.games.matrix.generate import game_ids, generate_games
    from distbench.games.matrix.prompts import (
        mixed_prompt,
        presented_prompt,
        pure_prompt,
        with_cue,
    )

    payoffs = generate_games(bucket, seed, 0, SAMPLE_GAMES)
    ids = game_ids(bucket, seed, 0, SAMPLE_GAMES)
    kind = "pure" if mode == "logprob" else mode
    if mode == "logprob":
        style, reasoning = "completion", "direct"
    total = 0
    for g, payoff in enumerate(payoffs):
        if presentation is not None:
            shown = make_presentation(ids[g], presentation, *payoff.shape)
            text = presented_prompt(payoff, shown, kind, style=style, reasoning=reasoning)
        else:
            text = (pure_prompt if kind == "pure" else mixed_prompt)(payoff, style=style,
                                                                      reasoning=reasoning)
        if mode == "logprob":
            text = with_cue(text, cue or "I choose Action")
        total += approx_tokens(text)
    return total / len(payoffs)


Observed = Mapping[tuple[str, str, str], float]
"""(provider, model, mode) -> median completion tokens per answer in earlier runs' ``calls``
(see ``distbench.engine.estimate.observed_completion``)."""


@dataclass(frozen=True, slots=True)
class CallEstimate:
    """What a set of shards asks the model, counted as it will be sent.

    Attributes:
        requests: Requests sent (a ``calls`` row each): one per request of several samples
            (``--max-n``), one per logprob reading (its follow-up calls, when the tokenizer
            needs them, come on top).
        samples: Answers asked for (the ``samples`` of those rows summed): one per trial.
        prompt_tokens: Prompt tokens, about (the prompts rendered, :func:`prompt_tokens`): a
            request of several samples bills its prompt once.
        completion_tokens: Completion tokens, at most: every sample's budget.
        completion_expected: Completion tokens expected: per answer the median of earlier
            runs of the model in that mode when known (``observed``), else the shortest valid
            answer (:func:`answer_tokens`), else (``--reasoning cot``) the budget.
        sources: Where ``completion_expected`` came from: ``calls`` (earlier runs),
            ``format`` (the answer format), ``budget``.
    """

    requests: int
    samples: int
    prompt_tokens: int
    completion_tokens: int
    completion_expected: int = 0
    sources: tuple[str, ...] = ()


def call_estimate(shards: list[Shard], observed: Observed | None = None,
                  tokens: bool = True) -> CallEstimate:
    """The :class:`CallEstimate` of ``shards`` (the model calls of a free, in-process model
    such as the dummy are counted the same way: the caller tells them apart); ``tokens``
    False: the counts only, no prompt rendered (prompt tokens 0)."""
    from distbench.games.answers.reasoning import reasoning_budget, reasoning_mode

    requests = samples = completion_tokens = 0
    prompt = expected = 0.0
    sources: dict[str, None] = {}
    for shard in shards:
        b = get_bucket(shard.bucket)
        lo, hi = shard.trials
        reasoning = reasoning_mode(shard.llm)
        for mode in shard.modes:
            if mode == "logprob":
                asked = sent = 1
                budget = likely = 1
                source = "format"
            else:
                asked = hi - lo
                sent = requests_per_game(asked, shard.llm.max_samples())
                default = (reasoning_budget(shard.llm) if reasoning == "cot"
                           else default_max_tokens(shard.llm.style, mode))
                budget = shard.max_tokens or default
                seen = (observed or {}).get((shard.llm.provider, shard.llm.model, mode))
                if seen is not None:
                    likely, source = min(budget, seen), "calls"
                elif reasoning == "cot":
                    likely, source = budget, "budget"
                else:
                    likely = min(budget, answer_tokens(mode, shard.llm.style, b.rows))
                    source = "format"
            sources.setdefault(source, None)
            # every presentation of a game (--perturb) is asked as the game itself is
            games = shard.num_games * (1 + len(shard.perturb))
            requests += sent * games
            samples += asked * games
            for shown in (None, *shard.perturb) if tokens else ():
                per_prompt = prompt_tokens(shard.bucket, shard.seed, mode, shard.llm.style,
                                           reasoning, shown, shard.logprob_cue)
                prompt += per_prompt * sent * shard.num_games
            completion_tokens += budget * asked * games
            expected += likely * asked * games
    return CallEstimate(requests, samples, round(prompt), completion_tokens, round(expected),
                        tuple(sources))


def expected_estimate(shard: Shard, observed: Observed | None = None
                      ) -> tuple[int, int, float | None, str]:
    """(prompt tokens, completion tokens expected, cost expected at the live price or None,
    source) of one shard's calls (:class:`CallEstimate`)."""
    one = call_estimate([shard], observed)
    return (one.prompt_tokens, one.completion_expected,
            cost_usd(shard.llm, one.prompt_tokens, one.completion_expected),
            "+".join(one.sources))


def describe_shards(spec: Any, shards: list[Shard]) -> dict[str, Any]:
    """Cells, requests, samples and token estimates of a sweep's matrix shards: the models'
    calls (``requests``, ``samples``, tokens) apart from the answers of free in-process models
    such as the dummy (``free_answers``: no call, no token, no ``calls`` row)."""
    cells = len(spec.seeds) * len(spec.buckets) * len(spec.models) * len(spec.modes)
    paid = [s for s in shards if not _free(s.llm)]
    total = call_estimate(paid)
    by_model: dict[str, dict[str, Any]] = {}
    for shard in shards:
        key = f"{shard.tier}:{shard.llm.provider}:{shard.llm.model}"
        one = call_estimate([shard], tokens=False)
        entry = by_model.setdefault(key, {"requests": 0, "samples": 0,
                                          "free": _free(shard.llm)})
        entry["requests"] += one.requests
        entry["samples"] += one.samples
    return {"cells": cells, "requests": total.requests, "samples": total.samples,
            "free_answers": call_estimate([s for s in shards if _free(s.llm)],
                                          tokens=False).samples,
            "prompt_tokens_est": total.prompt_tokens,
            "completion_tokens_max": total.completion_tokens, "by_model": by_model}


FAMILY = register(declare(
    __package__,
    Identity(name="matrix",
             description="zero-sum matrix games against a Nash opponent: Nash gap, "
                         "exploitability",
             tables=TABLES, main_table="trials", unit="trials", modes=MODES, views=VIEWS),
    play={"warm_up": "distbench.games.matrix.runner:warm_up", "batch": True},
    presentation={"export": "distbench.games.matrix.export:export_json"},
    sweeps={"section": None, "key": "sweep",
            "buckets": "distbench.games.matrix.buckets:seed_bucket"},
    rescoring=True, comparing=True,
))
