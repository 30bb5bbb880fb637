"""Model providers by name, loaded lazily from ``module:attr`` entries.

A provider entry names the backend class and its defaults (model, answer style, the sampling
dialect its servers speak). ``PROVIDER:MODEL`` (``local:gemma3-270m``) names a provider and
one of its models at once. Unknown names get a "did you mean" hint.

Installed packages add providers through the entry-point group ``distbench.providers`` (an
entry naming a :class:`Provider`), loaded on first lookup in every process: the driver, Ray
workers and endpoint actors all find them, so a plugin provider runs in parallel runs too. A
provider registered by calling :func:`register` from a script exists in that process only; a
parallel run refuses it before any work (:func:`runtime_only`).
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from importlib.metadata import entry_points

from distbench.errors import look_up
from distbench.llm.base import Backend, BackendSpec, check_option


class UnknownProviderError(ValueError):
    """A provider name that is not registered."""


@dataclass(frozen=True, slots=True)
class Provider:
    """A registered provider.

    Attributes:
        name: The ``--llm-type`` value.
        target: ``"module:Class"`` of the backend.
        default_model: Model used when ``--llm-model`` is not given.
        style: Default answer style, ``"chat"`` or ``"completion"``.
        description: One line for ``--help`` and the README.
        defaults: Default backend options (base_url, key_env, rate limits, ``max_n``: the
            most samples one request may ask for, 1 for one request per answer, ...).
    """

    name: str
    target: str
    default_model: str
    style: str
    description: str
    defaults: tuple[tuple[str, object], ...] = ()


log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "distbench.providers"

_PROVIDERS: dict[str, Provider] = {}
_ORIGINS: dict[str, str] = {}  # name -> "builtin", "entry point" or "runtime"
_plugins_loaded = False


def register(provider: Provider, *, _origin: str = "runtime") -> None:
    """Adds a provider; a second provider of the same name is an error (the same object
    again is a no-op)."""
    known = _PROVIDERS.get(provider.name)
    if known is provider:
        return
    if known is not None:
        raise ValueError(f"provider {provider.name!r} is registered twice")
    _PROVIDERS[provider.name] = provider
    _ORIGINS[provider.name] = _origin


def load_plugins() -> None:
    """Registers the providers of the ``distbench.providers`` entry points (once per process);
    a plugin that fails to load is logged and skipped."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            value = ep.load()
            if not isinstance(value, Provider):
                raise TypeError(f"{ep.value} is a {type(value).__name__}, not a Provider")
            register(value, _origin="entry point")
        except Exception as exc:  # noqa: BLE001 - one broken plugin must not stop the rest
            log.warning("cannot load model provider plugin %s (%s): %s: %s", ep.name, ep.value,
                        type(exc).__name__, exc)


def runtime_only(name: str) -> bool:
    """Whether provider ``name`` was registered by a call in this process only (not built in,
    not an entry point), so other processes (Ray workers) cannot see it."""
    return _ORIGINS.get(name) == "runtime"


register(
    Provider(
        name="dummy",
        target="distbench.llm.dummy:DummyBackend",
        default_model="random",
        style="chat",
        description="seeded random answers in text (uniform actions, flat-Dirichlet strategies)",
    )
)


register(
    Provider(
        name="replay",
        target="distbench.llm.replay:ReplayBackend",
        default_model="record.json",
        style="chat",
        description="answers from a recorded run's JSON (replay:PATH, e.g. a GAMA-Bench record), "
                    "at the JSON path each request names",
    )
)

