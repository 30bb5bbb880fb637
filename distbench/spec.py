"""Sweep specs: TOML in, frozen dataclasses out, with errors that name the key and the file.

A spec (see ``examples/tiered.toml``)::

    name = "tiered"
    seeds = [42, 43]
    games_per_bucket = 20
    trials_per_game = 10
    temperature = 0.7
    modes = ["pure", "mixed"]
    buckets = ["2x2_lowVar_pure", {rows = 5, cols = 3, spread = "lowVar", kind = "mixed"}]

    [providers.dummy]
    tiers.A = ["random"]

    [providers.openai]
    tiers.A = ["gpt-4o"]
    tiers.B = ["gpt-4o-mini"]
    rpm = 500                        # provider-wide options ...
    [providers.openai.models."gpt-4o"]
    rpm = 100                        # ... and per model

    [providers.mock]                 # any name, with `type` = a registered provider
    type = "llamacpp"
    base_url = "http://127.0.0.1:8000"
    tiers.A = ["mock-a"]

    [negotiation]                    # optional: every model also negotiates
    modes = ["semi", "coop"]
    langs = ["en", "de"]
    games = 5                        # instances per seed (each in both seat orders)
    opponents = ["scripted:fair", "self"]
    max_messages = 5

    [fog]                            # optional: every model also plays fog of war
    games = 4                        # per seat order and seed
    opponents = ["tier1", "tier3"]
    scout_accuracy = 0.7
    scouting = true

The top-level keys configure the matrix family. Any other family, built in or installed as a
plugin, takes part through its own table (``[negotiation]``, ``[fog]``, ``[beauty]``...),
validated by that family's ``section`` hook (``distbench.games.family.Family``).

Every (provider, tier, model) is played on the same games: games depend only on (bucket, seed).
The dummy model cannot negotiate or report beliefs: dummy models skip the negotiation and fog
cells.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from distbench.games.answers.presentation import parse_perturb
from distbench.games.matrix.buckets import (
    DEFAULT_BUCKETS,
    PAYOFFS,
    UnknownBucketError,
    get_bucket,
    with_payoffs,
)
from distbench.games.registry import families
from distbench.games.section import SectionError, unknown_key
from distbench.llm.base import BackendSpec, check_option
from distbench.llm.registry import UnknownProviderError, get_provider, make_spec

MODES = ("pure", "mixed", "logprob")
TOP_KEYS = {"name", "seeds", "games_per_bucket", "trials_per_game", "temperature", "modes",
            "buckets", "providers", "llm_seed", "max_tokens", "shard_trials", "logprob_cue",
            "min_label_mass", "payoffs", "perturb", "max_cost", "max_tokens_total"}
"""The spec's own keys; besides them, one table per family with a ``section`` hook."""
PROVIDER_KEYS = {"type", "tiers", "models", "base_url", "style", "rpm", "tpm",
                 "max_concurrency", "timeout", "max_retries", "cache", "price_in", "price_out",
                 "max_n", "retry_after_cap", "reasoning", "reasoning_tokens"}
MODEL_KEYS = PROVIDER_KEYS - {"type", "tiers", "models"}
BUCKET_KEYS = {"rows", "cols", "spread", "kind"}


