"""The suite tables of a sweep run: the seed tool's tables from the shipped SQL, and
``suite_metadata.json``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from distbench.report.sql import render, resolve_query_file, run_sql


def write_suite_tables(run_dir: Path, out_dir: Path) -> list[Path]:
    """Writes the suite tables (SQL in ``queries/``) and ``suite_metadata.json``."""
    from distbench.store.writer import read_json

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, fmts in (("big_table_all_runs", ("csv",)), ("big_table_aggregated", ("csv", "md")),
                       ("leaderboard", ("csv",)), ("tier_gradient", ("csv",))):
        sql = resolve_query_file(name).read_text(encoding="utf-8")
        columns, rows = run_sql(run_dir, sql)
        for fmt in fmts:
            path = out_dir / f"{name}.{fmt}"
            if fmt == "csv":
                with open(path, "w", newline="", encoding="utf-8") as fh:
                    writer = csv.writer(fh)
                    writer.writerow(columns)
                    writer.writerows(rows)
            else:
                path.write_text(render(columns, rows, "markdown") + "\n", encoding="utf-8")
            written.append(path)
    manifest = read_json(run_dir / "manifest.json") if (run_dir / "manifest.json").exists() else {}
    sweep_cfg = manifest.get("config", {}).get("sweep", {})
    tiers: dict[str, dict[str, list[str]]] = {}
    for m in sweep_cfg.get("models", []):
        tiers.setdefault(m["provider_name"], {}).setdefault(m["tier"], []).append(m["model"])
    metadata = {
        "run_id": run_dir.name,
        "providers": sorted(tiers),
        "seeds": sweep_cfg.get("seeds"),
        "temperature": sweep_cfg.get("temperature"),
        "buckets": sweep_cfg.get("buckets"),
        "modes": sweep_cfg.get("modes"),
        "games_per_bucket": sweep_cfg.get("games_per_bucket"),
        "trials_per_game": sweep_cfg.get("trials_per_game"),
        "tier_definitions": tiers,
        "versions": manifest.get("versions"),
    }
    path = out_dir / "suite_metadata.json"
    path.write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
    written.append(path)
    return written

