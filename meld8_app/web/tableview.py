"""What one seat sees at the table, reduced from its seat-protocol event stream (``meld8_env.protocol``).

The browser table draws these states; nothing here knows the engine. :class:`SeatView` folds one
seat's events into a JSON-able state; :func:`merge` puts the seats' views of one game together into
the full-information state of a replay ("show all hands"). State fields:

``players``, ``seat`` (whose view, None when merged), ``scores``, ``round``, ``hand``, ``replay``,
``dealer``, ``wall_left``, ``dora_indicator``, ``hands`` (seat -> sorted cards, the known ones; the
drawn card is apart in ``drawn``), ``discards`` (per seat: ``{"card", "called", "dora"}``), ``melds``
(per seat: cards), ``request`` (the pending request of this seat, or None), ``last`` (what just
happened, in words), ``results`` (per finished hand: the win or draw and the settlement ledger),
``game_end`` (final scores and placements, or None).
"""

from __future__ import annotations

import copy
from typing import Any

from meld8_env.cards import card_str, parse_card, parse_cards


def _sorted(cards: list[str]) -> list[str]:
    return [card_str(c) for c in sorted(parse_card(x) for x in cards)]


def _cards(text: str) -> list[str]:
    return [card_str(c) for c in parse_cards(text)] if text else []


class SeatView:
    def __init__(self, seat: int | None = None, players: int = 3) -> None:
        self.seat = seat
        self.state: dict[str, Any] = {
            "players": players, "seat": seat, "scores": [], "round": 0, "hand": 0, "replay": 0, "dealer": None,
            "wall_left": None, "dora_indicator": None, "hands": {}, "drawn": {},
            "discards": [[] for _ in range(players)], "melds": [[] for _ in range(players)], "request": None,
            "last": "", "results": [], "game_end": None,
        }  # fmt: skip

    def apply(self, ev: dict) -> None:
        """Fold one event into the state."""
        getattr(self, "_" + ev["type"], self._ignore)(ev)

    def view(self) -> dict[str, Any]:
        """A copy of the state (safe to keep as a frame)."""
        return copy.deepcopy(self.state)

    # -- one handler per event type ---------------------------------------------------------------
    def _ignore(self, ev: dict) -> None:
        pass

    def _game_start(self, ev: dict) -> None:
        s = self.state
        P = ev["players"]
        s.update(players=P, seat=ev["seat"] if self.seat is not None else None, scores=list(ev["scores"]))
        s["discards"] = [[] for _ in range(P)]
        s["melds"] = [[] for _ in range(P)]
        s["last"] = "the game starts"

    def _hand_start(self, ev: dict) -> None:
        s = self.state
        P = s["players"]
        s.update(round=ev["round"], hand=ev["hand"], replay=ev["replay"], dealer=ev["dealer"],
                 scores=list(ev["scores"]), dora_indicator=None, request=None, wall_left=None)  # fmt: skip
        s["discards"] = [[] for _ in range(P)]
        s["melds"] = [[] for _ in range(P)]
        s["hands"], s["drawn"] = {}, {}
        if self.seat is not None:
            s["hands"][str(self.seat)] = _sorted(_cards(ev["cards"]))
        replay = f" (replay {ev['replay']})" if ev["replay"] else ""
        s["last"] = f"hand {ev['hand']}: round {ev['round']}{replay}, seat {ev['dealer']} deals"

    def _draw(self, ev: dict) -> None:
        s = self.state
        s["wall_left"] = ev["wall_left"]
        s["request"] = None
        if "card" in ev:
            s["drawn"][str(ev["seat"])] = ev["card"]
        s["last"] = f"seat {ev['seat']} draws"

    def _discard(self, ev: dict) -> None:
        s = self.state
        seat, card = str(ev["seat"]), ev["card"]
        hand, drawn = s["hands"].get(seat), s["drawn"].pop(seat, None)
        if hand is not None:
            if card != drawn:
                if card in hand:
                    hand.remove(card)
                if drawn is not None:
                    hand.append(drawn)
            s["hands"][seat] = _sorted(hand)
        s["discards"][ev["seat"]].append({"card": card, "called": False, "dora": ev["dora_indicator"]})
        if ev["dora_indicator"]:
            s["dora_indicator"] = card
        s["request"] = None
        s["last"] = f"seat {ev['seat']} discards {card}" + (" (the dora indicator)" if ev["dora_indicator"] else "")

    def _call(self, ev: dict) -> None:
        s = self.state
        pile = s["discards"][ev["from"]]
        if pile and pile[-1]["card"] == ev["called"]:
            pile[-1]["called"] = True
        meld = _cards(ev["cards"])
        s["melds"][ev["seat"]] = meld
        hand = s["hands"].get(str(ev["seat"]))
        if hand is not None:
            for c in meld:
                if c != ev["called"] and c in hand:
                    hand.remove(c)
        s["request"] = None
        s["last"] = f"seat {ev['seat']} calls {ev['kind']} on {ev['called']} from seat {ev['from']}"

    def _request(self, ev: dict) -> None:
        self.state["request"] = {k: v for k, v in ev.items() if k not in ("type", "game")}

    def _win(self, ev: dict) -> None:
        s = self.state
        s["request"] = None
        how = "Tsumo" if ev["discarder"] < 0 else f"Ron on seat {ev['discarder']}"
        s["results"].append({"hand": s["hand"], "round": s["round"], "kind": ev["how"], "win": {
            k: ev[k] for k in ("winner", "discarder", "cards", "meld", "win_card", "groups", "joker_as", "yaku",
                               "bonuses", "han", "points")}})  # fmt: skip
        s["last"] = f"seat {ev['winner']} wins by {how}: {ev['han']} han, {ev['points']:,} points"

    def _exhausted(self, ev: dict) -> None:
        self.state["results"].append({"hand": self.state["hand"], "round": self.state["round"], "kind": "draw",
                                      "win": None})  # fmt: skip
        self.state["request"] = None
        self.state["last"] = "the wall is exhausted: the hand is drawn and replayed (R39)"

    def _chombo(self, ev: dict) -> None:
        self.state["results"].append({"hand": self.state["hand"], "round": self.state["round"], "kind": "chombo",
                                      "win": None, "seat": ev["seat"]})  # fmt: skip
        self.state["last"] = f"seat {ev['seat']} declared a false win (chombo, R41)"

    def _settlement(self, ev: dict) -> None:
        s = self.state
        s["scores"] = list(ev["scores"])
        if s["results"]:
            s["results"][-1]["settlement"] = {k: ev[k] for k in ("payments", "transfers", "scores")}

    def _game_end(self, ev: dict) -> None:
        s = self.state
        s["request"] = None
        s["game_end"] = {"final_scores": ev["final_scores"], "placements": ev["placements"]}
        s["last"] = "the game is over"


def merge(views: list[SeatView]) -> dict[str, Any]:
    """The full-information state of a game from every seat's view (each contributes its own hand)."""
    out = views[0].view()
    out["seat"] = None
    out["hands"], out["drawn"], out["request"] = {}, {}, None
    for seat, v in enumerate(views):
        st = v.state
        key = str(seat)
        if key in st["hands"]:
            out["hands"][key] = list(st["hands"][key])
        if key in st["drawn"]:
            out["drawn"][key] = st["drawn"][key]
        if st["request"] is not None:
            out["request"] = {**st["request"], "seat": seat}
    return out