class SpecError(ValueError):
    """A spec that cannot be used; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class ModelEntry:
    """One model of the sweep.

    Attributes:
        name: The provider name as written in the spec (``providers.<name>``).
        tier: Tier label (``"A"``, ``"B"``, ...).
        spec: The backend spec.
    """

    name: str
    tier: str
    spec: BackendSpec


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """A validated sweep.

    Attributes:
        name: Sweep name.
        seeds: Game seeds.
        games_per_bucket: Games per (bucket, seed).
        trials_per_game: Trials per game and mode.
        temperature: Sampling temperature.
        modes: Answer modes.
        buckets: Bucket ids.
        models: Every (provider, tier, model).
        llm_seed: Sampling seed.
        max_tokens: Completion budget (None: by mode and style).
        shard_trials: Target trials per shard (None: 20,000 for in-process models such as
            the dummy, 500 for models behind an endpoint).
        sections: Family name -> its validated table (``[negotiation]``, ``[fog]``, a
            plugin's), for the families the spec names.
        logprob_cue: Logprob mode: the text the completion prompt ends with.
        min_label_mass: Logprob mode: the least probability on the action labels for a
            valid reading.
        perturb: Matrix games: other presentations of every game (``perturb = ["labels",
            "seat", "affine", "framing"]`` or a comma string; see ``--perturb``).
        max_cost: Budget in USD (``--max-cost`` overrides it; None: none).
        max_tokens_total: Budget in tokens (``--max-tokens-total`` overrides it; None: none).
        source: Where the spec came from (a path, or ``"built-in default suite"``).
    """

    name: str
    seeds: tuple[int, ...]
    games_per_bucket: int
    trials_per_game: int
    temperature: float
    modes: tuple[str, ...]
    buckets: tuple[str, ...]
    models: tuple[ModelEntry, ...]
    llm_seed: int = 0
    max_tokens: int | None = None
    shard_trials: int | None = None
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    logprob_cue: str = "I choose Action"
    min_label_mass: float = 0.5
    perturb: tuple[str, ...] = ()
    max_cost: float | None = None
    max_tokens_total: int | None = None
    source: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-shaped, for the manifest and ``suite_metadata.json``."""
        return json.loads(json.dumps({
            "name": self.name,
            "seeds": list(self.seeds),
            "games_per_bucket": self.games_per_bucket,
            "trials_per_game": self.trials_per_game,
            "temperature": self.temperature,
            "modes": list(self.modes),
            "buckets": list(self.buckets),
            "llm_seed": self.llm_seed,
            "max_tokens": self.max_tokens,
            "shard_trials": self.shard_trials,
            **{name: self.sections.get(name) for name in _section_families()},
            **({"logprob_cue": self.logprob_cue, "min_label_mass": self.min_label_mass}
               if "logprob" in self.modes else {}),
            **({"perturb": list(self.perturb)} if self.perturb else {}),
            "models": [{"provider_name": m.name, "tier": m.tier, "provider": m.spec.provider,
                        "model": m.spec.model, "style": m.spec.style,
                        "options": dict(m.spec.options)} for m in self.models],
        }))

    def section(self, family: str) -> dict[str, Any] | None:
        """The validated ``[family]`` table, or None when the spec has none."""
        return self.sections.get(family)

    def tiers(self) -> dict[str, dict[str, list[str]]]:
        """provider name -> tier -> models (the tier definitions)."""
        out: dict[str, dict[str, list[str]]] = {}
        for m in self.models:
            out.setdefault(m.name, {}).setdefault(m.tier, []).append(m.spec.model)
        return out


def _fail(source: str, key: str, message: str) -> SpecError:
    return SpecError(f"{source}: {key}: {message}")


def _unknown_keys(source: str, where: str, given: dict, allowed: set[str]) -> None:
    for key in given:
        if key not in allowed:
            raise _fail(source, f"{where}{key}", unknown_key(key, allowed))


def _int(source: str, key: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(source, key, f"must be an integer, got {value!r}")
    if value < low:
        raise _fail(source, key, f"must be >= {low}, got {value}")
    return value


def _bucket_id(source: str, key: str, entry: Any) -> str:
    if isinstance(entry, dict):
        _unknown_keys(source, f"{key}.", entry, BUCKET_KEYS)
        missing = BUCKET_KEYS - set(entry)
        if missing:
            raise _fail(source, key, f"an inline bucket needs {', '.join(sorted(missing))}")
        entry = f"{entry['rows']}x{entry['cols']}_{entry['spread']}_{entry['kind']}"
    if not isinstance(entry, str):
        raise _fail(source, key, f"a bucket is an id string or an inline table, got {entry!r}")
    try:
        get_bucket(entry)
    except UnknownBucketError as exc:
        raise _fail(source, key, str(exc)) from None
    return entry


def _check_options(source: str, where: str, options: dict[str, Any]) -> None:
    for key, value in options.items():
        try:
            check_option(key, value)
        except ValueError as exc:
            raise _fail(source, f"{where}{key}", str(exc).partition(": ")[2]) from None


def _models(source: str, providers: Any) -> list[ModelEntry]:
    if not isinstance(providers, dict) or not providers:
        raise _fail(source, "providers", "needs at least one provider table, e.g. "
                    "[providers.dummy] with tiers.A = [\"random\"]")
    out: list[ModelEntry] = []
    for name, table in providers.items():
        where = f"providers.{name}"
        if not isinstance(table, dict):
            raise _fail(source, where, "must be a table")
        _unknown_keys(source, f"{where}.", table, PROVIDER_KEYS)
        ptype = table.get("type", name)
        try:
            get_provider(ptype)
        except UnknownProviderError as exc:
            raise _fail(source, f"{where}.type" if "type" in table else where, str(exc)) from None
        tiers = table.get("tiers")
        if not isinstance(tiers, dict) or not tiers:
            raise _fail(source, f"{where}.tiers", "needs at least one tier, e.g. tiers.A = [\"model\"]")
        common = {k: v for k, v in table.items() if k in MODEL_KEYS}
        per_model = table.get("models", {})
        if not isinstance(per_model, dict):
            raise _fail(source, f"{where}.models", "must be a table of model tables")
        _check_options(source, f"{where}.", common)
        for model, opts in per_model.items():
            if not isinstance(opts, dict):
                raise _fail(source, f"{where}.models.{model}", "must be a table")
            _unknown_keys(source, f"{where}.models.{model}.", opts, MODEL_KEYS)
            _check_options(source, f"{where}.models.{model}.", opts)
        for tier, models in tiers.items():
            # An empty tier is allowed and means "no model in this tier" (the seed tool's
            # '{"A": ["gpt-4o"], "B": ["gpt-4o-mini"], "C": []}'): it is skipped.
            if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
                raise _fail(source, f"{where}.tiers.{tier}", "must be a list of model names")
            for model in models:
                opts = {**common, **per_model.get(model, {})}
                style = opts.pop("style", None)
                try:
                    spec = make_spec(ptype, model, style, **opts)
                except ValueError as exc:
                    raise _fail(source, f"{where}.tiers.{tier}", str(exc)) from None
                out.append(ModelEntry(name=name, tier=str(tier), spec=spec))
    if not out:
        raise _fail(source, "providers", "every tier is empty: name at least one model, e.g. "
                    "tiers.A = [\"model\"]")
    return out


def _section_families() -> list[str]:
    """The families that take a table in a spec, in registry order."""
    return [name for name, family in families().items() if family.sweeps and family.sweeps.section]


def _sections(source: str, data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for name in _section_families():
        if name in data:
            try:
                out[name] = families()[name].spec_section(data[name])
            except SectionError as exc:
                key = f"{name}.{exc.key}" if exc.key else name
                raise _fail(source, key, exc.message) from None
            except ValueError as exc:
                raise _fail(source, name, str(exc)) from None
    return out


def parse_spec(data: dict[str, Any], source: str = "<spec>") -> SweepSpec:
    """Validates a spec given as a dict (the parsed TOML)."""
    _unknown_keys(source, "", data, TOP_KEYS | set(_section_families()))
    seeds = data.get("seeds", [42])
    if not isinstance(seeds, list) or not seeds:
        raise _fail(source, "seeds", "must be a non-empty list of integers")
    seeds = [_int(source, "seeds", s, 0) for s in seeds]
    modes = data.get("modes", ["pure", "mixed"])
    if not isinstance(modes, list) or not modes:
        raise _fail(source, "modes", "must be a non-empty list")
    for m in modes:
        if m not in MODES:
            raise _fail(source, "modes", f"unknown mode {m!r}; use {', '.join(MODES)}")
    buckets = data.get("buckets", list(DEFAULT_BUCKETS))
    if not isinstance(buckets, list) or not buckets:
        raise _fail(source, "buckets", "must be a non-empty list of bucket ids or tables")
    bucket_ids = [_bucket_id(source, f"buckets[{i}]", b) for i, b in enumerate(buckets)]
    payoffs = data.get("payoffs", "int")
    if payoffs not in PAYOFFS:
        raise _fail(source, "payoffs", f"unknown payoff distribution {payoffs!r}; use "
                                       f"{', '.join(PAYOFFS)} (seed: the seed tool's floats)")
    if payoffs == "seed":  # every bucket draws the seed tool's floats: its ...Float twin
        bucket_ids = [with_payoffs(b, "seed") for b in bucket_ids]
    temperature = data.get("temperature", 1.0)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) \
            or not 0 <= temperature < math.inf:
        raise _fail(source, "temperature", f"must be a finite number >= 0, got {temperature!r}")
    max_tokens = data.get("max_tokens")
    if max_tokens is not None:
        max_tokens = _int(source, "max_tokens", max_tokens, 1)
    cue = data.get("logprob_cue", "I choose Action")
    if not isinstance(cue, str) or not cue.strip():
        raise _fail(source, "logprob_cue", f"must be a non-blank string such as 'Action:', got {cue!r}")
    min_mass = data.get("min_label_mass", 0.5)
    if isinstance(min_mass, bool) or not isinstance(min_mass, (int, float)) or not 0 <= min_mass <= 1:
        raise _fail(source, "min_label_mass", f"must be a number in [0, 1], got {min_mass!r}")
    try:
        perturb = parse_perturb(data.get("perturb"))
    except ValueError as exc:
        raise _fail(source, "perturb", str(exc)) from None
    return SweepSpec(
        name=str(data.get("name", "sweep")),
        seeds=tuple(dict.fromkeys(seeds)),
        games_per_bucket=_int(source, "games_per_bucket", data.get("games_per_bucket", 10), 1),
        trials_per_game=_int(source, "trials_per_game", data.get("trials_per_game", 10), 1),
        temperature=float(temperature),
        modes=tuple(dict.fromkeys(modes)),
        buckets=tuple(dict.fromkeys(bucket_ids)),
        models=tuple(_models(source, data.get("providers"))),
        llm_seed=_int(source, "llm_seed", data.get("llm_seed", 0), 0),
        max_tokens=max_tokens,
        shard_trials=(None if data.get("shard_trials") is None
                      else _int(source, "shard_trials", data["shard_trials"], 1)),
        sections=_sections(source, data),
        logprob_cue=cue,
        min_label_mass=float(min_mass),
        perturb=perturb,
        max_cost=_budget(source, data),
        max_tokens_total=(None if data.get("max_tokens_total") is None
                          else _int(source, "max_tokens_total", data["max_tokens_total"], 1)),
        source=source,
    )


def _budget(source: str, data: dict[str, Any]) -> float | None:
    """The spec's ``max_cost``: a finite number of USD >= 0, or None."""
    value = data.get("max_cost")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 0 <= value < math.inf:
        raise _fail(source, "max_cost", f"must be a finite number of USD >= 0, got {value!r}")
    return float(value)


def load_spec(path: Path | str) -> dict[str, Any]:
    """Reads a TOML spec file into a dict (validated later by :func:`parse_spec`)."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise SpecError(f"{path}: no such spec file") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None


BUILTIN_TIERS: dict[str, dict[str, list[str]]] = {
    "together": {
        "A": ["meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo", "Qwen/Qwen2.5-72B-Instruct-Turbo"],
        "B": ["meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo",
              "mistralai/Mixtral-8x22B-Instruct-v0.1"],
        "C": ["meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo", "Qwen/Qwen2.5-7B-Instruct-Turbo"],
    },
    "openai": {"A": ["gpt-4o"], "B": ["gpt-4o-mini"], "C": []},
}
"""The seed tool's default model tiers per provider (its ``run_tiered_research_suite.py``),
used by ``distbench sweep --providers NAME`` for a provider the spec does not configure."""

DEFAULT_SUITE: dict[str, Any] = {
    "name": "default-suite",
    "seeds": [42],
    "games_per_bucket": 10,
    "trials_per_game": 10,
    "temperature": 1.0,
    "modes": ["pure", "mixed"],
    "buckets": list(DEFAULT_BUCKETS),
    "providers": {"dummy": {"tiers": {"A": ["random"]}}},
}
"""The seed research suite: six buckets (2x2/3x3/4x4 x low/mid/high spread x pure/mixed)."""
