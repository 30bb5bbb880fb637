"""``distbench import gama RAW_RESULTS_DIR --run-id NAME``: GAMA-Bench's published records
brought into a distbench run, scored by distbench's code.

Every record file under the folder becomes one game run in the ``gama_*`` tables
(:mod:`.schema`): ``gama_games`` (with GAMA's score, :func:`scoring.gama_score`),
``gama_rounds`` (GAMA's round record as JSON and its key numbers), ``gama_moves`` (one row per
round and answering seat: GAMA's canonical echo as the raw answer, the parsed answer, the
payoff, the distance from the equilibrium) and ``gama_players``. The records are read, never
changed. One shard per folder of records (``bar_game_implicit``, ``sealed_bid_auction/
first_price``, ...); re-running with the same run id resumes (committed folders are kept).
A file that is not a record as published stops the import with one line naming it.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distbench.games.base import stable_hash
from distbench.games.gama.records import GamaRecord, RecordError, find_records, read_record
from distbench.games.gama.rules import GAMA_LABELS, equilibrium, l1_to_ne, vote_is_correct
from distbench.games.gama.schema import TABLES
from distbench.games.gama.scoring import gama_score, round_score

HARNESS = "gama-bench"
"""``harness`` of imported rows: GAMA-Bench's own play."""


@dataclass(frozen=True)
class ImportResult:
    """What an import did.

    Attributes:
        run_dir: The run folder.
        records: Record files in the folder.
        shards: Folders of records (shards) planned.
        imported: Shards written now (the rest were committed by an earlier import).
        games: Game runs in the run.
        scored: Of those, scored.
    """

    run_dir: Path
    records: int
    shards: int
    imported: int
    games: int
    scored: int


def game_rows(rec: GamaRecord, run_id: str, shard_id: str, source: str) -> dict[str, list[dict]]:
    """The rows of one record in the four tables (table name -> rows)."""
    # GAMA keeps both auctions' records under the same file names (first_price/, second_price/)
    where = f"{rec.variant}/" if rec.game == "auction" else ""
    game_id = f"gama/{rec.game}/{where}{rec.path.stem}"
    key = {"run_id": run_id, "shard_id": shard_id, "game_id": game_id, "game": rec.game}
    p = rec.params
    status, detail, score = "ok", "", None
    try:
        score = gama_score(rec.game, p, rec.rounds, rec.round_id)
    except (ValueError, TypeError, IndexError, ZeroDivisionError) as exc:
        status, detail = "malformed", f"{type(exc).__name__}: {exc}"
    rounds, moves = [], []
    per_seat: dict[int, dict[str, Any]] = defaultdict(lambda: {"moves": 0, "payoff": [], "dist": []})
    eq = equilibrium(rec.game, p)
    alive = list(range(p.players))
    try:
        for index, record in enumerate(rec.rounds):
            t = index + 1
            actors, answers, roles = _actors(rec, index, record, alive)
            payoffs = _payoffs(rec, record, actors, answers)
            dists = _distances(rec, index, record, actors, answers, eq)
            winners, survivors = _winners(rec, record, actors, answers, alive)
            rounds.append({**key, "round": t, "actors": actors,
                           "aggregates_json": json.dumps(record, sort_keys=True),
                           "mean_answer": _mean_answer(rec.game, record),
                           "target": _target(rec, record),
                           "winners": winners, "survivors": survivors,
                           "round_score": _safe_round_score(rec, record)})
            for seat, answer, role, payoff, dist in zip(actors, answers, roles, payoffs, dists, strict=False):
                text, number = _answer_text(answer)
                moves.append({**key, "round": t, "seat": seat, "player": rec.players[seat].model,
                              "model": rec.players[seat].model, "role": role,
                              "answer_raw": _echo(rec.game, role, answer), "answer": text,
                              "answer_number": number, "status": "ok", "reasks": 0,
                              "payoff": payoff, "equilibrium_distance": dist, "call_id": None})
                s = per_seat[seat]
                s["moves"] += 1
                if payoff is not None:
                    s["payoff"].append(payoff)
                if dist is not None:
                    s["dist"].append(dist)
            alive = list(survivors)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise RecordError(f"{rec.path}: malformed round {len(rounds) + 1} "
                          f"({type(exc).__name__}: {exc})") from None
    dists = [m["equilibrium_distance"] for m in moves if m["equilibrium_distance"] is not None]
    models = rec.models
    game = {**key, "variant": rec.variant, "version": rec.version, "run_index": rec.run_index,
            "run_tag": rec.name.tag, "source": source, "params_json": p.to_json(),
            "players": p.players, "rounds": len(rec.rounds), "model": rec.model,
            "models": models, "model_label": rec.name.model_label, "seed": None,
            "gama_score": score, "equilibrium_distance": sum(dists) / len(dists) if dists else None,
            "invalid_answers": 0, "reasks": 0, "status": status, "detail": detail,
            "harness": HARNESS}
    totals = {seat: (sum(per_seat[seat]["payoff"]) if per_seat[seat]["payoff"] else None)
              for seat in range(p.players)}
    ranks = finishing_ranks(rec.game, totals, set(alive))
    players = []
    for seat in range(p.players):
        s = per_seat[seat]
        players.append({**key, "seat": seat, "player": models[seat] if seat < len(models) else "",
                        "model": models[seat] if seat < len(models) else "",
                        "moves": s["moves"], "valid_moves": s["moves"],
                        "total_payoff": totals[seat],
                        "mean_distance": sum(s["dist"]) / len(s["dist"]) if s["dist"] else None,
                        "survived": seat in alive, "rank": ranks[seat]})
    return {"gama_games": [game], "gama_rounds": rounds, "gama_moves": moves,
            "gama_players": players}


