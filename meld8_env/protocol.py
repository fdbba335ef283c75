"""The seat protocol (version 1): each seat's event stream, everything that seat may know, in order,
and nothing else; and the JSON-lines wire format that carries it to bots outside the package.

Events are derived from the engine's own transitions - the records before and after each step and
the step's typed outcomes (``meld8_env.outcomes``) - never from a second implementation of the rules.
:class:`EventDeriver` does it for any number of games at once (the shared ``meld8_env.table.Table``
drives it for the arena, tournaments and the Gymnasium faces); :class:`GameStreams` is one game
with a stream per seat, for tests, narration and the browser table.

Each event is a JSON-able dict with ``"type"`` (and ``"game"``, the game id, once it is addressed
to a stream); cards are in R4 notation (``docs/rules.md``). Full reference: ``docs/protocol.md``.

- ``game_start`` (each seat): ``protocol``, ``seat``, ``players``, ``rules``, ``rules_hash``, ``scores``,
  ``chiicha``.
- ``hand_start`` (each seat): ``hand`` (its number in the game), ``round``, ``replay``, ``dealer``,
  ``cards`` (the seat's own 7 cards), ``scores``.
- ``draw`` (each seat): ``seat``, ``wall_left``; ``card`` only in the drawing seat's stream.
- ``discard`` (all): ``seat``, ``card``, ``dora_indicator`` (true for the dealer's first discard, R35).
- ``call`` (all): ``seat``, ``kind`` (pon / chii), ``cards`` (the meld), ``called``, ``from``.
- ``request`` (the acting seat only): ``phase``, ``actions`` (``[{"id", "name"}]``); in a claim also
  ``claim_card`` and ``discarder``.
- ``win`` (all): ``winner``, ``discarder`` (-1 for Tsumo), ``how``, ``cards``, ``meld``, ``win_card``,
  ``groups``, ``joker_as``, ``yaku`` (``[[name, han]]``), ``bonuses`` (``{name: han}``: sequences R34,
  dora R35, ...), ``han`` (the total), ``points``.
- ``exhausted`` / ``chombo`` (all): the hand ended in a draw (R39) / a false win in penalty mode
  (``seat``, R41).
- ``settlement`` (all): ``payments`` (each seat's change), ``transfers`` (``[{"from", "to", "points"}]``),
  ``scores``: who paid whom how much, after every hand.
- ``game_end`` (all): ``final_scores`` (placement points included), ``placements``.

A seat answers a request with an action id (or its name, e.g. ``"discard 7h"``); passing on a claim
is private (no event), as is every other seat's claim option.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from meld8_env.actions import CHII_LOW, NUM_ACTIONS, PON_BASE, IllegalActionError, action_name, legal_ids
from meld8_env.cards import card_str, format_cards, from_mask
from meld8_env.codes import Phase, Result
from meld8_env.config_io import DuplicateKeyError, JsonNumberError, strict_json_loads
from meld8_env.engine.fast import FastBatch
from meld8_env.outcomes import GameOutcome, HandOutcome, game_outcomes, hand_outcomes
from meld8_env.rules import RuleConfig

PROTOCOL_VERSION = 1
Event = dict[str, Any]
Routed = tuple["int | None", Event]
"""(seat the event is for, or None for every seat; the event without its game id)."""
ACTION_IDS = {action_name(a): a for a in range(NUM_ACTIONS)}
"""Action name -> id: answers may name the action (``"pass"``, ``"discard 7h"``)."""
_ACTION_ENTRIES = [{"id": a, "name": action_name(a)} for a in range(NUM_ACTIONS)]
_CARD = [card_str(c) for c in range(53)]
_PHASE = {int(p): p.label for p in Phase}


def _cards(mask: int) -> str:
    return format_cards(from_mask(int(mask)))


class EventDeriver:
    """Events of B games from engine records: :meth:`start` for games that just started,
    :meth:`step` for one step of each game. Both return, per game, a list of :data:`Routed` events."""

    def __init__(self, rules: RuleConfig) -> None:
        self.rules = rules
        self.P = rules.num_players
        self._rules_dict = rules.to_dict()  # shared by every game_start (events are read-only)

    def start(self, recs: np.ndarray) -> list[list[Routed]]:
        """game_start, hand_start, the first draw and the first request of each game in ``recs``."""
        out = []
        for rec in recs:
            evs: list[Routed] = []
            scores = [int(x) for x in rec["scores"][: self.P]]
            for seat in range(self.P):
                evs.append((seat, {"type": "game_start", "protocol": PROTOCOL_VERSION, "seat": seat,
                                   "players": self.P, "rules": self._rules_dict,
                                   "rules_hash": self.rules.rules_hash, "scores": scores,
                                   "chiicha": int(rec["chiicha"])}))  # fmt: skip
            self._hand_start(rec, evs)
            self._request(rec, evs)
            out.append(evs)
        return out

    def step(
        self,
        before: np.ndarray,
        actions: Sequence[int],
        after: np.ndarray,
        hands: dict[int, list[HandOutcome]],
        games: dict[int, GameOutcome],
        wanted: list[list[bool]] | None = None,
    ) -> list[list[Routed]]:
        """Events of one step per game: ``before`` / ``after`` are the records around the step
        (``after`` is the game's last record if it ended), ``actions`` the answers applied, ``hands`` /
        ``games`` the step's outcomes by position in these arrays. A negative action (held) emits nothing.
        ``wanted[i][seat]`` False skips the requests only that seat would receive (nobody listens)."""
        # whole columns at once: per-field access on single records is what made a step slow
        b_seat, b_phase = before["acting"].tolist(), before["phase"].tolist()
        b_round, b_chiicha = before["round"].tolist(), before["chiicha"].tolist()
        b_dd, b_wall = before["dealer_discarded"].tolist(), before["wall_pos"].tolist()
        a_caller, a_result = after["caller"].tolist(), after["result"].tolist()
        a_phase, a_wall, a_seat = after["phase"].tolist(), after["wall_pos"].tolist(), after["acting"].tolist()
        out = []
        for i, action in enumerate(actions):
            evs: list[Routed] = []
            out.append(evs)
            action = int(action)
            if action < 0:
                continue
            seat, phase = b_seat[i], b_phase[i]
            if phase != Phase.CLAIM and action < 52:
                first = seat == (b_chiicha[i] + b_round[i]) % self.P and not b_dd[i]
                evs.append((None, {"type": "discard", "seat": seat, "card": _CARD[action], "dora_indicator": first}))
            if a_caller[i] >= 0 and a_result[i] == Result.NONE:
                self._call(before[i], after[i], evs)
            for h in hands.get(i, ()):
                self._hand_end(h, after[i], evs)
            if i in games:
                g = games[i]
                evs.append((None, {"type": "game_end", "final_scores": list(g.final_scores),
                                   "placements": list(g.placements)}))  # fmt: skip
                continue
            if i in hands:
                self._hand_start(after[i], evs)
            elif a_phase[i] == Phase.DRAW and a_wall[i] != b_wall[i]:
                self._draw(after[i], evs)
            if wanted is None or wanted[i][a_seat[i]]:
                self._request(after[i], evs)
        return out

    # -- one event kind each ---------------------------------------------------------------------
    def _hand_start(self, rec: np.void, evs: list[Routed]) -> None:
        dealer = (int(rec["chiicha"]) + int(rec["round"])) % self.P
        drawn = int(rec["drawn"])
        scores = [int(x) for x in rec["scores"][: self.P]]
        for seat in range(self.P):
            own = int(rec["hands"][seat]) & ~((1 << drawn) if seat == dealer and drawn >= 0 else 0)
            evs.append((seat, {"type": "hand_start", "hand": int(rec["deals"]), "round": int(rec["round"]) + 1,
                               "replay": int(rec["replays"]), "dealer": dealer, "cards": _cards(own),
                               "scores": scores}))  # fmt: skip
        self._draw(rec, evs)

    def _draw(self, rec: np.void, evs: list[Routed]) -> None:
        seat, card = int(rec["current"]), int(rec["drawn"])
        left = max(0, int(rec["wall_end"]) - int(rec["wall_pos"]))
        public = {"type": "draw", "seat": seat, "wall_left": left}  # one object for every other seat
        for s in range(self.P):
            evs.append((s, {**public, "card": _CARD[card]} if s == seat else public))

    def _request(self, rec: np.void, evs: list[Routed]) -> None:
        phase = int(rec["phase"])
        if phase == Phase.OVER:
            return
        actions = [_ACTION_ENTRIES[a] for a in legal_ids(int(rec["mask"]))]
        ev = {"type": "request", "phase": _PHASE[phase], "actions": actions}
        if phase == Phase.CLAIM:
            ev["claim_card"] = _CARD[int(rec["claim_card"])]
            ev["discarder"] = int(rec["claim_discarder"])
        evs.append((int(rec["acting"]), ev))

    def _call(self, before: np.void, after: np.void, evs: list[Routed]) -> None:
        caller = int(after["caller"])
        asked = [int(x) for x in before["claim_asked"][: int(before["claim_n"])]]
        resolved = int(after["claim_resp"][asked.index(caller)])  # the caller's answer, public once it wins
        kind = "pon" if PON_BASE <= resolved < CHII_LOW else "chii"
        meld, called = _cards(int(after["melds"][caller])), _CARD[int(before["claim_card"])]
        evs.append((None, {"type": "call", "seat": caller, "kind": kind, "cards": meld, "called": called,
                           "from": int(before["claim_discarder"])}))  # fmt: skip

    def _hand_end(self, h: HandOutcome, after: np.void, evs: list[Routed]) -> None:
        if h.is_win:
            res = h.score()
            evs.append((None, {"type": "win", "winner": h.winner, "discarder": h.discarder, "how": h.kind.label,
                               "cards": _cards(h.win_hand), "meld": _cards(h.win_meld), "win_card": _CARD[h.win_card],
                               "groups": [format_cards(g) for g in res.groups],
                               "joker_as": _CARD[res.joker_as] if res.joker_as is not None else None,
                               "yaku": [[n, v] for n, v in res.yaku], "bonuses": dict(res.bonuses), "han": h.han,
                               "points": h.points}))  # fmt: skip
        elif h.kind == Result.DRAW:
            evs.append((None, {"type": "exhausted"}))
        else:
            evs.append((None, {"type": "chombo", "seat": h.discarder}))
        scores = [int(x) for x in after["scores"][: self.P]]
        transfers = [{"from": a, "to": b, "points": n} for a, b, n in h.transfers()]
        evs.append((None, {"type": "settlement", "payments": list(h.payments), "transfers": transfers,
                           "scores": scores}))  # fmt: skip


def route(routed: list[Routed], seat: int) -> list[Event]:
    """The events of ``routed`` that seat ``seat`` receives."""
    return [ev for to, ev in routed if to is None or to == seat]


class GameStreams:
    """One game in the engine with an event stream per seat. ``streams[seat]`` grows as the game is
    stepped with :meth:`step`; :meth:`pending` is the current request (seat, request event)."""

    def __init__(
        self,
        rules: RuleConfig | None = None,
        seed: int = 0,
        game_id: int | str = 0,
        start: np.ndarray | None = None,
    ) -> None:
        """A new game seeded ``seed``; ``start`` (an engine record of shape (1,), e.g. a snapshot with
        two hidden cards swapped) starts from that record instead - the leak test uses it."""
        self.rules = rules or RuleConfig()
        self.P = self.rules.num_players
        self.game_id = game_id
        self.seed = int(seed)
        self.engine = FastBatch(1, self.rules)
        self.engine.reset(np.array([self.seed], np.uint64))
        if start is not None:
            self.engine.restore(slice(0, 1), start)
        self.deriver = EventDeriver(self.rules)
        self.streams: list[list[Event]] = [[] for _ in range(self.P)]
        self.answers: list[int] = []
        self._deliver(self.deriver.start(self.engine.snapshot(slice(0, 1)))[0])

    def _deliver(self, routed: list[Routed]) -> None:
        for seat in range(self.P):
            self.streams[seat].extend({**ev, "game": self.game_id} for ev in route(routed, seat))

    def pending(self) -> tuple[int, Event] | None:
        """(seat, request) the game waits for, or None when it is over."""
        rec = self.engine.record(0)
        if int(rec["phase"]) == Phase.OVER:
            return None
        seat = int(rec["acting"])
        return seat, next(e for e in reversed(self.streams[seat]) if e["type"] == "request")

    def parse_answer(self, answer: int | str) -> int:
        """An answer as an action id: the id itself or its name (``"pass"``, ``"discard 7h"``)."""
        return parse_action(answer)

    def step(self, answer: int | str) -> None:
        """Apply the acting seat's answer (refused with IllegalActionError if not legal) and emit events."""
        action = self.parse_answer(answer)
        before = self.engine.snapshot(slice(0, 1))
        if self.engine.step(np.array([action], np.int64))[0]:
            raise IllegalActionError(self.engine.illegal_message(0, action))
        after = self.engine.snapshot(slice(0, 1))
        self.answers.append(action)
        hands = hand_outcomes(np.array([0]), after, self.rules)
        over = int(after[0]["phase"]) == Phase.OVER
        games = game_outcomes(np.array([0]), np.array([self.seed]), after, self.rules) if over else []
        routed = self.deriver.step(before, [action], after, {0: hands} if hands else {}, {0: games[0]} if games else {})
        self._deliver(routed[0])


# -- the wire format ------------------------------------------------------------------------------
class ProtocolError(ValueError):
    """A line from a bot that is not a valid protocol message; ``kind`` names the fault class."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind


def parse_action(answer: object) -> int:
    """An answer's action as an id: an integer id or an action name (``"pass"``, ``"discard 7h"``);
    anything else is refused with a ValueError saying what would be right."""
    if isinstance(answer, str):
        if answer not in ACTION_IDS:
            # cut short: the name is the bot's, quoted back to it and to the terminal (a 4 kB name was, whole: red
            # team, session 46)
            shown = repr(answer[:40]) + (f" (cut; {len(answer):,} characters)" if len(answer) > 40 else "")
            raise ValueError(f"unknown action name {shown} (names look like 'discard 7h', 'tsumo', 'ron', 'pass')")
        return ACTION_IDS[answer]
    if isinstance(answer, bool) or not isinstance(answer, int | np.integer):
        raise ValueError(f"an action is an id 0..{NUM_ACTIONS - 1} or its name, got {answer!r}")
    return int(answer)


def hello(**fields: Any) -> str:
    """The server's first line: ``{"type": "hello", "protocol": 1, ...}``."""
    return encode({"type": "hello", "protocol": PROTOCOL_VERSION, **fields})


_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def encode(event: Event) -> str:
    """One JSON line (compact, UTF-8, newline-terminated)."""
    return _ENCODE(event) + "\n"


_ACTION_JSON = {id(e): _ENCODE(e) for e in _ACTION_ENTRIES}


def encode_body(event: Event) -> str:
    """The compact JSON of an event without its game id (see :func:`encode_for`)."""
    if event.get("type") == "request":  # the most frequent event: its action entries are encoded once, here
        rest = {k: v for k, v in event.items() if k != "actions"}
        listed = ",".join(_ACTION_JSON.get(id(a)) or _ENCODE(a) for a in event["actions"])
        return f'{_ENCODE(rest)[:-1]},"actions":[{listed}]}}'
    return _ENCODE(event)


def encode_for(game: int, body: str) -> str:
    """An event's line addressed to ``game``: ``body`` (from :func:`encode_body`) with ``"game"`` put
    first, so one event sent to many streams is encoded once."""
    return f'{{"game":{game},{body[1:]}\n' if len(body) > 2 else f'{{"game":{game}}}\n'


_HELLO = '{"type": "hello", "protocol": 1}'

MAX_LINE = 4096
"""Longest line (bytes, without its newline) a bot may write; a longer one is a ``garbage`` fault
before anything is parsed. An answer is ~40 bytes, a hello ~60."""
MAX_DEPTH = 8
"""Deepest nesting of arrays / objects a line may have (an answer has 1)."""
MAX_DIGITS = 20
"""Most digits an integer in a line may have (ids and sequence numbers need a few)."""
_DIGITS = re.compile(rb"[0-9]{%d,}" % (MAX_DIGITS + 1))
_QUOTE, _BACKSLASH, _OPEN, _CLOSE = 0x22, 0x5C, frozenset(b"[{"), frozenset(b"]}")
_DIGIT = frozenset(b"0123456789")


def _outside_strings(raw: bytes) -> tuple[int, int]:
    """(deepest nesting, longest run of digits) of ``raw``, not counting what lies inside JSON strings (from a quote
    to its closing quote, or to the end when it never closes): one pass over the bytes. A regex that skipped the
    strings rescanned the rest of the line from every quote of a string that never closed: quadratic, 50 ms per
    4 KB line on the web table's event loop (red team, session 33)."""
    depth = deepest = run = longest = 0
    in_string = escaped = False
    for ch in raw:
        if in_string:
            if escaped:
                escaped = False
            elif ch == _BACKSLASH:
                escaped = True
            elif ch == _QUOTE:
                in_string = False
        elif ch in _DIGIT:
            run += 1
            if run > longest:
                longest = run
        else:
            run = 0
            if ch == _QUOTE:
                in_string = True
            elif ch in _OPEN:
                depth += 1
                if depth > deepest:
                    deepest = depth
            elif ch in _CLOSE:
                depth -= 1
    return deepest, longest


def check_line(line: bytes | str, limit: int = MAX_LINE) -> bytes:
    """``line`` as bytes if it may be parsed: at most ``limit`` bytes, nesting at most
    :data:`MAX_DEPTH`, no integer longer than :data:`MAX_DIGITS` digits; else ProtocolError
    ("garbage") saying which bound it broke. Checked before the JSON parser sees the line, so no
    input can make the parser recurse deeply or convert a huge number; the check itself is linear in the line."""
    raw = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else bytes(line)
    if len(raw) > limit:
        # readers cut a line at limit + 1 bytes (they stop buffering there): its length is then unknown, not 4,097
        size = f"more than {limit:,}" if len(raw) == limit + 1 else f"{len(raw):,}"
        raise ProtocolError("garbage", f"line of {size} bytes; the limit is {limit}")
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH or _DIGITS.search(raw):
        deepest, digits = _outside_strings(raw)  # brackets and digits inside strings do not count
        if deepest > MAX_DEPTH:
            raise ProtocolError("garbage", f"JSON nested {deepest} deep; the limit is {MAX_DEPTH}")
        if digits > MAX_DIGITS:
            raise ProtocolError("garbage", f"a number of more than {MAX_DIGITS} digits")
    return raw


def loads_bounded(line: bytes | str, limit: int = MAX_LINE) -> Any:
    """The JSON value of one line within the bounds of :func:`check_line`; every way it can fail
    (too long, too deep, too many digits, not UTF-8, not JSON) is one ProtocolError("garbage")."""
    raw = check_line(line, limit)
    try:
        # decoded here, strictly: json.loads(bytes) would guess UTF-16 or UTF-32, whose bytes the bounds above
        # (counted on UTF-8 bytes) do not describe
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError("garbage", "not UTF-8") from None
    try:
        # a key given twice is refused, as in replays and logs: json keeps the last, so {"action": 999, "action": 5}
        # was played as 5 (red team, session 36)
        return strict_json_loads(text)
    except (DuplicateKeyError, JsonNumberError) as exc:
        raise ProtocolError("garbage", str(exc)) from None
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        raise ProtocolError("garbage", "not JSON") from None


def decode_hello(line: bytes | str) -> dict:
    """A bot's hello line, checked: a JSON object of type hello speaking this protocol version."""
    try:
        obj = loads_bounded(line)
    except ProtocolError as exc:
        raise ProtocolError("garbage", f"the first line is not a hello ({exc}; expected {_HELLO})") from None
    if not isinstance(obj, dict) or obj.get("type") != "hello":
        raise ProtocolError("garbage", f"the first line is not a hello (expected {_HELLO})")
    version = obj.get("protocol")  # exactly the integer: true and 1.0 equal 1 in Python, not in the protocol
    if isinstance(version, bool) or not isinstance(version, int) or version != PROTOCOL_VERSION:
        raise ProtocolError(
            "protocol", f"the bot speaks protocol {json.dumps(version)[:40]}; this meld8 speaks {PROTOCOL_VERSION}"
        )
    return obj


class _JsonNull:
    """An answer's ``"seq": null``: told apart from a line without ``seq`` (None), which is allowed."""

    def __repr__(self) -> str:
        return "null"


JSON_NULL = _JsonNull()


def decode_answer(line: bytes | str) -> tuple[object, object, object]:
    """(game, action, seq) of an answer line ``{"game": G, "action": A, "seq": N}``, raw (``seq`` is
    optional: None when absent, :data:`JSON_NULL` when null, which is no integer: a bot's ``"seq": null`` was taken
    for no seq, skipping the check it names, red team session 44); ProtocolError if the line is out of bounds
    (:func:`check_line`) or not a JSON object with ``game`` and ``action``."""
    obj = loads_bounded(line)
    if not isinstance(obj, dict) or "game" not in obj or "action" not in obj:
        raise ProtocolError("garbage", 'not an answer (expected {"game": <id>, "action": <id or name>, "seq": <n>})')
    seq = obj.get("seq")
    return obj["game"], obj["action"], JSON_NULL if seq is None and "seq" in obj else seq


__all__ = [
    "ACTION_IDS",
    "MAX_DEPTH",
    "MAX_DIGITS",
    "MAX_LINE",
    "PROTOCOL_VERSION",
    "JSON_NULL",
    "EventDeriver",
    "GameStreams",
    "ProtocolError",
    "check_line",
    "decode_answer",
    "decode_hello",
    "encode",
    "encode_body",
    "encode_for",
    "hello",
    "loads_bounded",
    "parse_action",
    "route",
]
