"""GAMA-Bench's own prompts rendered by distbench from a checkout, against the ones its records
stored: for one leaderboard record per game, the round-1 description (the system message), the
round-1 request (stored in Gemini records only: their user turns keep it) and the round-1
report (its parts: user text, the canonical echo, user text) are rendered with
``distbench.games.gama.templates`` for the record's parameters and the round replayed through
``distbench.games.gama.rules`` (the seats' answers, Battle Royale's hit from the record), then
compared byte for byte. The role prompt a record was made with is not in its meta: the one
(or none) whose description matches is used, and printed.

GAMA's saved conversations lose messages (Public Goods keeps a sliding window from round 11;
Battle Royale's last save drops the message after the system one): a report part the record
no longer holds is not compared, and the earliest report still held is compared instead (its
round replayed the same way).

Usage::

    python benchmarks/bench_gama_templates.py /path/to/GAMABench
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from distbench.games.gama import rules, templates
from distbench.games.gama.records import GamaRecord, find_records, read_record

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gama_replay import replay  # noqa: E402  (the rules' replay of a record)

LEADERBOARD = {  # one record per game: (plain record, Gemini record for the stored request)
    "guessing": ("gpt-4o_guessing_game_v1_1.json", "gemini-1.5-pro_guessing_game_v1_1.json"),
    "bar": ("gpt-4o_bar_game_implicit_v1_1.json", "gemini-1.5-pro_bar_game_implicit_v1_1.json"),
    "dollar": ("gpt-4o_divide_dollar_v1_1.json", "gemini-1.5-pro_divide_dollar_v1_1.json"),
    "goods": ("gpt-4o_public_goods_v1_1.json", "gemini-1.5-pro_public_goods_v1_1.json"),
    "diner": ("gpt-4o_diner_dilemma_v1_1.json", "gemini-1.5-pro_diner_dilemma_v1_1.json"),
    "auction": ("gpt-4o_sealed_bid_auction_v1_1.json", "gemini-1.5-pro_sealed_bid_auction_v1_1.json"),
    "battle": ("gpt-4o_battle_royale_v1_1.json", "gemini-1.5-pro_battle_royale_v1_1.json"),
    "pirate": ("gpt-4o_pirate_game_v1_1.json", "gemini-1.5-pro_pirate_game_v1_1.json"),
}


def gemini_parts(rec: GamaRecord, seat: int) -> list[str]:
    """Every stored part of a Gemini seat's conversation, in order."""
    parts: list[str] = []
    for turn in rec.players[seat].raw_prompt:
        value = turn.get("parts") or []
        parts += [value] if isinstance(value, str) else [str(p) for p in value]
    return parts


def stored_description(rec: GamaRecord, seat: int) -> str:
    if "parts" in rec.players[seat].raw_prompt[0]:
        return gemini_parts(rec, seat)[0]
    return rec.players[seat].messages[0]["content"]


def check(label: str, ours: str, theirs: str, results: list[bool], why: str = "") -> None:
    same = ours == theirs
    results.append(same)
    print(f"  {label}: {'equal' if same else 'DIFFERS'}" + (f" ({why})" if why and not same else ""))
    if not same:
        for line in difflib.unified_diff(theirs.splitlines(), ours.splitlines(), "GAMA stored",
                                         "distbench rendered", lineterm="", n=0):
            print("    " + line)


def role_of(t: templates.Templates, rec: GamaRecord, seat: int) -> int | None:
    state = rules.new_game(rec.game, rec.params)
    stored = stored_description(rec, seat)
    for role in (None, 1, 2, 3):
        if templates.description(t, state, seat, role=role) == stored:
            return role
    return None


def report_check(t: templates.Templates, rec: GamaRecord, results: list[bool]) -> None:
    """The earliest round report the plain record still holds for seat 0 (or seat 1)."""
    seat = 0
    messages = rec.players[seat].messages
    replayed = replay(rec)
    for before, outcome in replayed:
        if seat not in outcome.actors and rec.game != "battle":
            continue
        parts = templates.report(t, before, outcome, seat)
        contents = [m["content"] for m in messages[1:]]
        # the first rendered part that the stored conversation holds anchors the comparison
        for skip in range(len(parts)):
            if parts[skip] in contents:
                at = contents.index(parts[skip])
                held = contents[at:at + len(parts) - skip]
                label = f"report round {outcome.round} (seat {seat})" + (
                    f", parts {skip + 1}.. (the first not kept by GAMA's save)" if skip else "")
                check(label, "\n---\n".join(parts[skip:]), "\n---\n".join(held), results)
                return
    print("  report: no rendered report found in the stored conversation")
    results.append(False)


