"""The matrix family's part of ``distbench view``: sampled trials with their prompt and answer.

Strata: model (``provider:model``) × bucket × mode × parse status, counted over every trial.
Each sampled trial shows the prompt (``calls.prompt_text`` of its ``call_id``; a model that
records no call, the dummy, gets the prompt rebuilt from the game's payoffs, as its runner
wrote it, and says so), the raw answer (``trials.raw_text``), the parse status and detail, the
decision as parsed, the game's payoff matrix with the chosen row marked and the Nash
strategies, and the scores. Prompts are stored once per distinct text (a game's trials share
one). All the SQL of the matrix viewer is in this module.
"""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np

from distbench.report.viewer import ViewItem, ViewOptions, ViewPart, clip, num, sampled, share
from distbench.store.catalog import cursor_records

FILTERS = (("model", "model"), ("bucket", "bucket"), ("mode", "mode"), ("status", "parse status"))

_STRATA_SQL = """
SELECT provider || ':' || model AS model, bucket, mode, parse_status, count(*) AS n
FROM trials GROUP BY ALL ORDER BY ALL
"""

_SAMPLE_SQL = """
SELECT r.*, g.payoff, g.nash_row, g.nash_col, g.value, c.prompt_text, c.style AS call_style,
       c.status AS call_status, c.error AS call_error, c.attempts
FROM ({ranked}) r
LEFT JOIN games g ON g.run_id = r.run_id AND g.game_id = r.game_id
LEFT JOIN calls c ON c.run_id = r.run_id AND c.call_id = r.call_id
ORDER BY r.provider, r.model, r.bucket, r.mode, r.parse_status, r._rank
"""


def _style(manifest: Any, provider: str, model: str) -> str:
    llm = (manifest.get("config") or {}).get("llm") if isinstance(manifest, dict) else None
    if isinstance(llm, dict) and llm.get("provider") == provider and llm.get("model") == model:
        return str(llm.get("style") or "chat")
    return "chat"


def _rebuilt_prompt(rec: dict[str, Any], manifest: Any) -> tuple[str | None, str]:
    """The prompt the runner sent, rebuilt from the payoffs (the dummy records no call)."""
    from distbench.games.matrix.prompts import mixed_prompt, pure_prompt, with_cue

    if rec["payoff"] is None:
        return None, "prompt (unknown: the game is missing)"
    payoff = np.asarray(rec["payoff"], dtype=np.float64)
    if rec["mode"] == "logprob":
        from distbench.games.answers.logprob import DEFAULT_CUE

        cue = ((manifest.get("config") or {}).get("logprob_cue") if isinstance(manifest, dict)
               else None) or DEFAULT_CUE
        return (with_cue(pure_prompt(payoff, style="completion"), cue),
                "prompt (rebuilt from the game: no call recorded)")
    style = _style(manifest, rec["provider"], rec["model"])
    make = pure_prompt if rec["mode"] == "pure" else mixed_prompt
    return make(payoff, style=style), f"prompt (rebuilt from the game, {style} style: no call recorded)"


def _decision(rec: dict[str, Any]) -> str:
    if rec["mode"] == "pure":
        d = rec["decision"]
        return "none (invalid)" if d is None else f"action {d + 1} (row index {d})"
    s = rec["strategy"]
    return "none (invalid)" if s is None else "[" + ", ".join(num(p, 3) for p in s) + "]"


def _payoff_grid(rec: dict[str, Any]) -> dict[str, Any]:
    payoff = rec["payoff"] or []
    cols = len(payoff[0]) if payoff else 0
    nash_row = rec["nash_row"] or []
    head = ["", *(f"col {j + 1}" for j in range(cols)), "Nash row"]
    rows = [[f"action {i + 1}", *(num(v) for v in row),
             num(nash_row[i], 3) if i < len(nash_row) else "n/a"]
            for i, row in enumerate(payoff)]
    rows.append(["Nash col", *(num(p, 3) for p in (rec["nash_col"] or [])), ""])
    mark = [rec["decision"]] if rec["mode"] == "pure" and rec["decision"] is not None else []
    return {"t": "grid", "label": f"payoff matrix (to the model, the row player; value "
            f"{num(rec['value'])})", "head": head, "rows": rows, "mark": mark}


def view(con: duckdb.DuckDBPyConnection, options: ViewOptions) -> ViewPart:
    """The matrix part of the viewer (see the module docstring)."""
    strata, chosen = sampled(con, options, _STRATA_SQL, "trials",  # a trial: about 1 KB
                             "provider, model, bucket, mode, parse_status", "s.trial_id", 800)
    shared: dict[str, str] = {}
    items = []
    for rec in cursor_records(con.execute(_SAMPLE_SQL.format(ranked=chosen))):
        model = f"{rec['provider']}:{rec['model']}"
        status = rec["parse_status"] or "(none)"
        key = (model, rec["bucket"] or "(none)", rec["mode"] or "(none)", status)
        prompt, label = rec["prompt_text"], "prompt (calls.prompt_text)"
        if prompt is None:
            prompt, label = _rebuilt_prompt(rec, options.manifest)
        about = [["model", model + (f" (tier {rec['tier']})" if rec["tier"] else "")],
                 ["game", f"{rec['game_id']} (bucket {rec['bucket']}, seed {rec['seed']})"],
                 ["mode, trial", f"{rec['mode']}, trial {rec['trial']}"],
                 ["parse status", status + (f": {rec['parse_detail']}" if rec["parse_detail"] else "")],
                 ["decision as parsed", _decision(rec)]]
        if rec["mode"] == "logprob":
            about.append(["label mass", num(rec["label_mass"])])
        if rec["call_status"] is not None and rec["call_status"] != "ok":
            about.append(["call", f"{rec['call_status']} after {rec['attempts']} attempt(s): "
                          f"{rec['call_error'] or ''}"])
        scores = [["nash_gap", num(rec["nash_gap"])], ["exploitability", num(rec["exploitability"])],
                  ["llm_value", num(rec["llm_value"])], ["br_value", num(rec["br_value"])],
                  ["gap_degenerate", num(rec["gap_degenerate"])]]
        blocks: list[dict[str, Any]] = [
            {"t": "row", "blocks": [{"t": "kv", "rows": about}, _payoff_grid(rec),
                                    {"t": "kv", "rows": scores}]},
            {"t": "text", "label": "raw answer (trials.raw_text)", "cls": "raw",
             "text": clip(rec["raw_text"], options.max_chars)},
        ]
        if prompt is not None:
            blocks.append({"t": "text", "label": label, "cls": "prompt", "open": False,
                           "ref": share(shared, clip(prompt, options.max_chars))})
        items.append(ViewItem(key, rec["_rank"] - 1, f"{rec['trial_id']} · {model}", blocks))
    return ViewPart("matrix", "Matrix games: trials", "trials", FILTERS, strata, items, shared,
                    good=("ok",), note="one card per trial: the model's raw answer, how it was "
                    "parsed and scored, the game, and the prompt (click to open)")
