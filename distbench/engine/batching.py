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
submitted again; only requests no record covers are submitted. A create whose answer was lost
(a 502 from a gateway, a kill before the record's rename) is not paid twice: a
``<tag>.pending`` note is written before each create and the batch carries the tag in its
``metadata``, so the provider's list of batches is searched for it before creating again
(OpenAI; a Message Batch has no metadata: there the note's time and the requests' count pick
it from the list, and its results' ``custom_id`` s confirm it once it has ended).

A batch the provider no longer knows (404) is closed with no answer and its requests are sent
again, once; a batch still running past its ``expires_at`` (at most
``BatchLimits.max_wait_s`` after submission) is cancelled and, if it still does not end, closed
``expiry_grace_s`` later; status lines say what is waited for. Every result line is read as
untrusted as a live body (:func:`~distbench.llm.batch.one_line_per_request`); the lines are
kept as ASCII JSON. ``--retry-failed`` sends the requests no batch answered once more; the
batch answers go into the response cache so a live resume does not ask them again.

Multi-turn families ask a turn's requests only after the previous turn's answers, so the
recording pass cannot see them: a plan says whether its shards can be batched
(``RunPlan.batchable``), and one that cannot is refused in one line (live only).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from distbench.engine.worker import execute_shard, in_process, shard_backend, shard_specs
from distbench.errors import UserError
from distbench.games.registry import get_family
from distbench.llm.base import Backend, BackendSpec, Request, Response, redact, redact_url
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
        self._remember(requests, out)
        return out

    def _remember(self, requests: Sequence[Request], responses: list[Response]) -> None:
        """Puts the batch's answers in the response cache (unless the model's ``cache`` is
        off), so a live resume (``--retry-failed --execution live``) asks only the requests
        no batch answered."""
        from distbench.llm.cache import ResponseCache
        from distbench.llm.endpoint import default_cache_path

        if not self.spec.option("cache", True):
            return
        items = [(cache_key(self.spec, q), r) for q, r in zip(requests, responses, strict=True)
                 if r.status == "ok"]
        if not items:
            return
        cache = ResponseCache(self.spec.option("cache_path") or default_cache_path())
        try:
            cache.put_many(items)
        finally:
            cache.close()


class BatchLimits:
    """How batches are cut and waited for.

    Args:
        max_requests: Requests per batch at most (OpenAI: 50,000).
        max_bytes: Bytes of the JSONL file per batch at most (OpenAI: 200 MB).
        poll_s: First wait between polls, doubling to ``poll_max_s``.
        poll_max_s: Longest wait between polls.
        max_wait_s: Seconds a batch is waited for at most from its submission when the
            provider states no ``expires_at`` (25 hours: OpenAI's window is 24).
        expiry_grace_s: Seconds past a batch's end (``expires_at``, else ``max_wait_s``)
            before a batch still not finished is cancelled and its requests counted
            unanswered (sent again once, as for an expired batch).
        status_s: Seconds between the status lines while batches are waited for.
    """

    def __init__(self, max_requests: int = 50_000, max_bytes: int = 200 * 1024 * 1024,
                 poll_s: float = 0.2, poll_max_s: float = 30.0,
                 max_wait_s: float = 25 * 3600.0, expiry_grace_s: float = 600.0,
                 status_s: float = 60.0) -> None:
        self.max_requests, self.max_bytes = max_requests, max_bytes
        self.poll_s, self.poll_max_s = poll_s, poll_max_s
        self.max_wait_s, self.expiry_grace_s = max_wait_s, expiry_grace_s
        self.status_s = status_s


def _records(run_dir: Path) -> list[dict[str, Any]]:
    """The run's batch records; one written before the spec was redacted is rewritten
    redacted."""
    folder = run_dir / FOLDER
    if not folder.is_dir():
        return []
    out = []
    for path in folder.glob("[0-9]*.json"):
        record = json.loads(path.read_text("utf-8"))
        if redact(record) != record:
            record = redact(record)
            _save(run_dir, record)
        out.append(record)
    return sorted(out, key=lambda r: r["number"])


def _save(run_dir: Path, record: dict[str, Any]) -> None:
    write_json(run_dir / FOLDER / f"{record['number']:06d}.json", record)


def _chunk_tag(ids: Sequence[str]) -> str:
    """The tag of a batch's requests in the metadata it is created with: how a batch whose
    create answer was lost is found again (:meth:`BatchRun._submit`)."""
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()[:32]


def _pending_note(run_dir: Path, ids: Sequence[str]) -> Path:
    """The note that a batch of ``ids`` is being created (not named like a record)."""
    return run_dir / FOLDER / f"{_chunk_tag(ids)}.pending"


def _note_time(pending: Path) -> float | None:
    """When the create a pending note stands for was attempted (None: a note without it)."""
    try:
        since = json.loads(pending.read_text("utf-8")).get("since")
    except (AttributeError, OSError, ValueError):
        return None
    return float(since) if isinstance(since, (int, float)) else None


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
        retry_failed: Requests whose batches failed them (their once-more included) are
            sent once more in this run (``--retry-failed``).
    """

    def __init__(self, shards: Sequence[Any], run_dir: Path, limits: BatchLimits,
                 on_stage: Callable[[str], None] | None = None,
                 client_factory: Callable[[BackendSpec], Any] | None = None,
                 budget: Any = None, retry_failed: bool = False) -> None:
        self.run_dir, self.limits, self.budget = run_dir, limits, budget
        self.retry_failed = retry_failed
        self._retried: set[str] = set()
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
                chunk_ids = [k for k, _, _ in chunk]
                file_id, batch = self._create(spec, chunk_ids, [line for _, _, line in chunk],
                                              chunk[0][1])
                record = {"number": len(self.records), "batch_id": batch["id"],
                          "input_file_id": file_id, "spec": skey, "round": round_,
                          "endpoint": chunk[0][1], "ids": chunk_ids,
                          "status": batch.get("status"), "submitted_at": time.time()}
                _save(self.run_dir, record)  # before anything is waited on
                _pending_note(self.run_dir, chunk_ids).unlink(missing_ok=True)
                self.records.append(record)
                self.say(f"submitted batch {batch['id']} ({len(chunk):,} requests, round "
                         f"{round_})")

    def _create(self, spec: BackendSpec, ids: list[str], lines: list[dict[str, Any]],
                endpoint: str) -> tuple[str | None, dict[str, Any]]:
        """(input file id, batch) of a new batch of ``lines``, or of the batch an earlier
        attempt created although its answer was lost: a ``<tag>.pending`` note
        (:func:`_pending_note`) is written before each create, and while it stands the
        provider's list of batches is searched for the batch tagged so (its ``metadata``)
        before creating one, so a resume never pays twice for one batch."""
        from distbench.llm.batch import BatchError

        client = self._client(spec)
        tag = _chunk_tag(ids)
        metadata = {"distbench_run": self.run_dir.name[:500], "distbench_batch": tag}
        pending = _pending_note(self.run_dir, ids)
        if pending.exists():
            found = self._find(client, metadata, ids, _note_time(pending))
            if found is not None:
                return found.get("input_file_id"), found
        since = time.time()
        write_json(pending, {"tag": tag, "requests": len(ids), "since": since})
        try:
            return client.submit(lines, endpoint, metadata=metadata)
        except BatchError:
            found = self._find(client, metadata, ids, since)  # created, its answer lost?
            if found is None:
                raise
            return found.get("input_file_id"), found

    def _find(self, client: Any, metadata: dict[str, str], ids: list[str],
              since: float | None) -> dict[str, Any] | None:
        from distbench.llm.batch import BatchError

        recorded = {r["batch_id"] for r in self.records}
        try:
            found = client.find(metadata, ids=ids, since=since, exclude=recorded)
        except BatchError as exc:
            self.say(f"could not look up a batch whose creation was not confirmed ({exc}): "
                     "creating it")
            return None
        if found is not None:
            self.say(f"batch {found['id']} was created although its answer was lost: it is "
                     "polled, not created again")
        return found

    def _wait(self) -> None:  # 3. poll every batch not read yet
        from distbench.llm.batch import TERMINAL, BatchError, one_line_per_request

        folder = self.run_dir / FOLDER
        delay = self.limits.poll_s
        shown = time.monotonic()
        while True:
            open_ = [r for r in self.records
                     if not (folder / f"{r['number']:06d}.out.jsonl").exists()]
            if not open_:
                return
            waiting = []
            for record in open_:
                client = self._client(self.specs[record["spec"]])
                try:
                    batch = client.retrieve(record["batch_id"])
                except BatchError as exc:
                    if exc.status != 404:
                        raise
                    self._close(record, [], "not_found",
                                f"batch {record['batch_id']} is unknown to the provider "
                                "(HTTP 404)")
                    continue
                status = batch.get("status")
                if status not in TERMINAL:
                    if not self._overdue(record, batch, client):
                        waiting.append(_state(record, batch))
                    continue
                lines = one_line_per_request(client.results(batch), record["ids"],
                                             record["batch_id"])
                error = record.get("error") or (
                    _batch_errors(batch) if status in ("failed", "expired") else None)
                self._close(record, lines, status, error)
            if waiting and time.monotonic() - shown >= self.limits.status_s:
                shown = time.monotonic()
                more = f" and {len(waiting) - 3} more" if len(waiting) > 3 else ""
                self.say(f"waiting for {len(waiting)} batch(es): {'; '.join(waiting[:3])}{more}")
            if not waiting:
                continue
            time.sleep(delay)
            delay = min(self.limits.poll_max_s, delay * 2)

    def _close(self, record: dict[str, Any], lines: list[dict[str, Any]], status: str,
               error: str | None) -> None:
        """Keeps a finished batch's lines beside its record (``error``: why requests it gave
        no line for failed, for their rows)."""
        path = self.run_dir / FOLDER / f"{record['number']:06d}.out.jsonl"
        data = "".join(json.dumps(line) + "\n" for line in lines)  # ASCII: lone surrogates too
        tmp = path.with_suffix(".tmp")
        tmp.write_text(data, "utf-8")
        tmp.replace(path)
        record["status"] = status
        if error:
            record["error"] = redact_url(error)[:500]
        _save(self.run_dir, record)
        self.say(f"batch {record['batch_id']} {status}: "
                 f"{sum(1 for line in lines if _ok(line)):,} of "
                 f"{len(record['ids']):,} answered" + (f" ({record['error']})" if error else ""))

    def _overdue(self, record: dict[str, Any], batch: dict[str, Any], client: Any) -> bool:
        """Whether a batch not finished is past its end (its ``expires_at``, at most
        ``max_wait_s`` after its submission): it is cancelled then, and once
        ``expiry_grace_s`` more have passed it is closed with no answer (True)."""
        from distbench.llm.batch import BatchError

        end = record["submitted_at"] + self.limits.max_wait_s
        expires = _seconds(batch.get("expires_at"))
        if expires is not None:
            end = min(end, expires)
        now = time.time()
        if now < end:
            return False
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(end))
        error = f"batch {record['batch_id']} not finished by the end of its window ({when})"
        if not record.get("cancel_sent"):
            record["cancel_sent"], record["error"] = True, error
            _save(self.run_dir, record)
            self.say(f"{error}: cancelled; its unanswered requests count as failed")
            try:
                client.cancel(record["batch_id"])
            except BatchError as exc:
                self.say(f"cancelling batch {record['batch_id']} failed: {exc}")
        if now < end + self.limits.expiry_grace_s:
            return False
        self._close(record, [], "overdue", error)
        return True

    def _fetch(self, wave: list[Any]) -> dict[BackendSpec, Backend]:
        """Submits the wave's requests no batch covers, waits, sends the unanswered ones
        again once (with ``retry_failed``, once more those that failed before this run);
        returns the backends that play the wave from the answers."""
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
        again = [key for key in dict.fromkeys(wanted)
                 if not _ok(answers.get(key, (None, {}))[1])
                 and (rounds.get(key, 0) == 0
                      or (self.retry_failed and key not in self._retried))]
        if again:  # 4. once
            self._retried.update(again)
            self.say(f"{len(again):,} request(s) unanswered by their batch: sent again, once")
            self._submit(again, 1 + max(rounds.get(key, 0) for key in again))
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
    """The model of a batch record, redacted as every file is (a base URL's password and
    query values are ``***``)."""
    return json.dumps(redact(spec.identity()), sort_keys=True, default=str)


def _state(record: dict[str, Any], batch: dict[str, Any]) -> str:
    """``batch_1 in_progress, 40 of 100 done, 12 min``: a batch waited for, for the status
    line."""
    counts = batch.get("request_counts")
    done = ""
    if isinstance(counts, dict):
        total = counts.get("total", len(record["ids"]))
        finished = counts.get("completed", 0)
        if isinstance(finished, int) and isinstance(total, int):
            done = f", {finished:,} of {total:,} done"
    minutes = (time.time() - record["submitted_at"]) / 60
    return f"{record['batch_id']} {str(batch.get('status'))[:20]}{done}, {minutes:.0f} min"


def _seconds(value: Any) -> float | None:
    """A batch's ``expires_at`` as Unix seconds (OpenAI: seconds; Anthropic: an ISO time);
    None when absent or not readable."""
    import math
    from datetime import datetime

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _batch_errors(batch: dict[str, Any]) -> str | None:
    """The errors a failed batch states (OpenAI's ``errors.data``: code, message, line),
    short, for the rows of its requests."""
    errors = batch.get("errors")
    data = errors.get("data") if isinstance(errors, dict) else None
    if not isinstance(data, list) or not data:
        return f"batch {batch.get('id')} {str(batch.get('status'))[:20]}"
    parts = []
    for item in data[:3]:
        if isinstance(item, dict):
            line = f" (line {item['line']})" if isinstance(item.get("line"), int) else ""
            parts.append(f"{str(item.get('code') or 'error')[:40]}: "
                         f"{str(item.get('message') or '')[:150]}{line}")
    return f"batch {batch.get('id')} {str(batch.get('status'))[:20]}: " + "; ".join(parts)


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
    from distbench.llm.batch import unusable_line

    for record in records:  # a request its batch gave no line for: that batch's failure
        for key in record["ids"]:
            if key not in out and record.get("error"):
                out[key] = (record["batch_id"], unusable_line(key, record["error"]))
            out.setdefault(key, (record["batch_id"], None))  # type: ignore[arg-type]
    return out
