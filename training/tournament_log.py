"""The tournament log ``OUT/games.jsonl``: its schema, its reader, and the self-check on resume.

Line 1 is the header (:meth:`TournamentConfig.log_header`: agents, seed, rules hash, the rules in
full, the fallback of ``cmd:`` seats); every further line is one board::

    {"type": "board", "board": K, "seed": S, "games": [game, ...]}   # one game per seating, in order

and each game holds ``GAME_KEYS`` (``seats`` are indices into the header's agents) plus ``actions``
(base64, one byte per action id) and, when a bot faulted, ``faults``. :func:`read_log` refuses, with
one line naming the line, anything that is not this tournament's header followed by distinct boards
of it; each board must cover each seating of the tournament exactly once, and every game is re-created
from its seed and actions on the fast engine (:func:`check_results`): a line whose scores, placements
or statistics differ from what its actions give is refused, so a resumed log proves its own results.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Collection
from pathlib import Path

import numpy as np

from meld8_env.config_io import DuplicateKeyError, is_int, no_duplicate_keys
from meld8_env.rules import RuleConfig
from meld8_env.seat_process import FAULT_KINDS
from meld8_env.seat_process import PREFIX as SEAT_PREFIX
from training.tournament_config import TournamentConfig, TournamentError, board_seed, seatings

LOG = "games.jsonl"
_TORN = object()  # a line that is not JSON (a JSON null is a line too: "not a board entry")

GAME_KEYS = ("seed", "seats", "final_scores", "placements", "hands", "drawn_hands", "wins", "tsumo", "deal_ins",
             "calls", "win_han")  # fmt: skip
PER_SEAT = ("seats", "final_scores", "placements", "wins", "tsumo", "deal_ins", "calls", "win_han")


def _actions_ok(text: object) -> bool:
    import base64
    import binascii

    if not isinstance(text, str):
        return False
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return max(raw, default=0) < 64


def board_entry_error(
    obj: object, cfg: TournamentConfig, n_seatings: int, streaming: Collection[str] | None = None
) -> str | None:
    """Why a logged line is not a board entry of this tournament, or None. ``streaming``: the agent specs that play
    through the seat protocol and so may fault (default: the ``cmd:`` bots; a plug-in with ``plays_streams`` too,
    when the caller has loaded the agents)."""
    if not isinstance(obj, dict) or obj.get("type") != "board":
        return "not a board entry"
    board, games = obj.get("board"), obj.get("games")
    if not is_int(board) or board < 0:
        return f"board id {board!r} is not an integer >= 0"
    if obj.get("seed") != board_seed(cfg.seed, board):
        return f"board {board} has seed {obj.get('seed')!r}, this tournament's is {board_seed(cfg.seed, board)}"
    if not isinstance(games, list) or len(games) != n_seatings:
        return f"board {board} should hold {n_seatings} games (one per seating)"
    P = cfg.rules.num_players
    order = seatings(cfg.agents)
    for k, g in enumerate(games):
        if not isinstance(g, dict) or any(k not in g for k in GAME_KEYS):
            return f"board {board}: a game record lacks fields"
        if g["seats"] != list(order[k]):  # each seating exactly once, in the order they are played
            return (f"board {board}: game {k} has seats {g['seats']!r}; this tournament plays seating {k} as "
                    f"{list(order[k])} (each board covers each seating exactly once)")  # fmt: skip
        if g["seed"] != obj["seed"]:
            return f"board {board}: game {k} has seed {g['seed']!r}, its board's is {obj['seed']}"
        if any(not isinstance(g[k], list) or len(g[k]) != P or not all(map(is_int, g[k])) for k in PER_SEAT):
            return f"board {board}: a game record has malformed per-seat fields"
        if not all(is_int(g[f]) and g[f] >= 0 for f in ("hands", "drawn_hands")):
            return f"board {board}: game {k}: 'hands' and 'drawn_hands' must be integers >= 0"
        if not all(0 <= a < len(cfg.agents) for a in g["seats"]) or sorted(g["placements"]) != list(range(1, P + 1)):
            return f"board {board}: a game record has impossible seats or placements"
        if "actions" not in g:
            return (f"board {board}: a game record holds no actions (a log of an older meld8), so its result cannot "
                    "be checked; start a new --out")  # fmt: skip
        if not _actions_ok(g["actions"]):
            return f"board {board}: a game record has malformed actions (base64 of action ids 0..63)"
        faults = g.get("faults", [])
        if not isinstance(faults, list) or not all(
            isinstance(f, dict) and is_int(f.get("seat")) and 0 <= f["seat"] < P and f.get("kind") in FAULT_KINDS
            and isinstance(f.get("detail"), str) and isinstance(f.get("line", ""), str)
            for f in faults
        ):  # fmt: skip
            return f"board {board}: a game record has malformed faults"
        # a seat faults once a game (the fallback plays the rest), and only an agent that plays through the seat
        # protocol can: a fault forged on a built-in agent's seat was counted and reported (red team, session 47).
        # What a bot's fault says cannot be re-created from the actions; who could have faulted can be checked.
        seats = [f["seat"] for f in faults]
        if len(set(seats)) != len(seats):
            return f"board {board}: game {k} records two faults of one seat (a seat faults once a game)"
        may = (lambda spec: spec.startswith(SEAT_PREFIX)) if streaming is None else streaming.__contains__
        if bad := [s for s in seats if not may(cfg.agents[g["seats"][s]])]:
            return (f"board {board}: game {k} records a fault of seat {bad[0]}, whose agent "
                    f"{cfg.agents[g['seats'][bad[0]]][:80]!r} does not play through the seat protocol (only such an "
                    "agent, a cmd: bot, faults)")  # fmt: skip
    return None


def _other_run(logged: dict, header: dict) -> str:
    """What differs between a log's header and this tournament's, short (never the whole header)."""
    differ = [k for k in header if logged.get(k) != header[k]]
    agents = logged.get("agents")
    held = ",".join(map(str, agents)) if isinstance(agents, list) else repr(agents)
    if "agents" in differ:
        return f"the log belongs to another tournament: it holds --agents {held[:200]}"
    names = {"seed": "--seed", "rules_hash": "--rules", "fallback": "--fallback"}
    k = differ[0]
    value = str(logged.get(k))[:40]
    return f"the log belongs to another tournament: {held[:200]} with another {names.get(k, k)} ({value})"


def header_check(obj: object, header: dict, where: str, rules: dict) -> None:
    """Refuse (TournamentError naming ``where``) a first line that is not this tournament's header; ``rules``: the
    tournament's rules in full (:meth:`RuleConfig.to_dict`), which a header that lists them must hold."""
    if not isinstance(obj, dict) or obj.get("type") != "header":
        raise TournamentError(f"{where} is not a tournament header; refusing to resume")
    if {k: obj.get(k) for k in header} != header:
        raise TournamentError(f"{where}: {_other_run(obj, header)}; resume with its settings, or another --out")
    if "rules" in obj and obj["rules"] != rules:
        # the rules in full are what the viewers re-create games from: edited under an unchanged rules_hash, the
        # resume went on and every game of the log failed to replay (red team, session 47)
        raise TournamentError(f"{where}: its rules are not the rules its rules_hash names (the header was edited); "
                              "refusing to resume (fix or move the file)")  # fmt: skip


