"""The column helper every table schema uses (no imports of the families, so family schema
modules can use it without an import cycle)."""

from __future__ import annotations

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


def derived_expression(field: pa.Field) -> str | None:
    """The SQL expression of a derived column, None for a stored one."""
    value = (field.metadata or {}).get(b"derived")
    return value.decode() if value else None
