"""Rows of a table for store tests (shared by tests/store; not a test module)."""

from __future__ import annotations

import pyarrow as pa

from distbench.games.matrix.schema import TRIALS


def trials_rows(shard_id: str, n: int) -> pa.Table:
    """``n`` rows of the ``trials`` table of shard ``shard_id``, every column filled."""
    cols = {}
    for field in TRIALS:
        if field.name == "shard_id":
            cols[field.name] = [shard_id] * n
        elif field.name == "trial":
            cols[field.name] = list(range(n))
        elif pa.types.is_string(field.type):
            cols[field.name] = [f"{field.name}{i}" if not field.nullable else None for i in range(n)]
        elif pa.types.is_boolean(field.type):
            cols[field.name] = [False] * n
        elif pa.types.is_integer(field.type):
            cols[field.name] = [0 if not field.nullable else None] * n
        elif pa.types.is_list(field.type):
            cols[field.name] = [None] * n
        else:
            cols[field.name] = [1.0] * n
    return pa.table(cols, schema=TRIALS)
