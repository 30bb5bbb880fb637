"""Model providers by name, loaded lazily from ``module:attr`` entries.

A provider entry names the backend class and its defaults (model, answer style). Unknown
names get a "did you mean" hint.
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
     ("tpm", 200_000.0), ("max_concurrency", 16)),
))
register(Provider(
    "together", _HTTP, "meta-llama/Llama-3.2-3B-Instruct-Turbo", "chat",
    "Together AI (OpenAI-compatible; raw base models through completions)",
    (("base_url", "https://api.together.xyz"), ("key_env", "TOGETHER_API_KEY"), ("rpm", 600.0),
     ("max_concurrency", 16)),
))
register(Provider(
    "ollama", _HTTP, "llama3.2", "chat", "a local Ollama server (no key)",
    (("base_url", "http://127.0.0.1:11434"), ("rpm", None), ("max_concurrency", 2)),
))
register(Provider(
    "vllm", _HTTP, "default", "completion", "any vLLM server at --base-url (key optional: VLLM_API_KEY)",
    (("base_url", "http://127.0.0.1:8000"), ("key_env", "VLLM_API_KEY"), ("key_required", False),
     ("rpm", None), ("max_concurrency", 32)),
))
register(Provider(
    "llamacpp", _HTTP, "default", "chat",
    "any llama.cpp / OpenAI-compatible server at --base-url, e.g. distbench serve local",
    (("base_url", "http://127.0.0.1:8080"), ("key_env", "LLAMACPP_API_KEY"),
     ("key_required", False), ("rpm", None), ("max_concurrency", 4)),
))
register(Provider(
    "local", "distbench.llm.local:LocalBackend", "smollm2-135m-instruct", "completion",
    "the bundled SmolLM2-135M-Instruct on the CPU through llama.cpp (no server, no key)",
    # Its tokenizer splits " 2" into " " and "2": the logprob cue ends with the space.
    (("logprob_cue_space", True),),
))


def providers() -> dict[str, Provider]:
    """Registered providers by name."""
    return dict(_PROVIDERS)


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
    """A validated :class:`BackendSpec` with the provider's defaults filled in."""
    entry = get_provider(provider)
    style = style or entry.style
    if style not in ("chat", "completion"):
        raise ValueError(f"answer style must be 'chat' or 'completion', got {style!r}")
    merged = dict(entry.defaults)
    merged.update({k: v for k, v in options.items() if v is not None})
    return BackendSpec(
        provider=provider,
        model=model or entry.default_model,
        style=style,
        options=tuple(sorted((k, v) for k, v in merged.items() if v is not None)),
    )


def build_backend(spec: BackendSpec) -> Backend:
    """Instantiates the backend for ``spec`` (imports its module on first use)."""
    module_name, _, attr = get_provider(spec.provider).target.partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    return cls(spec)
