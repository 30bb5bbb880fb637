"""The column helper every table schema uses (no imports of the families, so family schema
modules can use it without an import cycle)."""

from __future__ import annotations

import pyarrow as pa


def column(name: str, type_: pa.DataType, description: str, nullable: bool = True) -> pa.Field:
    """A schema field with its description in the metadata (required: docs are built from it)."""
    if not description:
        raise ValueError(f"column {name!r} needs a description")
    return pa.field(name, type_, nullable=nullable, metadata={"description": description})