def first_line_check(path: Path, cfg: TournamentConfig) -> None:
    """The refusal of :func:`read_log` that its first line alone decides (another tournament's header), read without
    the rest of the log: a run refused so leaves nothing behind, not even its lock (red team, session 42)."""
    with open(path, "rb") as f:
        first = f.readline(1 << 20)
    if not first.endswith(b"\n"):  # a torn or very long first line: read_log decides
        return
    try:
        obj = json.loads(first, object_pairs_hook=no_duplicate_keys)
    except (ValueError, RecursionError):
        return  # read_log names what is wrong with it
    header_check(obj, cfg.header(), f"{path}: line 1", cfg.rules.to_dict())


def read_log(
    path: Path, cfg: TournamentConfig, streaming: Collection[str] | None = None
) -> tuple[list[dict], int, bool]:
    """(logged boards, byte length of the valid part, whether that part holds the header); ``streaming``: as
    :func:`board_entry_error` takes it.

    A torn last line (a crash during a write: no newline, or not JSON) is reported and dropped, and so
    is a torn header. Anything else that is not this tournament's header followed by distinct board
    entries - a log of another run, a corrupt or foreign line, a board logged twice - is refused with a
    TournamentError naming the line: resuming never double-counts and never guesses."""
    raw = path.read_bytes()
    header, n_seatings = cfg.header(), len(seatings(cfg.agents))
    lines = raw.split(b"\n")
    entries: list[dict] = []
    first_line: dict[int, int] = {}
    good_end = pos = 0
    has_header = False
    for i, line in enumerate(lines):
        end = pos + len(line) + 1
        last = i == len(lines) - 1  # the text after the final newline (empty when the file ends cleanly)
        if last and not line:
            break
        try:
            # a key given twice is refused, as the viewers refuse it (red team, session 47: a resume proved and
            # extended a log that `meld8 replay` then would not open)
            obj = json.loads(line, object_pairs_hook=no_duplicate_keys) if not last else _TORN
        except DuplicateKeyError as exc:
            raise TournamentError(f"{path}: line {i + 1}: {exc}; refusing to resume (fix or move the file)") from None
        except (ValueError, RecursionError):  # not JSON, not UTF-8, nested too deeply, an integer too long
            obj = _TORN
        # a write cut short never ends in its newline (append_entry writes the line and its newline at once): only
        # the text after the last newline is torn; a whole line that is not JSON is foreign (red team, session 42:
        # appended garbage was dropped as torn), and blank lines at the end are only dropped
        if obj is _TORN and last:
            print(f"{path}: line {i + 1} is incomplete (interrupted write); dropping it", file=sys.stderr)
            break
        if not line.strip() and all(not rest.strip() for rest in lines[i + 1 :]):
            print(f"{path}: blank lines from line {i + 1} on; dropping them", file=sys.stderr)
            break
        where = f"{path}: line {i + 1}"
        if obj is _TORN:
            raise TournamentError(f"{where} is not JSON; refusing to resume (fix or move the file)")
        if i == 0:
            header_check(obj, header, where, cfg.rules.to_dict())
            has_header = True
        else:
            err = board_entry_error(obj, cfg, n_seatings, streaming)
            if err:
                raise TournamentError(f"{where}: {err}; refusing to resume (fix or move the file)")
            board = obj["board"]
            if board in first_line:
                raise TournamentError(
                    f"{where} repeats board {board} (first logged on line {first_line[board]}); "
                    "refusing to count it twice"
                )
            first_line[board] = i + 1
            entries.append(obj)
        pos = good_end = end
    check_results(entries, first_line, cfg.rules, path)
    return entries, good_end, has_header


