"""Which logprob cue makes a base model's next tokens an action distribution?

Logprob mode reads the strategy from the probabilities of the tokens after the completion
prompt's cue (``distbench/games/answers/logprob.py``: white space and multi-digit labels are
followed, so the reading is the probability that the answer *reads* ``k``). A cue after which
the model mostly writes words gives a small ``label_mass``, and the strategy is then a reading
of noise. This script prints, per bundled model and cue, the mean and smallest label mass over
3x3 games, the calls the reading needed, and the time, in process (plain sampling).

    python benchmarks/bench_logprob_cue.py --games 20
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from distbench.games.answers.logprob import read_strategies
from distbench.games.matrix.generate import generate_games
from distbench.games.matrix.prompts import pure_prompt, with_cue
from distbench.llm.base import Response
from distbench.llm.local import LocalModel, find_model_path, first_token_logprobs

CUES = ("Action:", "Action: ", "Answer: Action", "I choose Action")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--models", nargs="+", default=["smollm2-135m-instruct", "gemma3-270m"])
    parser.add_argument("--cues", nargs="+", default=list(CUES))
    args = parser.parse_args()
    payoffs = generate_games("3x3_midVar_any", 42, 0, args.games)
    print(f"{args.games} games of 3x3_midVar_any, seed 42; label mass = probability that the "
          "text after the cue reads 1, 2 or 3")
    print(f"{'model':24} {'cue':20} {'mean mass':>9} {'min mass':>9} {'calls':>6} {'s/game':>7}")
    for name in args.models:
        model = LocalModel(find_model_path(model=name), logprobs=True)

        def ask(requests, model=model):
            out = []
            for req in requests:
                body = model.complete(req.prompt, max_tokens=1, temperature=req.temperature,
                                      seed=req.seed, logprobs=req.logprobs)
                out.append(Response(text=body["choices"][0]["text"],
                                    logprobs=first_token_logprobs(body)))
            return out

        for cue in args.cues:
            prompts = [with_cue(pure_prompt(p, style="completion"), cue) for p in payoffs]
            started = time.perf_counter()
            readings, calls = read_strategies(prompts, list(range(args.games)), 3, ask,
                                              temperature=1.0)
            secs = (time.perf_counter() - started) / args.games
            mass = np.array([r.label_mass for r in readings])
            print(f"{name:24} {cue!r:20} {mass.mean():9.3f} {mass.min():9.3f} {len(calls):6d} "
                  f"{secs:7.2f}", flush=True)
        model.close()


if __name__ == "__main__":
    main()
