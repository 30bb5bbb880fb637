"""The run summary of the negotiation family: one record per (player, mode, lang).

The SQL is ``queries/negotiation_summary.sql``, shipped inside the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# The SQL lives once, in the packaged ``queries/negotiation_summary.sql`` (also usable with
# ``distbench query --file negotiation_summary``).
SUMMARY_SQL = (Path(__file__).resolve().parents[2] / "queries" / "negotiation_summary.sql").read_text(
    encoding="utf-8"
)


def negotiation_summary(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """Summary records from a DuckDB connection with an ``episodes`` view (all in SQL, so
    ``offload``, a run's place for numeric work, is not used)."""
    result = con.execute(SUMMARY_SQL)
    names = [d[0] for d in result.description]
    rows = result.fetchall()
    return [dict(zip(names, row, strict=True)) for row in rows]
