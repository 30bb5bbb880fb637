"""The mock server's OpenAI Batch API: files and batches, kept on disk so a restart loses
nothing.

Routes (served by :mod:`distbench.mockserver.http`): ``POST /v1/files`` (multipart upload,
``purpose=batch``, a JSONL file), ``GET /v1/files/{id}`` and ``GET /v1/files/{id}/content``,
``POST /v1/batches`` (``input_file_id``, ``endpoint``, ``completion_window``),
``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``.

Each input line is ``{"custom_id", "method": "POST", "url", "body"}`` with ``url`` the batch's
endpoint; the file is checked whole when the batch is created (400 naming the line otherwise).
A batch is ``in_progress`` until ``batch_delay`` seconds after its creation; the first
``GET`` after that finishes it: every line is answered by the same code as a live call (so a
batch answer is byte for byte the live answer to the same request), its output file holds one
line ``{"id", "custom_id", "response": {"status_code": 200, "request_id", "body"}, "error":
null}`` per answered request, in input order, and its error file one line per request not
answered: ``{"id", "custom_id", "response": null, "error": {"code", "message"}}``.

Faults (``ServerConfig``), for the batches created first (``batch_faulty``: how many; all by
default), so a client's second batch of the same requests can succeed:
- ``batch_fail``: that fraction of a batch's lines (``round(f * n)``, chosen by a seeded
  permutation) go to the error file, code ``server_error``; the batch is still ``completed``.
- ``batch_expire``: the batch ends ``expired`` with its first half of lines answered and the
  rest in the error file, code ``batch_expired`` (as OpenAI reports unfinished requests).
A cancelled batch (before it finished) ends ``cancelled`` with nothing answered.
- ``batch_faults`` (:data:`~distbench.mockserver.faults.BATCH_FAULTS`): a create answered 502
  although the batch exists, a batch forgotten (404), one ended ``failed`` with ``errors``, one
  that never ends (cancel ends it), result downloads answered 500 twice, a hostile first result
  line (lone surrogate, deep nesting, 10 MB, a conflicting or repeated duplicate).
- ``usage``: every answer's ``usage`` misreported (zero, null, absent, negative, huge); the
  batch's own ``usage`` (its bill) counts the true tokens.
``GET /v1/batches`` lists the batches, newest first (``limit``, ``after``, ``has_more``), with
the ``metadata`` each was created with.

Anthropic Message Batches, beside them (the same store, numbering and faults):
``POST /v1/messages/batches`` with ``{"requests": [{"custom_id", "params"}]}`` (no upload; at
most :data:`MESSAGES_MAX_REQUESTS` requests, the body at most :data:`MAX_UPLOAD` bytes; each
``custom_id`` 1 to 64 of ``[A-Za-z0-9_-]``, distinct), ``GET /v1/messages/batches/{id}``
(``processing_status`` ``in_progress`` / ``canceling`` / ``ended``, ``request_counts``,
``results_url`` once ended), ``GET /v1/messages/batches/{id}/results`` (JSONL, one line per
request in input order: ``{"custom_id", "result": {"type": "succeeded", "message"}}``, or
``errored`` with an ``error`` (the failed fraction, ``api_error``), ``expired`` (the second half
of an expiring batch), ``canceled``), ``POST /v1/messages/batches/{id}/cancel`` (before it
ended: ``canceling``, then ``ended`` with every request ``canceled``), ``GET /v1/messages/batches`` (newest first,
``limit``, ``after_id`` / ``before_id``, ``has_more``, ``first_id``, ``last_id``: no metadata, as
Anthropic has none).

State: ``<state_dir>/files/<id>`` (content) and ``<id>.json`` (metadata), and
``<state_dir>/batches/<id>.json``, each written to a temporary file and renamed. A server
started again on the same folder serves the same files and batches, and finishes pending
batches on their original schedule (wall-clock times are stored).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import HTTP
from pathlib import Path
from typing import Any

import numpy as np

from distbench.mockserver.faults import misreport_usage
from distbench.mockserver.wire import BadRequest

__all__ = ["BatchStore", "CreateLost", "ENDPOINTS", "MESSAGES_MAX_REQUESTS", "NotFound",
           "ServerFault", "parse_upload"]

ENDPOINTS = ("/v1/chat/completions", "/v1/completions")
MAX_UPLOAD = 256 * 1024 * 1024
"""Largest upload the mock takes (OpenAI's batch input limit is 200 MB; Anthropic's Message
Batches body limit is 256 MB)."""
MESSAGES_MAX_REQUESTS = 100_000
"""Most requests of one Message Batch (Anthropic's limit)."""
MESSAGES_PATH = "/v1/messages"


class NotFound(Exception):
    """No such file or batch."""


class CreateLost(Exception):
    """A batch was created but its create call is answered 502 (``create_lost``)."""


class ServerFault(Exception):
    """A download answered 500 (``download_500``)."""


def parse_upload(content_type: str, raw: bytes) -> tuple[str, str, bytes]:
    """(purpose, filename, content) of a ``multipart/form-data`` upload (BadRequest
    otherwise)."""
    if not content_type.lower().startswith("multipart/form-data"):
        raise BadRequest("upload a file as multipart/form-data with fields purpose and file")
    message = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + raw)
    purpose, filename, content = None, "upload.jsonl", None
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name == "purpose":
            purpose = part.get_payload(decode=True).decode("utf-8", "replace").strip()
        elif name == "file":
            filename = part.get_filename() or filename
            content = part.get_payload(decode=True) or b""
    if purpose is None or content is None:
        raise BadRequest("the upload needs the fields purpose and file")
    return purpose, filename, content


