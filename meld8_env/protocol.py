"""The seat protocol's event stream (version 1): everything one seat may know, in order, and nothing else.

Events are derived from the engine's own transitions - the record before and after each step and the
step's typed outcomes (``meld8_env.outcomes``) - never from a second implementation of the rules.
Each event is a JSON-able dict with ``"type"`` and ``"game"`` (the game id, so one bot process can
play many games at once); cards are in R4 notation (``docs/rules.md``).

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
  ``groups``, ``joker_as``, ``yaku`` (``[[name, han]]``), ``han``, ``points``.
- ``exhausted`` / ``chombo`` (all): the hand ended in a draw (R39) / a false win in penalty mode
  (``seat``, R41).
- ``settlement`` (all): ``payments`` (each seat's change), ``transfers`` (``[{"from", "to", "points"}]``),
  ``scores``: who paid whom how much, after every hand.
- ``game_end`` (all): ``final_scores`` (placement points included), ``placements``.

A seat answers a request with an action id (or its name, e.g. ``"discard 7h"``); passing on a claim
is private (no event), as is every other seat's claim option.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from meld8_env.actions import CHII_LOW, NUM_ACTIONS, PON_BASE, IllegalActionError, action_name, legal_ids
from meld8_env.cards import card_str, format_cards, from_mask
from meld8_env.codes import Phase, Result
from meld8_env.engine.fast import FastBatch
from meld8_env.outcomes import HandOutcome, game_outcomes, hand_outcomes
from meld8_env.rules import RuleConfig

PROTOCOL_VERSION = 1
Event = dict[str, Any]
ACTION_IDS = {action_name(a): a for a in range(NUM_ACTIONS)}
"""Action name -> id: answers may name the action (``"pass"``, ``"discard 7h"``)."""


def _cards(mask: int) -> str:
    return format_cards(from_mask(int(mask)))


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
        self.streams: list[list[Event]] = [[] for _ in range(self.P)]
        self.answers: list[int] = []
        rec = self.engine.snapshot(slice(0, 1))[0]
        for seat in range(self.P):
            self._send(seat, "game_start", protocol=PROTOCOL_VERSION, seat=seat, players=self.P,
                       rules=self.rules.to_dict(), rules_hash=self.rules.rules_hash,
                       scores=[int(x) for x in rec["scores"][: self.P]], chiicha=int(rec["chiicha"]))  # fmt: skip
        self._hand_start(rec)
        self._request(rec)

    # -- sending -----------------------------------------------------------------------------------
    def _send(self, to: int | None, type_: str, **fields: Any) -> None:
        """Append an event to seat ``to``'s stream (None: every seat's)."""
        event = {"type": type_, "game": self.game_id, **fields}
        for s in range(self.P) if to is None else (to,):
            self.streams[s].append(dict(event))

    def _hand_start(self, rec: np.void) -> None:
        dealer = (int(rec["chiicha"]) + int(rec["round"])) % self.P
        drawn = int(rec["drawn"])
        for seat in range(self.P):
            own = int(rec["hands"][seat]) & ~((1 << drawn) if seat == dealer and drawn >= 0 else 0)
            self._send(seat, "hand_start", hand=int(rec["deals"]), round=int(rec["round"]) + 1,
                       replay=int(rec["replays"]), dealer=dealer, cards=_cards(own),
                       scores=[int(x) for x in rec["scores"][: self.P]])  # fmt: skip
        self._draw(rec)

    def _draw(self, rec: np.void) -> None:
        seat, card = int(rec["current"]), int(rec["drawn"])
        left = max(0, int(rec["wall_end"]) - int(rec["wall_pos"]))
        for s in range(self.P):
            extra = {"card": card_str(card)} if s == seat else {}
            self._send(s, "draw", seat=seat, wall_left=left, **extra)

    def _request(self, rec: np.void) -> None:
        if int(rec["phase"]) == Phase.OVER:
            return
        seat, phase = int(rec["acting"]), Phase(int(rec["phase"]))
        fields: dict[str, Any] = {
            "phase": phase.label,
            "actions": [{"id": a, "name": action_name(a)} for a in legal_ids(int(rec["mask"]))],
        }
        if phase == Phase.CLAIM:
            fields.update(claim_card=card_str(int(rec["claim_card"])), discarder=int(rec["claim_discarder"]))
        self._send(seat, "request", **fields)

    # -- stepping ----------------------------------------------------------------------------------
    def pending(self) -> tuple[int, Event] | None:
        """(seat, request) the game waits for, or None when it is over."""
        rec = self.engine.record(0)
        if int(rec["phase"]) == Phase.OVER:
            return None
        seat = int(rec["acting"])
        return seat, next(e for e in reversed(self.streams[seat]) if e["type"] == "request")

    def parse_answer(self, answer: int | str) -> int:
        """An answer as an action id: the id itself or its name (``"pass"``, ``"discard 7h"``)."""
        if isinstance(answer, str):
            if answer not in ACTION_IDS:
                raise ValueError(f"unknown action name {answer!r}")
            return ACTION_IDS[answer]
        return int(answer)

    def step(self, answer: int | str) -> None:
        """Apply the acting seat's answer (refused with IllegalActionError if not legal) and emit events."""
        action = self.parse_answer(answer)
        before = self.engine.snapshot(slice(0, 1))[0]
        if self.engine.step(np.array([action], np.int64))[0]:
            raise IllegalActionError(self.engine.illegal_message(0, action))
        after = self.engine.snapshot(slice(0, 1))[0]
        self.answers.append(action)
        self._emit(before, action, after)

    def _emit(self, before: np.void, action: int, after: np.void) -> None:
        seat, phase = int(before["acting"]), int(before["phase"])
        if phase != Phase.CLAIM and action < 52:
            dealer = (int(before["chiicha"]) + int(before["round"])) % self.P
            first = seat == dealer and not int(before["dealer_discarded"])
            self._send(None, "discard", seat=seat, card=card_str(action), dora_indicator=bool(first))
        if int(after["caller"]) >= 0 and int(after["result"]) == Result.NONE:
            caller = int(after["caller"])
            called = int(before["claim_card"])
            kind = "pon" if PON_BASE <= self._resolved_call(before, after) < CHII_LOW else "chii"
            self._send(None, "call", seat=caller, kind=kind, cards=_cards(int(after["melds"][caller])),
                       called=card_str(called), **{"from": int(before["claim_discarder"])})  # fmt: skip
        hands = hand_outcomes(np.array([0]), after.reshape(1), self.rules)
        for h in hands:
            self._hand_end(h, after)
        over = int(after["phase"]) == Phase.OVER
        if over:
            g = game_outcomes(np.array([0]), np.array([self.seed]), after.reshape(1), self.rules)[0]
            self._send(None, "game_end", final_scores=list(g.final_scores), placements=list(g.placements))
            return
        if hands:
            self._hand_start(after)
        elif int(after["phase"]) == Phase.DRAW and int(after["wall_pos"]) != int(before["wall_pos"]):
            self._draw(after)
        self._request(after)

    @staticmethod
    def _resolved_call(before: np.void, after: np.void) -> int:
        """The Pon/Chii action the claim resolved to (the caller's answer, public once it wins)."""
        asked = [int(x) for x in before["claim_asked"][: int(before["claim_n"])]]
        return int(after["claim_resp"][asked.index(int(after["caller"]))])

    def _hand_end(self, h: HandOutcome, after: np.void) -> None:
        if h.is_win:
            res = h.score()
            self._send(None, "win", winner=h.winner, discarder=h.discarder, how=h.kind.label,
                       cards=_cards(h.win_hand), meld=_cards(h.win_meld), win_card=card_str(h.win_card),
                       groups=[format_cards(g) for g in res.groups],
                       joker_as=card_str(res.joker_as) if res.joker_as is not None else None,
                       yaku=[[n, v] for n, v in res.yaku], han=h.han, points=h.points)  # fmt: skip
        elif h.kind == Result.DRAW:
            self._send(None, "exhausted")
        else:
            self._send(None, "chombo", seat=h.discarder)
        scores = [int(x) for x in after["scores"][: self.P]]
        transfers = [{"from": a, "to": b, "points": n} for a, b, n in h.transfers()]
        self._send(None, "settlement", payments=list(h.payments), transfers=transfers, scores=scores)


__all__ = ["PROTOCOL_VERSION", "GameStreams"]
