"""distbench-beauty: an example plugin package for distbench.

- ``distbench_beauty.family``: a fourth game family, ``beauty``, the p-beauty contest
  ("guess 2/3 of the average"), with its tables, runner, summary, report section, flags and
  sweep-spec section;
- ``distbench_beauty.constant``: a model provider, ``constant``, that answers every request
  with the text given as the model name (``--llm-type constant --llm-model "Action: 1"``).

Both are found through entry points (``pyproject.toml``), so they work in parallel runs on
Ray and on a cluster whose nodes have the package installed. Nothing under ``distbench/`` is
edited.
"""
