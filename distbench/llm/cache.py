"""An on-disk response cache (SQLite), so a re-run or a resumed run pays nothing twice.

Keys hash everything that decides an answer: provider, model, answer style, base URL and the
request itself (prompt, budget, temperature, logprobs and the per-request seed, which encodes
the trial). A request of several samples (``n``) is keyed with the seeds of all its samples, so
its answer (the samples' texts, stored together) is never taken for a one-sample request's,
nor the other way round; one-sample keys are what they always were. Only successful answers
are stored, and only those a run can store (:func:`storable`: valid UTF-8 text, token counts
that fit a column): an answer that broke a run is never cached, so a resume asks again, and
a cached entry that is not storable (written by an older version) is read as a miss. Nothing
secret is stored: no key, no header.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from distbench.llm.base import BackendSpec, BackendUnavailable, Request, Response, token_count
from distbench.llm.transport import spliced_json

log = logging.getLogger(__name__)


def cache_key(spec: BackendSpec, req: Request) -> str:
    """The request hash: stable across processes and runs."""
    payload = {
        "provider": spec.provider,
        "model": spec.model,
        "style": spec.style,
        "base_url": spec.option("base_url"),
        "prompt": req.prompt,
        "seed": req.seed,
        "max_tokens": req.max_tokens,
        "temperature": req.temperature,
        "logprobs": req.logprobs,
        "stop": list(req.stop) if req.stop else None,
        "messages": None,
    }
    if req.samples:
        payload["samples"] = [int(x) for x in req.samples]
    if req.messages:  # each message encoded once per process (a game resends them all)
        text = spliced_json(payload, "messages", req.messages, _key_text, _pair)
    else:
        text = _key_text(payload)
    return hashlib.sha256(text.encode()).hexdigest()


def _key_text(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _pair(role: str, content: str) -> list[str]:
    return [role, content]


def storable(response: Response) -> str:
    """Why ``response`` must not be cached (text that is not valid UTF-8, a token count that
    is not a plausible one), or "" when it may be."""
    texts = [response.text, *(response.texts or ())]
    texts += [token for token, _ in response.logprobs or ()]
    for text in texts:
        if text is not None and (not isinstance(text, str) or _not_utf8(text)):
            return "text that is not valid UTF-8"
    for name in ("prompt_tokens", "completion_tokens"):
        value = getattr(response, name)
        if value is not None and token_count(value, name)[0] is None:
            return token_count(value, name)[1]
    return ""


def _not_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    """SQLite's words for a file that is not a whole database (not a full disk or a lock)."""
    text = str(exc)
    return "malformed" in text or "not a database" in text


class CacheUnavailable(BackendUnavailable):
    """The response cache cannot be opened (a full disk, no permission): one line naming its
    path, before any work."""


