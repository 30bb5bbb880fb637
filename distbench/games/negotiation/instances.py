"""Seeded negotiation instances (GAMES.md, section 2).

An instance is a function of ``(seed, index)`` alone: its generator is
``numpy.random.default_rng(SeedSequence([seed, *INSTANCE_KEY, index]))``, so instance ``k`` of a
seed is the same whatever shard, mode or language asks for it (the same instances are played in
every mode and language, which makes them comparable).

Sampling, repeated until every constraint holds (rejection sampling):

1. the number of types ``T`` uniformly in 3..5, the number of items ``N`` uniformly in 5..8;
2. the ``T`` item words: distinct, uniformly among the 100 of the list;
3. the counts: a uniform composition of ``N`` into ``T`` parts >= 1 (``T - 1`` distinct cut
   points among ``N - 1``);
4. each player's values: uniform among all non-negative integer vectors ``v`` with
   ``sum(v * counts) == 10`` (enumerated exactly; counts with no such vector, e.g. (3, 3, 3),
   are rejected and everything is drawn again);
5. the pair is kept when every type has non-zero value to at least one player and at least one
   type has non-zero value to both; otherwise everything is drawn again.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from distbench.games.negotiation.items import NUM_ITEMS, item_words

MIN_TYPES, MAX_TYPES = 3, 5
MIN_ITEMS, MAX_ITEMS = 5, 8
TOTAL_VALUE = 10
INSTANCE_KEY: tuple[int, ...] = (0x6E65_6700, 2)  # "neg", version 2 of the sampler
MAX_DRAWS = 10_000


@dataclass(frozen=True, slots=True)
class Instance:
    """One negotiation instance.

    Attributes:
        instance_id: Stable id ``neg/s<seed>/i<index>``.
        seed: Instance-stream seed.
        index: Index in the stream.
        items: (T,) indices into the item word lists.
        counts: (T,) number of items of each type (each >= 1).
        values_a: (T,) value of one item of each type to the player in seat a.
        values_b: (T,) the same for seat b.
        words: (T,) ``(singular, plural)`` of each type, for an instance read from a file with
            its own item words (:mod:`.clembench`); then ``items`` is empty and the words are
            the same in every language. None for a generated instance (the words come from
            the language's list).
    """

    instance_id: str
    seed: int
    index: int
    items: tuple[int, ...]
    counts: tuple[int, ...]
    values_a: tuple[int, ...]
    values_b: tuple[int, ...]
    words: tuple[tuple[str, str], ...] | None = None

    @property
    def num_types(self) -> int:
        return len(self.counts)

    def values(self, seat: str) -> tuple[int, ...]:
        """The values of seat ``"a"`` or ``"b"``."""
        return self.values_a if seat == "a" else self.values_b

    def forms(self, lang: str) -> tuple[tuple[str, str], ...]:
        """``(singular, plural)`` of each type, as the players of a ``lang`` game read them."""
        if self.words is not None:
            return self.words
        words = item_words(lang)
        return tuple(words[i] for i in self.items)

    def name(self, lang: str, k: int, amount: int) -> str:
        """The word for ``amount`` items of type ``k``: singular for exactly 1, plural otherwise."""
        singular, plural = self.forms(lang)[k]
        return singular if amount == 1 else plural


@cache
def value_vectors(counts: tuple[int, ...]) -> np.ndarray:
    """Every non-negative integer vector ``v`` with ``sum(v * counts) == 10``: (K, T) int64."""
    out: list[tuple[int, ...]] = []

    def extend(prefix: tuple[int, ...], left: int) -> None:
        k = len(prefix)
        if k == len(counts):
            if left == 0:
                out.append(prefix)
            return
        for v in range(left // counts[k] + 1):
            extend(prefix + (v,), left - v * counts[k])

    extend((), TOTAL_VALUE)
    return np.array(out, dtype=np.int64).reshape(len(out), len(counts))


def violations(inst: Instance) -> list[str]:
    """Every GAMES.md constraint the instance breaks (empty when it is valid)."""
    out: list[str] = []
    t = inst.num_types
    if not MIN_TYPES <= t <= MAX_TYPES:
        out.append(f"{t} item types, not {MIN_TYPES}-{MAX_TYPES}")
    if not (len(inst.items) == len(inst.values_a) == len(inst.values_b) == t):
        out.append("items, counts and values have different lengths")
        return out
    if len(set(inst.items)) != t or not all(0 <= i < NUM_ITEMS for i in inst.items):
        out.append("item types are not distinct words of the list")
    if any(c < 1 for c in inst.counts):
        out.append("a type has no item")
    if not MIN_ITEMS <= sum(inst.counts) <= MAX_ITEMS:
        out.append(f"{sum(inst.counts)} items, not {MIN_ITEMS}-{MAX_ITEMS}")
    for seat, values in (("a", inst.values_a), ("b", inst.values_b)):
        if any(v < 0 for v in values):
            out.append(f"player {seat} has a negative value")
        total = sum(v * c for v, c in zip(values, inst.counts, strict=True))
        if total != TOTAL_VALUE:
            out.append(f"player {seat}'s items are worth {total}, not {TOTAL_VALUE}")
    pairs = list(zip(inst.values_a, inst.values_b, strict=True))
    if any(a == 0 and b == 0 for a, b in pairs):
        out.append("a type is worth nothing to both players")
    if not any(a > 0 and b > 0 for a, b in pairs):
        out.append("no type is worth something to both players")
    return out


def _acceptable(va: np.ndarray, vb: np.ndarray) -> bool:
    return bool(((va > 0) | (vb > 0)).all() and ((va > 0) & (vb > 0)).any())


def generate_instance(seed: int, index: int) -> Instance:
    """Instance ``index`` of the stream ``seed`` (see the module docstring).

    Raises:
        ValueError: seed or index is negative.
    """
    if seed < 0 or index < 0:
        raise ValueError(f"seed and index must be non-negative, got {seed}, {index}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, *INSTANCE_KEY, index]))
    for _ in range(MAX_DRAWS):
        t = int(rng.integers(MIN_TYPES, MAX_TYPES + 1))
        n = int(rng.integers(MIN_ITEMS, MAX_ITEMS + 1))
        items = rng.choice(NUM_ITEMS, size=t, replace=False)
        cuts = np.sort(rng.choice(n - 1, size=t - 1, replace=False)) + 1
        counts = tuple(int(c) for c in np.diff(np.concatenate(([0], cuts, [n]))))
        vectors = value_vectors(counts)
        if len(vectors) == 0:
            continue
        va = vectors[int(rng.integers(len(vectors)))]
        vb = vectors[int(rng.integers(len(vectors)))]
        if not _acceptable(va, vb):
            continue
        return Instance(
            instance_id=f"neg/s{seed}/i{index}",
            seed=seed,
            index=index,
            items=tuple(int(i) for i in items),
            counts=counts,
            values_a=tuple(int(v) for v in va),
            values_b=tuple(int(v) for v in vb),
        )
    raise RuntimeError(f"no valid instance after {MAX_DRAWS} draws (seed {seed}, index {index})")


def generate_instances(seed: int, start: int, stop: int) -> list[Instance]:
    """Instances ``start`` .. ``stop - 1`` of the stream ``seed``."""
    return [generate_instance(seed, k) for k in range(start, stop)]
