"""Instances: every GAMES.md constraint on 10,000 draws, reproducibility, the word lists."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from distbench.games.negotiation.instances import (
    Instance,
    generate_instance,
    generate_instances,
    value_vectors,
    violations,
)
from distbench.games.negotiation.items import LANGS, NUM_ITEMS, item_name, item_words


def test_ten_thousand_instances_satisfy_every_constraint():
    instances = generate_instances(123, 0, 10_000)
    bad = [(i.instance_id, violations(i)) for i in instances if violations(i)]
    assert bad == []
    # Spot-check the constraints directly, independent of violations().
    for inst in instances:
        c, va, vb = map(np.array, (inst.counts, inst.values_a, inst.values_b))
        assert 3 <= len(c) <= 5 and 5 <= c.sum() <= 8 and (c >= 1).all()
        assert (va >= 0).all() and (vb >= 0).all()
        assert (va * c).sum() == 10 and (vb * c).sum() == 10
        assert ((va > 0) | (vb > 0)).all() and ((va > 0) & (vb > 0)).any()
        assert len(set(inst.items)) == len(c)
    # Every size and total actually occurs.
    assert {len(i.counts) for i in instances} == {3, 4, 5}
    assert {sum(i.counts) for i in instances} == {5, 6, 7, 8}


def test_an_instance_depends_only_on_seed_and_index():
    assert generate_instance(5, 17) == generate_instance(5, 17)
    assert generate_instances(5, 10, 20)[7] == generate_instance(5, 17)
    assert generate_instance(5, 17) != generate_instance(6, 17)


def test_violations_names_each_broken_rule():
    bad = Instance("x", 0, 0, (0, 1, 2), (1, 1, 1), (10, 0, 0), (0, 10, 0))
    found = " ".join(violations(bad))
    assert "3 items" in found and "worth nothing to both" in found and "no type is worth" in found


def test_value_vectors_are_exactly_the_solutions():
    counts = (2, 1, 3)
    got = {tuple(v) for v in value_vectors(counts).tolist()}
    want = {v for v in itertools.product(range(11), repeat=3)
            if sum(a * b for a, b in zip(v, counts, strict=True)) == 10}
    assert got == want
    assert len(value_vectors((3, 3, 3))) == 0


@pytest.mark.parametrize("lang", LANGS)
def test_word_lists_have_100_items_with_distinct_forms(lang):
    words = item_words(lang)
    assert len(words) == NUM_ITEMS
    owner: dict[str, int] = {}
    for k, (singular, plural) in enumerate(words):
        assert singular.strip() and plural.strip() and " " not in singular + plural
        for form in {singular.casefold(), plural.casefold()}:
            assert owner.setdefault(form, k) == k, f"{form!r} names items {owner[form]} and {k}"
    assert item_name(lang, 0, 1) == words[0][0] and item_name(lang, 0, 0) == words[0][1]


def test_unknown_language_is_refused():
    with pytest.raises(ValueError, match="lang must be one of"):
        item_words("fr")