def append_entry(f, obj: dict) -> None:
    f.write(json.dumps(obj, separators=(",", ":")) + "\n")
    f.flush()
    os.fsync(f.fileno())


#: games re-created at once by :func:`check_results` (memory: one engine record and the actions each)
CHECK_BATCH = 4096
#: and at most this many action cells per batch (games x the longest): one game padded with a million actions asked
#: for 30 GiB (red team, session 35); a long game now goes in a smaller batch, and ends at its natural end
CHECK_CELLS = 1 << 22


# what a logged game says that its seed and actions decide, in the order a difference is reported
CHECKED = ("final_scores", "placements", "wins", "tsumo", "deal_ins", "calls", "win_han", "hands", "drawn_hands")


def check_results(entries: list[dict], lines: dict[int, int], rules: RuleConfig, path: Path) -> None:
    """Re-create every game of ``entries`` from its seed and actions on the fast engine and refuse
    (TournamentError naming the line, board, game and field) one whose logged result or statistics
    (:data:`CHECKED`: scores, placements, wins, Tsumo, deal-ins, calls, han, hands, drawn hands) differ,
    whose actions stop being legal, or that ends before or after its last action.
    ``lines``: board id -> its line number in the log."""
    games = [(e["board"], k, g) for e in entries for k, g in enumerate(e["games"])]
    for chunk in result_batches(games):
        got = resimulate(rules, [g["seed"] for _, _, g in chunk], [_actions(g["actions"]) for _, _, g in chunk])
        for (board, k, g), res in zip(chunk, got, strict=True):
            where = f"{path}: line {lines[board]}: board {board}, game {k}"
            if isinstance(res, str):
                raise TournamentError(f"{where}: {res}; refusing to resume (the log was edited or damaged)")
            if (g["final_scores"], g["placements"]) != (res["final_scores"], res["placements"]):
                raise TournamentError(
                    f"{where}: its actions give final scores {res['final_scores']} and placements "
                    f"{res['placements']}, the log says {g['final_scores']} and {g['placements']}; refusing to "
                    "resume (the log was edited)"
                )
            for key in CHECKED[2:]:
                if g[key] != res[key]:
                    raise TournamentError(
                        f"{where}: its actions give {key} {res[key]}, the log says {str(g[key])[:80]}; refusing to "
                        "resume (the log was edited)"
                    )


