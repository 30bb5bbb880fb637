"""The fog seed's import path (``benchmark.llm_agent_interface``, ``benchmark.telemetry``): its
agent interface on distbench's fog family, so an agent file written for the seed imports
unchanged. See :mod:`benchmark.llm_agent_interface`."""
