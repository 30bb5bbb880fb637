"""The OpenAI Batch API, as a client: a JSONL file of requests uploaded, a batch created,
polled, and its output and error files read back into :class:`~distbench.llm.base.Response`.

The lines are the live requests' bodies (:func:`~distbench.llm.http.build_payload`), so a
batch answer is read exactly as a live one (:func:`~distbench.llm.http.parse_body`: every
field of the body untrusted, token counts checked, text made valid UTF-8). Every download is
capped (:data:`MAX_FILE_BYTES`) and has a whole-attempt deadline (the spec's ``timeout``, at
least :data:`MIN_FILE_TIMEOUT` seconds): a server that drips or floods is abandoned. Keys come
from the environment as for live calls and never reach an error message.

Anthropic Message Batches (a provider whose ``wire`` option is ``"anthropic"``) have their own
client with the same interface, :class:`AnthropicBatchClient` (:func:`client_for` picks it):
the requests go in the create call itself (no upload), a batch is done when its
``processing_status`` is ``ended``, and its results are JSONL lines ``{"custom_id", "result":
{"type": "succeeded" | "errored" | "canceled" | "expired", ...}}``, read from the batch's
results path on the provider's own base URL (the ``results_url`` of the answer must be there,
but is never followed: the key is sent to the configured host only).

Knows no game and no run folder: the engine (:mod:`distbench.engine.batching`) decides what
goes into which batch and records it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any

import httpx

from distbench.llm import anthropic
from distbench.llm.base import BackendSpec, Request, Response, redact_url, valid_text
from distbench.llm.cache import cache_key
from distbench.llm.http import MAX_BODY_BYTES, asked_for, build_payload, parse_body

__all__ = ["AnthropicBatchClient", "BatchClient", "BatchError", "MAX_FILE_BYTES", "TERMINAL",
           "UNUSABLE", "batch_line", "client_for", "one_line_per_request", "response_from",
           "unusable_line"]

MAX_FILE_BYTES = 1 << 30
"""Largest output or error file read (1 GiB); a longer one is abandoned as it streams in."""
MIN_FILE_TIMEOUT = 300.0
"""Seconds a file transfer may take at least, whatever the spec's per-call ``timeout``."""
TERMINAL = ("completed", "expired", "cancelled", "failed", "ended")
"""Batch states that do not change any more (``ended``: an Anthropic Message Batch)."""
UNUSABLE = "distbench_error"
"""The key of a line distbench writes itself for a request whose batch gave no usable line
(an unreadable, oversized or conflicting line, a batch the provider lost or that failed): its
value is the failed call's error text (:func:`unusable_line`)."""
CLOCK_SLACK_S = 120.0
"""Seconds a provider's clock may be behind ours when a Message Batch whose create answer was
lost is looked for among those created since the create was attempted."""
GET_RETRIES = 4
"""Attempts after the first for a GET (a poll, a download) that met a 5xx, a 429 or a
connection error; never for a POST that creates (it could be paid twice)."""


class BatchError(RuntimeError):
    """The batch API refused or failed a request (the message names it; never a key);
    ``status`` is the HTTP status when the server answered one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def unusable_line(custom_id: str, error: str) -> dict[str, Any]:
    """The line that stands for a request without a usable answer: one failed call whose
    error is ``error`` (made valid UTF-8, no secret)."""
    return {"custom_id": custom_id, UNUSABLE: redact_url(valid_text(error, "error")[0])[:500]}


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def one_line_per_request(lines: Sequence[dict[str, Any]], ids: Sequence[str],
                         batch_id: str) -> list[dict[str, Any]]:
    """The lines of a batch's results, one per request of ``ids`` at most, in first-seen
    order: a line for an id the batch was not given is dropped; repeated identical lines are
    one; lines that disagree for one id are one failed call (:func:`unusable_line`) — which of
    them was billed is not knowable, so none is trusted."""
    wanted = set(ids)
    out: dict[str, dict[str, Any]] = {}
    for line in lines:
        key = line["custom_id"]
        if key not in wanted:
            continue
        if key not in out:
            out[key] = line
        elif UNUSABLE not in out[key] and not _same(out[key], line):
            out[key] = unusable_line(key, f"batch {batch_id}: the results hold different "
                                          "lines for this request; none is used")
    return list(out.values())


def batch_line(spec: BackendSpec, req: Request) -> tuple[str, str, dict[str, Any]]:
    """(custom_id, endpoint path, JSONL line) of one request: the id is the request's cache
    key (:func:`~distbench.llm.cache.cache_key`), the body the live call's."""
    path, body = build_payload(spec, req)
    key = cache_key(spec, req)
    if spec.option("wire") == anthropic.WIRE:  # a Message Batches request
        return key, path, {"custom_id": key, "params": body}
    return key, path, {"custom_id": key, "method": "POST", "url": path, "body": body}


