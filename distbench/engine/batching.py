"""``--execution batch``: a run's model requests sent through the provider's batch API.

For families whose shards know every request before any answer (single-turn: matrix), the
driver, before it plays any shard:

1. **records** the requests: it plays each shard to be run with a backend that only notes the
   requests (:class:`RecordingBackend`), in this process;
2. **submits** the requests not yet covered by a batch of the run, split to the limits
   (``max_requests``, ``max_bytes`` per batch), one JSONL upload and one batch each (Anthropic
   Message Batches: the requests in the create call; the client is the spec's,
   :func:`~distbench.llm.batch.client_for`), and
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

With a budget (``--max-cost``, ``--max-tokens-total``) the work goes in waves
(:class:`BatchRun`): a wave submits the requests of the shards the budget admits (in plan
order, each at its estimate at most, at the batch price; a shard not admitted has no request
submitted), waits for them, plays and commits its shards; the next wave admits on the real
spend; the run stops, ``budget_reached``, when a wave admits nothing.

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
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from distbench.engine.worker import execute_shard, in_process, shard_backend, shard_specs
from distbench.errors import UserError
from distbench.games.registry import get_family
from distbench.llm.base import Backend, BackendSpec, Request, Response
from distbench.llm.cache import cache_key
from distbench.store.writer import write_json

log = logging.getLogger(__name__)

__all__ = ["BatchLimits", "BatchRun", "ReplayBackend", "RecordingBackend", "check_batchable",
           "run_batches"]

FOLDER = "batches"


class RecordingBackend(Backend):
    """Notes every request asked and answers each with a failed response (the recording pass
    only collects requests; its rows are thrown away)."""

    def __init__(self, spec: BackendSpec, sink: dict[str, tuple[BackendSpec, Request]]) -> None:
        super().__init__(spec)
        self.sink = sink
        self.keys: list[str] = []  # the ids asked, in order (the caller empties it per shard)

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        for req in requests:
            key = cache_key(self.spec, req)
            self.sink.setdefault(key, (self.spec, req))
            self.keys.append(key)
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


class BatchRun:
    """The batches of a run's shards: recorded once, then fetched wave by wave.

    Without a budget one wave holds every shard. With one (:class:`~distbench.engine.budget.
    Budget`), a wave holds the shards :meth:`Budget.admit` lets through in plan order (their
    estimates at most, at the batch price), after every shard whose requests a batch of the
    run already holds (a resume: paid for, or being, so never refused); a shard not admitted
    has none of its requests submitted. The wave's batches are waited for, its shards played
    and committed (the driver counts their real spend), and the next wave admits on that; the
    run stops when a wave admits nothing (:meth:`left`: the shards not played, for
    ``budget_reached``).

    Args:
        shards: The shards to run (not committed), in plan order.
        run_dir: The run folder (its ``batches/`` records).
        limits: How batches are cut and waited for.
        on_stage: Called with a line for each batch submitted or finished.
        client_factory: ``BackendSpec -> BatchClient`` (tests).
        budget: A :class:`~distbench.engine.budget.Budget`, or None.
    """

    def __init__(self, shards: Sequence[Any], run_dir: Path, limits: BatchLimits,
                 on_stage: Callable[[str], None] | None = None,
                 client_factory: Callable[[BackendSpec], Any] | None = None,
                 budget: Any = None) -> None:
        self.run_dir, self.limits, self.budget = run_dir, limits, budget
        self.say = on_stage or (lambda message: log.info("%s", message))
        self.make_client = client_factory
        self.wanted: dict[str, tuple[BackendSpec, Request]] = {}
        self.backends: dict[BackendSpec, Any] = {}
        self.keys: dict[str, list[str]] = {}  # shard id -> its requests' ids
        self._left = list(shards)
        self._played: set[str] = set()
        for shard in shards:  # 1. record
            for spec in shard_specs(shard):
                if spec not in self.backends:
                    self.backends[spec] = (shard_backend(spec, in_ray=False) if in_process(spec)
                                           else RecordingBackend(spec, self.wanted))
            recorders = [b for b in self.backends.values() if isinstance(b, RecordingBackend)]
            for recorder in recorders:
                recorder.keys = []
            get_family(shard.family).run_shard(shard, {s: self.backends[s]
                                                       for s in shard_specs(shard)})
            self.keys[shard.shard_id] = list(dict.fromkeys(
                key for recorder in recorders for key in recorder.keys))
        (run_dir / FOLDER).mkdir(parents=True, exist_ok=True)
        self.records = _records(run_dir)
        self.specs = {_spec_key(spec): spec for spec, _ in self.wanted.values()}
        self.clients: dict[BackendSpec, Any] = {}

    def __len__(self) -> int:
        return len(self._left) - len(self._played)

    def left(self) -> list[Any]:
        """The shards not played (yet), in plan order."""
        return [s for s in self._left if s.shard_id not in self._played]

    def results(self) -> Iterator[tuple[Any, Any]]:
        """(shard, result) of every shard played, wave by wave (see the class)."""
        try:
            while len(self):
                wave = self._admit()
                if not wave:
                    return
                replay = self._fetch(wave)
                for shard in wave:
                    self._played.add(shard.shard_id)
                    yield shard, execute_shard(shard, {s: replay[s] for s in shard_specs(shard)})
        finally:
            for c in self.clients.values():
                c.close()
            self.clients.clear()

    def _admit(self) -> list[Any]:
        """The next wave: the shards a recorded batch covers, then those the budget admits."""
        covered = {key for r in self.records for key in r["ids"]}
        left = self.left()
        held = {s.shard_id for s in left if any(k in covered for k in self.keys[s.shard_id])}
        if self.budget is not None:
            for shard in left:  # already submitted: paid for, or being
                if shard.shard_id in held:
                    self.budget.admit(shard, force=True)
        wave = set(held)
        for shard in left:
            if shard.shard_id in held:
                continue
            if self.budget is not None and not self.budget.admit(shard):
                break
            wave.add(shard.shard_id)
        return [s for s in left if s.shard_id in wave]

    def _client(self, spec: BackendSpec) -> Any:
        from distbench.llm.batch import client_for

        if spec not in self.clients:
            self.clients[spec] = (self.make_client or client_for)(spec)
        return self.clients[spec]

    def _submit(self, ids: list[str], round_: int) -> None:
        from distbench.llm.batch import batch_line

        by_spec: dict[str, list] = {}
        for key in ids:
            spec, req = self.wanted[key]
            by_spec.setdefault(_spec_key(spec), []).append(batch_line(spec, req))
        for skey, group in by_spec.items():
            spec = self.specs[skey]
            for chunk in _chunks(group, self.limits):
                file_id, batch = self._client(spec).submit(
                    [line for _, _, line in chunk], chunk[0][1],
                    metadata={"distbench_run": self.run_dir.name})
                record = {"number": len(self.records), "batch_id": batch["id"],
                          "input_file_id": file_id, "spec": skey, "round": round_,
                          "endpoint": chunk[0][1], "ids": [k for k, _, _ in chunk],
                          "status": batch.get("status"), "submitted_at": time.time()}
                _save(self.run_dir, record)  # before anything is waited on
                self.records.append(record)
                self.say(f"submitted batch {batch['id']} ({len(chunk):,} requests, round "
                         f"{round_})")

    def _wait(self) -> None:  # 3. poll every batch not read yet
        from distbench.llm.batch import TERMINAL

        folder = self.run_dir / FOLDER
        delay = self.limits.poll_s
        while True:
            open_ = [r for r in self.records
                     if not (folder / f"{r['number']:06d}.out.jsonl").exists()]
            if not open_:
                return
            for record in open_:
                client = self._client(self.specs[record["spec"]])
                batch = client.retrieve(record["batch_id"])
                status = batch.get("status")
                if status not in TERMINAL:
                    continue
                lines = client.results(batch)
                data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
                path = folder / f"{record['number']:06d}.out.jsonl"
                tmp = path.with_suffix(".tmp")
                tmp.write_text(data, "utf-8")
                tmp.replace(path)
                record["status"] = status
                _save(self.run_dir, record)
                self.say(f"batch {record['batch_id']} {status}: "
                         f"{sum(1 for line in lines if _ok(line)):,} of "
                         f"{len(record['ids']):,} answered")
            time.sleep(delay)
            delay = min(self.limits.poll_max_s, delay * 2)

    def _fetch(self, wave: list[Any]) -> dict[BackendSpec, Backend]:
        """Submits the wave's requests no batch covers, waits, sends the unanswered ones
        again once; returns the backends that play the wave from the answers."""
        wanted = [key for s in wave for key in self.keys[s.shard_id]]
        covered = {key for r in self.records for key in r["ids"]}
        todo = [key for key in wanted if key not in covered]  # 2. submit what none covers
        if todo:
            self._submit(todo, 0)
        self._wait()
        answers = _answers(self.run_dir, self.records)
        rounds: dict[str, int] = {}
        for record in self.records:
            for key in record["ids"]:
                rounds[key] = max(rounds.get(key, 0), record["round"])
        again = [key for key in wanted
                 if not _ok(answers.get(key, (None, {}))[1]) and rounds.get(key, 0) == 0]
        if again:  # 4. once
            self.say(f"{len(again):,} request(s) unanswered by their batch: sent again, once")
            self._submit(again, 1)
            self._wait()
            answers = _answers(self.run_dir, self.records)
        return {spec: (backend if in_process(spec) else ReplayBackend(spec, answers))
                for spec, backend in self.backends.items()}


def run_batches(shards: Sequence[Any], run_dir: Path, limits: BatchLimits,
                on_stage: Callable[[str], None] | None = None,
                client_factory: Callable[[BackendSpec], Any] | None = None,
                ) -> dict[BackendSpec, Backend]:
    """Records, submits, waits for and reads the batches of all of ``shards``' requests
    (one wave of a :class:`BatchRun` without a budget); returns the backends that play the
    shards from the answers."""
    run = BatchRun(shards, run_dir, limits, on_stage, client_factory)
    try:
        return run._fetch(list(shards))
    finally:
        for c in run.clients.values():
            c.close()


def _spec_key(spec: BackendSpec) -> str:
    return json.dumps(spec.identity(), sort_keys=True, default=str)


def _ok(line: dict[str, Any] | None) -> bool:
    from distbench.llm.batch import line_ok  # OpenAI output lines and Anthropic results

    return line_ok(line)


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
