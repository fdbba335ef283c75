"""Replay files: a whole game as JSON, re-simulated exactly.

A replay holds ``format``, ``version`` (of meld8), ``rules`` (every option), ``rules_hash``,
``seed``, ``actions`` (every action in order) and ``result`` (final scores, placements, deals),
plus a ``checksum`` over all of that. Loading checks each of them and fails with a clear
:class:`ReplayError` when the file comes from another meld8 version, its rules were edited, it
was tampered with, or its actions do not re-simulate to its result.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from meld8_env.actions import action_name
from meld8_env.cards import card_str, format_cards
from meld8_env.codes import Result
from meld8_env.config_io import DuplicateKeyError, is_int, no_duplicate_keys
from meld8_env.one_game import Resimulation, ResimulationError
from meld8_env.one_game import resimulate as _resimulate
from meld8_env.outcomes import HandOutcome
from meld8_env.rules import RuleConfig, RuleConfigError
from meld8_env.version import __version__

FORMAT = "meld8-replay"


class ReplayError(ValueError):
    """A replay file that cannot be trusted or re-simulated."""


def _version() -> str:
    return __version__


def _checksum(body: dict[str, Any]) -> str:
    blob = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


MAX_UNPACKED = 1 << 30
"""The most a gzip-compressed log or replay may unpack to (the project's logs of 5,000 games are a few MB)."""


def read_game_file(p: Path) -> bytes:
    """The bytes of a replay or tournament log, unpacked when gzip-compressed (``docs/search_runs/*.jsonl.gz``);
    ReplayError for a folder or device, a missing or unreadable file, or a gzip that is cut short, not gzip
    after its magic, or unpacks past MAX_UNPACKED."""
    import gzip
    import zlib

    if p.exists() and not p.is_file():  # a folder, a device (/dev/zero is one endless line)
        raise ReplayError(f"{p}: not a replay or tournament log file (a folder or device)")
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ReplayError(f"file not found: {p}") from None
    except OSError as exc:
        raise ReplayError(f"{p}: cannot read ({exc.strerror})") from None
    if not data.startswith(b"\x1f\x8b"):
        return data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as z:
            out = z.read(MAX_UNPACKED + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise ReplayError(f"{p}: a damaged gzip file ({exc})") from None
    if len(out) > MAX_UNPACKED:
        raise ReplayError(f"{p}: unpacks to more than {MAX_UNPACKED:,} bytes; not a meld8 replay or log")
    return out


def resimulate(rules: RuleConfig, seed: int, actions: Sequence[int]) -> Resimulation:
    """Re-simulate a game on the fast engine (``meld8_env.one_game.resimulate``); ReplayError if an
    action is not accepted."""
    try:
        return _resimulate(rules, seed, actions)
    except ResimulationError as exc:
        raise ReplayError(f"replay diverges at {exc}") from None


play = resimulate  # the older name


def make_replay(
    rules: RuleConfig, seed: int, actions: Sequence[int], names: Sequence[str] | None = None
) -> dict[str, Any]:
    """Build the replay document of a finished game (re-simulated to fill in its result); ``names``
    (who sat where, e.g. ``["you", "greedy", "defensive"]``) is kept for the viewer when given."""
    game = resimulate(rules, seed, actions)
    if not game.over:
        raise ReplayError(f"the game is not over after {len(actions)} actions")
    body = {
        "format": FORMAT,
        "version": _version(),
        "rules": rules.to_dict(),
        "rules_hash": rules.rules_hash,
        "seed": int(seed),
        "actions": [int(a) for a in actions],
        "result": game.result(),
    }
    if names is not None:
        if len(names) != rules.num_players or not all(isinstance(n, str) and 0 < len(n) <= 200 for n in names):
            raise ReplayError(f"names must be {rules.num_players} seat names of 1..200 characters, got {names!r}")
        body["names"] = list(names)
    return {**body, "checksum": _checksum(body)}


def save_replay(
    path: str | Path, rules: RuleConfig, seed: int, actions: Sequence[int], names: Sequence[str] | None = None
) -> Path:
    doc = make_replay(rules, seed, actions, names)
    p = Path(path)
    p.write_text(json.dumps(doc, indent=1))
    return p


def load_replay(path: str | Path) -> tuple[dict[str, Any], Resimulation]:
    """Read, verify and re-simulate a replay; returns (document, finished game)."""
    p = Path(path)
    raw = read_game_file(p)
    try:
        doc = json.loads(raw.decode("utf-8"), object_pairs_hook=no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise ReplayError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except UnicodeDecodeError:
        raise ReplayError(f"{p}: not UTF-8 text") from None
    except RecursionError:
        raise ReplayError(f"{p}: not a meld8 replay (JSON nested too deeply to read)") from None
    except ValueError as exc:  # an integer of more digits than Python converts (its message advises a setting)
        raise ReplayError(f"{p}: not a meld8 replay ({str(exc).split(';')[0][:100]})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ReplayError(f"{p}: not a meld8 replay (format must be {FORMAT!r})")
    missing = [k for k in ("version", "rules", "rules_hash", "seed", "actions", "result", "checksum") if k not in doc]
    if missing:
        raise ReplayError(f"{p}: missing field {missing[0]!r}")
    _check_schema(doc, p)
    if doc["version"] != _version():
        raise ReplayError(
            f"{p}: made by meld8 {doc['version']}, this is meld8 {_version()}; replay it with that version"
        )
    body = {k: v for k, v in doc.items() if k != "checksum"}
    try:
        checksum = _checksum(body)
    except RecursionError:  # json.loads read it, json.dumps cannot write it back (about 990 deep)
        raise ReplayError(f"{p}: not a meld8 replay (JSON nested too deeply)") from None
    if checksum != doc["checksum"]:
        raise ReplayError(f"{p}: checksum mismatch: the file was modified after it was written")
    try:
        rules = RuleConfig.from_dict(doc["rules"])
    except (RuleConfigError, TypeError, ValueError, AttributeError) as exc:
        raise ReplayError(f"{p}: field 'rules': {exc}") from None
    if rules.rules_hash != doc["rules_hash"]:
        raise ReplayError(f"{p}: rules hash {doc['rules_hash']} does not match its rules ({rules.rules_hash})")
    try:
        game = resimulate(rules, doc["seed"], doc["actions"])
    except ReplayError as exc:  # it named no file (red team, session 47)
        raise ReplayError(f"{p}: {exc}") from None
    got = game.result()
    if not game.over or got != doc["result"]:
        raise ReplayError(f"{p}: re-simulation does not reach the recorded result ({got} != {doc['result']})")
    return doc, game


def _check_schema(doc: dict[str, Any], p: Path) -> None:
    """Types and ranges of every field, before anything is simulated (a checksum is easy to recompute)."""

    for key in ("version", "rules_hash", "checksum"):
        if not isinstance(doc[key], str):
            raise ReplayError(f"{p}: field {key!r} must be a string, got {doc[key]!r}")
    if not isinstance(doc["rules"], dict):
        raise ReplayError(f"{p}: field 'rules' must be a mapping of rule options")
    if not is_int(doc["seed"]) or not 0 <= doc["seed"] <= 2**63:
        raise ReplayError(f"{p}: field 'seed' must be an integer 0..2**63, got {doc['seed']!r}")
    acts = doc["actions"]
    if not isinstance(acts, list) or not all(is_int(a) and 0 <= a < 64 for a in acts):
        raise ReplayError(f"{p}: field 'actions' must be a list of action ids 0..63")
    res = doc["result"]
    if not isinstance(res, dict) or set(res) != {"final_scores", "placements", "deals"}:
        raise ReplayError(f"{p}: field 'result' must hold final_scores, placements and deals")
    names = doc.get("names")
    if names is not None and not (
        isinstance(names, list) and all(isinstance(n, str) and 0 < len(n) <= 200 for n in names)
    ):
        raise ReplayError(f"{p}: field 'names' must be a list of seat names (strings of 1..200 characters)")
    if names is not None and isinstance(res["placements"], list) and len(names) != len(res["placements"]):
        raise ReplayError(f"{p}: field 'names' names {len(names)} seats, the game has {len(res['placements'])}")


def narrate(doc: dict[str, Any]) -> Iterator[str]:
    """The replay hand by hand: each deal's start, every action, and how the deal ended."""
    rules = RuleConfig.from_dict(doc["rules"])
    game = resimulate(rules, doc["seed"], doc["actions"])
    ended = dict(game.hands)  # action index -> the hand it settled

    def deal_header(k: int) -> str:
        v = game.view(k)
        hands = "; ".join(f"seat {p}: {format_cards(_cards(v.hands[p]))}" for p in range(v.P))
        return f"== round {v.round + 1} (replay {v.replays}), dealer seat {v.dealer} == {hands}"

    yield f"rules {doc['rules_hash']}  seed {doc['seed']}  starting dealer seat {game.view(0).dealer}"
    yield deal_header(0)
    for i, a in enumerate(game.actions):
        yield f"  seat {int(game.records[i]['acting'])}: {action_name(a)}"
        if i in ended:
            yield "  -> " + _describe(ended[i])
            if i + 1 < len(game.actions) or not game.over:
                yield deal_header(i + 1)
    yield f"final scores {game.final_scores}, placements {game.placements}"


def _cards(mask: int) -> list[int]:
    return [c for c in range(53) if mask >> c & 1]


def _describe(h: HandOutcome) -> str:
    if h.kind == Result.DRAW:
        return "draw (wall exhausted): the round is replayed"
    if h.kind == Result.CHOMBO:
        return f"chombo by seat {h.discarder}: pays {list(h.payments)}"
    s = h.score()
    yaku = ", ".join(f"{y} {n}" for y, n in s.yaku)
    how = "tsumo" if h.kind == Result.TSUMO else f"ron from seat {h.discarder}"
    groups = " | ".join(" ".join(card_str(c) for c in g) for g in s.groups)
    if s.meld:
        groups += " | [" + " ".join(card_str(c) for c in s.meld) + "] called"
    return f"seat {h.winner} wins by {how}: {groups} - {yaku}; {s.han} han, {s.points} points"


def open_game(path: str | Path, game: int | None = None) -> dict[str, Any]:
    """A game to view, review or narrate: a replay file, or game ``game`` (0-based, boards in order,
    seatings in order) of a tournament log (``games.jsonl``). Returns a verified replay document with
    ``names`` (who sat where) and ``title`` added; ReplayError says what is wrong."""
    p = Path(path)
    data = read_game_file(p)
    try:
        head = json.loads(data.split(b"\n", 1)[0], object_pairs_hook=no_duplicate_keys)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, too deep, an integer too long: not a log header
        head = None
    if isinstance(head, dict) and head.get("type") == "header":
        return _log_game(p, head, game, data)
    if not data.strip():  # a tournament writes its header with its first board: this one has played none yet
        raise ReplayError(f"{p} is empty: no game to show (a tournament log before its first board, or no file yet)")
    if isinstance(head, dict) and head.get("type") == "board":  # was "a single replay" (red team, session 37)
        raise ReplayError(f"{p}: line 1 is a tournament board, not the log's header (it is missing or damaged)")
    if game is not None:
        try:  # a results.json or games.csv was called "a single replay" too (helper walkthrough, session 46)
            load_replay(p)
        except ReplayError as exc:
            beside = p.with_name("games.jsonl")
            hint = f"; the tournament's log beside it is {beside}" if beside != p and beside.is_file() else ""
            raise ReplayError(
                f"{p} is no tournament log (games.jsonl, whose games --game picks) and no replay ({exc}){hint}"
            ) from None
        raise ReplayError(f"{p} is a single replay; --game picks a game of a tournament log (games.jsonl)")
    doc, _ = load_replay(p)
    P = len(doc["result"]["placements"])
    names = doc.get("names")  # checked by load_replay
    if names is None:  # replays written before names were kept
        names = [f"seat {s}" for s in range(P)]
    return {**doc, "names": names, "title": f"{p.name} (seed {doc['seed']})"}


MAX_LOG_LINE = 4 << 20
"""The longest board line of a tournament log opened (a board of six long games is a few tens of KB)."""
MAX_LOG_GAMES = 1_000_000
"""The most games a tournament log opened may hold (100,000 boards of six seatings is 600,000)."""


def _torn_tail(data: bytes) -> bool:
    """Whether a log ends in a line cut short by an interrupted write: no newline after it, and not JSON (a board is
    written with its newline at once, so only the text after the last newline can be torn)."""
    if data.endswith(b"\n") or b"\n" not in data:
        return False
    try:
        json.loads(data[data.rindex(b"\n") + 1 :])
    except (ValueError, RecursionError):
        return True
    return False


def _log_lines(p: Path, data: bytes) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of every line of a log after its header, one at a time, each at most MAX_LOG_LINE; a
    torn last line (:func:`_torn_tail`) is left out, as a resume drops it: the games of the whole lines of a log
    cut by a crash are viewable (red team, session 47: the whole log was refused, "line 5 is not JSON")."""
    torn = _torn_tail(data)
    for n, line in enumerate(io.BytesIO(data), start=1):
        if n == 1:
            continue
        if torn and not line.endswith(b"\n"):
            return
        if len(line) > MAX_LOG_LINE:
            raise ReplayError(f"{p}: line {n} is longer than {MAX_LOG_LINE >> 20} MB: not a board meld8 writes")
        yield n, line


def _log_entry(p: Path, n: int, line: bytes) -> dict[str, Any]:
    """Line ``n`` as a board (``type`` board, an integer ``board``, a list of ``games``), else a ReplayError."""
    try:
        entry = json.loads(line, object_pairs_hook=no_duplicate_keys)
    except DuplicateKeyError as exc:
        raise ReplayError(f"{p}: line {n}: {exc}") from None
    except (ValueError, RecursionError):
        raise ReplayError(f"{p}: line {n} is not JSON") from None
    if not isinstance(entry, dict) or entry.get("type") != "board":
        raise ReplayError(f"{p}: line {n} is not a board (a log is its header, then one board per line)")
    board, listed = entry.get("board"), entry.get("games")
    if not is_int(board):
        raise ReplayError(f"{p}: line {n}: field 'board' must be an integer, got {board!r:.80}")
    if not isinstance(listed, list):
        raise ReplayError(f"{p}: line {n}: field 'games' must be a list of games")
    return entry


def _log_game(p: Path, head: dict[str, Any], game: int | None, data: bytes) -> dict[str, Any]:
    """Game ``game`` of a tournament log, every field it needs checked first: a hand-edited log is
    one ReplayError naming the line and the field, never a traceback."""
    import base64
    import binascii

    if "rules" not in head:
        raise ReplayError(f"{p}: a tournament log written before games were stored; its games cannot be re-created")
    try:
        rules = RuleConfig.from_dict(head["rules"])
    except (RuleConfigError, TypeError, ValueError, AttributeError) as exc:
        raise ReplayError(f"{p}: line 1 (the header): field 'rules': {exc}") from None
    if head.get("rules_hash") != rules.rules_hash:  # rules edited under the hash the games were played by (s47)
        raise ReplayError(f"{p}: line 1 (the header): its rules do not give its rules_hash "
                          f"{str(head.get('rules_hash'))[:40]!r} (the header was edited)")  # fmt: skip
    agents = head.get("agents")
    if not isinstance(agents, list) or not all(isinstance(a, str) for a in agents) or not agents:
        raise ReplayError(f"{p}: line 1 (the header): field 'agents' must be a list of agent names, got {agents!r:.80}")
    # each line read, checked and dropped in turn; only (board, seating, line) of each game is kept, the chosen
    # game read again at the end (red team, session 36: a 33 KB gzip of one board line listing 16M games took
    # 3.4 GB, 64 MiB of "1" lines 98 s of CPU)
    seatings = math.factorial(min(max(len(agents), rules.num_players), 8))  # a board plays each seating once
    keys: list[tuple[int, int, int]] = []
    for n, line in _log_lines(p, data):
        entry = _log_entry(p, n, line)
        listed = entry["games"]
        if not 1 <= len(listed) <= seatings:
            raise ReplayError(f"{p}: line {n}: field 'games' must list 1..{seatings} games (one per seating), "
                              f"got {len(listed)}")  # fmt: skip
        for k, g in enumerate(listed):
            if not isinstance(g, dict):
                raise ReplayError(f"{p}: line {n}, game {k} of board {entry['board']}: a game must be an object, "
                                  f"got {g!r:.80}")  # fmt: skip
            keys.append((entry["board"], k, n))
        if len(keys) > MAX_LOG_GAMES:
            raise ReplayError(f"{p}: more than {MAX_LOG_GAMES:,} games: not a log meld8 opens")
    keys.sort()
    twice = next(((a, b) for a, b in zip(keys, keys[1:], strict=False) if a[:2] == b[:2]), None)
    if twice is not None:  # a log has each board once (the resume reader refuses it too; review, session 36)
        raise ReplayError(f"{p}: board {twice[0][0]} is logged twice (lines {twice[0][2]} and {twice[1][2]})")
    if not keys:  # it said "--game must be 0..-1"
        raise ReplayError(f"{p}: a tournament log without games")
    torn = " (its last line, cut short by an interrupted write, is left out)" if _torn_tail(data) else ""
    if game is None:
        raise ReplayError(f"{p} is a tournament log of {len(keys)} games{torn}: choose one with --game "
                          f"0..{len(keys) - 1}")  # fmt: skip
    if not 0 <= game < len(keys):
        raise ReplayError(f"{p}: --game must be 0..{len(keys) - 1}{torn}, got {game}")
    board, seating, n = keys[game]
    chosen = next(_log_entry(p, m, line) for m, line in _log_lines(p, data) if m == n)
    g = chosen["games"][seating]
    where = f"{p}: line {n}, game {seating} of board {board}"
    if "actions" not in g:
        raise ReplayError(f"{where}: logged without its actions (an older meld8); it cannot be re-created")
    for key in ("seed", "seats", "final_scores", "placements"):
        if key not in g:
            raise ReplayError(f"{where}: missing field {key!r}")
    if not is_int(g["seed"]) or not 0 <= g["seed"] <= 2**63:
        raise ReplayError(f"{where}: field 'seed' must be an integer 0..2**63, got {g['seed']!r:.80}")
    seats = g["seats"]
    if not isinstance(seats, list) or len(seats) != rules.num_players or not all(is_int(a) for a in seats):
        raise ReplayError(f"{where}: field 'seats' must list {rules.num_players} agent numbers, got {seats!r:.80}")
    for a in seats:
        if not 0 <= a < len(agents):
            known = f"the header lists {len(agents)} agents (0..{len(agents) - 1})"
            raise ReplayError(f"{where}: field 'seats' names agent {a}, but {known}")
    try:
        actions = list(base64.b64decode(g["actions"], validate=True)) if isinstance(g["actions"], str) else None
    except (binascii.Error, ValueError):
        actions = None
    if actions is None or not all(a < 64 for a in actions):
        raise ReplayError(f"{where}: field 'actions' must be base64 of action ids 0..63")
    try:
        doc = make_replay(rules, g["seed"], actions)
    except ReplayError as exc:
        raise ReplayError(f"{where}: field 'actions': {exc}") from None
    want = {"final_scores": g["final_scores"], "placements": g["placements"]}
    if {k: doc["result"][k] for k in want} != want:
        raise ReplayError(f"{where}: does not re-create its logged result (fields 'final_scores', 'placements')")
    names = [agents[a] for a in seats]
    # the seed each seat's agent had (a tournament seeds agent k with its seed + k): a review by that same agent
    # then decides as it did in the game
    head_seed = head.get("seed")
    ok = is_int(head_seed) and 0 <= head_seed <= 2**63 - len(agents)
    seeded = {"agent_seeds": [head_seed + a for a in seats]} if ok else {}
    return {**doc, "names": names, **seeded, "title": f"{p.name}: game {game} (board {board}, seating {seating})"}