def response_from(spec: BackendSpec, req: Request, result: dict[str, Any] | None,
                  batch_id: str) -> Response:
    """The :class:`Response` of ``req`` from its line of a batch's output or error file
    (None: the batch gave no line for it)."""
    if result is None:
        return Response(text=None, status="failed", error=f"no answer in batch {batch_id}",
                        batch_id=batch_id)
    if isinstance(result, dict) and UNUSABLE in result:
        return Response(text=None, status="failed", error=str(result[UNUSABLE]),
                        batch_id=batch_id)
    if spec.option("wire") == anthropic.WIRE:
        return _message_response(spec, req, result, batch_id)
    error = result.get("error") if isinstance(result, dict) else None
    answer = result.get("response") if isinstance(result, dict) else None
    if error or not isinstance(answer, dict):
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        text = f"batch {batch_id}: {code or 'error'}: {str(message or '')[:200]}"
        return Response(text=None, status="failed", error=_clean(text), batch_id=batch_id)
    status = answer.get("status_code")
    body = answer.get("body")
    if status != 200:
        shown = json.dumps(body)[:300] if body is not None else ""
        return Response(text=None, status="failed", error=redact_url(f"HTTP {status}: {shown}"),
                        http_status=status if isinstance(status, int) else None,
                        batch_id=batch_id)
    return _parsed(batch_id, lambda: parse_body(req.style_for(spec.style), asked_for(req, body),
                                                 req.n))


def _message_response(spec: BackendSpec, req: Request, line: dict[str, Any],
                      batch_id: str) -> Response:
    """The :class:`Response` of a Message Batches result line (see :func:`response_from`)."""
    result = line.get("result") if isinstance(line, dict) else None
    kind = result.get("type") if isinstance(result, dict) else None
    if kind != "succeeded":
        error = result.get("error") if isinstance(result, dict) else None
        inner = error.get("error") if isinstance(error, dict) else None
        message = inner.get("message") if isinstance(inner, dict) else None
        kind_text = str(kind)[:40] if kind is not None else "no result"
        text = f"batch {batch_id}: {kind_text}" + (f": {str(message)[:200]}" if message else "")
        return Response(text=None, status="failed", error=_clean(text), batch_id=batch_id)
    return _parsed(batch_id, lambda: parse_body("chat", result.get("message"), req.n,
                                                 anthropic.WIRE), logprobs=False)


def _parsed(batch_id: str, parse: Callable[[], Any], *, logprobs: bool = True) -> Response:
    """The :class:`Response` of a result line's answer body as ``parse()`` reads it (its
    logprobs kept when ``logprobs``), or a failed one saying why the body is bad."""
    try:
        parsed = parse()
    except (ValueError, RecursionError) as exc:
        return Response(text=None, status="failed", http_status=200, batch_id=batch_id,
                        error=redact_url(f"bad response body: {str(exc)[:200]}"))
    return Response(text=parsed.text, status="ok", http_status=200, attempts=1,
                    prompt_tokens=parsed.prompt_tokens,
                    completion_tokens=parsed.completion_tokens,
                    logprobs=parsed.logprobs if logprobs else None, texts=parsed.texts,
                    notes="; ".join(dict.fromkeys(parsed.notes)), batch_id=batch_id)


def _clean(text: str) -> str:
    """An error text from a server's line: valid UTF-8, no secret."""
    return redact_url(valid_text(text, "error")[0])


def line_ok(line: dict[str, Any] | None) -> bool:
    """Whether a batch's line answers its request (an OpenAI output line with status 200, an
    Anthropic result ``succeeded``); any other is sent again, once."""
    answer = (line or {}).get("response")
    if isinstance(answer, dict):
        return answer.get("status_code") == 200
    result = (line or {}).get("result")
    return isinstance(result, dict) and result.get("type") == "succeeded"


def client_for(spec: BackendSpec) -> BatchClient:
    """The batch client of ``spec``'s wire format."""
    if spec.option("wire") == anthropic.WIRE:
        return AnthropicBatchClient(spec)
    return BatchClient(spec)


