"""The model backend interface: a batch of requests in, answers out, asynchronously.

Every backend answers in text, so every answer goes through the same prompt -> answer ->
parse path. A backend never raises for a failed call: it returns a :class:`Response` with
``status="failed"`` and the reason, so failures become rows.
"""

from __future__ import annotations

import abc
import dataclasses
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class Request:
    """One model call.

    Attributes:
        prompt: The prompt text (the user message for chat models).
        seed: Per-request sampling seed, stable across runs (derived from ``--llm-seed``, the
            game and the trial), so a seeded backend answers identically every time.
        task: What answer the request asks for, e.g. ``"matrix.pure:3"`` (pure action among
            3) or ``"matrix.mixed:3"``. Real models ignore it; scripted policies use it.
        max_tokens: Completion budget.
        temperature: Sampling temperature.
        logprobs: Number of top log-probabilities to return, or None.
        stop: Stop sequences (completion style: the answer ends at the first one).
        messages: A multi-turn conversation as (role, content) pairs, roles ``system``,
            ``user`` and ``assistant``; when given, chat style sends it instead of ``prompt``
            and completion style sends :func:`render_transcript` of it.
        style: ``"completion"`` to continue ``prompt`` as raw text whatever the backend's
            style (reading next-token probabilities after a cue needs it), or None for the
            backend's own style.
        samples: For a request of several samples (OpenAI's ``n``): the seed of each sample,
            which is the seed its trial's own one-sample request would carry; None for one
            sample. ``seed`` is then what the request sends as its seed (the first sample's).
            :meth:`split` gives the one-sample requests it stands for: a backend that cannot
            answer several samples in one request answers those instead.
    """

    prompt: str
    seed: int
    task: str = ""
    max_tokens: int = 256
    temperature: float = 1.0
    logprobs: int | None = None
    stop: tuple[str, ...] | None = None
    messages: tuple[tuple[str, str], ...] | None = None
    style: str | None = None
    samples: tuple[int, ...] | None = None

    @property
    def n(self) -> int:
        """How many samples the request asks for."""
        return len(self.samples) if self.samples else 1

    def split(self) -> list[Request]:
        """The one-sample requests this request stands for (itself when it asks for one)."""
        if not self.samples:
            return [self]
        return [dataclasses.replace(self, seed=int(s), samples=None) for s in self.samples]

    def style_for(self, spec_style: str) -> str:
        """The style this request is sent in by a backend whose own style is ``spec_style``."""
        return self.style or spec_style

    def chat_messages(self) -> ChatMessages:
        """The OpenAI ``messages`` list of this request."""
        pairs = self.messages or (("user", self.prompt),)
        return ChatMessages([{"role": role, "content": content} for role, content in pairs],
                            pairs)

    def completion_prompt(self) -> str:
        """The raw prompt of this request (a transcript when it is a conversation)."""
        return render_transcript(self.messages) if self.messages else self.prompt


class ChatMessages(list):
    """A request's OpenAI ``messages`` (``{"role", "content"}`` dicts) that remembers the
    (role, content) pairs it was made from (:attr:`pairs`), so that an encoder can reuse each
    message's encoding from the turn before (:func:`~distbench.llm.transport.json_bytes`).
    Made fresh for each request body and never changed after."""

    def __init__(self, messages: list[dict[str, str]], pairs: tuple[tuple[str, str], ...]):
        super().__init__(messages)
        self.pairs = pairs


def render_transcript(messages: tuple[tuple[str, str], ...]) -> str:
    """A conversation as plain text for a base model, ending where the assistant speaks next."""
    parts = remembered(_RENDERED, messages, _rendered, _RENDERED_MAX)
    return "\n\n".join(parts) + "\n\nAssistant:"


def _rendered(message: tuple[str, str]) -> str:
    role, content = message
    return f"{_SPEAKERS.get(role, role.title() + ': ')}{content}".strip()


