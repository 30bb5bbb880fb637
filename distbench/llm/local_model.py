"""The in-process llama.cpp model behind the ``local`` provider (:class:`LocalModel`).

Sampling is plain temperature sampling, as in the OpenAI API (``top_p=1``, no top-k, no min-p,
no repeat penalty), seeded per call: the same prompt, seed and settings give the same text,
whatever ran before. That takes care: llama.cpp's CPU kernels give bit-identical results for a
token evaluated in any batch of at least a few tokens, but different ones (logits off by up
to ~0.8) in a smaller batch: below 2 tokens for SmolLM2, below 8 for Gemma 3 (measured on this
project's x86 VM with 1 and 2 threads). And llama-cpp-python's prefix reuse re-evaluates a
repeated prompt's last token alone and reuses cache entries written one by one during
generation. So each call's prompt is evaluated here first (:meth:`LocalModel._prepare`): only
the part of the cache written by an earlier prompt's batch is reused, and the rest goes in
chunks of at least ``_MIN_CHUNK`` = 16 tokens (twice Gemma's threshold, for a margin on other
CPUs; SmolLM2's answers are the same as with chunks of 2); llama then samples straight from
those logits. Repeated trials of one game share their long prompt prefix, so reuse saves most
of the prompt evaluation.

Several samples of one prompt (the trials of a game: :meth:`LocalModel.complete_many` and
:meth:`LocalModel.chat_many`) are decoded together, in a third llama.cpp context of its own
(unified KV cache, up to 256 sequences, ``batch_cells`` cells): the prompt, tokenized as the
one-sample call would tokenize it, is evaluated once into sequence 0 (in chunks of at least
``_MIN_CHUNK``; the prefix it shares with the previous prompt stays in the cache, as in the
one-sample path: the games of a bucket share their instructions, about 170 of 250 tokens),
copied to the other sequences (``llama_memory_seq_cp``: the cells are shared, not copied), and
every step decodes one token of each unfinished sample in one batch, each drawn by its own
sampler seeded with its seed. What that guarantees is in :meth:`LocalModel._decode_many`.
The decoding steps are compute-bound on two cores (SmolLM2's Q4_1 weights have no batched
kernel on x86: a token costs 4.4 ms in a step of 8 against 6.7 ms alone), so 20 samples in
one batch answer about 1.8x as fast as 20 one-sample calls on this project's 2-core VM, quiet
(``benchmarks/bench_samples.py`` and ``bench_local_matrix.py``, 2026-11-29).

Log-probabilities need llama.cpp's ``logits_all=True``, which slows prompt evaluation and
keeps an ``n_ctx x vocab`` float32 score buffer: at ``n_ctx=2048`` about 400 MB for SmolLM2
(49k tokens) and 2 GB for Gemma 3 (262k tokens; of it, the rows a prompt fills are resident:
a Gemma process measured 0.4 GB without the scoring instance and 1.4 to 2.2 GB with it). So a
:class:`LocalModel` holds two llama instances: a fast one without ``logits_all`` for plain
calls, loaded at construction, and a scoring one with it, loaded on the first call that asks
for logprobs (or at construction with ``logprobs=True``). Both share the memory-mapped weights
and one lock (llama.cpp contexts are not reentrant, and two cores gain nothing from running
both at once).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from distbench.llm.base import BackendUnavailable
from distbench.llm.local_round import (
    _SAMPLER_ARGS,
    _SAMPLING,
    Retune,
    RoundDecoder,
    RoundItem,
    _chunks,
    _common_prefix,
    _fill,
    decode_steps,
)

logger = logging.getLogger(__name__)

# Prompt tokens are evaluated in chunks of at least this many (see the module docstring).
_MIN_CHUNK = 16
# llama.cpp treats 0xFFFFFFFF as "pick a random seed"; seeds are reduced below it.
_SEED_MODULUS = 0xFFFFFFFF

_LOAD_LOCK = threading.Lock()  # guards the temporary patch in _llama_defaults


def _on_model_thread(method: Callable[..., Any]) -> Callable[..., Any]:
    """Runs a :class:`LocalModelCore` method on the model's own thread (see the class
    docstring), or straight away when called there already."""

    @functools.wraps(method)
    def run(self: LocalModelCore, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == self._thread_ident:
            return method(self, *args, **kwargs)
        return self._thread.submit(method, self, *args, **kwargs).result()

    return run


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


class LocalModelUnavailable(BackendUnavailable):
    """llama-cpp-python or the model file is missing; the message says what to install."""


class LocalModelCore:
    """A GGUF chat model in this process, answering OpenAI-shaped calls; thread-safe.

    Every call runs on one thread of the model's own, whichever thread asks: llama.cpp's CPU
    backend runs each graph on an OpenMP team of the thread that starts it, and a second
    thread's team beside the first one's doubled the time of a decoding step on this
    project's 2-core VM (SmolLM2, 2 threads: 5.9 ms a token from one thread, 12.2 ms once a
    call had come from another; ``benchmarks/bench_local_multiturn.py``). Callers such as
    ``asyncio.to_thread`` hand each call to whichever pool thread is free.

    Args:
        model_path: The GGUF file (see :func:`find_model_path` for the default).
        model: The bundled model to load when no path is given or set (see
            :func:`bundled_models`; default SmolLM2).
        name: Model name reported in responses (default: ``model``'s canonical name, else
            ``smollm2-135m-instruct``).
        n_ctx: Context length in tokens of plain calls (8192: a negotiation's conversation
            outgrows 2048; the KV cache costs about 23 KB a token for SmolLM2, 18 KB for
            Gemma 3 270M, within both models' trained context).
        score_ctx: Context length of the scoring instance (``logits_all``), whose score
            buffer is ``score_ctx x vocab`` floats: kept at 2048 (a logprob reading is one
            short prompt).
        n_threads: CPU threads (default: the CPUs this process may use, less the load of
            other processes: :func:`_default_threads`).
        seed: Sampling seed of calls that give none.
        logprobs: Load the scoring instance (``logits_all=True``) now rather than on the
            first call that asks for logprobs.
        extra_buffers: Allow llama.cpp's AMX / repacked weight buffers (see the module
            docstring for why they are off).
        batch_cells: Most KV-cache cells of the context that decodes several samples at
            once (:meth:`complete_many`); more samples than fit are decoded in groups.
        round_cells: Most KV-cache cells of the context that answers different prompts
            together and keeps conversations' prefixes (:meth:`answer_round`), split into one
            stream per sequence; the context grows to what a round needs, up to this (about
            23 KB a cell for SmolLM2, 18 KB for Gemma 3 270M: 32,768 cells are 750 MB).
        choose_threads: Picks the threads again before each call (one request, a round, or
            the samples of one prompt), so the choice follows the load as it changes; None
            keeps ``n_threads``. Prompt evaluation uses the same threads as decoding.

    Raises:
        LocalModelUnavailable: llama-cpp-python or the file is missing, or the file does not
            load.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        name: str,
        n_threads: int,
        n_ctx: int = 8192,
        score_ctx: int = 2048,
        seed: int = 0,
        logprobs: bool = False,
        extra_buffers: bool = False,
        batch_cells: int = 8192,
        round_cells: int = 32768,
        choose_threads: Callable[[], int] | None = None,
    ) -> None:
        self.path = Path(model_path)
        self.name = name
        self.n_ctx = n_ctx
        self.score_ctx = min(score_ctx, n_ctx)
        self.n_threads = n_threads
        self.warm = False  # whether a call was answered (the first one is slow)
        self.seed = seed
        self._extra_buffers = extra_buffers
        self._lock = threading.Lock()
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="llama")
        self._thread_ident = self._thread.submit(threading.get_ident).result()
        self._batched: dict[int, int] = {}  # per llama instance: cache length written by a prompt
        self._capturing = False  # set (under the lock) while a call only reports its tokens
        self._captured_stop: list[str] = []
        self._batch_ctx: Any = None  # the multi-sequence context of complete_many/chat_many
        self._batch_prompt: list[int] = []  # the prompt whose cells sequence 0 holds there
        self.batch_cells = batch_cells
        self.round_cells = round_cells
        self._round: Any = None  # the RoundDecoder of answer_round, made on first use
        self._choose_threads = choose_threads
        started = time.perf_counter()
        self._plain, self._scoring = self._thread.submit(self._load_both, logprobs).result()
        self.load_seconds = time.perf_counter() - started
        logger.debug("loaded %s in %.2f s", self.path.name, self.load_seconds)

    def _load_both(self, logprobs: bool) -> tuple[Any, Any]:
        plain = self._load(logits_all=False)
        return plain, self._load(logits_all=True) if logprobs else None

    def _load(self, *, logits_all: bool) -> Any:
        from llama_cpp import Llama

        try:
            with _llama_defaults(self._extra_buffers):
                llm = Llama(
                    model_path=str(self.path),
                    n_ctx=self.score_ctx if logits_all else self.n_ctx,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads,  # llama-cpp-python's default: every CPU
                    logits_all=logits_all,
                    seed=self.seed % _SEED_MODULUS,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise LocalModelUnavailable(f"cannot load {self.path}: {exc}") from None
        metadata = getattr(llm, "metadata", None) or {}
        if "tokenizer.chat_template" not in metadata and str(
            metadata.get("general.architecture", "")
        ).startswith("gemma"):
            # Gemma 3 270M's GGUF has no template, and llama-cpp-python would fall back to
            # Llama 2's [INST] format; Gemma's own turn markers are special tokens it knows.
            llm.chat_format = "gemma"
        self._batched[id(llm)] = 0
        original = llm.generate

        def generate(tokens: Sequence[int], *args: Any, **kwargs: Any) -> Any:
            if self._capturing:
                raise _Captured(list(tokens))
            self._prepare(llm, list(tokens))
            retune = self._retune(lambda: llm._ctx)
            if retune is not None:  # a criterion that never stops: threads picked again
                from llama_cpp import StoppingCriteriaList

                criteria = kwargs.get("stopping_criteria")
                kwargs["stopping_criteria"] = StoppingCriteriaList([retune, *(criteria or [])])
            return original(tokens, *args, **kwargs)

        llm.generate = generate  # every completion and chat call goes through generate
        create_completion = llm.create_completion

        def capturing_create_completion(*args: Any, **kwargs: Any) -> Any:
            if self._capturing:  # a chat format's stop strings, for the batched path
                stop = kwargs.get("stop")
                self._captured_stop = [stop] if isinstance(stop, str) else list(stop or [])
            return create_completion(*args, **kwargs)

        llm.create_completion = capturing_create_completion
        return llm

    def _prepare(self, llm: Any, tokens: list[int]) -> None:
        """Evaluates the prompt so that its logits do not depend on earlier calls.

        Reuses the cached prefix that an earlier prompt evaluated in a batch (never entries
        written during generation), keeps at least ``_MIN_CHUNK`` tokens to evaluate, and never
        evaluates a smaller chunk (a shorter prompt is always evaluated whole, from an empty
        cache). Then
        llama-cpp-python finds the whole prompt cached and samples from the current logits.
        """
        n = len(tokens)
        if n == 0 or n > llm.n_ctx():
            return  # llama reports the error
        limit = min(self._batched[id(llm)], llm.n_tokens, n - _MIN_CHUNK)
        reuse = _common_prefix(llm.input_ids[: max(limit, 0)].tolist(), tokens)
        self._batched[id(llm)] = 0
        if reuse == 0:
            llm.reset()
        llm.n_tokens = reuse
        for chunk in _chunks(tokens[reuse:], llm.n_batch, _MIN_CHUNK):
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

    @_on_model_thread
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
            llm = self._instance(logprobs is not None)
            self._threads_now(llm._ctx)
            out = llm.create_completion(
                prompt,
                max_tokens=max_tokens,
                temperature=temperature,
                seed=self._seed(seed),
                logprobs=logprobs,
                stop=stop or [],
                **_SAMPLING,
            )
        return _finish(out, self.name)

    @_on_model_thread
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
                applies (SmolLM2 adds its default system message when none is given; Gemma,
                which has no system role, gets system text at the start of the first user
                turn, as Gemma's own template does).
            max_tokens: Completion budget.
            temperature: Sampling temperature (0 is greedy).
            seed: Sampling seed (default: the model's).
            logprobs: Return ``choices[0].logprobs.content``: per generated token
                ``{token, logprob, top_logprobs: [{token, logprob}, ...]}``.
            top_logprobs: How many alternatives per token (0 when None).
        """
        with self._lock:
            llm = self._instance(logprobs)
            self._threads_now(llm._ctx)
            out = llm.create_chat_completion(
                _fold_system(messages) if llm.chat_format == "gemma" else list(messages),
                max_tokens=max_tokens,
                temperature=temperature,
                seed=self._seed(seed),
                logprobs=logprobs or None,
                top_logprobs=(top_logprobs or 0) if logprobs else None,
                **_SAMPLING,
            )
        return _finish(out, self.name)

    @_on_model_thread
    def complete_many(
        self,
        prompt: str,
        seeds: Sequence[int],
        *,
        max_tokens: int = 16,
        temperature: float = 1.0,
        stop: str | list[str] | None = None,
    ) -> dict[str, Any]:
        """``len(seeds)`` completions of one prompt, decoded together: an OpenAI
        ``/v1/completions`` response with one choice per seed, in order.

        The prompt is evaluated once; the samples are then decoded in one llama.cpp batch per
        step (one sequence each, sharing the prompt's cache cells), each sampled by its own
        sampler seeded with its seed (see :meth:`_decode_many` for what is guaranteed).
        """
        stops = [stop] if isinstance(stop, str) else list(stop or [])
        with self._lock:
            tokens = self._prompt_tokens(lambda llm: llm.create_completion(
                prompt, max_tokens=max_tokens, temperature=temperature, stop=stops,
                **_SAMPLING))
            choices, usage = self._decode_many(tokens, seeds, max_tokens, temperature, stops)
        return {"id": "cmpl-batch", "object": "text_completion", "created": int(time.time()),
                "model": self.name,
                "choices": [{"text": text, "index": i, "logprobs": None, "finish_reason": why}
                            for i, (text, why) in enumerate(choices)],
                "usage": usage}

    @_on_model_thread
    def chat_many(
        self,
        messages: Sequence[dict[str, str]],
        seeds: Sequence[int],
        *,
        max_tokens: int = 16,
        temperature: float = 1.0,
    ) -> dict[str, Any]:
        """``len(seeds)`` chat answers to one conversation, decoded together (as
        :meth:`complete_many`; the chat template and its stop strings apply as in
        :meth:`chat`)."""
        with self._lock:
            tokens = self._prompt_tokens(lambda llm: llm.create_chat_completion(
                _fold_system(messages) if llm.chat_format == "gemma" else list(messages),
                max_tokens=max_tokens, temperature=temperature, **_SAMPLING))
            stops = list(self._captured_stop)
            choices, usage = self._decode_many(tokens, seeds, max_tokens, temperature, stops)
        return {"id": "chatcmpl-batch", "object": "chat.completion",
                "created": int(time.time()), "model": self.name,
                "choices": [{"index": i, "message": {"role": "assistant", "content": text},
                             "logprobs": None, "finish_reason": why}
                            for i, (text, why) in enumerate(choices)],
                "usage": usage}

    def _prompt_tokens(self, call: Callable[[Any], Any]) -> list[int]:
        """The prompt tokens llama-cpp-python would evaluate for ``call`` (its tokenizer and
        chat template), found by running the call up to the point of evaluation. The caller
        holds the lock."""
        self._capturing, self._captured_stop = True, []
        try:
            call(self._plain)
        except _Captured as captured:
            return captured.tokens
        finally:
            self._capturing = False
        raise RuntimeError("llama-cpp-python did not evaluate a prompt")  # pragma: no cover

    def _context_for(self, cells: int, sequences: int) -> Any:
        """The multi-sequence context, (re)made when it has fewer cells or sequences than
        asked (one unified KV cache: the samples share the prompt's cells)."""
        from llama_cpp import _internals as internals
        from llama_cpp import llama_cpp as low

        ctx = self._batch_ctx
        if ctx is not None and ctx.n_ctx() >= cells and self._batch_seqs >= sequences:
            return ctx
        if ctx is not None:
            ctx.close()
            self._batch_ctx = None
        self._batch_prompt = []
        params = low.llama_context_params.from_buffer_copy(self._plain.context_params)
        params.n_ctx = max(cells, 1024)
        params.n_batch = params.n_ubatch = 512
        params.n_seq_max = max(sequences, 8)
        params.kv_unified = True
        params.n_threads = params.n_threads_batch = self.n_threads
        self._batch_ctx = internals.LlamaContext(model=self._plain._model, params=params,
                                                 verbose=False)
        self._batch_seqs = params.n_seq_max
        return self._batch_ctx

    def _reusable(self, tokens: list[int]) -> int:
        """How many leading prompt tokens sequence 0 of the batch context already holds for
        ``tokens``: their common prefix with the last prompt evaluated there, leaving at least
        ``_MIN_CHUNK`` tokens to evaluate (so no token is ever evaluated in a smaller batch).
        Games of one bucket share their instructions, so most of a prompt is reused."""
        reuse = _common_prefix(self._batch_prompt, tokens)
        return max(0, min(reuse, len(tokens) - _MIN_CHUNK))

    def _decode_many(self, tokens: list[int], seeds: Sequence[int], max_tokens: int,
                     temperature: float, stops: list[str]
                     ) -> tuple[list[tuple[str, str]], dict[str, int]]:
        """(text, finish reason) per seed, and the usage (prompt counted once).

        Guarantee: the same prompt tokens, seeds (in the same order), settings and model give
        the same texts, whatever ran before: the cells of the prompt prefix that sequence 0
        still holds from the previous prompt (:meth:`_reusable`) are kept, every other cell
        is dropped, and the rest of the prompt is evaluated in chunks of at least
        ``_MIN_CHUNK`` tokens, whose results do not depend on the batch they were evaluated in
        (the module docstring). The sample of seed ``s`` at index
        ``i`` is drawn by its own sampler (llama-cpp-python's chain for these settings,
        seeded with ``s``), so its first token is drawn from the same prompt logits as a
        one-sample call with seed ``s``; later tokens are evaluated in a batch with the other
        samples, whose floating-point results differ slightly from a one-token evaluation, so
        a text may differ from that call's and may change when the other samples (their
        number or seeds) change. Stop strings, end-of-generation tokens, ``max_tokens`` and
        the text are handled as in llama-cpp-python's ``create_completion``. The caller
        holds the lock.
        """
        from llama_cpp import _internals as internals
        from llama_cpp import llama_cpp as low

        llm = self._plain
        prompt_len = len(tokens)
        if prompt_len == 0 or prompt_len >= self.n_ctx:
            raise ValueError(f"Requested tokens ({prompt_len}) exceed context window of "
                             f"{self.n_ctx}")
        max_tokens = min(max_tokens, self.n_ctx - prompt_len)
        room = max(1, (self.batch_cells - prompt_len) // max(1, max_tokens))
        group_size = min(len(seeds), room, 256)
        results: list[tuple[str, str]] = []
        generated = 0
        for lo in range(0, len(seeds), group_size):
            group = [int(s) % _SEED_MODULUS for s in seeds[lo:lo + group_size]]
            ctx = self._context_for(prompt_len + len(group) * max_tokens + 16, len(group))
            self._threads_now(ctx)
            memory = low.llama_get_memory(ctx.ctx)
            reuse = self._reusable(tokens)
            self._batch_prompt = []  # until this prompt's cells are complete
            if reuse == 0:
                low.llama_memory_clear(memory, True)
            else:  # keep the shared prefix of sequence 0, drop every other cell
                for seq in range(1, self._batch_seqs):
                    low.llama_memory_seq_rm(memory, seq, -1, -1)
                low.llama_memory_seq_rm(memory, 0, reuse, -1)
            batch = internals.LlamaBatch(n_tokens=max(512, len(group)), embd=0, n_seq_max=1,
                                         verbose=False)
            try:
                position = reuse
                last = 0
                for chunk in _chunks(tokens[reuse:], 512, _MIN_CHUNK):
                    _fill(batch, [(t, position + i, 0) for i, t in enumerate(chunk)],
                          logits_last=True)
                    ctx.decode(batch)
                    position += len(chunk)
                    last = len(chunk) - 1
                self._batch_prompt = list(tokens)
                for seq in range(1, len(group)):
                    low.llama_memory_seq_cp(memory, 0, seq, -1, -1)
                samplers = []
                for seed in group:
                    llm.set_seed(seed)
                    samplers.append(llm._init_sampler(temp=temperature, **_SAMPLER_ARGS))
                answers = decode_steps(
                    llm, ctx, batch, [tokens] * len(group), range(len(group)), samplers,
                    [max_tokens] * len(group), [stops] * len(group),
                    rows=dict.fromkeys(range(len(group)), last),
                    retune=self._retune(lambda ctx=ctx: ctx))
            finally:
                batch.close()
            for text, why, count in answers:
                generated += count
                results.append((text, why))
        usage = {"prompt_tokens": prompt_len, "completion_tokens": generated,
                 "total_tokens": prompt_len + generated}
        return results, usage

    def _threads_now(self, ctx: Any) -> int:
        """The threads for a batched call now (``choose_threads``), set on ``ctx`` (a llama
        context, or None); the thread count changes no answer (:func:`_default_threads`)."""
        from llama_cpp import llama_cpp as low

        if self._choose_threads is not None:
            self.n_threads = self._choose_threads()
            if ctx is not None:
                low.llama_set_n_threads(ctx.ctx, self.n_threads, self.n_threads)
        return self.n_threads

    def _retune(self, context: Callable[[], Any]) -> Retune | None:
        """Picks the threads of the llama context ``context()`` (read when it runs) again
        every half second of a long call (see :class:`~distbench.llm.local_round.Retune`),
        when they are chosen at all."""
        if self._choose_threads is None:
            return None
        return Retune(lambda: self._threads_now(context()))

    @_on_model_thread
    def answer_round(self, calls: Sequence[dict[str, Any]]) -> list[dict[str, Any] | Exception]:
        """Several different prompts answered together (:mod:`distbench.llm.local_round`).

        Args:
            calls: Per prompt ``{"style": "completion" | "chat", "prompt": str,
                "messages": [...], "seed", "max_tokens", "temperature", "stop"}`` (``prompt``
                for completion style, ``messages`` for chat, as :meth:`complete` and
                :meth:`chat` take them).

        Returns:
            Per call ``{"text", "finish_reason", "usage"}``, or the exception that failed it.
        """
        with self._lock:
            items: list[RoundItem | Exception] = []
            for call in calls:
                try:
                    items.append(self._round_item(call))
                except ValueError as exc:  # too long for the context, as in complete()
                    items.append(exc)
            if self._round is None:
                self._round = RoundDecoder(self._plain, n_ctx=self.n_ctx,
                                           n_threads=self.n_threads,
                                           max_cells=self.round_cells, min_chunk=_MIN_CHUNK)
            self._round.n_threads = self._threads_now(self._round._ctx)
            decoder = self._round  # its context may be made anew in decode()
            decoder.retune = self._retune(lambda: decoder._ctx)
            good = [item for item in items if isinstance(item, RoundItem)]
            answers = iter(self._round.decode(good))
        out: list[dict[str, Any] | Exception] = []
        for item in items:
            if isinstance(item, Exception):
                out.append(item)
                continue
            answer = next(answers)
            if isinstance(answer, Exception):
                out.append(answer)
                continue
            text, why, count = answer
            out.append({"text": text, "finish_reason": why, "usage": {
                "prompt_tokens": len(item.tokens), "completion_tokens": count,
                "total_tokens": len(item.tokens) + count}})
        return out

    def _round_item(self, call: dict[str, Any]) -> Any:
        """The :class:`~distbench.llm.local_round.RoundItem` of one call of a round (its
        prompt tokenized as :meth:`complete` or :meth:`chat` would); the caller holds the
        lock."""
        max_tokens, temperature = call.get("max_tokens", 16), call.get("temperature", 1.0)
        if call.get("style") == "chat":
            messages = call["messages"]
            tokens = self._prompt_tokens(lambda llm: llm.create_chat_completion(
                _fold_system(messages) if llm.chat_format == "gemma" else list(messages),
                max_tokens=max_tokens, temperature=temperature, **_SAMPLING))
            stops = list(self._captured_stop)
        else:
            stop = call.get("stop")
            stops = [stop] if isinstance(stop, str) else list(stop or [])
            tokens = self._prompt_tokens(lambda llm: llm.create_completion(
                call["prompt"], max_tokens=max_tokens, temperature=temperature, stop=stops,
                **_SAMPLING))
        return RoundItem(tokens, self._seed(call.get("seed")), max_tokens, temperature, stops)

    def warm_up(self) -> None:
        """One tiny call, so the first real call does not pay for cold caches."""
        self.complete("Hello", max_tokens=1, temperature=0.0)
        self.warm = True

    @_on_model_thread
    def close(self) -> None:
        """Frees the llama contexts; the object is unusable afterwards."""
        with self._lock:
            if self._batch_ctx is not None:
                self._batch_ctx.close()
                self._batch_ctx = None
            if self._round is not None:
                self._round.close()
                self._round = None
            for llm in (self._plain, self._scoring):
                if llm is not None:
                    llm.close()
            self._plain = self._scoring = None
        self._thread.shutdown(wait=False)  # its one thread ends once this call returns


class _Captured(Exception):  # noqa: N818 - a signal, not an error
    """Raised by the generate hook in capture mode, carrying the prompt's tokens."""

    def __init__(self, tokens: list[int]) -> None:
        super().__init__("prompt captured")
        self.tokens = tokens



def _fold_system(messages: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """``messages`` with system messages moved to the start of the first user message
    (llama-cpp-python's ``gemma`` format would drop them)."""
    system = "\n\n".join(m["content"] for m in messages if m.get("role") == "system")
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    if not system:
        return rest
    for message in rest:
        if message.get("role") == "user":
            message["content"] = f"{system}\n\n{message['content']}"
            return rest
    return [{"role": "user", "content": system}, *rest]



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
