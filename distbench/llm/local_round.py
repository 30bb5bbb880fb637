"""Different prompts of one round decoded together, each conversation keeping its cache.

In a round of a multi-turn shard every unfinished episode asks at once (one ``generate`` call
of several requests). :class:`RoundDecoder` answers such a round in a llama.cpp context of its
own (unified KV cache, up to :data:`MAX_SEQUENCES` sequences): each prompt gets a sequence, its
new tokens are evaluated in chunks of at least ``_MIN_CHUNK`` (all sequences' chunks in one
batch), and every step decodes one token of each unfinished answer in one batch, each drawn by
its own sampler seeded with its request's seed.

A sequence keeps the cells of its last *prompt* (never those written while generating, which
were evaluated a token at a time): the next turn of the same conversation (the old prompt, the
answer and the new messages) finds the sequence whose prompt is its longest prefix and
evaluates only the rest, so a turn costs its new tokens rather than the whole conversation.
Memory is bounded: the context holds at most ``max_cells`` cells; sequences not in the round
are dropped, least recently used first, when the round needs their room, and a round that does
not fit even so is decoded in groups. A prompt longer than the model's context fails as in the
one-request path (``Requested tokens (N) exceed context window of M``), alone.

What that guarantees (``tests/llm/test_local_round.py``): a round's first tokens are drawn from
the same prompt logits as the one-request path (chunks of at least ``_MIN_CHUNK`` tokens give
bit-identical results); later tokens are evaluated in a batch with the other answers, whose
floating-point results differ slightly from the one-token evaluation of the one-request path, so
an answer may differ from that path's; the agreement measured is in ``benchmarks/README.md``.
The same calls in the same order give the same answers run to run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# Plain temperature sampling, like the OpenAI API.
_SAMPLING = {"top_p": 1.0, "top_k": 0, "min_p": 0.0, "typical_p": 1.0, "repeat_penalty": 1.0}
_SAMPLER_ARGS = dict(_SAMPLING)  # the same, as llama-cpp-python's sampler chain takes them

MAX_SEQUENCES = 64
"""Most sequences of the round context (more prompts in one round are decoded in groups)."""


@dataclass
class RoundItem:
    """One prompt of a round: its tokens, the sampling seed and settings, its stop strings."""

    tokens: list[int]
    seed: int
    max_tokens: int
    temperature: float
    stops: list[str] = field(default_factory=list)


@dataclass
class _Slot:
    tokens: list[int] = field(default_factory=list)  # the prompt whose cells the sequence holds
    used: int = 0  # the round that last used it (least recently used is dropped first)


def _common_prefix(old: Sequence[int], new: Sequence[int]) -> int:
    """How many leading tokens ``old`` and ``new`` share."""
    count = 0
    for a, b in zip(old, new, strict=False):
        if a != b:
            break
        count += 1
    return count


def _fill(batch: Any, entries: list[tuple[int, int, int]], *, logits_last: bool) -> None:
    """Puts (token, position, sequence) entries in a llama batch; logits for the last entry
    only (``logits_last``) or for every entry."""
    raw = batch.batch
    raw.n_tokens = len(entries)
    for i, (token, position, seq) in enumerate(entries):
        raw.token[i] = token
        raw.pos[i] = position
        raw.seq_id[i][0] = seq
        raw.n_seq_id[i] = 1
        raw.logits[i] = not logits_last or i == len(entries) - 1


def _chunks(tokens: list[int], size: int, minimum: int = 2) -> list[list[int]]:
    """``tokens`` in chunks of at most ``size`` (>= ``2 * minimum - 1``), none shorter than
    ``minimum`` unless there is only one chunk."""
    if minimum < 1 or size < 2 * minimum - 1:
        raise ValueError(f"chunk size must be at least {2 * minimum - 1}, got {size}")
    chunks = [tokens[i : i + size] for i in range(0, len(tokens), size)]
    if len(chunks) > 1 and len(chunks[-1]) < minimum:
        moved = minimum - len(chunks[-1])
        chunks[-1][:0] = chunks[-2][-moved:]
        del chunks[-2][-moved:]
    return chunks


class RoundDecoder:
    """The round context of one :class:`~distbench.llm.local_model.LocalModel`; the caller
    holds the model's lock.

    Args:
        llm: The model's plain ``Llama`` instance (its weights, tokenizer and sampler chain).
        n_ctx: The model's context length (a prompt of at least this many tokens fails).
        n_threads: CPU threads.
        max_cells: Most KV cells of the round context (the live conversations' prompts and
            the round's answers).
        min_chunk: Fewest tokens evaluated in one chunk (see the module docstring).
        keep_prefixes: Keep each conversation's prompt cells between rounds (off by default:
            see the module docstring).
    """

    def __init__(self, llm: Any, *, n_ctx: int, n_threads: int, max_cells: int,
                 min_chunk: int, keep_prefixes: bool = False) -> None:
        self.llm, self.n_ctx, self.n_threads = llm, n_ctx, n_threads
        self.max_cells, self.min_chunk = max_cells, min_chunk
        self._ctx: Any = None
        self._slots = [_Slot() for _ in range(MAX_SEQUENCES)]
        self._round = 0
        self.evaluated = 0  # prompt tokens evaluated (not reused), for tests and benchmarks
        self.keep_prefixes = keep_prefixes

    def close(self) -> None:
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None

    def _context(self, cells: int) -> Any:
        """The round context with room for ``cells`` cells, made (in steps of 4096 cells, up
        to ``max_cells``) when the current one is smaller; a new context holds nothing."""
        from llama_cpp import _internals as internals
        from llama_cpp import llama_cpp as low

        if self._ctx is not None and self._ctx.n_ctx() >= cells:
            return self._ctx
        self.close()
        self._slots = [_Slot() for _ in range(MAX_SEQUENCES)]
        params = low.llama_context_params.from_buffer_copy(self.llm.context_params)
        params.n_ctx = min(self.max_cells, -(-cells // 4096) * 4096)
        params.n_batch = params.n_ubatch = 512
        params.n_seq_max = MAX_SEQUENCES
        params.kv_unified = True
        params.n_threads = params.n_threads_batch = self.n_threads
        self._ctx = internals.LlamaContext(model=self.llm._model, params=params, verbose=False)
        return self._ctx

    def decode(self, items: Sequence[RoundItem]) -> list[tuple[str, str, int] | Exception]:
        """Per item (text, finish reason, completion tokens), or the exception that failed it
        (a prompt too long for the model's context)."""
        out: list[tuple[str, str, int] | Exception] = [
            ValueError(f"Requested tokens ({len(item.tokens)}) exceed context window of "
                       f"{self.n_ctx}") if not 0 < len(item.tokens) < self.n_ctx
            else RuntimeError("not decoded") for item in items]
        first_of: dict[tuple[Any, ...], int] = {}  # the same call twice is decoded once
        copies: dict[int, int] = {}
        for i, item in enumerate(items):
            key = (tuple(item.tokens), item.seed, item.max_tokens, item.temperature,
                   tuple(item.stops))
            copies[i] = first_of.setdefault(key, i)
        todo = [i for i, item in enumerate(items)
                if not isinstance(out[i], ValueError) and copies[i] == i]
        budget = {i: min(items[i].max_tokens, self.n_ctx - len(items[i].tokens)) for i in todo}
        while todo:  # groups that fit in max_cells (usually one)
            group, cells = [], 0
            for i in todo:
                need = len(items[i].tokens) + budget[i] + 1
                if group and (cells + need > self.max_cells or len(group) == MAX_SEQUENCES):
                    break
                group.append(i)
                cells += need
            todo = todo[len(group):]
            results = self._decode_group([items[i] for i in group], [budget[i] for i in group],
                                         cells)
            for i, result in zip(group, results, strict=True):
                out[i] = result
        return [out[copies[i]] for i in range(len(items))]

    def _assign(self, items: Sequence[RoundItem], cells: int) -> tuple[list[int], list[int]]:
        """(sequence, reused prompt tokens) per item: the free sequence whose prompt shares
        the longest prefix with the item's (leaving at least ``min_chunk`` tokens to
        evaluate), else an empty or least recently used one; sequences not in the round are
        emptied, least recently used first, until the round fits."""
        self._round += 1
        free = set(range(MAX_SEQUENCES))
        seqs, reuse = [], []
        for item in items:
            def score(s: int, item: RoundItem = item) -> tuple[int, int, int]:
                slot = self._slots[s]
                shared = min(_common_prefix(slot.tokens, item.tokens),
                             len(item.tokens) - self.min_chunk)
                return (max(shared, 0), -len(slot.tokens) if shared <= 0 else 0, -slot.used)
            best = max(sorted(free), key=score)
            free.discard(best)
            seqs.append(best)
            reuse.append(score(best)[0])
            self._slots[best].used = self._round
        held = sum(len(self._slots[s].tokens) for s in free)
        room = self._ctx.n_ctx() if self._ctx is not None else 0
        for s in sorted(free, key=lambda s: self._slots[s].used):
            if held + cells <= room:
                break
            held -= len(self._slots[s].tokens)
            self._slots[s].tokens = []
        return seqs, reuse

    def _decode_group(self, items: Sequence[RoundItem], budgets: list[int], cells: int
                      ) -> list[tuple[str, str, int] | Exception]:
        from llama_cpp import _internals as internals
        from llama_cpp import llama_cpp as low

        if self._ctx is None or self._ctx.n_ctx() < cells:
            self._context(cells)
        ctx = self._ctx
        memory = low.llama_get_memory(ctx.ctx)
        if not self.keep_prefixes:  # the cells' layout then depends on this round alone
            low.llama_memory_clear(memory, True)
            self._slots = [_Slot() for _ in range(MAX_SEQUENCES)]
        seqs, reuse = self._assign(items, cells)
        for s, slot in enumerate(self._slots):
            if not slot.tokens:
                low.llama_memory_seq_rm(memory, s, -1, -1)
        for s, kept in zip(seqs, reuse, strict=True):
            low.llama_memory_seq_rm(memory, s, kept, -1)
            self._slots[s].tokens = []  # until its prompt's cells are complete
        batch = internals.LlamaBatch(n_tokens=max(512, len(items)), embd=0, n_seq_max=1,
                                     verbose=False)
        try:
            samplers = []
            for item in items:
                self.llm.set_seed(item.seed)
                samplers.append(self.llm._init_sampler(temp=item.temperature, **_SAMPLER_ARGS))
            first = self._evaluate(ctx, batch, items, seqs, reuse, samplers)
            for item, s in zip(items, seqs, strict=True):
                self._slots[s].tokens = list(item.tokens)
            results = decode_steps(self.llm, ctx, batch, [i.tokens for i in items], seqs,
                                   samplers, budgets, [i.stops for i in items], first=first)
        finally:
            batch.close()
        for s in seqs:  # drop the answers' cells: the next turn re-evaluates them in a chunk
            low.llama_memory_seq_rm(memory, s, len(self._slots[s].tokens), -1)
        return [(text, why, n) for text, why, n in results]

    def _evaluate(self, ctx: Any, batch: Any, items: Sequence[RoundItem], seqs: list[int],
                  reuse: list[int], samplers: Sequence[Any]) -> list[int]:
        """Evaluates each item's new prompt tokens (chunks of at least ``min_chunk``, packed
        into batches of up to 512 tokens, every item's last chunk after all other chunks) and
        samples each item's first token from its prompt's last logits; returns those tokens."""
        early: list[tuple[int, list[int], int]] = []  # (item, chunk, start position)
        final: list[tuple[int, list[int], int]] = []
        for j, (item, kept) in enumerate(zip(items, reuse, strict=True)):
            parts = _chunks(item.tokens[kept:], 512, self.min_chunk)
            position = kept
            for k, chunk in enumerate(parts):
                (final if k == len(parts) - 1 else early).append((j, chunk, position))
                position += len(chunk)
            self.evaluated += len(item.tokens) - kept
        first = [0] * len(items)
        entries: list[tuple[int, int, int]] = []
        rows: dict[int, int] = {}

        def flush() -> None:
            if not entries:
                return
            _fill(batch, entries, logits_last=False)
            for i in range(len(entries)):
                batch.batch.logits[i] = i in rows.values()
            ctx.decode(batch)
            for j, row in rows.items():
                first[j] = samplers[j].sample(ctx, row)
            entries.clear()
            rows.clear()

        for is_last, (j, chunk, position) in [(False, c) for c in early] + [(True, c)
                                                                           for c in final]:
            if len(entries) + len(chunk) > 512:
                flush()
            entries.extend((token, position + t, seqs[j]) for t, token in enumerate(chunk))
            if is_last:
                rows[j] = len(entries) - 1
        flush()
        return first


def decode_steps(llm: Any, ctx: Any, batch: Any, prompts: Sequence[list[int]],
                 seqs: Sequence[int], samplers: Sequence[Any], budgets: Sequence[int],
                 stops: Sequence[list[str]], *, first: Sequence[int] | None = None,
                 rows: dict[int, int] | None = None) -> list[tuple[str, str, int]]:
    """Decodes answers together: sequence ``seqs[j]`` continues ``prompts[j]``, starting from
    the token ``first[j]`` already drawn, else from the logits in row ``rows[j]`` of the last
    decoded batch, sampled by ``samplers[j]``, up to
    ``budgets[j]`` tokens or a stop string of ``stops[j]`` or an end-of-generation token,
    handled as llama-cpp-python's ``create_completion`` does. Returns per answer (text, finish
    reason, tokens generated)."""
    from llama_cpp import llama_cpp as low

    vocab = llm._model.vocab
    count = len(prompts)
    out: list[list[int]] = [[] for _ in range(count)]
    texts: list[bytes | None] = [None] * count
    reasons = ["length"] * count
    multibyte = [0] * count
    stop_bytes = [[s.encode("utf-8") for s in group if s] for group in stops]
    index = dict(rows or {})
    active = list(range(count))
    while active:
        step = []
        for j in active:
            token = first[j] if first is not None and not index else samplers[j].sample(
                ctx, index[j])
            if low.llama_vocab_is_eog(vocab, token):
                texts[j], reasons[j] = llm.detokenize(out[j], prev_tokens=prompts[j]), "stop"
                continue
            out[j].append(token)
            text = llm.detokenize(out[j], prev_tokens=prompts[j])
            for k, char in enumerate(text[-3:]):
                k = 3 - k
                for num, pattern in ((2, 192), (3, 224), (4, 240)):
                    if num > k and pattern & char == pattern:
                        multibyte[j] = num - k
            if multibyte[j] > 0:
                multibyte[j] -= 1
                step.append(j)
                continue
            found = [s for s in stop_bytes[j] if s in text]
            if found:
                texts[j], reasons[j] = text[: text.index(found[0])], "stop"
                continue
            if len(out[j]) >= budgets[j]:
                texts[j] = text
                continue
            step.append(j)
        active = step
        if not active:
            break
        _fill(batch, [(out[j][-1], len(prompts[j]) + len(out[j]) - 1, seqs[j]) for j in active],
              logits_last=False)
        ctx.decode(batch)
        index = {j: i for i, j in enumerate(active)}
    results = []
    for j in range(count):
        raw = texts[j] if texts[j] is not None else llm.detokenize(out[j], prev_tokens=prompts[j])
        results.append((raw.decode("utf-8", errors="ignore"), reasons[j], len(out[j])))
    return results