def remembered(memo: dict[tuple[str, str], str], messages: Sequence[Sequence[str]],
               make: Callable[[tuple[str, str]], str], bound: int) -> list[str]:
    """``make(message)`` of each (role, content) message, remembered in ``memo`` (a game resends
    its earlier messages every turn); ``memo`` is emptied before new ones are added once it
    holds ``bound``."""
    pairs: Sequence[Any] = messages
    try:
        parts = list(map(memo.get, pairs))
    except TypeError:  # messages that are lists, not tuples
        pairs = [tuple(m) for m in messages]
        parts = list(map(memo.get, pairs))
    if None in parts:
        if len(memo) >= bound:
            memo.clear()
        for i, part in enumerate(parts):
            if part is None:
                parts[i] = memo[pairs[i]] = make(pairs[i])
    return parts  # type: ignore[return-value]


_SPEAKERS = {"system": "", "user": "User: ", "assistant": "Assistant: "}
_RENDERED: dict[tuple[str, str], str] = {}
_RENDERED_MAX = 200_000
"""Each message's rendered part (a game's transcript repeats its earlier messages every turn),
emptied when it reaches its bound."""


@dataclass(frozen=True, slots=True)
class Response:
    """The outcome of one call.

    Attributes:
        text: The answer text, None when the call failed.
        status: ``"ok"`` or ``"failed"``.
        error: Why it failed ("" when ok). Never holds a key or a header.
        http_status: Last HTTP status, None for in-process backends.
        attempts: Number of attempts made.
        latency_ms: Time on the wire of the last attempt (request sent to answer read), or the
            model's own time for in-process backends.
        queue_ms: Time the call waited before and between attempts: for a rate-limit token, a
            concurrency slot and retry back-off (so a call's wall time is about
            ``queue_ms`` plus the wire time of its attempts).
        prompt_tokens: Prompt tokens reported by the backend, when known.
        completion_tokens: Completion tokens reported by the backend, when known.
        cache_hit: Answered from the response cache.
        logprobs: Top log-probabilities of the first generated token, as (token, logprob)
            pairs, when the request asked for them; None otherwise.
        texts: The samples' texts of a request of several samples answered in one call
            (``text`` is the first); the call's tokens and timings are the whole request's.
        reasoning: The provider's separate reasoning text (an OpenAI-compatible message's
            ``reasoning_content``), kept whatever the run's reasoning factor; None when the
            provider gives none.
        reasoning_tokens: Reasoning tokens the provider reported
            (``usage.completion_tokens_details.reasoning_tokens``), None when not reported.
        parts: The answers of a request of several samples that the endpoint answered one
            sample per call (it does not take ``n``): one one-sample response per sample,
            aligned with :meth:`Request.split`; ``status`` is then ``"ok"`` when all are.
        notes: What the answer's body held that could not be used, by field, "; "-separated
            (a token count that is not a plausible count, stored as None; lone surrogates
            replaced in the text); "" when nothing.
        batch_id: The provider batch that answered it (``--execution batch``), else None.
        probe: (prompt, completion) tokens of the request that found the endpoint not to take
            ``n`` (sent with ``n``, answered with too few choices or rejected), which this
            request paid for before its ``parts`` were asked; counted at the request's ceiling
            where the endpoint's counts were not usable; None when there was none. It has no
            ``calls`` row of its own: the run's spend counts it (``probe_*`` shard stats).
    """

    text: str | None
    status: str = "ok"
    error: str = ""
    http_status: int | None = None
    attempts: int = 1
    latency_ms: float = 0.0
    queue_ms: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cache_hit: bool = False
    logprobs: tuple[tuple[str, float], ...] | None = None
    texts: tuple[str, ...] | None = None
    parts: tuple[Response, ...] | None = None
    notes: str = ""
    reasoning: str | None = None
    reasoning_tokens: int | None = None
    batch_id: str | None = None
    probe: tuple[int, int] | None = None

    def sample_responses(self, n: int) -> list[Response]:
        """One response per sample of a request of ``n`` samples: the parts, or this
        response's texts each as a response of its own (sharing its status, timings and
        attempts; tokens stay with the request), or ``n`` copies of a failed response."""
        if self.parts is not None:
            return list(self.parts)
        if self.status == "ok" and self.texts is not None and len(self.texts) == n:
            return [dataclasses.replace(self, text=t, texts=None, prompt_tokens=None,
                                        completion_tokens=None) for t in self.texts]
        if self.status == "ok" and n == 1:
            return [self]
        failed = self if self.status != "ok" else dataclasses.replace(
            self, text=None, status="failed",
            error=f"asked for {n} samples, got {len(self.texts or ())}")
        return [dataclasses.replace(failed, texts=None, prompt_tokens=None,
                                    completion_tokens=None)] * n

    @property
    def answers(self) -> int:
        """How many answers (samples) this response holds."""
        if self.parts is not None:
            return len(self.parts)
        return len(self.texts) if self.texts is not None else 1


