"""An endpoint's concurrency reaches its connection pools (issue 35's speed): the limit is the
transport's (an httpx client given a transport ignores its own), split into pools small
enough that httpcore's per-pool matching stays cheap; every call still answered."""

from __future__ import annotations

import asyncio

from distbench.llm.base import Request
from distbench.llm.http import POOL_CONNECTIONS, OpenAICompatibleBackend, pool_sizes
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server


def test_pool_sizes_split_the_connections_evenly():
    assert pool_sizes(4, 8) == [4]
    assert pool_sizes(20, 8) == [7, 7, 6]
    assert pool_sizes(1000, 8) == [8] * 125
    assert sum(pool_sizes(301, 8)) == 301 and max(pool_sizes(301, 8)) <= 8


def test_the_concurrency_limit_reaches_the_pools_and_every_call_answers():
    with start_server(ServerConfig(seed=1)) as server:
        spec = make_spec("llamacpp", "mock", base_url=server.url, max_concurrency=20,
                         cache=False, max_retries=0)
        backend = OpenAICompatibleBackend(spec)

        async def ask() -> tuple[list, list[int]]:
            out = await backend.generate([Request(prompt=f"q{i}", seed=i) for i in range(30)])
            sizes = [c._transport._pool._max_connections for c in backend._clients]
            keep = [c._transport._pool._max_keepalive_connections for c in backend._clients]
            await backend.aclose()
            return out, sizes + keep

        answers, sizes = asyncio.run(ask())
    assert all(a.status == "ok" for a in answers)
    pools = pool_sizes(20, POOL_CONNECTIONS)
    assert len(pools) > 1 and sizes == pools + pools
