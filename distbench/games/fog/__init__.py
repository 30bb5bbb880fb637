"""Fog-of-war skirmish: strategic reasoning under incomplete information, with belief
telemetry (GAMES.md section 3). Rules in :mod:`.rules`, agents in :mod:`.agents`, the text
interface in :mod:`.text`, metrics in :mod:`.metrics`, tables in :mod:`.schema`, planning in
:mod:`.plan` and the shard runner in :mod:`.runner`."""