@dataclass(frozen=True, slots=True)
class BackendSpec:
    """What model to call and how: small, hashable, picklable (it travels to Ray workers).

    Attributes:
        provider: Registered provider name, e.g. ``"dummy"``.
        model: Model name at that provider.
        style: ``"chat"`` (instruction model, full question) or ``"completion"`` (raw base
            model, prompt ending with an answer cue).
        options: Extra provider options as sorted (key, value) pairs.
    """

    provider: str
    model: str
    style: str = "chat"
    options: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    def option(self, key: str, default: Any = None) -> Any:
        value = dict(self.options).get(key)
        return default if value is None else value

    def max_samples(self) -> int:
        """Most samples one request may ask for (the ``max_n`` option; 1, the default,
        sends one request per answer)."""
        return max(1, int(self.option("max_n", 1)))

    def identity(self) -> dict[str, Any]:
        """The fields that decide answers (not how fast or how they are fetched): used for
        shard ids and to recognise a run when it is resumed."""
        return {
            "provider": self.provider,
            "model": self.model,
            "style": self.style,
            "options": {k: v for k, v in self.options if k not in EXECUTION_OPTIONS},
        }

    def seed_identity(self) -> dict[str, Any]:
        """:meth:`identity` without where the model is reached (``base_url``): what seeds and
        the ids they are derived from use, so two runs of one model behind two addresses (two
        ports of a mock server, a proxy) draw the same numbers."""
        out = self.identity()
        out["options"] = {k: v for k, v in out["options"].items() if k not in ADDRESS_OPTIONS}
        return out


EXECUTION_OPTIONS = frozenset(
    {"rpm", "tpm", "max_concurrency", "timeout", "max_retries", "cache", "cache_path",
     "key_env", "key_required", "price_in", "price_out", "retry_after_cap"}
)
"""Backend options that change how calls are made (or what they are said to cost: prices in
USD per million prompt / completion tokens), never what they answer."""

ADDRESS_OPTIONS = frozenset({"base_url"})
"""Backend options that say where a model is reached: part of a run's identity (another
server may serve another model), never of a seed."""


def price_of(spec: BackendSpec) -> tuple[float, float] | None:
    """(USD per million prompt tokens, per million completion tokens) of ``spec``, when the
    user gave both (``--price`` or ``price_in``/``price_out`` in a spec); None: unknown (no
    price is ever assumed)."""
    pin, pout = spec.option("price_in"), spec.option("price_out")
    return (float(pin), float(pout)) if pin is not None and pout is not None else None


def cost_usd(spec: BackendSpec, prompt_tokens: float, completion_tokens: float) -> float | None:
    """What ``prompt_tokens`` and ``completion_tokens`` cost at ``spec``'s price (None: no price)."""
    price = price_of(spec)
    if price is None:
        return None
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1e6


MAX_TOKEN_COUNT = 100_000_000
"""Largest token count of one call taken as reported (a hundred times the longest context
offered today); a larger one is a server's error, never a bill."""


