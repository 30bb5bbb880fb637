"""The ``dummy`` backend: a seeded random policy that answers in text.

Pure requests get a uniformly random action, mixed requests a strategy drawn from the flat
Dirichlet distribution (uniform on the simplex), both written as a model would write them and
parsed like any model's answer. With the option ``fast`` (``make_spec("dummy", fast=True)``)
the matrix runner takes the same answers as arrays instead (no text, no parsing: for
throughput benchmarks). Logprob requests get a flat-Dirichlet next-token distribution
over the action labels (95% of the mass; 5% on a newline token). Any other task ``KIND:N``
(a plugin family's) gets a uniformly random integer from 0 to N, written ``Answer: k``, so
every family can be tried without a model. Each answer is a function of the request's seed alone (a
SplitMix64 counter stream), so answers do not depend on batching or sharding.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from distbench.llm.base import Backend, Request, Response

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """The SplitMix64 finaliser, elementwise on uint64 (wrapping arithmetic)."""
    z = x.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        z += _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def uniforms(seeds: np.ndarray, count: int) -> np.ndarray:
    """``count`` uniforms in (0, 1) per seed: (len(seeds), count) float64."""
    seeds = np.asarray(seeds, dtype=np.uint64)
    with np.errstate(over="ignore"):
        counters = seeds[:, None] + np.arange(1, count + 1, dtype=np.uint64)[None, :] * _M1
    bits = splitmix64(counters) >> np.uint64(11)
    return (bits.astype(np.float64) + 0.5) / float(1 << 53)


def parse_task(task: str) -> tuple[str, int]:
    """``"matrix.pure:3"`` -> ``("matrix.pure", 3)``."""
    kind, _, size = task.partition(":")
    if not size.isdigit():
        raise ValueError(f"the dummy backend cannot answer task {task!r}")
    return kind, int(size)


class DummyBackend(Backend):
    """Seeded random answers in text; see the module docstring."""

    in_process = True

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return self.answer(requests)

    def answer_arrays(self, mode: str, size: int, seeds: np.ndarray) -> np.ndarray:
        """The policy's answers as arrays (the ``fast`` option's path, no text): (T,) actions
        for ``pure``, (T, size) strategies for ``mixed``; the same draws as the text answers."""
        seeds = np.asarray(seeds, dtype=np.uint64)
        if mode == "pure":
            return np.minimum((uniforms(seeds, 1)[:, 0] * size).astype(np.int64), size - 1)
        if mode == "mixed":
            weights = -np.log(uniforms(seeds, size))
            return weights / weights.sum(axis=1, keepdims=True)
        raise ValueError(f"the dummy's array path has no mode {mode!r}")

    def answer(self, requests: Sequence[Request]) -> list[Response]:
        """Synchronous :meth:`generate`."""
        out: list[Response | None] = [None] * len(requests)
        groups: dict[tuple[str, int], list[int]] = {}
        for i, req in enumerate(requests):
            groups.setdefault(parse_task(req.task), []).append(i)
        completion = self.spec.style == "completion"
        for (kind, size), idx in groups.items():
            seeds = np.fromiter((requests[i].seed for i in idx), dtype=np.uint64, count=len(idx))
            if kind == "matrix.pure":
                actions = np.minimum((uniforms(seeds, 1)[:, 0] * size).astype(np.int64), size - 1)
                fmt = " {}" if completion else "Action: {}"
                texts = [fmt.format(a + 1) for a in actions.tolist()]
            elif kind == "matrix.logprob":
                # The next-token distribution over the labels (95% of the mass; the rest on a
                # newline), and its most likely label as the text.
                weights = -np.log(uniforms(seeds, size))
                probs = weights / weights.sum(axis=1, keepdims=True)
                for i, row in zip(idx, probs.tolist(), strict=True):
                    top = tuple((f" {k + 1}", float(np.log(0.95 * p))) for k, p in enumerate(row))
                    best = int(np.argmax(row)) + 1
                    out[i] = Response(text=f" {best}", logprobs=top + (("\n", float(np.log(0.05))),))
                continue
            elif kind == "matrix.mixed":
                weights = -np.log(uniforms(seeds, size))
                probs = weights / weights.sum(axis=1, keepdims=True)
                fmt = " {}]" if completion else "Strategy: [{}]"
                texts = [fmt.format(", ".join(f"{p:.4f}" for p in row)) for row in probs.tolist()]
            else:  # a family the dummy knows nothing of: an integer from 0 to size
                picks = np.minimum((uniforms(seeds, 1)[:, 0] * (size + 1)).astype(np.int64), size)
                texts = [f"Answer: {k}" for k in picks.tolist()]
            for i, text in zip(idx, texts, strict=True):
                out[i] = Response(text=text)
        return out  # type: ignore[return-value]