def finishing_ranks(game: str, totals: dict[int, float | None], survivors: set[int]) -> dict[int, int]:
    """Finishing order, 1 = best, ties sharing the best rank: survivors before the eliminated
    (Battle Royale, Pirate Game), then by total payoff (a seat without one counts 0)."""
    def key(seat: int) -> tuple:
        return (seat in survivors, totals.get(seat) or 0.0)

    order = sorted(totals, key=key, reverse=True)
    ranks: dict[int, int] = {}
    for position, seat in enumerate(order, start=1):
        prev = order[position - 2] if position > 1 else None
        ranks[seat] = ranks[prev] if prev is not None and key(prev) == key(seat) else position
    return ranks


def _actors(rec: GamaRecord, index: int, record: dict, alive: list[int]):
    """The round's answering seats, their answers and roles. Simultaneous games: each seat's
    answer from its own ``records`` (GAMA shuffles the round's ``responses`` in place when it
    reports Guessing and Divide the Dollar, so their order is not the seats')."""
    game = rec.game
    if game == "battle":
        seat = int(record["player_shooting"])
        shot = record["shot_player"]
        target = None if record["action"] == "miss" or shot == "null" else shot
        return [seat], [target], ["shoot"]
    if game == "pirate":
        plan = list(record["gold_distribution"])
        seats = alive[:len(plan)]
        votes = list(record["responses"])
        return seats, [plan] + votes[1:len(plan)], ["propose"] + ["vote"] * (len(plan) - 1)
    responses = list(record["responses"])
    answers = []
    for seat in range(len(responses)):
        own = rec.players[seat].answers if seat < len(rec.players) else []
        answers.append(own[index] if index < len(own) else responses[seat])
    return list(range(len(responses))), answers, ["answer"] * len(responses)


def _payoffs(rec: GamaRecord, record: dict, actors: list[int], answers: list) -> list[float | None]:
    p = rec.params
    game = rec.game
    if game == "pirate":
        return [float(g) for g in record["gold_distribution"]] if _passed(record) else [None] * len(actors)
    out: list[float | None] = []
    for seat, mine in zip(actors, answers, strict=False):
        if game == "guessing":
            out.append(1.0 if mine == record["winner"] else 0.0)
        elif game == "bar":
            went = list(record["responses"]).count("go") / p.players
            out.append(float(p.home if mine == "stay" else (p.max if went <= p.ratio else p.min)))
        elif game == "dollar":
            out.append(float(mine if sum(record["responses"]) <= p.golds else 0))
        elif game == "goods":
            share = sum(record["responses"]) * p.multiplier / p.players
            out.append(float(p.tokens - mine + share))
        elif game == "diner":
            cheap = list(record["responses"]).count("cheap")
            avg = (cheap * p.cheap_cost + (p.players - cheap) * p.exp_cost) / p.players
            out.append(float((p.cheap_utility if mine == "cheap" else p.exp_utility) - avg))
        elif game == "auction":
            out.append(float(record["utility"][seat]) if "utility" in record else None)
        else:
            out.append(None)
    return out


