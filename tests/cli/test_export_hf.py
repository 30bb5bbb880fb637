"""``distbench export --format hf``: a Hugging Face dataset folder that ``datasets`` (the PyPI
package, in the test extra) loads offline, each table's rows equal to the store's; the card's
YAML header names a config per table with its features, the license; its text the harness hash
(issue 36)."""

from __future__ import annotations

import json

import pytest
from cli_server import distbench

from distbench.store.catalog import open_run
from distbench.store.harness import run_harness
from distbench.store.writer import committed_files

datasets = pytest.importorskip("datasets")


def _rows(records: list[dict]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in records)


def test_export_hf_loads_with_datasets_and_rows_equal_the_store(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    out = distbench("run", "--family", "negotiation", "--llm-type", "scripted:fair",
                    "--num-games", "2", "--run-id", "r", "--no-parallel", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    run = tmp_path / "results" / "r"
    folder = tmp_path / "dataset"
    out = distbench("export", "--format", "hf", str(run), "--out", str(folder), cwd=tmp_path)
    assert out.returncode == 0, out.stderr

    card = (folder / "README.md").read_text()
    header = card.split("---\n")[1]
    (harness,) = run_harness(run)
    assert f"Harness hash: `{harness}`" in card
    assert 'license: "mit"' in header and "dataset_info:" in header and "@software" in card
    con = open_run(run)
    try:
        tables = sorted(committed_files(run))
        assert {"episodes", "turns"} <= set(tables)
        assert "default: true" in header.split('config_name: "episodes"')[1].split("config_name")[0]
        for table in tables:
            assert f'config_name: "{table}"' in header
            ds = datasets.load_dataset(str(folder), table, split="train",
                                       cache_dir=str(tmp_path / "cache"))
            cur = con.execute(f'SELECT * FROM "{table}"')
            names = [d[0] for d in cur.description]
            store = [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
            assert ds.column_names == names
            assert len(ds) == len(store) > 0
            assert _rows(ds.to_list()) == _rows(store), table
            assert set(ds["harness_hash"]) == {harness}
    finally:
        con.close()


def test_export_hf_of_no_run_is_one_line(tmp_path):
    out = distbench("export", "--format", "hf", str(tmp_path / "nothing"), "--out",
                    str(tmp_path / "d"), cwd=tmp_path)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
