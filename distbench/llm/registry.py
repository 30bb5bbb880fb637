"""Model providers by name, loaded lazily from ``module:attr`` entries.

A provider entry names the backend class and its defaults (model, answer style, the sampling
dialect its servers speak). ``PROVIDER:MODEL`` (``local:gemma3-270m``) names a provider and
one of its models at once. Unknown names get a "did you mean" hint.
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass

from distbench.llm.base import Backend, BackendSpec


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
        defaults: Default backend options (base_url, key_env, rate limits, ...).
    """

    name: str
    target: str
    default_model: str
    style: str
    description: str
    defaults: tuple[tuple[str, object], ...] = ()


_PROVIDERS: dict[str, Provider] = {}


def register(provider: Provider) -> None:
    """Adds a provider; a second provider of the same name is an error."""
    if provider.name in _PROVIDERS:
        raise ValueError(f"provider {provider.name!r} is registered twice")
    _PROVIDERS[provider.name] = provider


register(
    Provider(
        name="dummy",
        target="distbench.llm.dummy:DummyBackend",
        default_model="random",
        style="chat",
        description="seeded random answers in text (uniform actions, flat-Dirichlet strategies)",
    )
)


_HTTP = "distbench.llm.http:OpenAICompatibleBackend"
register(Provider(
    "openai", _HTTP, "gpt-4o-mini", "chat", "OpenAI API (chat; completions for base models)",
    (("base_url", "https://api.openai.com"), ("key_env", "OPENAI_API_KEY"), ("rpm", 500.0),
     ("tpm", 200_000.0), ("max_concurrency", 16), ("sampling", "openai")),
))
register(Provider(
    "together", _HTTP, "meta-llama/Llama-3.2-3B-Instruct-Turbo", "chat",
    "Together AI (OpenAI-compatible; raw base models through completions)",
    (("base_url", "https://api.together.xyz"), ("key_env", "TOGETHER_API_KEY"), ("rpm", 600.0),
     ("max_concurrency", 16), ("sampling", "openai")),
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
     ("rpm", None), ("max_concurrency", 32), ("sampling", "vllm")),
))
register(Provider(
    "llamacpp", _HTTP, "default", "chat",
    "any llama.cpp / OpenAI-compatible server at --base-url, e.g. distbench serve local",
    (("base_url", "http://127.0.0.1:8080"), ("key_env", "LLAMACPP_API_KEY"),
     ("key_required", False), ("rpm", None), ("max_concurrency", 4), ("sampling", "llamacpp")),
))
register(Provider(
    "local", "distbench.llm.local:LocalBackend", "smollm2-135m-instruct", "completion",
    "the bundled models on the CPU through llama.cpp, no server, no key: SmolLM2-135M-Instruct "
    "(local, local:smollm2-135m) or Gemma 3 270M base (local:gemma3-270m)",
    # In-process sampling is plain temperature sampling, as llama.cpp servers are told to do.
    (("sampling", "llamacpp"),),
))


def providers() -> dict[str, Provider]:
    """Registered providers by name."""
    return dict(_PROVIDERS)


def split_provider(name: str) -> tuple[str, str | None]:
    """``"local:gemma3-270m"`` -> ``("local", "gemma3-270m")``; a registered name (or one
    without a colon) -> ``(name, None)``."""
    if name in _PROVIDERS or ":" not in name:
        return name, None
    provider, _, model = name.partition(":")
    return provider, model or None


def get_provider(name: str) -> Provider:
    """The provider called ``name``; raises UnknownProviderError with a hint otherwise."""
    try:
        return _PROVIDERS[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_PROVIDERS), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise UnknownProviderError(
            f"unknown llm type {name!r}; available: {', '.join(sorted(_PROVIDERS))}.{hint}"
        ) from None


def make_spec(
    provider: str, model: str | None = None, style: str | None = None, **options: object
) -> BackendSpec:
    """A validated :class:`BackendSpec` with the provider's defaults filled in.

    ``provider`` may be ``PROVIDER:MODEL``; an explicit ``model`` wins over the one in the
    name. The model name is canonicalised by the backend (aliases of bundled models).
    """
    provider, named = split_provider(provider)
    model = model or named
    entry = get_provider(provider)
    style = style or entry.style
    if style not in ("chat", "completion"):
        raise ValueError(f"answer style must be 'chat' or 'completion', got {style!r}")
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