def _passed(record: dict) -> bool:
    votes = list(record["responses"])
    return votes.count("accept") / len(votes) >= 0.5


def _distances(rec, index, record, actors, answers, eq) -> list[float | None]:
    if eq is None:
        return [None] * len(actors)
    p = rec.params
    game = rec.game
    out: list[float | None] = []
    for pos, (seat, answer) in enumerate(zip(actors, answers, strict=False)):
        if game in ("guessing", "goods", "dollar"):
            out.append(float(abs(int(answer) - eq["answer"])))
        elif game == "diner":
            cheap = answer == "cheap"
            out.append(float(cheap if eq["answer"] == "costly" else not cheap))
        elif game == "auction":
            out.append(float(abs(int(answer) - record["valuations"][seat])))
        elif game == "pirate":
            plan = list(record["gold_distribution"])
            if pos == 0:
                out.append(l1_to_ne(plan, p.gold, p.players, index))
            else:
                out.append(0.0 if vote_is_correct(plan, pos, answer) else 1.0)
        else:
            out.append(None)
    return out


def _winners(rec: GamaRecord, record: dict, actors: list[int], answers: list, alive: list[int]):
    game = rec.game
    everyone = list(range(rec.params.players))
    if game in ("guessing", "bar"):
        return [s for s, a in zip(actors, answers, strict=False) if a == record["winner"]], everyone
    if game == "dollar":
        return (everyone if sum(record["responses"]) <= rec.params.golds else []), everyone
    if game == "auction":
        winner = str(record.get("bid_winner", ""))
        return ([int(winner.split("_")[1])] if winner.startswith("player_") else []), everyone
    if game == "battle":
        survivors = list(alive)
        shot = record["shot_player"]
        if record.get("out") and shot != "null" and int(shot) in survivors:
            survivors.remove(int(shot))
        return (survivors if len(survivors) == 1 else []), survivors
    if game == "pirate":
        if _passed(record):
            return list(actors), list(actors)
        return [], list(actors[1:])
    return [], everyone


def _mean_answer(game: str, record: dict) -> float | None:
    if game in ("guessing", "dollar", "goods", "auction"):
        values = record["responses"]
        return float(sum(values) / len(values)) if values else None
    return None


def _target(rec: GamaRecord, record: dict) -> float | None:
    game = rec.game
    n = rec.params.players
    if game == "guessing":
        return float(record["mean_ratio"]) if "mean_ratio" in record else None
    if game == "bar":
        return list(record["responses"]).count("go") / n
    if game == "dollar":
        return float(sum(record["responses"]))
    if game == "goods":
        return float(sum(record["responses"]))
    if game == "diner":
        return list(record["responses"]).count("cheap") / n
    if game == "auction":
        return float(max(record["responses"]))
    if game == "pirate":
        votes = list(record["responses"])
        return votes.count("accept") / len(votes)
    return None


def _safe_round_score(rec: GamaRecord, record: dict) -> float | None:
    try:
        return round_score(rec.game, rec.params, record)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


def _answer_text(answer: Any) -> tuple[str | None, float | None]:
    if answer is None:
        return "null", None
    if isinstance(answer, list):
        return json.dumps(answer), None
    if isinstance(answer, bool):
        return str(answer).lower(), None
    if isinstance(answer, (int, float)):
        return str(answer), float(answer)
    text = str(answer)
    try:
        return text, float(text)
    except ValueError:
        return text, None


_ECHO_KEYS = {"guessing": "chosen_number", "bar": "decision", "dollar": "bid_amount",
              "goods": "tokens_contributed", "diner": "chosen_dish", "auction": "bid"}


def _echo(game: str, role: str, answer: Any) -> str:
    """A JSON echo of the parsed answer, as GAMA keeps it (GAMA stores no raw text)."""
    if game == "battle":  # GAMA echoes the target as it stores it: the seat number or null
        target = "null" if answer is None else str(answer)
        return json.dumps({"action": "miss" if answer is None else "shoot", "target": target})
    if game == "pirate":
        if role == "propose":
            return json.dumps({"proposal": answer})
        return json.dumps({"decision": answer})
    return json.dumps({_ECHO_KEYS[game]: str(answer)})