_HTTP = "distbench.llm.http:OpenAICompatibleBackend"
register(Provider(
    "openai", _HTTP, "gpt-4o-mini", "chat", "OpenAI API (chat; completions for base models)",
    (("base_url", "https://api.openai.com"), ("key_env", "OPENAI_API_KEY"), ("rpm", 500.0),
     ("tpm", 200_000.0), ("max_concurrency", 16), ("sampling", "openai"), ("max_n", 128)),
))
register(Provider(
    "together", _HTTP, "meta-llama/Llama-3.2-3B-Instruct-Turbo", "chat",
    "Together AI (OpenAI-compatible; raw base models through completions)",
    (("base_url", "https://api.together.xyz"), ("key_env", "TOGETHER_API_KEY"), ("rpm", 600.0),
     ("max_concurrency", 16), ("sampling", "openai"), ("max_n", 128)),
))
register(Provider(
    "anthropic", _HTTP, "claude-3-5-haiku-latest", "chat",
    "Anthropic Messages API (chat only, no logprobs; Message Batches for --execution batch)",
    # The same HTTP backend, speaking the Messages wire format (distbench.llm.anthropic): no
    # seed, no n, temperature only (the API's top_p / top_k left at their defaults).
    (("base_url", "https://api.anthropic.com"), ("key_env", "ANTHROPIC_API_KEY"), ("rpm", 50.0),
     ("max_concurrency", 8), ("sampling", "none"), ("wire", "anthropic"), ("max_n", 1)),
))
register(Provider(
    "ollama", _HTTP, "llama3.2", "chat", "a local Ollama server (no key)",
    # Ollama's OpenAI-compatible routes take top_p and the penalties but not top_k or
    # repeat_penalty: its server defaults for those still apply (see the README).
    (("base_url", "http://127.0.0.1:11434"), ("rpm", None), ("max_concurrency", 2),
     ("sampling", "openai")),
))
register(Provider(
    "vllm", _HTTP, "default", "completion", "any vLLM server at --base-url (key optional: VLLM_API_KEY)",
    (("base_url", "http://127.0.0.1:8000"), ("key_env", "VLLM_API_KEY"), ("key_required", False),
     ("rpm", None), ("max_concurrency", 32), ("sampling", "vllm"), ("max_n", 128)),
))
register(Provider(
    "llamacpp", _HTTP, "default", "chat",
    "any llama.cpp / OpenAI-compatible server at --base-url, e.g. distbench serve local",
    (("base_url", "http://127.0.0.1:8080"), ("key_env", "LLAMACPP_API_KEY"),
     ("key_required", False), ("rpm", None), ("max_concurrency", 4), ("sampling", "llamacpp"),
     ("max_n", 128)),
))
register(Provider(
    "local", "distbench.llm.local:LocalBackend", "smollm2-135m-instruct", "completion",
    "the bundled models on the CPU through llama.cpp, no server, no key: SmolLM2-135M-Instruct "
    "(local, local:smollm2-135m) or Gemma 3 270M base (local:gemma3-270m)",
    # In-process sampling is plain temperature sampling, as llama.cpp servers are told to do;
    # the trials of a game are decoded together, up to max_n sequences in one batch.
    (("sampling", "llamacpp"), ("max_n", 32)),
))


for _name in _PROVIDERS:
    _ORIGINS[_name] = "builtin"


def providers() -> dict[str, Provider]:
    """Registered providers by name (built-in ones and installed plugins)."""
    load_plugins()
    return dict(_PROVIDERS)


def split_provider(name: str) -> tuple[str, str | None]:
    """``"local:gemma3-270m"`` -> ``("local", "gemma3-270m")``; a registered name (or one
    without a colon) -> ``(name, None)``."""
    if name not in _PROVIDERS:
        load_plugins()
    if name in _PROVIDERS or ":" not in name:
        return name, None
    provider, _, model = name.partition(":")
    return provider, model or None


def get_provider(name: str) -> Provider:
    """The provider called ``name``; raises UnknownProviderError with a hint otherwise."""
    return look_up(_PROVIDERS, name, load_plugins, UnknownProviderError, "llm type")


def make_spec(
    provider: str, model: str | None = None, style: str | None = None, **options: object
) -> BackendSpec:
    """A validated :class:`BackendSpec` with the provider's defaults filled in.

    ``provider`` may be ``PROVIDER:MODEL``; an explicit ``model`` wins over the one in the
    name. The model name is canonicalised by the backend (aliases of bundled models). The
    common options are checked (:func:`~distbench.llm.base.check_option`: ValueError naming
    the key).
    """
    provider, named = split_provider(provider)
    model = model or named
    entry = get_provider(provider)
    style = style or entry.style
    if style not in ("chat", "completion"):
        raise ValueError(f"answer style must be 'chat' or 'completion', got {style!r}")
    for key, value in options.items():
        check_option(key, value)
    merged = dict(entry.defaults)
    merged.update({k: v for k, v in options.items() if v is not None})
    return BackendSpec(
        provider=provider,
        model=backend_class(provider).canonical_model(model or entry.default_model),
        style=style,
        options=tuple(sorted((k, v) for k, v in merged.items() if v is not None)),
    )


def backend_class(provider: str) -> type[Backend]:
    """The backend class of ``provider`` (imports its module on first use)."""
    module_name, _, attr = get_provider(provider).target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def build_backend(spec: BackendSpec) -> Backend:
    """Instantiates the backend for ``spec``."""
    return backend_class(spec.provider)(spec)


def resolve_spec(spec: BackendSpec) -> BackendSpec:
    """``spec`` completed by its backend before planning (e.g. the model name a server
    reports when none was given); raises BackendUnavailable when that needs a server that
    cannot be reached."""
    return backend_class(spec.provider).resolve(spec)
