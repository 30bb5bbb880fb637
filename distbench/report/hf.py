"""A run as a Hugging Face dataset folder (``distbench export --format hf``, issue 36).

The folder holds one Parquet file per table of the run (``data/<table>.parquet``, written by
DuckDB from the store's views: the rows the store reads) and a dataset card, ``README.md``,
whose YAML header is what the Hub reads: a config per table with its ``data_files`` (one
``train`` split) and its features (from the Parquet file's own Arrow schema, so they match),
the license and the citation. The card's text gives the run's plan, models, families, harness
hash and headline results. ``datasets.load_dataset(folder, "<table>")`` reads it offline; the
push to the Hub is one ``huggingface_hub`` command (the docs' export page).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from distbench import __version__
from distbench.store.catalog import open_run
from distbench.store.harness import harness_line, run_harness
from distbench.store.writer import committed_files, read_json

LICENSE = "mit"
"""The card's license: distbench's own (change it in the card before pushing data under
another one, e.g. when a provider's terms cover the models' answers)."""

CITATION = """@software{distbench,
  title  = {distbench: language models playing strategic games, at any scale},
  author = {{The distbench authors}},
  year   = {2026},
  note   = {version %s}
}"""

HEADLINE_ROWS = 20
"""Rows of the summary shown in the card (the rest are in ``summary.json``)."""


def _feature(t: pa.DataType) -> Any:
    """The Hub's YAML feature of an Arrow type (``dtype``, ``list`` or ``struct``)."""
    if pa.types.is_dictionary(t):
        return _feature(t.value_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return {"list": _feature(t.value_type)}
    if pa.types.is_struct(t):
        return {"struct": [{"name": f.name, **_feature(f.type)} for f in t]}
    names = {"double": "float64", "float": "float32", "halffloat": "float16"}
    return {"dtype": names.get(str(t), str(t))}


def _yaml(value: Any, indent: int = 0) -> str:
    """A small YAML writer for the card's header (dicts, lists, scalars; strings as JSON,
    which YAML reads)."""
    pad = " " * indent
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{key}:\n{_yaml(item, indent + 2)}")
            else:
                lines.append(f"{pad}{key}: {_scalar(item)}")
        return "\n".join(lines)
    if isinstance(value, list):
        lines = []
        for item in value:
            text = _yaml(item, indent + 2) if isinstance(item, (dict, list)) else \
                " " * (indent + 2) + _scalar(item)
            lines.append(f"{pad}- {text.lstrip()}")
        return "\n".join(lines)
    return pad + _scalar(value)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if value is None or value == [] or value == {}:
        return "[]" if value == [] else ("{}" if value == {} else "null")
    return json.dumps(str(value))


def export_hf(run_dir: Path, out_dir: Path, main_table: str | None = None) -> list[Path]:
    """Writes the dataset folder of ``run_dir`` into ``out_dir``; returns the files written.
    ``main_table``: the family's main table, the dataset's default config (when the run has
    it)."""
    tables = sorted(committed_files(run_dir))
    data = out_dir / "data"
    data.mkdir(parents=True, exist_ok=True)
    con = open_run(run_dir)
    written: list[Path] = []
    configs, infos, counts = [], [], {}
    try:
        for table in tables:
            path = data / f"{table}.parquet"
            con.execute(f"COPY (SELECT * FROM \"{table}\") TO '{path}' (FORMAT parquet)")
            written.append(path)
            schema = pq.read_schema(path)
            counts[table] = pq.ParquetFile(path).metadata.num_rows
            configs.append({"config_name": table,
                            "data_files": [{"split": "train",
                                            "path": f"data/{table}.parquet"}]})
            infos.append({"config_name": table,
                          "features": [{"name": f.name, **_feature(f.type)} for f in schema]})
    finally:
        con.close()
    manifest = _read(run_dir / "manifest.json")
    summary = _read(run_dir / "summary.json")
    for config in configs:
        if config["config_name"] == main_table:
            config["default"] = True
    header = {"license": LICENSE, "pretty_name": f"distbench run {run_dir.name}",
              "tags": ["distbench", "game-theory", "llm-evaluation"],
              "configs": configs, "dataset_info": infos}
    card = out_dir / "README.md"
    card.write_text("---\n" + _yaml(header) + "\n---\n\n"
                    + _body(run_dir, manifest, summary, counts), encoding="utf-8")
    written.append(card)
    if summary:
        path = out_dir / "summary.json"
        path.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        written.append(path)
    return written


def _read(path: Path) -> dict[str, Any]:
    try:
        value = read_json(path)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _body(run_dir: Path, manifest: dict[str, Any], summary: dict[str, Any],
          counts: dict[str, int]) -> str:
    hashes = run_harness(run_dir)
    mixed = harness_line(hashes)
    config = manifest.get("config") or {}
    families = sorted({str(manifest.get("family") or "")} - {""})
    models = _models(manifest, config)
    lines = [
        f"# distbench run `{run_dir.name}`", "",
        f"Results of a distbench run "
        f"(distbench {__version__}): every table of the run as one configuration, read with "
        f"`datasets.load_dataset(\"<this folder or repo>\", \"<table>\")`.", "",
        "## Harness", "",
        ("Harness hash: " + ", ".join(f"`{h}`" for h in hashes) if hashes
         else "Harness hash: none (a run made before harness hashes)") + ". It hashes the "
        "family's prompt templates, parser and scorer sources and its version: numbers with "
        "different hashes were made by different harnesses. Every row has it in the "
        "`harness_hash` column.", "",
    ]
    if mixed:
        lines += [f"**Note:** {mixed}.", ""]
    lines += [
        "## Plan", "",
        f"- families: {', '.join(families) or 'unknown'}",
        f"- models: {', '.join(models) or 'unknown'}",
        f"- seeds: {json.dumps(manifest.get('seeds') or config.get('seeds'), default=str)}",
        f"- started: {manifest.get('started_at', 'unknown')}, state: "
        f"{manifest.get('state', 'unknown')}",
        "", "```json", json.dumps(config, indent=2, ensure_ascii=False, default=str), "```", "",
        "## Tables", "",
        "| config | rows |", "|---|---:|",
        *[f"| `{t}` | {n:,} |" for t, n in counts.items()], "",
        "## Headline results", "",
        *_headline(summary), "",
        "## Citation", "", "```bibtex", CITATION % __version__, "```", "",
    ]
    return "\n".join(lines)


def _models(manifest: dict[str, Any], config: dict[str, Any]) -> list[str]:
    models = [f"{m.get('provider')}:{m.get('model')}" if isinstance(m, dict) else str(m)
              for m in manifest.get("models") or []]
    llm = config.get("llm")
    if not models and isinstance(llm, dict) and llm.get("model"):
        models = [f"{llm.get('provider')}:{llm['model']}"]
    return models


def _headline(summary: dict[str, Any]) -> list[str]:
    """The summary's groups as a Markdown table (scalar columns; the first rows)."""
    groups = [g for g in summary.get("groups") or [] if isinstance(g, dict)]
    if not groups:
        return ["No summary (the run did not finish)."]
    keys = [k for k in groups[0] if all(not isinstance(g.get(k), (dict, list)) for g in groups)]
    out = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for g in groups[:HEADLINE_ROWS]:
        out.append("| " + " | ".join(_cell(g.get(k)) for k in keys) + " |")
    if len(groups) > HEADLINE_ROWS:
        out.append(f"\n{len(groups) - HEADLINE_ROWS} more rows in `summary.json`.")
    return out


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value).replace("|", "\\|")
