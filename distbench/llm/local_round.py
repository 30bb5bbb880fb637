"""Different prompts of one round decoded together, each conversation keeping its cache.

In a round of a multi-turn shard every unfinished episode asks at once (one ``generate`` call
of several requests). :class:`RoundDecoder` answers such a round in a llama.cpp context of its
own with one KV *stream* per sequence (``kv_unified=False``, up to :data:`MAX_SEQUENCES`
streams): each prompt gets a stream, its new tokens are evaluated in chunks of at least
``_MIN_CHUNK``, and every step
decodes one token of each unfinished answer in one batch, each drawn by its own sampler seeded
with its request's seed.

A stream keeps the cells of its last *prompt* (never those written while generating): the
next turn of the same conversation (the old prompt, the answer and the new messages) finds the
stream whose prompt is its longest prefix and evaluates only the rest, so a turn costs its new
tokens rather than the whole conversation. Memory is bounded: the context holds at most
``max_cells`` cells, split into equal streams long enough for the round's longest prompt and
its completion budget (rounded up to 1,024 cells); a round of more prompts than streams is
decoded in groups. A prompt longer than the model's context fails as in the one-request path
(``Requested tokens (N) exceed context window of M``), alone.

Why streams: in a unified KV cache the sequences' cells interleave, and where a token's cells
lie changes the order of the floating-point sums of attention, so an answer depended on the
other prompts of its round and on the cells earlier rounds left. In a stream of its own a
sequence's cells lie in position order from cell 0 whatever else is in the context, and
llama.cpp computes each stream's attention apart: measured on SmolLM2 (this project's x86 VM),
a prompt's logits and every decoding step's are bit-identical to the one-request path's, be
the prompt packed with others, its prefix reused from an earlier turn, or its step decoded
with other answers. So an answer is the one-request path's answer for the same call and seed
(``tests/llm/test_local_round.py``), whatever else is in the round or ran before.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

# Plain temperature sampling, like the OpenAI API.
_SAMPLING = {"top_p": 1.0, "top_k": 0, "min_p": 0.0, "typical_p": 1.0, "repeat_penalty": 1.0}
_SAMPLER_ARGS = dict(_SAMPLING)  # the same, as llama-cpp-python's sampler chain takes them

MAX_SEQUENCES = 64
"""Most sequences of the round context (more prompts in one round are decoded in groups)."""
_STREAM_STEP = 1024  # a stream's cells are a multiple of this
_COPY_GAIN = 32  # fewest prompt tokens a stream copy must save (a copy costs ~10 ms)
# Streams per prompt of a round: the conversations of the episodes that do not ask this round
# (the other half of a negotiation's, whose turn it is not) keep theirs for the next one.
_SPARE = 2


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


def micro_batches(seqs: Sequence[int]) -> int:
    """How many micro-batches llama.cpp cuts one decoding step of sequences ``seqs`` into:
    ``split_equal(sequential=true)`` makes one per run of consecutive sequence ids."""
    ids = sorted(set(seqs))
    return sum(1 for i, s in enumerate(ids) if i == 0 or s != ids[i - 1] + 1)


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
        max_cells: Most KV cells of the round context, all streams together.
        min_chunk: Fewest tokens evaluated in one chunk (see the module docstring).
    """

    def __init__(self, llm: Any, *, n_ctx: int, n_threads: int, max_cells: int,
                 min_chunk: int) -> None:
        self.llm, self.n_ctx, self.n_threads = llm, n_ctx, n_threads
        self.max_cells, self.min_chunk = max_cells, min_chunk
        self._ctx: Any = None
        self._slots: list[_Slot] = []  # one per stream of the context
        self._stream_cells = 0
        self._round = 0
        self.evaluated = 0  # prompt tokens evaluated (not reused), for tests and benchmarks
        self.copied = 0  # streams copied for a shared prefix
        self.retune: Retune | None = None  # picks the threads again during a round
        self.steps = 0  # decoding steps, and the micro-batches llama.cpp cut them into, for
        self.micro_batches = 0  # benchmarks (totals: a long-lived decoder keeps no list)

    def close(self) -> None:
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None
        self._slots = []

    def _context(self, count: int, need: int) -> int:
        """Makes sure the context has streams of at least ``need`` cells, as many as ``count``
        allows within ``max_cells`` (at least one); returns how many streams it has. A new
        context (more streams or longer ones than the current) holds nothing."""
        from llama_cpp import _internals as internals
        from llama_cpp import llama_cpp as low

        cells = max(-(-need // _STREAM_STEP) * _STREAM_STEP, self._stream_cells)
        streams = max(1, min(MAX_SEQUENCES, max(_SPARE * count, len(self._slots)),
                             self.max_cells // cells))
        if self._ctx is not None and cells == self._stream_cells and streams <= len(self._slots):
            return len(self._slots)
        self.close()
        params = low.llama_context_params.from_buffer_copy(self.llm.context_params)
        params.n_ctx = streams * cells
        params.n_batch = params.n_ubatch = 512
        params.n_seq_max = streams
        params.kv_unified = False  # a stream per sequence: see the module docstring
        params.n_threads = params.n_threads_batch = self.n_threads
        self._ctx = internals.LlamaContext(model=self.llm._model, params=params, verbose=False)
        self._slots = [_Slot() for _ in range(streams)]
        self._stream_cells = cells
        return streams

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
        if todo:
            need = max(len(items[i].tokens) + budget[i] + 1 for i in todo)
            streams = self._context(len(todo), need)
        while todo:  # groups of at most one item per stream (usually one group)
            group, todo = todo[:streams], todo[streams:]
            results = self._decode_group([items[i] for i in group], [budget[i] for i in group])
            for i, result in zip(group, results, strict=True):
                out[i] = result
        return [out[copies[i]] for i in range(len(items))]

    def _assign(self, items: Sequence[RoundItem]) -> list[int]:
        """The stream of each item. An item whose earlier prompt a stream holds (the same
        conversation's last turn: that prompt is a prefix of the item's) continues there;
        every other item takes the least recently used stream left (an empty one first), so
        that it does not overwrite a conversation that asks again in a later round (in a
        negotiation round only the episodes whose turn it is ask); the instructions it shares
        with other prompts are copied from their stream (:meth:`_evaluate`)."""
        self._round += 1
        free = set(range(len(self._slots)))
        seqs = [-1] * len(items)
        for i, item in enumerate(items):
            held = [s for s in free if 0 < len(self._slots[s].tokens) == _common_prefix(
                self._slots[s].tokens, item.tokens)]
            if held:
                seqs[i] = max(held, key=lambda s: (len(self._slots[s].tokens), -s))
                free.discard(seqs[i])
        for i, item in enumerate(items):
            if seqs[i] < 0:
                seqs[i] = min(free, key=lambda s, item=item: (
                    self._slots[s].used, -self._shared(self._slots[s].tokens, item), s))
                free.discard(seqs[i])
        for s in seqs:
            self._slots[s].used = self._round
        return seqs

    def _shared(self, tokens: Sequence[int], item: RoundItem) -> int:
        """How many of the item's prompt tokens a stream holding ``tokens`` can reuse: their
        common prefix, leaving at least ``min_chunk`` tokens to evaluate."""
        return max(0, min(_common_prefix(tokens, item.tokens), len(item.tokens) - self.min_chunk))

    def _decode_group(self, items: Sequence[RoundItem], budgets: list[int]
                      ) -> list[tuple[str, str, int] | Exception]:
        from llama_cpp import _internals as internals
        from llama_cpp import llama_cpp as low

        ctx = self._ctx
        memory = low.llama_get_memory(ctx.ctx)
        seqs = self._assign(items)
        batch = internals.LlamaBatch(n_tokens=max(512, len(items)), embd=0, n_seq_max=1,
                                     verbose=False)
        try:
            samplers = []
            for item in items:
                self.llm.set_seed(item.seed)
                samplers.append(self.llm._init_sampler(temp=item.temperature, **_SAMPLER_ARGS))
            first = [self._evaluate(ctx, memory, batch, item, seq, sampler)
                     for item, seq, sampler in zip(items, seqs, samplers, strict=True)]
            steps: list[int] = []
            results = decode_steps(self.llm, ctx, batch, [i.tokens for i in items], seqs,
                                   samplers, budgets, [i.stops for i in items], first=first,
                                   steps=steps, retune=self.retune)
            self.steps += len(steps)
            self.micro_batches += sum(steps)
        finally:
            batch.close()
            for s in seqs:  # drop the answers' cells: the next turn evaluates them in a chunk
                low.llama_memory_seq_rm(memory, s, len(self._slots[s].tokens), -1)
        return [(text, why, n) for text, why, n in results]

    def _evaluate(self, ctx: Any, memory: Any, batch: Any, item: RoundItem, seq: int,
                  sampler: Any) -> int:
        """Evaluates the item's prompt in stream ``seq`` after the prefix it can reuse, and
        samples its first token from the prompt's last logits.

        The prefix is the stream's own, or another stream's when that one shares at least
        ``_COPY_GAIN`` more tokens (the instructions the round's prompts share): that stream
        is copied whole into ``seq`` (llama.cpp copies streams whole, at the next decode,
        which is this item's). The new tokens go in chunks of at least ``min_chunk``, one
        sequence per ``llama_decode`` (llama.cpp splits a batch of several streams into
        micro-batches of equal tokens per stream, which would cut a prompt into other, maybe
        one-token, chunks)."""
        from llama_cpp import llama_cpp as low

        kept = self._shared(self._slots[seq].tokens, item)
        source = max(range(len(self._slots)),
                     key=lambda s: (self._shared(self._slots[s].tokens, item), -s))
        if source != seq and self._shared(self._slots[source].tokens, item) >= kept + _COPY_GAIN:
            low.llama_memory_seq_cp(memory, source, seq, -1, -1)
            kept = self._shared(self._slots[source].tokens, item)
            self.copied += 1
        low.llama_memory_seq_rm(memory, seq, kept, -1)
        self._slots[seq].tokens = []  # until its prompt's cells are complete
        position = kept
        for chunk in _chunks(item.tokens[kept:], 512, self.min_chunk):
            _fill(batch, [(t, position + i, seq) for i, t in enumerate(chunk)],
                  logits_last=True)
            ctx.decode(batch)
            position += len(chunk)
        self.evaluated += len(item.tokens) - kept
        self._slots[seq].tokens = list(item.tokens)
        return sampler.sample(ctx, len(chunk) - 1)


class Retune:
    """Calls ``retune`` (which picks the llama threads again) at most every ``every`` seconds;
    as a llama-cpp-python stopping criterion it never stops a generation.

    A call or round can last minutes, and the load changes under it: another process (the
    other model of a tournament, a test worker) starting to decode beside two llama threads
    turns each step's barrier into a wait for a descheduled thread (a round of 6 took 162 s
    instead of 4.5, ``benchmarks/bench_local_threads.py``). The thread count changes no
    answer."""

    every = 0.5

    def __init__(self, retune: Callable[[], Any]) -> None:
        self.retune = retune
        self._at = time.monotonic()

    def __call__(self, *_: Any) -> bool:
        now = time.monotonic()
        if now - self._at >= self.every:
            self._at = now
            self.retune()
        return False


def decode_steps(llm: Any, ctx: Any, batch: Any, prompts: Sequence[list[int]],
                 seqs: Sequence[int], samplers: Sequence[Any], budgets: Sequence[int],
                 stops: Sequence[list[str]], *, first: Sequence[int] | None = None,
                 rows: dict[int, int] | None = None, steps: list[int] | None = None,
                 retune: Retune | None = None) -> list[tuple[str, str, int]]:
    """Decodes answers together: sequence ``seqs[j]`` continues ``prompts[j]``, starting from
    the token ``first[j]`` already drawn, else from the logits in row ``rows[j]`` of the last
    decoded batch, sampled by ``samplers[j]``, up to
    ``budgets[j]`` tokens or a stop string of ``stops[j]`` or an end-of-generation token,
    handled as llama-cpp-python's ``create_completion`` does. Returns per answer (text, finish
    reason, tokens generated). Appends each step's :func:`micro_batches` to ``steps``; calls
    ``retune`` before each step."""
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
        if steps is not None:
            steps.append(micro_batches([seqs[j] for j in active]))
        if retune is not None:
            retune()
        ctx.decode(batch)
        index = {j: i for i, j in enumerate(active)}
    results = []
    for j in range(count):
        raw = texts[j] if texts[j] is not None else llm.detokenize(out[j], prev_tokens=prompts[j])
        results.append((raw.decode("utf-8", errors="ignore"), reasons[j], len(out[j])))
    return results

