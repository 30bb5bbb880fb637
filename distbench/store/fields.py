"""The column helpers every table schema uses (no imports of the families, so family schema
modules can use them without an import cycle): :func:`column` for one field, :func:`table` for
a whole table written as a text, one column a line."""

from __future__ import annotations

import logging

import pyarrow as pa


def column(
    name: str,
    type_: pa.DataType,
    description: str,
    nullable: bool = True,
    *,
    derived: str | None = None,
) -> pa.Field:
    """A schema field with its description in the metadata (required: docs are built from it).

    ``derived`` is a DuckDB SQL expression over the table's stored columns: the column is then
    not written to the Parquet files; the catalog's view computes it (it is a pure function of
    other columns, so storing it would only cost space and encoding time).
    """
    if not description:
        raise ValueError(f"column {name!r} needs a description")
    metadata = {"description": description}
    if derived:
        metadata["derived"] = derived
    return pa.field(name, type_, nullable=nullable, metadata=metadata)


def row_key(family: str | None = None) -> list[pa.Field]:
    """The columns that start a family's table: ``run_id`` and ``shard_id`` (the shard that
    produced the row), then ``family`` when ``family`` is given (the table says its family)."""
    fields = [column("run_id", pa.string(), "Run id.", False),
              column("shard_id", pa.string(), "Shard that produced the row.", False)]
    if family is not None:
        fields.append(column("family", pa.string(), f"Game family: '{family}'.", False))
    return fields


def derived_expression(field: pa.Field) -> str | None:
    """The SQL expression of a derived column, None for a stored one."""
    value = (field.metadata or {}).get(b"derived")
    return value.decode() if value else None


class Rows:
    """A table's rows collected column by column, checked against its schema: every row
    gives exactly the schema's columns (a missing or unknown key is a ValueError naming it),
    and :meth:`table` builds the Arrow table with the schema's types."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.columns: dict[str, list] = {name: [] for name in schema.names}
        self._names = frozenset(schema.names)

    def add(self, row: dict) -> None:
        """Appends one row (a mapping of column name -> value)."""
        if row.keys() != self._names:
            missing = sorted(self._names - row.keys())
            unknown = sorted(row.keys() - self._names)
            raise ValueError(f"row does not match the table: missing {missing}, unknown {unknown}")
        for name, values in self.columns.items():
            values.append(row[name])

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()), []))

    def table(self) -> pa.Table:
        """The Arrow table of the rows added."""
        return pa.table(self.columns, schema=self.schema)


def warm_arrow() -> None:
    """Loads what Arrow loads the first time it converts a Python list (pandas, to test
    whether the list is one of its objects: about half a second, which the first table built
    would otherwise wait for), and its compute functions."""
    try:
        import pyarrow.compute  # noqa: F401 - loaded for later

        pa.array([0])
    except Exception as exc:  # noqa: BLE001 - whoever converts later loads it and reports why
        logging.getLogger(__name__).debug("Arrow's conversions did not load ahead: %s", exc)


_SCALARS: dict[str, pa.DataType] = {
    "string": pa.string(), "int32": pa.int32(), "int64": pa.int64(),
    "float64": pa.float64(), "bool": pa.bool_(),
}
_NOT_NULL = "not null"


def _type(spec: str) -> pa.DataType:
    """An Arrow type from its name in a table text: a scalar or ``list<...>`` of one."""
    if spec.startswith("list<") and spec.endswith(">"):
        return pa.list_(_type(spec[5:-1]))
    try:
        return _SCALARS[spec]
    except KeyError:
        raise ValueError(f"unknown column type {spec!r}") from None


def table(
    text: str,
    *,
    head: list[pa.Field] = (),  # type: ignore[assignment]
    derived: dict[str, str] | None = None,
) -> pa.Schema:
    """A schema from a table text, one column a line: ``name  type  [not null]  description``.

    The type is ``string``, ``int32``, ``int64``, ``float64``, ``bool`` or ``list<type>``; a
    line that starts with white space goes on the description above it (joined with one space).
    ``head`` are the fields that come first (:func:`row_key`); ``derived`` maps a column name to
    its SQL expression (:func:`column`).
    """
    entries: list[list[str]] = []
    for line in text.strip("\n").splitlines():
        if not line.strip():
            continue
        if line[0].isspace():
            entries[-1][-1] += " " + line.strip()
            continue
        name, type_name, rest = line.split(None, 2)
        entries.append([name, type_name, rest.strip()])
    derived = dict(derived or {})
    fields = list(head)
    for name, type_name, rest in entries:
        nullable = not rest.startswith(_NOT_NULL)
        description = rest if nullable else rest[len(_NOT_NULL):].strip()
        fields.append(column(name, _type(type_name), description, nullable,
                             derived=derived.pop(name, None)))
    if derived:
        raise ValueError(f"derived expressions for unknown columns: {sorted(derived)}")
    return pa.schema(fields)