def token_count(value: Any, name: str) -> tuple[int | None, str]:
    """(``value`` as a token count, "") when it is a plausible one: an integer (or a float
    with an integral value) between 0 and :data:`MAX_TOKEN_COUNT`; else (None, a note naming
    ``name`` and the value). None (not reported) is (None, "")."""
    if value is None:
        return None, ""
    if isinstance(value, float) and value.is_integer() and 0 <= value <= MAX_TOKEN_COUNT:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKEN_COUNT:
        if isinstance(value, str):
            shown = f"the string {value[:20]!r}"
        elif isinstance(value, (list, dict)):
            shown = f"a {'list' if isinstance(value, list) else 'JSON object'}"
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**18:
            shown = f"an integer of {value.bit_length()} bits"
        else:
            shown = repr(value)
        return None, f"{name}: {shown} is not a token count (stored as NULL)"
    return value, ""


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str, name: str) -> tuple[str, str]:
    """(``text`` as valid UTF-8, "") or, when it holds lone surrogates (valid JSON, not
    encodable), (``text`` with each replaced by U+FFFD, a note naming ``name`` and the count)."""
    clean, count = _SURROGATE.subn("\ufffd", text)
    if not count:
        return text, ""
    return clean, f"{name}: {count} lone surrogate(s) replaced by U+FFFD"


def _number(value: Any, low: float, *, open_low: bool = False, integer: bool = False,
            high: float | None = None) -> str:
    """Why ``value`` is not a finite number (an integer with ``integer``) >= ``low`` (> with
    ``open_low``) and at most ``high`` (when given), or "" when it is one."""
    kind = "an integer" if integer else "a number"
    bound = (f"> {low:g}" if open_low else f">= {low:g}") + (
        f" and <= {high:,g}" if high is not None else "")
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        return f"must be {kind} {bound}, got {value!r}"
    if (not math.isfinite(value) or value < low or (open_low and value == low)
            or abs(value) > 2**63 - 1 or (high is not None and value > high)):
        return f"must be a finite {'integer' if integer else 'number'} {bound}, got {value!r}"
    return ""


MAX_RETRIES = 100
"""Most retries a call may make (``max_retries``): with backoff, past this a call that keeps
failing would hold its shard for hours."""

MAX_CONCURRENCY = 4096
"""Most requests one endpoint may have in flight (``max_concurrency``): each is an open
connection of this process."""


def check_url(url: Any) -> str:
    """Why ``url`` is not a usable base URL (http or https, a host, a valid port), or ""."""
    from urllib.parse import urlsplit

    if not isinstance(url, str):
        return f"must be a URL string such as http://127.0.0.1:8080, got {url!r}"
    shown = redact_url(url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"not a valid URL ({exc}): {shown!r}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"must be an http:// or https:// URL with a host, got {shown!r}"
    if port == 0:
        return f"port 0 is not a server's port: {shown!r}"
    return ""


REASONING_MODES = ("direct", "cot")
"""The reasoning factor of a model (its ``reasoning`` option): ``direct`` answers at once (no
option: every run before the factor existed), ``cot`` reasons first and ends with the answer
line, with its own budget (the ``reasoning_tokens`` option). Each family reads it when it
builds its prompts and parses its answers; the llm layer only checks it."""

DEFAULT_REASONING_TOKENS = 512
"""Completion budget of a ``cot`` answer when ``reasoning_tokens`` is not given."""

OPTION_CHECKS: dict[str, Callable[[Any], str]] = {
    "rpm": lambda v: _number(v, 0, open_low=True),
    "tpm": lambda v: _number(v, 0, open_low=True),
    "timeout": lambda v: _number(v, 0, open_low=True),
    "max_concurrency": lambda v: _number(v, 1, integer=True, high=MAX_CONCURRENCY),
    "max_retries": lambda v: _number(v, 0, integer=True, high=MAX_RETRIES),
    "retry_after_cap": lambda v: _number(v, 0),
    "price_in": lambda v: _number(v, 0),
    "price_out": lambda v: _number(v, 0),
    "cache": lambda v: "" if isinstance(v, bool) else f"must be true or false, got {v!r}",
    "base_url": check_url,
    "reasoning": lambda v: "" if v in REASONING_MODES else (
        f"must be one of {', '.join(REASONING_MODES)}, got {v!r}"),
    "reasoning_tokens": lambda v: _number(v, 1, integer=True),
}
"""The common backend options and why a value of each is refused (a finite number in range,
a boolean, a URL)."""


def check_option(key: str, value: Any) -> None:
    """Raises ValueError ``"<key>: <why>"`` when ``value`` is not a valid ``key`` option (see
    :data:`OPTION_CHECKS`; other keys are the backend's own)."""
    check = OPTION_CHECKS.get(key)
    problem = check(value) if check is not None and value is not None else ""
    if problem:
        raise ValueError(f"{key}: {problem}")


_USERINFO = re.compile(r"(?<=://)[^/@\s?#]*@")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]*")
_QUERY_VALUE = re.compile(r"([?&;][^=&;#\s]*=)[^&;#\s]*")