def import_folder(folder: str | Path, output_dir: str | Path, run_id: str,
                  command: list[str] | None = None,
                  progress: Any = None) -> ImportResult:
    """Imports every record under ``folder`` into ``<output_dir>/<run_id>``.

    Raises:
        RecordError: the folder holds no record, or a record is malformed (one line naming
            the file); shards committed before it stay committed.
        RunExistsError: the run folder holds another run.
    """
    from distbench.games.registry import get_family
    from distbench.store.harness import rescored_parts
    from distbench.store.schema import register_tables
    from distbench.store.writer import RunWriter, exclusive, write_json

    register_tables(TABLES, "gama")
    # GAMA-Bench's prompts made the answers; today's parsers and scorers read them
    harness = rescored_parts({"prompt": "gama-bench-import"}, get_family("gama"))
    folder = Path(folder)
    paths = find_records(folder)
    groups: dict[str, list[Path]] = defaultdict(list)
    for path in paths:
        groups[str(path.parent.relative_to(folder))].append(path)
    run_dir = Path(output_dir) / run_id
    identity = {"import": "gama", "folders": sorted(groups)}
    _check_existing(run_dir, identity)
    run_dir.mkdir(parents=True, exist_ok=True)
    imported = games = scored = 0
    with exclusive(run_dir):
        writer = RunWriter(run_dir)
        done = writer.committed()
        manifest = {
            "run_id": run_id, "family": "gama",
            "command": list(command) if command is not None else sys.argv,
            "config": {"import": "gama", "records": len(paths)},
            "identity": identity,
            "models": [], "seeds": [], "state": "running",
            "shards": {"planned": len(groups), "committed": len(done)},
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        write_json(run_dir / "manifest.json", manifest)
        try:
            for sub, files in sorted(groups.items()):
                shard_id = "gama-import-" + stable_hash({"folder": sub})
                if shard_id in done:
                    continue
                rows: dict[str, list[dict]] = {name: [] for name in TABLES}
                for path in files:
                    rec = read_record(path)
                    part = game_rows(rec, run_id, shard_id, str(path.relative_to(folder)))
                    for name, items in part.items():
                        rows[name].extend(items)
                tables = {name: (shard_id, _table(name, items)) for name, items in rows.items()}
                writer.commit_shard(shard_id, tables, {"games": len(files), "folder": sub,
                                                       "harness": harness},
                                    harness=harness["hash"])
                imported += 1
                if progress is not None:
                    progress(sub, len(files))
        except (RecordError, KeyboardInterrupt) as exc:
            state = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
            manifest.update(state=state, error=str(exc) or state,
                            shards={"planned": len(groups), "committed": len(writer.committed())})
            write_json(run_dir / "manifest.json", manifest)
            raise
        manifest.update(state="complete",
                        shards={"planned": len(groups), "committed": len(writer.committed())},
                        finished_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        write_json(run_dir / "manifest.json", manifest)
    from distbench.store.catalog import open_run

    con = open_run(run_dir, tables=("gama_games",))
    try:
        games, scored = con.execute(
            "SELECT count(*), count(gama_score) FROM gama_games").fetchone()
    finally:
        con.close()
    return ImportResult(run_dir=run_dir, records=len(paths), shards=len(groups),
                        imported=imported, games=int(games), scored=int(scored))


class RunExistsError(ValueError):
    """The run folder holds another run (another family, or an import of other folders)."""


def _check_existing(run_dir: Path, identity: dict[str, Any]) -> None:
    path = run_dir / "manifest.json"
    if not path.exists():
        return
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    if manifest.get("family") != "gama" or manifest.get("identity") != identity:
        raise RunExistsError(f"{run_dir} already holds another run (family "
                             f"{manifest.get('family')!r}); choose another --run-id")


def _table(name: str, rows: list[dict]) -> Any:
    from distbench.store.fields import Rows

    out = Rows(TABLES[name])
    for row in rows:
        out.add(row)
    return out.table()


__all__ = ["GAMA_LABELS", "HARNESS", "ImportResult", "finishing_ranks", "game_rows",
           "import_folder"]