class BatchClient:
    """Files and batches of one OpenAI-compatible endpoint (``spec``'s base URL and key).

    Args:
        spec: The model (base URL, key, ``timeout``).
        transport: An httpx transport, for unit tests.
    """

    def __init__(self, spec: BackendSpec, transport: httpx.BaseTransport | None = None) -> None:
        from distbench.llm.http import OpenAICompatibleBackend

        live = OpenAICompatibleBackend(spec)  # the base URL, the key, the query: as live
        self._scrub = live._scrub
        self.timeout = max(MIN_FILE_TIMEOUT, live.limits.timeout)
        self.retry_delay = 0.5  # seconds before the first retry of a GET, doubling
        self._client = httpx.Client(
            base_url=live.base_url, params=live._params, timeout=self.timeout,
            headers={**live._headers(), "Accept-Encoding": "identity"},
            transport=transport or httpx.HTTPTransport(retries=2))

    def close(self) -> None:
        self._client.close()

    def _request(self, method: str, path: str, **kwargs: Any) -> bytes:
        """The body of one request; a GET that met a transient failure (5xx, 429, a
        connection error) is tried again, :data:`GET_RETRIES` times at most."""
        attempt = 0
        while True:
            try:
                return self._request_once(method, path, **kwargs)
            except BatchError as exc:
                transient = exc.status is None or exc.status == 429 or exc.status >= 500
                if method != "GET" or not transient or attempt >= GET_RETRIES \
                        or getattr(exc, "final", False):
                    raise
            time.sleep(min(8.0, self.retry_delay * 2 ** attempt))
            attempt += 1

    def _request_once(self, method: str, path: str, **kwargs: Any) -> bytes:
        deadline = time.monotonic() + self.timeout
        try:
            with self._client.stream(method, path, **kwargs) as resp:
                chunks: list[bytes] = []
                size = 0
                for chunk in resp.iter_bytes():
                    size += len(chunk)
                    if size > MAX_FILE_BYTES:
                        raise _final(f"{method} {path}: body over {MAX_FILE_BYTES:,} "
                                     "bytes, abandoned")
                    if time.monotonic() > deadline:
                        raise _final(f"{method} {path}: not read whole in "
                                     f"{self.timeout:g} s, abandoned")
                    chunks.append(chunk)
                content = b"".join(chunks)
                if resp.status_code != 200:
                    shown = content[:300].decode("utf-8", errors="replace")
                    raise BatchError(self._scrub(f"{method} {path}: HTTP {resp.status_code}: "
                                                 f"{shown!r}"), resp.status_code)
                return content
        except httpx.HTTPError as exc:
            raise BatchError(self._scrub(f"{method} {path}: {type(exc).__name__}")) from None

    def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        content = self._request(method, path, **kwargs)
        try:
            data = json.loads(content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise BatchError(f"{method} {path}: the answer is not JSON") from None
        if not isinstance(data, dict):
            raise BatchError(f"{method} {path}: the answer is not a JSON object")
        return data

    def upload(self, lines: Sequence[dict[str, Any]]) -> str:
        """Uploads ``lines`` as a JSONL file (``purpose=batch``); returns its file id."""
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
        got = self._json("POST", "/v1/files", data={"purpose": "batch"},
                         files={"file": ("requests.jsonl", data, "application/jsonl")})
        if not isinstance(got.get("id"), str):
            raise BatchError("POST /v1/files: no file id in the answer")
        return got["id"]

    def create(self, file_id: str, endpoint: str, metadata: dict[str, str] | None = None
               ) -> dict[str, Any]:
        """Creates a batch of the uploaded file for ``endpoint``; returns it."""
        got = self._json("POST", "/v1/batches", json={
            "input_file_id": file_id, "endpoint": endpoint, "completion_window": "24h",
            **({"metadata": metadata} if metadata else {})})
        if not isinstance(got.get("id"), str):
            raise BatchError("POST /v1/batches: no batch id in the answer")
        return got

    def retrieve(self, batch_id: str) -> dict[str, Any]:
        return self._json("GET", f"/v1/batches/{_plain(batch_id)}")

    def cancel(self, batch_id: str) -> dict[str, Any]:
        """Asks the provider to cancel a batch (one that outlived its window)."""
        return self._json("POST", f"/v1/batches/{_plain(batch_id)}/cancel")

    def find(self, metadata: dict[str, str], pages: int = 10, *,
             ids: Sequence[str] | None = None, since: float | None = None,
             exclude: Collection[str] = ()) -> dict[str, Any] | None:
        """The newest batch whose ``metadata`` holds all of ``metadata`` and that is not
        failed, cancelled or expired, from the provider's list of batches (newest first,
        ``pages`` pages of 100 at most); None when there is none. (``ids``, ``since`` and
        ``exclude`` serve :meth:`AnthropicBatchClient.find`; the metadata suffices here.)"""
        after = None
        for _ in range(pages):
            params = {"limit": 100, **({"after": after} if after else {})}
            got = self._json("GET", "/v1/batches", params=params)
            data = got.get("data")
            if not isinstance(data, list):
                return None
            for batch in data:
                meta = batch.get("metadata") if isinstance(batch, dict) else None
                if isinstance(meta, dict) and all(meta.get(k) == v for k, v in metadata.items()) \
                        and isinstance(batch.get("id"), str) \
                        and batch.get("status") not in ("failed", "cancelled", "expired"):
                    return batch
            if not got.get("has_more") or not data or not isinstance(data[-1], dict):
                return None
            after = data[-1].get("id")
        return None

    def submit(self, lines: Sequence[dict[str, Any]], endpoint: str,
               metadata: dict[str, str] | None = None) -> tuple[str | None, dict[str, Any]]:
        """(input file id, batch) of a new batch of ``lines`` (:meth:`upload`, :meth:`create`)."""
        file_id = self.upload(lines)
        return file_id, self.create(file_id, endpoint, metadata=metadata)

    def results(self, batch: dict[str, Any]) -> list[dict[str, Any]]:
        """The lines of a finished batch: its output file's, then its error file's."""
        return self.lines(batch.get("output_file_id")) + self.lines(batch.get("error_file_id"))

    def lines(self, file_id: str | None) -> list[dict[str, Any]]:
        """The JSON lines of an output or error file (none for None); a line that is not a
        JSON object is skipped (its request then has no answer: a failed row)."""
        if not file_id:
            return []
        return _result_lines(self._request("GET", f"/v1/files/{file_id}/content"))


def _final(message: str) -> BatchError:
    """A BatchError that is not tried again (a body over the cap or too slow)."""
    exc = BatchError(message)
    exc.final = True  # type: ignore[attr-defined]
    return exc


_CUSTOM_ID = re.compile(rb'"custom_id"\s*:\s*"([A-Za-z0-9_-]{1,200})"')


def _result_lines(content: bytes) -> list[dict[str, Any]]:
    """The lines of a results file, read as untrusted as a live body: a JSON object with a
    ``custom_id`` is kept; a line over :data:`~distbench.llm.http.MAX_BODY_BYTES` (the live
    cap), or not readable (not JSON, not UTF-8, nested too deep) but naming a plain
    ``custom_id`` becomes that request's failed call (:func:`unusable_line`); any other line
    is skipped (its request then has no answer: a failed row)."""
    out = []
    for raw in content.splitlines():
        if not raw.strip():
            continue
        if len(raw) > MAX_BODY_BYTES:
            problem = (f"result line too large ({len(raw):,} bytes; at most "
                       f"{MAX_BODY_BYTES:,} are read, as for a live answer)")
        else:
            try:
                line = json.loads(raw)
            except (ValueError, RecursionError) as exc:
                problem = f"bad response body: the result line is unreadable ({type(exc).__name__})"
            else:
                if isinstance(line, dict) and isinstance(line.get("custom_id"), str):
                    out.append(line)
                continue
        found = _CUSTOM_ID.search(raw)
        if found:
            out.append(unusable_line(found.group(1).decode("ascii"), problem))
    return out


class AnthropicBatchClient(BatchClient):
    """Message Batches of one Anthropic endpoint (the same interface as :class:`BatchClient`:
    :meth:`submit`, :meth:`retrieve`, :meth:`results`). A batch it returns carries ``status``:
    its ``processing_status`` (``ended`` is terminal)."""

    MAX_REQUESTS = 100_000
    MAX_BYTES = 256 * 1000 * 1000

    def submit(self, lines: Sequence[dict[str, Any]], endpoint: str,
               metadata: dict[str, str] | None = None) -> tuple[str | None, dict[str, Any]]:
        """(None: no file, batch) of a new Message Batch of ``lines`` (``custom_id``,
        ``params``); ``metadata`` has no place in the API and is not sent."""
        if len(lines) > self.MAX_REQUESTS:
            raise BatchError(f"a Message Batch holds at most {self.MAX_REQUESTS:,} requests, "
                             f"not {len(lines):,}")
        got = self._json("POST", "/v1/messages/batches", json={"requests": list(lines)})
        return None, self._checked(got, "POST /v1/messages/batches")

    def retrieve(self, batch_id: str) -> dict[str, Any]:
        return self._checked(self._json("GET", f"/v1/messages/batches/{_plain(batch_id)}"),
                             "GET /v1/messages/batches")

    def cancel(self, batch_id: str) -> dict[str, Any]:
        return self._checked(self._json(
            "POST", f"/v1/messages/batches/{_plain(batch_id)}/cancel"),
            "POST /v1/messages/batches/cancel")

    def find(self, metadata: dict[str, str], pages: int = 10, *,
             ids: Sequence[str] | None = None, since: float | None = None,
             exclude: Collection[str] = ()) -> dict[str, Any] | None:
        """The Message Batch an earlier create of ``ids`` made although its answer was lost,
        recognised without metadata (a Message Batch has none): from the provider's list
        (newest first, ``pages`` pages of 100 at most), a batch not in ``exclude`` (the run's
        recorded batches), created at ``since`` (when the create was attempted) or later
        (:data:`CLOCK_SLACK_S` allowed for clocks apart), not ``canceling``, holding
        ``len(ids)`` requests, and — once ended, when its results can be read — whose results
        name exactly ``ids``. An ended batch so verified is preferred; else the newest one in
        progress that fits (its requests cannot be listed before it ends: when its results are
        read, a request of ``ids`` they miss is a failed call, sent again once). None without
        ``ids`` and ``since``, or when no batch fits."""
        if not ids or since is None:
            return None
        wanted, after, hopeful = set(ids), None, None
        for _ in range(pages):
            got = self._json("GET", "/v1/messages/batches",
                             params={"limit": 100, **({"after_id": after} if after else {})})
            data = got.get("data")
            if not isinstance(data, list):
                break
            older = False
            for item in data:
                batch, created = self._listed(item)
                if batch is None or batch["id"] in exclude:
                    continue
                if created < since - CLOCK_SLACK_S:
                    older = True  # newest first: the rest is older still
                    break
                if _total(batch) != len(wanted) or batch["status"] == "canceling":
                    continue
                if batch["status"] != "ended":
                    hopeful = hopeful or batch
                elif {line["custom_id"] for line in self.results(batch)} == wanted:
                    return batch
            after = got.get("last_id")
            if older or not got.get("has_more") or not isinstance(after, str):
                break
        return hopeful

    def _listed(self, item: Any) -> tuple[dict[str, Any] | None, float]:
        """(batch, its creation time in seconds) of an entry of the list (None, 0: an entry
        that is not a readable Message Batch)."""
        try:
            batch = self._checked(item, "GET /v1/messages/batches")
            stamp = str(batch.get("created_at"))
            created = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except (AttributeError, BatchError, TypeError, ValueError):
            return None, 0.0
        return batch, created

    def results(self, batch: dict[str, Any]) -> list[dict[str, Any]]:
        """The result lines of an ended batch (none before; a line that is not a JSON object
        with a ``custom_id`` is skipped: its request has no answer, a failed row)."""
        if batch.get("processing_status") != "ended":
            return []
        if not batch.get("results_url"):
            raise BatchError(f"batch {batch['id']} ended without a results_url")
        path = f"/v1/messages/batches/{_plain(batch['id'])}/results"
        return _result_lines(self._request("GET", path))

    @staticmethod
    def _checked(batch: dict[str, Any], what: str) -> dict[str, Any]:
        if not isinstance(batch.get("id"), str):
            raise BatchError(f"{what}: no batch id in the answer")
        _plain(batch["id"])
        status = batch.get("processing_status")
        if status not in ("in_progress", "canceling", "ended"):
            raise BatchError(f"{what}: unknown processing_status {str(status)[:40]!r}")
        return {**batch, "status": status}


def _total(batch: dict[str, Any]) -> int:
    """How many requests a Message Batch holds (the sum of its ``request_counts``)."""
    counts = batch.get("request_counts")
    if not isinstance(counts, dict):
        return -1
    return sum(v for v in counts.values() if isinstance(v, int) and not isinstance(v, bool))


def _plain(batch_id: str) -> str:
    """``batch_id`` when it is a plain id (letters, digits, ``_``, ``-``), else BatchError:
    an id from an answer never becomes another path."""
    if not (0 < len(batch_id) <= 200
            and all(c.isascii() and (c.isalnum() or c in "_-") for c in batch_id)):
        raise BatchError(f"the server gave an unusable batch id {batch_id[:40]!r}")
    return batch_id
