"""The table texts (:func:`distbench.store.fields.table`): the parser's rules, and every built-in
schema written as a table text equal, field for field (name, type, nullability, description,
derived expression), to the ``pa.schema([column(...), ...])`` lists it replaced."""

from __future__ import annotations

import hashlib
import importlib
import json

import pyarrow as pa
import pytest

from distbench.store.fields import column, row_key, table

# Digests of the schemas as they were written before the table texts (main at 8fe9432). A
# deliberate schema change updates its line here.
_BEFORE = {
    "games.bimatrix.BIMATRIX_DUELS": "93cab31149c43ccb",
    "games.bimatrix.BIMATRIX_GAMES": "6d88a62213c9abc9",
    "games.bimatrix.BIMATRIX_TRIALS": "84d6d5fb6780be65",
    "games.fog.FOG_EVENTS": "67fe4f3f924300eb",
    "games.fog.FOG_GAMES": "59d2e0d0bac7f1a4",
    "games.fog.FOG_REPORTS": "163220d2707a7b0c",
    "games.gama.GAMA_GAMES": "d6375429b791d012",
    "games.gama.GAMA_MOVES": "81380a03db1aeeb1",
    "games.gama.GAMA_PLAYERS": "fd54c86fac67d1df",
    "games.gama.GAMA_ROUNDS": "32431d4d6cdb72b8",
    "games.matrix.GAMES": "c94067e92933b311",
    "games.matrix.GAME_SCORES": "1ba5489f2e7da7e0",
    "games.matrix.PERTURB_TRIALS": "6428ad5ad7679725",
    "games.matrix.TRIALS": "2879ff34e54b3282",
    "games.negotiation.EPISODES": "c798b6eaf7e7598d",
    "games.negotiation.STORED_EPISODES": "f835d0f9f16812d8",
    "games.negotiation.TURNS": "0dc6066ed2e7af21",
    "games.openspiel.MATCHES": "350dd4b69464e729",
    "games.openspiel.MOVES": "3b102fd3efcea64f",
    "games.openspiel.POLICIES": "06748352c21766f2",
    "games.repeated.REPEATED_DUELS": "47919c389cc32f3c",
    "games.repeated.REPEATED_MATCHES": "828e42389cd8639b",
    "games.repeated.ROUNDS": "47cef3ba7cea50c4",
    "store.CALLS": "3e16aab65df8be42",
    "store.PAIRINGS": "a971261e7b5cf8d3",
    "store.RATINGS": "771ea9d8594cd2fb",
}


def _digest(schema: pa.Schema) -> str:
    cols = [[f.name, str(f.type), f.nullable,
             {k.decode(): v.decode() for k, v in (f.metadata or {}).items()}] for f in schema]
    return hashlib.sha256(json.dumps(cols, sort_keys=True).encode()).hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(_BEFORE))
def test_schema_is_unchanged_by_its_table_text(name):
    module, attr = name.rsplit(".", 1)
    schema = getattr(importlib.import_module(f"distbench.{module}.schema"), attr)
    assert _digest(schema) == _BEFORE[name]


def test_table_text_reads_types_nullability_continuations_and_derived():
    schema = table("""
a     string               not null  First column.
bb    list<list<float64>>            A long description
                                     that goes on.
c     int32                not null  Derived.
""", head=row_key("x"), derived={"c": "a || 'x'"})
    assert schema.names == ["run_id", "shard_id", "family", "a", "bb", "c"]
    assert schema.field("a") == column("a", pa.string(), "First column.", False)
    assert schema.field("bb").type == pa.list_(pa.list_(pa.float64()))
    assert schema.field("bb").nullable
    assert schema.field("bb").metadata[b"description"] == b"A long description that goes on."
    assert schema.field("c").metadata[b"derived"] == b"a || 'x'"


@pytest.mark.parametrize("text, derived, message", [
    ("a  float32  not null  X.", None, "unknown column type 'float32'"),
    ("a  string  not null  X.", {"b": "1"}, "unknown columns: \\['b'\\]"),
    ("a  string  not null", None, "needs a description"),
])
def test_table_text_errors_name_the_problem(text, derived, message):
    with pytest.raises(ValueError, match=message):
        table(text, derived=derived)
