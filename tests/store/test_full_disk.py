"""A full disk: the run's files and the response cache say which path and what to do, in one
line, and nothing committed before is lost."""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import subprocess
import sys

import pytest
from table_rows import trials_rows

from distbench.llm.base import Response
from distbench.llm.cache import CacheUnavailable, ResponseCache
from distbench.mockserver import ServerConfig, start_server
from distbench.store import writer as writer_module
from distbench.store.writer import RunWriteError, RunWriter


def test_a_full_disk_names_the_file_and_keeps_what_was_committed(tmp_path, monkeypatch):
    run = RunWriter(tmp_path)
    run.commit_shard("s1", {"trials": ("s1", trials_rows("s1", 2))})

    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer_module.os, "fsync", no_space)
    with pytest.raises(RunWriteError) as info:
        run.commit_shard("s2", {"trials": ("s2", trials_rows("s2", 2))})
    message = str(info.value)
    assert str(tmp_path / "trials" / "s2.parquet") in message
    assert "No space left on device" in message and "resume" in message
    assert "\n" not in message
    monkeypatch.undo()
    assert run.committed() == {"s1"}
    assert not [p for p in (tmp_path / "trials").iterdir() if p.name != "s1.parquet"]


def test_a_cache_that_cannot_be_written_warns_once_and_the_run_goes_on(tmp_path, caplog):
    cache = ResponseCache(tmp_path / "c.sqlite")

    class Full:
        def executemany(self, *a):
            raise sqlite3.OperationalError("database or disk is full")

        def execute(self, *a):
            raise sqlite3.OperationalError("database or disk is full")

        def commit(self):
            pass

        def close(self):
            pass

    cache._con = Full()
    with caplog.at_level(logging.WARNING):
        cache.put_many([("k", Response(text="Action: 1"))])
        cache.put_many([("k2", Response(text="Action: 2"))])
        assert cache.get_many(["k"]) == {}
    warnings = [r for r in caplog.records if "response cache" in r.getMessage()]
    assert len(warnings) == 1 and str(tmp_path / "c.sqlite") in warnings[0].getMessage()


def test_a_cache_that_cannot_be_opened_is_one_line_before_any_work(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    with pytest.raises(CacheUnavailable, match="response cache at .*not-a-folder"):
        ResponseCache(blocker / "responses.sqlite")
    with start_server(ServerConfig()) as server:
        out = subprocess.run(
            [sys.executable, "-m", "distbench", "run", "--llm-type", "llamacpp", "--base-url",
             server.url, "--num-games", "1", "--num-trials", "1", "--run-id", "r"],
            cwd=tmp_path, capture_output=True, text=True, timeout=120,
            env={**os.environ, "RAY_AUTH_MODE": "disabled", "DISTBENCH_CACHE_DIR": str(blocker)})
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the response cache at ")
    assert "--no-cache" in lines[0]
    assert not (tmp_path / "results" / "r").exists()


@pytest.mark.parametrize("damage", ["garbage", "torn"])
def test_a_damaged_cache_is_set_aside_with_a_warning_and_a_new_one_serves(tmp_path, caplog, damage):
    """Found at open (not a database) the file is set aside and a new one serves this run;
    found in use (a page overwritten) the run goes on uncached and the next run starts anew."""
    path = tmp_path / "responses.sqlite"
    cache = ResponseCache(path)
    cache.put_many([(f"k{i}", Response(text="Action: 1")) for i in range(200)])
    cache.close()
    data = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"x" * 8192)
    else:
        path.write_bytes(data[:4096] + b"\xff" * 4096 + data[8192:])
    with caplog.at_level(logging.WARNING):
        cache = ResponseCache(path)
        if damage == "torn":
            cache.get_many([f"k{i}" for i in range(200)])
            cache.put_many([("k1", Response(text="Action: 2"))])
            cache.close()
            cache = ResponseCache(path)
        assert cache.get_many(["k1"]) == {}
        cache.put_many([("k1", Response(text="Action: 2"))])
        assert cache.get_many(["k1"])["k1"].text == "Action: 2"
    cache.close()
    aside = (tmp_path / "responses.sqlite.damaged").read_bytes()
    assert aside[:100] == (b"x" * 100 if damage == "garbage" else data[:100])
    warned = [r.getMessage() for r in caplog.records if "response cache" in r.getMessage()]
    assert len(warned) == 1 and "damaged" in warned[0] and "moved to" in warned[0], warned