def result_batches(games: list[tuple]) -> list[list[tuple]]:
    """``games`` in log order, cut into batches of at most CHECK_BATCH games and CHECK_CELLS action cells."""
    out: list[list[tuple]] = [[]]
    width = 0
    for item in games:
        n = len(item[2]["actions"]) * 3 // 4 + 1  # base64: about 3 bytes (actions) per 4 characters
        if out[-1] and (len(out[-1]) >= CHECK_BATCH or (len(out[-1]) + 1) * max(width, n) > CHECK_CELLS):
            out.append([])
            width = 0
        out[-1].append(item)
        width = max(width, n)
    return [b for b in out if b]


def _actions(text: str) -> np.ndarray:
    import base64

    return np.frombuffer(base64.b64decode(text), np.uint8).astype(np.int64)


def resimulate(rules: RuleConfig, seeds: list[int], actions: list[np.ndarray]) -> list[dict | str]:
    """Each game ``seeds[g]`` played with ``actions[g]`` on the fast engine, all games in one batch: a dict
    of the :data:`CHECKED` fields, counted as the arena counts them when it plays (a hand ended by any
    result, a drawn one, each winner's wins, Tsumo wins and han, the discarder of each Ron, each seat's
    calls), or a one-line reason the actions do not make one whole game."""
    from meld8_env.codes import Result
    from meld8_env.engine.fast import FastBatch

    n, P = len(seeds), rules.num_players
    if n == 0:
        return []
    lens = np.array([len(a) for a in actions], np.int64)
    width = int(lens.max(initial=0))
    table = np.full((n, max(width, 1)), -1, np.int8)  # action ids are 0..63
    for g, a in enumerate(actions):
        table[g, : len(a)] = a
    fb = FastBatch(n, rules)
    fb.reset(np.asarray(seeds, np.uint64))
    out = {
        "rewards": np.zeros((n, P), np.float32),
        "terminated": np.zeros(n, np.uint8),
        "final_scores": np.zeros((n, P), np.int32),
        "placements": np.zeros((n, P), np.uint8),
        "acting": np.zeros(n, np.int8),
        "result": np.zeros(n, np.int8),
        "caller": np.zeros(n, np.int8),
    }
    per_seat = {k: np.zeros((n, P), np.int64) for k in ("wins", "tsumo", "deal_ins", "calls", "win_han")}
    hands, drawn = np.zeros(n, np.int64), np.zeros(n, np.int64)
    results: list[dict | str | None] = [None] * n
    for t in range(width):
        live = (lens > t) & np.array([r is None for r in results])
        if not live.any():
            break
        acts = np.where(live, table[:, t], -1).astype(np.int64)
        illegal = fb.step(acts).copy()
        fb.outputs_part(slice(None), out)
        stepped = live & ~illegal.astype(bool)
        for g in np.flatnonzero(stepped & (out["caller"] >= 0)):
            per_seat["calls"][g, out["caller"][g]] += 1
        for g in np.flatnonzero(stepped & (out["result"] != int(Result.NONE))):
            kind, rec = int(out["result"][g]), fb.record(int(g))
            hands[g] += 1
            if kind == Result.DRAW:
                drawn[g] += 1
            elif kind in (Result.RON, Result.TSUMO):
                w = int(rec["win_seat"])
                per_seat["wins"][g, w] += 1
                per_seat["win_han"][g, w] += int(rec["win_han"])
                if kind == Result.TSUMO:
                    per_seat["tsumo"][g, w] += 1
                else:
                    per_seat["deal_ins"][g, int(rec["lose_seat"])] += 1
        ended = out["terminated"].astype(bool)
        for g in np.flatnonzero(live & illegal):
            results[g] = f"action {t} ({int(acts[g])}) is not legal there"
        for g in np.flatnonzero(live & ended & ~illegal):
            if t != lens[g] - 1:
                results[g] = f"the game ends at action {t}, before its last ({int(lens[g]) - 1})"
            else:
                results[g] = {
                    "final_scores": out["final_scores"][g].tolist(),
                    "placements": out["placements"][g].tolist(),
                    **{k: v[g].tolist() for k, v in per_seat.items()},
                    "hands": int(hands[g]),
                    "drawn_hands": int(drawn[g]),
                }
    return [r if r is not None else f"the game is not over after its {int(lens[g])} actions"
            for g, r in enumerate(results)]  # fmt: skip
