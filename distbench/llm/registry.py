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
    """

    name: str
    target: str
    default_model: str
    style: str
    description: str


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
    return BackendSpec(
        provider=provider,
        model=model or entry.default_model,
        style=style,
        options=tuple(sorted(options.items())),
    )


def build_backend(spec: BackendSpec) -> Backend:
    """Instantiates the backend for ``spec`` (imports its module on first use)."""
    module_name, _, attr = get_provider(spec.provider).target.partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    return cls(spec)