def request_check(t: templates.Templates, rec: GamaRecord, results: list[bool]) -> None:
    """Round 1's request to seat 0 (and, in the Pirate Game, to a voter) against a Gemini
    record's stored one."""
    state = rules.new_game(rec.game, rec.params)
    for seat in ([0, 1] if rec.game == "pirate" else [0]):
        parts = gemini_parts(rec, seat)
        stored = parts[1] if len(parts) > 1 else ""
        plan = None
        if rec.game == "pirate" and seat:
            # GAMA prints the proposal as the proposer wrote it (numbers or strings of digits),
            # which the record keeps only inside the conversations: both forms are tried
            golds = list(rec.rounds[0]["gold_distribution"])
            forms = [{f"{i + 1}-th": g for i, g in enumerate(golds)},
                     {f"{i + 1}-th": str(g) for i, g in enumerate(golds)}]
            plan = next((f for f in forms if templates.request(t, state, seat, plan=f) == stored),
                        forms[0])
            print(f"  (the proposer wrote its golds as {type(next(iter(plan.values()))).__name__})")
        ours = templates.request(t, state, seat, plan=plan)
        why = ""
        if ours != stored and "(do not use markdown format)" in ours:
            why = ("the record predates the checkout's answer-format sentence, which later "
                   "gained '(do not use markdown format)'")
        check(f"request round 1 (seat {seat}, Gemini record)", ours, stored, results, why)


def all_descriptions(checkout: Path) -> None:
    """Every record's descriptions (every seat; the version of its file name, the role prompt
    that matches or none) against the stored ones: counts per version, and the records that
    differ."""
    equal: dict[str, list[int]] = {}
    for path in find_records(checkout / "raw_results"):
        rec = read_record(path)
        t = templates.open_templates(checkout, version=rec.version)
        role = role_of(t, rec, 0)
        state = rules.new_game(rec.game, rec.params)
        ok = all(templates.description(t, state, seat, role=role) == stored_description(rec, seat)
                 for seat in range(rec.params.players))
        counts = equal.setdefault(rec.version, [0, 0])
        counts[0] += ok
        counts[1] += 1
        if not ok:
            print(f"description differs: {path.relative_to(checkout)}")
    for version, (same, total) in sorted(equal.items()):
        print(f"descriptions equal, {version}: {same}/{total} records")


def all_reports(checkout: Path) -> None:
    """Every report of every round and seat of every leaderboard record (plain records: the
    parts the saved conversation still holds) against the stored conversation: a rendered
    report is found when its parts stand in the conversation in order, one after another."""
    found = total = 0
    missing: dict[str, int] = {}
    for path in find_records(checkout / "raw_results"):
        rec = read_record(path)
        if not (rec.name.model_label and rec.run_index and rec.version == "v1"):
            continue
        if "parts" in rec.players[0].raw_prompt[0]:
            continue  # Gemini turns merge parts of several messages
        t = templates.open_templates(checkout, version=rec.version)
        try:
            played = replay(rec)
        except ValueError:
            missing[str(path.relative_to(checkout))] = -1
            continue
        for seat in range(rec.params.players):
            contents = [m["content"] for m in rec.players[seat].messages[1:]]
            joined = "\x00".join(contents)
            for before, outcome in played:
                if rec.game == "pirate" and seat not in before.alive:
                    continue
                parts = templates.report(t, before, outcome, seat)
                # GAMA's saves drop the oldest messages: only reports still held count
                if not any(p in contents for p in parts[-1:]):
                    continue
                total += 1
                if "\x00".join(parts[1:]) in joined or "\x00".join(parts) in joined:
                    found += 1
                else:
                    key = str(path.relative_to(checkout))
                    missing[key] = missing.get(key, 0) + 1
    for name, count in sorted(missing.items()):
        print(f"reports differ: {name}: {count if count >= 0 else 'not replayable'}")
    print(f"reports equal (leaderboard records, plain): {found}/{total}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a GAMA-Bench checkout (commit 41ebccf)")
    parser.add_argument("--all", action="store_true",
                        help="also compare every record's descriptions (all versions v1..v5) "
                             "and every report of the plain leaderboard records")
    args = parser.parse_args(argv)
    t = templates.open_templates(args.checkout)
    if args.all:
        all_descriptions(args.checkout)
        all_reports(args.checkout)
    by_name = {p.name: p for p in find_records(args.checkout / "raw_results")}
    results: list[bool] = []
    for game, (plain_name, gemini_name) in LEADERBOARD.items():
        rec = read_record(by_name[plain_name])
        role = role_of(t, rec, 0)
        print(f"{game}: {plain_name} (role prompt: {role or 'none'})")
        state = rules.new_game(rec.game, rec.params)
        for seat in range(rec.params.players):
            ok = templates.description(t, state, seat, role=role) == stored_description(rec, seat)
            results.append(ok)
        print(f"  description (all {rec.params.players} seats): "
              f"{'equal' if all(results[-rec.params.players:]) else 'DIFFERS'}")
        report_check(t, rec, results)
        gem = read_record(by_name[gemini_name])
        before = len(results)
        request_check(t, gem, results)
        if not all(results[before:]):
            newer = [p for name, p in sorted(by_name.items()) if name.startswith("gemini")
                     and read_record(p).game == game and "do not use markdown" in p.read_text()]
            if newer:
                print(f"  a later Gemini record of the game, {newer[0].name} (not on the board):")
                request_check(t, read_record(newer[0]), results)
    print(f"equal: {sum(results)}/{len(results)} comparisons")
    print("(a request the record predates differs by the answer-format sentence GAMA changed later)")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
