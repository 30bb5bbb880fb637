"""``--execution batch``: a run's model requests sent through the provider's batch API.

For families whose shards know every request before any answer (single-turn: matrix), the
driver, before it plays any shard:

1. **records** the requests: it plays each shard to be run with a backend that only notes the
   requests (:class:`RecordingBackend`), in this process;
2. **submits** the requests not yet covered by a batch of the run, split to the limits
   (``max_requests``, ``max_bytes`` per batch), one JSONL upload and one batch each, and
   writes each batch's record ``<run_dir>/batches/<n>.json`` (batch id, input file, the
   requests' ids; temp file + rename) as soon as the batch exists, before anything is waited
   on;
3. **polls** every batch of the records until it is done, and keeps its output and error
   lines beside its record (``<n>.out.jsonl``, written whole);
4. sends the requests a batch did not answer (expired, cancelled, failed lines) **again,
   once**, in new batches (recorded the same way, ``round`` 1); a request that fails twice is
   a failed call;
5. **plays** each shard with a backend that answers from those lines
   (:class:`ReplayBackend`): the rows are those of the same run played live, each call with
   its ``batch_id``.

A driver killed at any moment resumes from the records: a batch recorded is polled, never
submitted again; only requests no record covers are submitted. (A kill in the instant between
the provider creating a batch and the record's rename loses that batch's id: its requests are
submitted again, once.)

Multi-turn families ask a turn's requests only after the previous turn's answers, so the
recording pass cannot see them: a plan says whether its shards can be batched
(``RunPlan.batchable``), and one that cannot is refused in one line (live only).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from distbench.engine.worker import in_process, shard_backend, shard_specs
from distbench.errors import UserError
from distbench.games.registry import get_family
from distbench.llm.base import Backend, BackendSpec, Request, Response
from distbench.llm.cache import cache_key
from distbench.store.writer import write_json

log = logging.getLogger(__name__)

__all__ = ["BatchLimits", "ReplayBackend", "RecordingBackend", "check_batchable",
           "run_batches"]

FOLDER = "batches"


class RecordingBackend(Backend):
    """Notes every request asked and answers each with a failed response (the recording pass
    only collects requests; its rows are thrown away)."""

    def __init__(self, spec: BackendSpec, sink: dict[str, tuple[BackendSpec, Request]]) -> None:
        super().__init__(spec)
        self.sink = sink

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        for req in requests:
            self.sink.setdefault(cache_key(self.spec, req), (self.spec, req))
        return [Response(text=None, status="failed", error="recording") for _ in requests]


class ReplayBackend(Backend):
    """Answers from the lines of the run's batches (``answers``: request id -> (batch id,
    output or error line))."""

    def __init__(self, spec: BackendSpec, answers: dict[str, tuple[str, dict[str, Any]]]) -> None:
        super().__init__(spec)
        self.answers = answers

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        from distbench.llm.batch import response_from

        out = []
        for req in requests:
            batch_id, line = self.answers.get(cache_key(self.spec, req), (None, None))
            out.append(response_from(self.spec, req, line, batch_id or "none"))
        return out


class BatchLimits:
    """How batches are cut and waited for.

    Args:
        max_requests: Requests per batch at most (OpenAI: 50,000).
        max_bytes: Bytes of the JSONL file per batch at most (OpenAI: 200 MB).
        poll_s: First wait between polls, doubling to ``poll_max_s``.
        poll_max_s: Longest wait between polls.
    """

    def __init__(self, max_requests: int = 50_000, max_bytes: int = 200 * 1024 * 1024,
                 poll_s: float = 0.2, poll_max_s: float = 30.0) -> None:
        self.max_requests, self.max_bytes = max_requests, max_bytes
        self.poll_s, self.poll_max_s = poll_s, poll_max_s


def _records(run_dir: Path) -> list[dict[str, Any]]:
    folder = run_dir / FOLDER
    if not folder.is_dir():
        return []
    out = [json.loads(p.read_text("utf-8")) for p in folder.glob("[0-9]*.json")]
    return sorted(out, key=lambda r: r["number"])


def _save(run_dir: Path, record: dict[str, Any]) -> None:
    write_json(run_dir / FOLDER / f"{record['number']:06d}.json", record)


def _chunks(items: list[tuple[str, str, dict[str, Any]]], limits: BatchLimits
            ) -> list[list[tuple[str, str, dict[str, Any]]]]:
    """``items`` (id, path, line) cut into batches of one endpoint each, within the limits."""
    out: list[list[tuple[str, str, dict[str, Any]]]] = []
    by_path: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for item in items:
        by_path.setdefault(item[1], []).append(item)
    for group in by_path.values():
        chunk: list[tuple[str, str, dict[str, Any]]] = []
        size = 0
        for item in group:
            length = len(json.dumps(item[2], ensure_ascii=False).encode()) + 1
            if chunk and (len(chunk) >= limits.max_requests or size + length > limits.max_bytes):
                out.append(chunk)
                chunk, size = [], 0
            chunk.append(item)
            size += length
        if chunk:
            out.append(chunk)
    return out


def check_batchable(plan: Any) -> None:
    """Refuses (one line) a plan whose shards cannot be batched (multi-turn families)."""
    if not getattr(plan, "batchable", False):
        names = sorted({s.family for s in plan.shards})
        raise UserError(f"--execution batch: {', '.join(names)} shards ask a turn's requests "
                        "only after the previous answers (multi-turn), so they run live only; "
                        "use --execution live")


def run_batches(shards: Sequence[Any], run_dir: Path, limits: BatchLimits,
                on_stage: Callable[[str], None] | None = None,
                client_factory: Callable[[BackendSpec], Any] | None = None,
                ) -> dict[BackendSpec, Backend]:
    """Records, submits, waits for and reads the batches of ``shards``' requests (see the
    module docstring); returns the backends that play the shards from the answers."""
    from distbench.llm.batch import TERMINAL, BatchClient, batch_line

    say = on_stage or (lambda message: log.info("%s", message))
    make_client = client_factory or BatchClient
    wanted: dict[str, tuple[BackendSpec, Request]] = {}
    backends: dict[BackendSpec, Any] = {}
    for shard in shards:  # 1. record
        for spec in shard_specs(shard):
            if spec not in backends:
                backends[spec] = (shard_backend(spec, in_ray=False) if in_process(spec)
                                  else RecordingBackend(spec, wanted))
        get_family(shard.family).run_shard(shard, {s: backends[s] for s in shard_specs(shard)})
    (run_dir / FOLDER).mkdir(parents=True, exist_ok=True)
    records = _records(run_dir)
    clients: dict[BackendSpec, Any] = {}
    specs = {_spec_key(spec): spec for spec, _ in wanted.values()}

    def client(spec: BackendSpec) -> Any:
        if spec not in clients:
            clients[spec] = make_client(spec)
        return clients[spec]

    def submit(ids: list[str], round_: int) -> None:
        items = []
        for key in ids:
            spec, req = wanted[key]
            items.append(batch_line(spec, req))
        by_spec: dict[str, list] = {}
        for item in items:
            by_spec.setdefault(_spec_key(wanted[item[0]][0]), []).append(item)
        for skey, group in by_spec.items():
            spec = specs[skey]
            for chunk in _chunks(group, limits):
                file_id = client(spec).upload([line for _, _, line in chunk])
                batch = client(spec).create(file_id, chunk[0][1],
                                            metadata={"distbench_run": run_dir.name})
                record = {"number": len(records), "batch_id": batch["id"],
                          "input_file_id": file_id, "spec": skey, "round": round_,
                          "endpoint": chunk[0][1], "ids": [k for k, _, _ in chunk],
                          "status": batch.get("status"), "submitted_at": time.time()}
                _save(run_dir, record)  # before anything is waited on
                records.append(record)
                say(f"submitted batch {batch['id']} ({len(chunk):,} requests, round "
                    f"{round_})")

    def wait() -> None:  # 3. poll every batch not read yet
        delay = limits.poll_s
        while True:
            open_ = [r for r in records if not (run_dir / FOLDER /
                                                f"{r['number']:06d}.out.jsonl").exists()]
            if not open_:
                return
            for record in open_:
                spec = specs[record["spec"]]
                batch = client(spec).retrieve(record["batch_id"])
                status = batch.get("status")
                if status not in TERMINAL:
                    continue
                lines = (client(spec).lines(batch.get("output_file_id"))
                         + client(spec).lines(batch.get("error_file_id")))
                data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
                path = run_dir / FOLDER / f"{record['number']:06d}.out.jsonl"
                tmp = path.with_suffix(".tmp")
                tmp.write_text(data, "utf-8")
                tmp.replace(path)
                record["status"] = status
                _save(run_dir, record)
                say(f"batch {record['batch_id']} {status}: "
                    f"{sum(1 for line in lines if _ok(line)):,} of {len(record['ids']):,} "
                    "answered")
            time.sleep(delay)
            delay = min(limits.poll_max_s, delay * 2)

    covered = {key for r in records for key in r["ids"]}
    todo = [key for key in wanted if key not in covered]  # 2. submit what no batch covers
    if todo:
        submit(todo, 0)
    wait()
    answers = _answers(run_dir, records)
    rounds: dict[str, int] = {}
    for record in records:
        for key in record["ids"]:
            rounds[key] = max(rounds.get(key, 0), record["round"])
    again = [key for key in wanted
             if not _ok(answers.get(key, (None, {}))[1]) and rounds.get(key, 0) == 0]
    if again:  # 4. once
        say(f"{len(again):,} request(s) unanswered by their batch: sent again, once")
        submit(again, 1)
        wait()
        answers = _answers(run_dir, records)
    for c in clients.values():
        c.close()
    return {spec: (backends[spec] if in_process(spec) else ReplayBackend(spec, answers))
            for spec in backends}


def _spec_key(spec: BackendSpec) -> str:
    return json.dumps(spec.identity(), sort_keys=True, default=str)


def _ok(line: dict[str, Any] | None) -> bool:
    answer = (line or {}).get("response")
    return isinstance(answer, dict) and answer.get("status_code") == 200


def _answers(run_dir: Path, records: list[dict[str, Any]]) -> dict[str, tuple[str, dict]]:
    """Request id -> (batch id, its line): a later answer that is ok wins over an error."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for record in records:
        path = run_dir / FOLDER / f"{record['number']:06d}.out.jsonl"
        if not path.exists():
            continue
        for raw in path.read_text("utf-8").splitlines():
            line = json.loads(raw)
            key = line["custom_id"]
            if key in out and _ok(out[key][1]):
                continue
            out[key] = (record["batch_id"], line)
    for record in records:  # a request its batch gave no line for: that batch's failure
        for key in record["ids"]:
            out.setdefault(key, (record["batch_id"], None))  # type: ignore[arg-type]
    return out