def _write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class BatchStore:
    """Files and batches on disk (see the module docstring).

    Args:
        state_dir: Where they are kept (None: a new temporary folder).
        answer: (endpoint, request body) -> (HTTP status, response body): the live answer.
        seed: Seed of the failed lines' choice.
        delay: Seconds from creation to completion.
        fail: Fraction of lines failed in a faulty batch.
        expire: Faulty batches expire half done.
        faulty: How many of the first batches are faulty (None: all).
        faults: Further faults of the faulty batches (``ServerConfig.batch_faults``).
        window: Seconds from a batch's creation to its ``expires_at``.
        usage: What ``usage`` the answers report (``ServerConfig.usage``).
    """

    def __init__(self, state_dir: str | Path | None,
                 answer: Callable[[str, dict[str, Any]], tuple[int, dict[str, Any]]], *,
                 seed: int = 0, delay: float = 0.0, fail: float = 0.0, expire: bool = False,
                 faulty: int | None = None, faults: tuple[str, ...] = (),
                 window: float = 86400.0, usage: str = "honest") -> None:
        self.root = Path(state_dir) if state_dir is not None else Path(
            tempfile.mkdtemp(prefix="distbench-batches-"))
        (self.root / "files").mkdir(parents=True, exist_ok=True)
        (self.root / "batches").mkdir(parents=True, exist_ok=True)
        self.answer = answer
        self.seed, self.delay, self.fail, self.expire = seed, delay, fail, expire
        self.faulty = faulty
        self.faults, self.window, self.usage = tuple(faults), window, usage
        self._flaky: dict[str, int] = {}  # file id -> downloads still answered 500
        self._lock = threading.RLock()

    # --- files -----------------------------------------------------------------------

    def upload(self, purpose: str, filename: str, content: bytes) -> dict[str, Any]:
        if purpose != "batch":
            raise BadRequest(f"purpose must be 'batch', got {purpose!r}")
        return self._new_file(purpose, filename, content)

    def _new_file(self, purpose: str, filename: str, content: bytes) -> dict[str, Any]:
        with self._lock:
            file_id = "file-" + hashlib.sha256(
                b"%d:" % len(list((self.root / "files").glob("*.json"))) + content
            ).hexdigest()[:24]
            meta = {"id": file_id, "object": "file", "bytes": len(content),
                    "created_at": int(time.time()), "filename": filename, "purpose": purpose}
            _write(self.root / "files" / file_id, content)
            _write(self.root / "files" / f"{file_id}.json", json.dumps(meta).encode())
            return meta

    def file(self, file_id: str) -> dict[str, Any]:
        path = self.root / "files" / f"{_safe(file_id)}.json"
        if not path.exists():
            raise NotFound(f"no file {file_id!r}")
        return json.loads(path.read_bytes())

    def content(self, file_id: str) -> bytes:
        self.file(file_id)
        with self._lock:
            if self._flaky.get(file_id, 0) > 0:
                self._flaky[file_id] -= 1
                raise ServerFault(f"file {file_id}: injected server error")
        return (self.root / "files" / _safe(file_id)).read_bytes()

    # --- batches ---------------------------------------------------------------------

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        endpoint = body.get("endpoint")
        if endpoint not in ENDPOINTS:
            raise BadRequest(f"endpoint must be one of {', '.join(ENDPOINTS)}, got {endpoint!r}")
        if body.get("completion_window") != "24h":
            raise BadRequest("completion_window must be '24h'")
        file_id = body.get("input_file_id")
        if not isinstance(file_id, str):
            raise BadRequest("input_file_id is required")
        try:
            lines = _requests(self.content(file_id), endpoint)
        except NotFound:
            raise BadRequest(f"no file {file_id!r}") from None
        with self._lock:
            number = len(list((self.root / "batches").glob("*.json")))
            batch_id = f"batch_{number:06d}_" + hashlib.sha256(file_id.encode()).hexdigest()[:12]
            now = time.time()
            batch = {"id": batch_id, "object": "batch", "endpoint": endpoint,
                     "input_file_id": file_id, "completion_window": "24h",
                     "status": "in_progress", "output_file_id": None, "error_file_id": None,
                     "created_at": int(now), "created": now, "number": number,
                     "completed_at": None, "expired_at": None, "cancelled_at": None,
                     "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                     "metadata": body.get("metadata"), "usage": None,
                     "expires_at": int(now + self.window)}
            self._save(batch)
            if self._fault(number, "create_lost"):
                raise CreateLost(batch_id)
            return _public(batch)

    def list(self, limit: int = 20, after: str | None = None) -> dict[str, Any]:
        """The OpenAI batches, newest first, ``limit`` after the batch ``after``."""
        with self._lock:
            batches = [json.loads(p.read_bytes()) for p in (self.root / "batches").glob("*.json")]
        batches = sorted((b for b in batches if b.get("kind") != "messages"),
                         key=lambda b: -b["number"])
        if after is not None:
            ids = [b["id"] for b in batches]
            batches = batches[ids.index(after) + 1:] if after in ids else []
        page = batches[:max(1, min(100, limit))]
        return {"object": "list", "data": [_public(b) for b in page],
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
                "has_more": len(batches) > len(page)}

    def _fault(self, number: int, name: str) -> bool:
        """Whether batch ``number`` is faulty and has the fault ``name``."""
        return name in self.faults and (self.faulty is None or number < self.faulty)

    def _due(self, batch: dict[str, Any]) -> bool:
        """Whether a batch in progress finishes now (never, with ``never_ends``)."""
        return time.time() >= batch["created"] + self.delay and \
            not self._fault(batch["number"], "never_ends")

    def retrieve(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self._load_openai(batch_id)
            if batch["status"] == "in_progress" and self._due(batch):
                batch = self._finish(batch)
            return _public(batch)

    def cancel(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self._load_openai(batch_id)
            if batch["status"] == "in_progress":
                if self._due(batch):
                    return _public(self._finish(batch))
                total = batch["request_counts"]["total"]
                batch.update(status="cancelled", cancelled_at=int(time.time()),
                             request_counts={"total": total, "completed": 0, "failed": 0})
                self._save(batch)
            return _public(batch)

    def counts(self) -> dict[str, Any]:
        """Batches created and their requests, answered and failed, and the billed usage."""
        out = {"created": 0, "requests": 0, "completed": 0, "failed": 0,
               "prompt_tokens": 0, "completion_tokens": 0}
        with self._lock:
            for path in (self.root / "batches").glob("*.json"):
                batch = json.loads(path.read_bytes())
                out["created"] += 1
                counts = batch["request_counts"]
                out["requests"] += counts["total"]
                out["completed"] += counts["completed"]
                out["failed"] += counts["failed"]
                for key in ("prompt_tokens", "completion_tokens"):
                    out[key] += (batch.get("usage") or {}).get(key, 0)
        return out

    # --- inside ----------------------------------------------------------------------

    def _load_any(self, batch_id: str) -> dict[str, Any]:
        path = self.root / "batches" / f"{_safe(batch_id)}.json"
        if not path.exists():
            raise NotFound(f"no batch {batch_id!r}")
        return json.loads(path.read_bytes())

    def _load(self, batch_id: str) -> dict[str, Any]:
        batch = self._load_any(batch_id)
        if self._fault(batch["number"], "lost"):
            raise NotFound(f"no batch {batch_id!r}")
        return batch

    def _load_openai(self, batch_id: str) -> dict[str, Any]:
        batch = self._load(batch_id)
        if batch.get("kind") == "messages":
            raise NotFound(f"no batch {batch_id!r}")
        return batch

    def _save(self, batch: dict[str, Any]) -> None:
        _write(self.root / "batches" / f"{batch['id']}.json", json.dumps(batch).encode())

    def _finish(self, batch: dict[str, Any]) -> dict[str, Any]:
        lines = _requests(self.content(batch["input_file_id"]), batch["endpoint"])
        n = len(lines)
        if self._fault(batch["number"], "failed"):
            batch.update(status="failed", failed_at=int(time.time()), errors={
                "object": "list", "data": [{"code": "invalid_request", "line": 1, "param": None,
                                            "message": "injected: the batch failed"}]},
                request_counts={"total": n, "completed": 0, "failed": n})
            self._save(batch)
            return batch
        failed, expired = self._faults(batch["number"], n)
        out, err = [], []
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        for i, line in enumerate(lines):
            rid = f"batch_req_{batch['number']:06d}_{i:06d}"
            if i in expired:
                err.append({"id": rid, "custom_id": line["custom_id"], "response": None,
                            "error": {"code": "batch_expired",
                                      "message": "This request could not be executed before "
                                                 "the completion window expired."}})
                continue
            if i in failed:
                err.append({"id": rid, "custom_id": line["custom_id"], "response": None,
                            "error": {"code": "server_error",
                                      "message": "The server had an error processing the "
                                                 "request."}})
                continue
            status, body = self.answer(batch["endpoint"], line["body"])
            if status == 200:
                for key in usage:
                    value = (body.get("usage") or {}).get(key)
                    usage[key] += value if isinstance(value, int) else 0
                body = misreport_usage(body, self.usage)
            out.append({"id": rid, "custom_id": line["custom_id"],
                        "response": {"status_code": status, "request_id": rid, "body": body},
                        "error": None})
        now = int(time.time())
        batch["output_file_id"] = self._jsonl_file(out, batch, "output") if out else None
        batch["error_file_id"] = self._jsonl_file(err, batch, "error") if err else None
        if self._fault(batch["number"], "download_500"):
            for key in ("output_file_id", "error_file_id"):
                if batch[key]:
                    self._flaky[batch[key]] = 2
        ok = sum(1 for o in out if o["response"]["status_code"] == 200)
        batch["request_counts"] = {"total": n, "completed": ok, "failed": n - ok}
        batch["usage"] = usage
        if expired:
            batch.update(status="expired", expired_at=now)
        else:
            batch.update(status="completed", completed_at=now)
        self._save(batch)
        return batch

    def _faults(self, number: int, n: int) -> tuple[set[int], set[int]]:
        """(failed lines, expired lines) of batch ``number`` of ``n`` lines."""
        faulty = self.faulty is None or number < self.faulty
        failed: set[int] = set()
        expired: set[int] = set()
        if faulty and self.fail > 0:
            order = np.random.default_rng([self.seed, number]).permutation(n)
            failed = {int(i) for i in order[: round(self.fail * n)]}
        if faulty and self.expire:
            expired = set(range(n // 2, n))
        return failed, expired

    # --- Anthropic Message Batches ----------------------------------------------------

    def create_messages(self, body: dict[str, Any]) -> dict[str, Any]:
        """A Message Batch of ``body["requests"]`` (checked whole: BadRequest naming the
        first bad request)."""
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            raise BadRequest("requests: must be a non-empty list")
        if len(requests) > MESSAGES_MAX_REQUESTS:
            raise BadRequest(f"requests: at most {MESSAGES_MAX_REQUESTS:,} per batch, "
                             f"got {len(requests):,}")
        seen: set[str] = set()
        for i, item in enumerate(requests):
            cid = item.get("custom_id") if isinstance(item, dict) else None
            if not isinstance(cid, str) or not 1 <= len(cid) <= 64 \
                    or not all(c.isascii() and (c.isalnum() or c in "-_") for c in cid):
                raise BadRequest(f"requests.{i}.custom_id: 1 to 64 of [A-Za-z0-9_-]")
            if not isinstance(item.get("params"), dict):
                raise BadRequest(f"requests.{i}.params: must be an object")
            if cid in seen:
                raise BadRequest(f"requests.{i}.custom_id: {cid!r} is repeated")
            seen.add(cid)
        data = "".join(json.dumps({"custom_id": r["custom_id"], "params": r["params"]}) + "\n"
                       for r in requests).encode()
        with self._lock:
            file_id = self._new_file("message_batch", "requests.jsonl", data)["id"]
            number = len(list((self.root / "batches").glob("*.json")))
            batch_id = f"msgbatch_{number:06d}_" + hashlib.sha256(file_id.encode()).hexdigest()[:12]
            now = time.time()
            batch = {"id": batch_id, "kind": "messages", "input_file_id": file_id,
                     "status": "in_progress", "created": now, "number": number,
                     "ended": None, "cancel_initiated": None, "results_file_id": None,
                     "request_counts": {"total": len(requests), "completed": 0, "failed": 0},
                     "results": {"succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
                     "usage": None, "window": self.window}
            self._save(batch)
            if self._fault(number, "create_lost"):
                raise CreateLost(batch_id)
            return _public_messages(batch)

    def list_messages(self, limit: int = 20, after_id: str | None = None,
                      before_id: str | None = None) -> dict[str, Any]:
        """The Message Batches, newest first, as Anthropic lists them: ``limit`` (1 to 1000)
        of those after ``after_id`` (older) or before ``before_id`` (newer), with
        ``has_more``, ``first_id`` and ``last_id``; a batch due is finished first, as on
        :meth:`retrieve_messages`. A forgotten batch (``lost``) is not listed."""
        with self._lock:
            batches = [json.loads(p.read_bytes()) for p in (self.root / "batches").glob("*.json")]
            batches = [self._finish_messages(b) if b["status"] == "canceling" or (
                b["status"] == "in_progress" and self._due(b)) else b for b in batches
                if b.get("kind") == "messages" and not self._fault(b["number"], "lost")]
        batches.sort(key=lambda b: -b["number"])
        ids = [b["id"] for b in batches]
        size = max(1, min(1000, limit))
        if after_id is not None:
            rest = batches[ids.index(after_id) + 1:] if after_id in ids else []
            page, more = rest[:size], len(rest) > size
        elif before_id is not None:
            rest = batches[:ids.index(before_id)] if before_id in ids else []
            page, more = rest[-size:], len(rest) > size
        else:
            page, more = batches[:size], len(batches) > size
        return {"data": [_public_messages(b) for b in page], "has_more": more,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None}

    def retrieve_messages(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self._load_messages(batch_id)
            due = self._due(batch)
            if batch["status"] == "canceling" or (batch["status"] == "in_progress" and due):
                batch = self._finish_messages(batch)
            return _public_messages(batch)

    def cancel_messages(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self._load_messages(batch_id)
            if batch["status"] == "in_progress":
                if self._due(batch):
                    return _public_messages(self._finish_messages(batch))
                batch.update(status="canceling", cancel_initiated=time.time())
                self._save(batch)
            return _public_messages(batch)

    def messages_results(self, batch_id: str) -> bytes:
        """The JSONL results of an ended batch (BadRequest before it ended)."""
        with self._lock:
            batch = self._load_messages(batch_id)
            if batch["status"] != "ended":
                raise BadRequest(f"batch {batch_id} has not ended; its results are not ready")
            return self.content(batch["results_file_id"])

    def _load_messages(self, batch_id: str) -> dict[str, Any]:
        batch = self._load(batch_id)
        if batch.get("kind") != "messages":
            raise NotFound(f"no message batch {batch_id!r}")
        return batch

    def _finish_messages(self, batch: dict[str, Any]) -> dict[str, Any]:
        items = [json.loads(raw) for raw in self.content(batch["input_file_id"]).splitlines()
                 if raw.strip()]
        canceled = batch["status"] == "canceling"
        failed, expired = self._faults(batch["number"], len(items))
        rows = []
        tally = {"succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        for i, item in enumerate(items):
            if canceled:
                result: dict[str, Any] = {"type": "canceled"}
            elif i in expired:
                result = {"type": "expired"}
            elif i in failed:
                result = {"type": "errored", "error": {"type": "error", "error": {
                    "type": "api_error", "message": "Internal server error (injected)."}}}
            else:
                status, body = self.answer(MESSAGES_PATH, item["params"])
                if status == 200:
                    for key, name in (("prompt_tokens", "input_tokens"),
                                      ("completion_tokens", "output_tokens")):
                        value = (body.get("usage") or {}).get(name)
                        usage[key] += value if isinstance(value, int) else 0
                    result = {"type": "succeeded", "message": _misreport_message(body,
                                                                                 self.usage)}
                else:
                    message = (body.get("error") or {}).get("message", f"HTTP {status}")
                    kind = "invalid_request_error" if status == 400 else "api_error"
                    result = {"type": "errored", "error": {"type": "error", "error": {
                        "type": kind, "message": message}}}
            tally[result["type"]] += 1
            rows.append({"custom_id": item["custom_id"], "result": result})
        data = "".join(t + "\n" for t in self._poisoned(
            [json.dumps(r) for r in rows], batch["number"])).encode()
        batch["results_file_id"] = self._new_file(
            "message_batch_results", f"{batch['id']}_results.jsonl", data)["id"]
        if self._fault(batch["number"], "download_500"):
            self._flaky[batch["results_file_id"]] = 2
        batch["results"] = tally
        batch["request_counts"] = {"total": len(items), "completed": tally["succeeded"],
                                   "failed": len(items) - tally["succeeded"]}
        batch["usage"] = usage
        batch.update(status="ended", ended=time.time())
        self._save(batch)
        return batch

    def _jsonl_file(self, rows: list[dict[str, Any]], batch: dict[str, Any], what: str) -> str:
        texts = [json.dumps(r) for r in rows]
        if what == "output":
            texts = self._poisoned(texts, batch["number"])
        data = "".join(t + "\n" for t in texts).encode()
        return self._new_file("batch_output", f"{batch['id']}_{what}.jsonl", data)["id"]


    def _poisoned(self, texts: list[str], number: int) -> list[str]:
        """The result lines of batch ``number`` with its first one made hostile (the
        ``line_*`` faults)."""
        if not texts:
            return texts
        first, out = texts[0], list(texts)
        if self._fault(number, "line_surrogate"):
            out[0] = _TEXT_FIELD.sub(lambda m: m.group(0) + "\\ud800", first, count=1)
        if self._fault(number, "line_huge"):
            out[0] = _TEXT_FIELD.sub(lambda m: m.group(0) + "x" * (10 * 1024 * 1024), first,
                                     count=1)
        if self._fault(number, "line_deep"):
            cid = json.loads(first)["custom_id"]
            out[0] = ('{"custom_id": ' + json.dumps(cid) + ', "response": {"status_code": 200, '
                      '"body": ' + "[" * 100_000 + "]" * 100_000 + "}}")
        if self._fault(number, "line_conflict"):
            out.insert(1, _TEXT_FIELD.sub(lambda m: m.group(0) + "other ", first, count=1))
        if self._fault(number, "line_repeat"):
            out.insert(1, first)
        return out


_TEXT_FIELD = re.compile(r'"(?:content|text)": "')


def _misreport_message(body: dict[str, Any], mode: str) -> dict[str, Any]:
    """A Messages answer with its ``usage`` misreported as ``mode`` says."""
    if mode == "honest":
        return body
    chat = misreport_usage({"usage": {}}, mode)
    out = {k: v for k, v in body.items() if k != "usage"}
    if "usage" in chat:
        value = chat["usage"]["prompt_tokens"]
        out["usage"] = {"input_tokens": value, "output_tokens": value}
    return out


def _safe(name: str) -> str:
    """``name`` when it is a plain id (no path), else NotFound."""
    if not name or not all(c.isalnum() or c in "-_" for c in name):
        raise NotFound(f"no such id {name!r}")
    return name


def _public(batch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in batch.items() if k not in ("created", "number")}


def _iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _public_messages(batch: dict[str, Any]) -> dict[str, Any]:
    """A Message Batch as Anthropic shows it (``results_url`` a path: the server makes it
    absolute)."""
    ended = batch["status"] == "ended"
    processing = 0 if ended else batch["request_counts"]["total"]
    window = batch.get("window", 86400)
    return {"id": batch["id"], "type": "message_batch", "processing_status": batch["status"],
            "request_counts": {"processing": processing, **batch["results"]},
            "created_at": _iso(batch["created"]), "expires_at": _iso(batch["created"] + window),
            "ended_at": _iso(batch["ended"]), "cancel_initiated_at": _iso(
                batch["cancel_initiated"]), "archived_at": None,
            "results_url": f"/v1/messages/batches/{batch['id']}/results" if ended else None}


def _requests(content: bytes, endpoint: str) -> list[dict[str, Any]]:
    """The lines of a batch input file, checked (BadRequest naming the first bad line)."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, raw in enumerate(content.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise BadRequest(f"line {number} of the input file is not JSON") from None
        if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str) \
                or not isinstance(line.get("body"), dict):
            raise BadRequest(f"line {number}: needs custom_id (a string) and body (an object)")
        if line.get("method") != "POST" or line.get("url") != endpoint:
            raise BadRequest(f"line {number}: method must be POST and url {endpoint}")
        if line["custom_id"] in seen:
            raise BadRequest(f"line {number}: custom_id {line['custom_id']!r} is repeated")
        seen.add(line["custom_id"])
        out.append(line)
    if not out:
        raise BadRequest("the input file holds no request")
    return out