class ResponseCache:
    """A SQLite table of successful responses by request hash.

    Args:
        path: The database file (created with its folder).
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._broken = ""
        try:
            try:
                self._open()
            except sqlite3.DatabaseError as exc:
                if not _damaged(exc):
                    raise
                self._set_aside(exc)
                self._open()
        except (OSError, sqlite3.Error) as exc:
            raise CacheUnavailable(
                f"the response cache at {self.path} cannot be used ({exc}): free some space "
                "there, point DISTBENCH_CACHE_DIR elsewhere, or run with --no-cache") from None

    def _set_aside(self, exc: Exception, *, reopen: bool = True) -> None:
        """A damaged database file (it is only a cache): moved aside with its journal files
        and one warning; at open a new one is started, rather than a run refused (found in
        use, the next run starts the new one)."""
        if reopen and getattr(self, "_con", None) is not None:
            self._con.close()
        aside = self.path.with_name(self.path.name + ".damaged")
        for suffix in ("", "-wal", "-shm"):
            part = self.path.with_name(self.path.name + suffix)
            if part.exists():
                part.replace(aside.with_name(aside.name + suffix))
        log.warning("the response cache at %s was damaged (%s): moved to %s, %s", self.path,
                    exc, aside, "and a new one started (answers are asked again)" if reopen
                    else "answers are no longer cached in this run")

    def _give_up(self, exc: Exception) -> None:
        """A cache that cannot be written any more (a full disk): one warning, then the run
        goes on without it (answers are not cached; nothing else changes). A damaged file is
        set aside for the next run."""
        if self._broken:
            return
        self._broken = str(exc)
        if isinstance(exc, sqlite3.DatabaseError) and _damaged(exc):
            try:
                self._set_aside(exc, reopen=False)
                return
            except OSError:
                pass
        log.warning("the response cache at %s cannot be written (%s): answers are no "
                    "longer cached in this run", self.path, exc)

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._con = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, text TEXT NOT NULL, "
            "prompt_tokens INTEGER, completion_tokens INTEGER, logprobs TEXT)"
        )
        columns = {row[1] for row in self._con.execute("PRAGMA table_info(responses)")}
        if "texts" not in columns:  # a cache written before requests of several samples
            self._con.execute("ALTER TABLE responses ADD COLUMN texts TEXT")
        if "notes" not in columns:  # a cache written before response notes
            self._con.execute("ALTER TABLE responses ADD COLUMN notes TEXT")
        if "reasoning" not in columns:  # a cache written before providers' reasoning was kept
            self._con.execute("ALTER TABLE responses ADD COLUMN reasoning TEXT")
            self._con.execute("ALTER TABLE responses ADD COLUMN reasoning_tokens INTEGER")
        self._con.commit()

    def get_many(self, keys: Sequence[str]) -> dict[str, Response]:
        """Cached responses for the keys that have one (marked ``cache_hit``)."""
        if self._broken:
            return {}
        try:
            with self._lock:
                return self._read(keys)
        except sqlite3.Error as exc:
            self._give_up(exc)
            return {}

    def _read(self, keys: Sequence[str]) -> dict[str, Response]:
        out: dict[str, Response] = {}
        for lo in range(0, len(keys), 500):
            chunk = list(keys[lo : lo + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._con.execute(
                f"SELECT key, text, prompt_tokens, completion_tokens, logprobs, texts, notes, "
                f"reasoning, reasoning_tokens FROM responses WHERE key IN ({marks})", chunk
            ).fetchall()
            for key, text, p_tok, c_tok, lp, texts, notes, reasoning, r_tok in rows:
                try:
                    logprobs = tuple(tuple(x) for x in json.loads(lp)) if lp else None
                    hit = Response(text=text, status="ok", attempts=0, latency_ms=0.0,
                                   prompt_tokens=p_tok, completion_tokens=c_tok,
                                   cache_hit=True, logprobs=logprobs,
                                   texts=tuple(json.loads(texts)) if texts else None,
                                   notes=notes or "", reasoning=reasoning,
                                   reasoning_tokens=r_tok)
                    why = storable(hit)
                except (ValueError, TypeError) as exc:
                    why = f"unreadable ({type(exc).__name__})"
                if why:
                    log.info("cached answer %s… ignored (%s): asking the model again",
                             key[:12], why)
                    continue
                out[key] = hit
        return out

    def put_many(self, items: Sequence[tuple[str, Response]]) -> None:
        """Stores the successful responses among ``items`` that a run can store
        (:func:`storable`; the others are not cached, so they are asked again)."""
        rows = []
        for key, r in items:
            if r.status != "ok" or r.text is None or r.parts is not None:
                continue
            why = storable(r)
            if why:
                log.info("answer %s… not cached (%s)", key[:12], why)
                continue
            rows.append((key, r.text, r.prompt_tokens, r.completion_tokens,
                         json.dumps(r.logprobs) if r.logprobs is not None else None,
                         json.dumps(list(r.texts)) if r.texts is not None else None,
                         r.notes or None, r.reasoning, r.reasoning_tokens))
        if not rows or self._broken:
            return
        with self._lock:
            try:
                self._con.executemany(
                    "INSERT OR REPLACE INTO responses (key, text, prompt_tokens, "
                    "completion_tokens, logprobs, texts, notes, reasoning, reasoning_tokens) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
                self._con.commit()
            except (sqlite3.Error, ValueError, OverflowError) as exc:
                self._give_up(exc)

    def close(self) -> None:
        with self._lock:
            self._con.close()