def _redact_one(url: re.Match[str]) -> str:
    text = _USERINFO.sub("***@", url.group(0), count=1)
    return _QUERY_VALUE.sub(r"\1***", text)


def redact_url(text: str) -> str:
    """``text`` with the secrets of any URL in it replaced by ``***``: the credentials
    (``http://user:secret@host`` becomes ``http://***@host``) and every query value
    (``?token=secret&api-version=1`` becomes ``?token=***&api-version=***``: some gateways
    take their key there, and which names are secret is not knowable). A base URL may carry
    them, no file, log or message may."""
    return _URL.sub(_redact_one, text)


def redact(value: Any) -> Any:
    """:func:`redact_url` applied to every string of a JSON-shaped value."""
    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, dict):
        return {k: redact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    return value


class BackendUnavailable(RuntimeError):
    """This backend cannot be used as configured (no key, unreachable server, wrong path,
    model not installed). The message is one line a person can act on."""


class Backend(abc.ABC):
    """A model that answers batches of requests.

    Subclasses implement :meth:`generate`; answers come back in request order.

    Attributes:
        in_process: True for a backend that is free and stateless (the dummy, fixed
            answers): each shard builds its own in its own process. False (the default)
            for one that calls a model: a run gives it one endpoint actor per model, which
            holds the rate limits, the connection pool and the cache.
        reports_answers: See :meth:`answered`.
        call_by_call: True for a backend that answers each request with its own call (an
            HTTP model): a caller need not gather a batch before asking. False (the default)
            for one that answers a batch in one pass (the local model).
    """

    in_process: ClassVar[bool] = False
    call_by_call: ClassVar[bool] = False
    reports_answers: ClassVar[bool] = False
    """True for a backend that calls :meth:`answered` with each answer as it returns (so
    progress moves call by call); others are counted when their batch returns."""

    on_answer: Callable[[Response], None] | None = None
    on_status: Callable[[str], None] | None = None

    def answered(self, response: Response) -> Response:
        """Reports one answer that just returned (to the live call counts); returns it."""
        if self.on_answer is not None:
            self.on_answer(response)
        return response

    def status(self, message: str) -> None:
        """Says what the model is doing when that is slow and shows in no count (loading a
        model, a cold first call), in a few words; "" when it is answering again. The
        endpoint hands it to the progress line (:mod:`distbench.llm.meter`)."""
        if self.on_status is not None:
            self.on_status(message)

    def __init__(self, spec: BackendSpec) -> None:
        self.spec = spec

    @property
    def provider(self) -> str:
        return self.spec.provider

    @property
    def model(self) -> str:
        return self.spec.model

    @classmethod
    def resolve(cls, spec: BackendSpec) -> BackendSpec:
        """``spec`` completed before a run is planned, e.g. with the model name a server
        reports when none was given. The default returns it unchanged."""
        return spec

    @classmethod
    def canonical_model(cls, model: str) -> str:
        """The name under which ``model`` is recorded (an alias becomes its canonical name)."""
        return model

    @classmethod
    def preflight(cls, spec: BackendSpec, styles: Sequence[str] = ()) -> None:
        """Raises :class:`BackendUnavailable` (one line naming the cause and the fix) when
        ``spec`` cannot be used, before any work starts. ``styles`` are the prompt styles the
        run will send besides ``spec.style``. The default checks nothing."""
        return None

    @abc.abstractmethod
    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Answers ``requests``, in order, never raising for a failed call."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Releases connections; the default holds none."""
