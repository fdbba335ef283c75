"""What one seat sees at the table, reduced from its seat-protocol event stream (``meld8_env.protocol``).

The browser table draws these states; nothing here knows the engine. :class:`SeatView` folds one
seat's events into a JSON-able state; :func:`merge` puts the seats' views of one game together into
the full-information state of a replay ("show all hands"). State fields:

``players``, ``seat`` (whose view, None when merged), ``names`` (seat -> name; "you" for the human),
``scores``, ``round``, ``rounds`` (the game's number of rounds, R7; None before the game starts), ``chiicha``
(the first dealer) and ``placement_tie`` (the rule option; both say how equal scores were placed, R40), ``hand``,
``replay``, ``min_han`` (the standard-yaku han a win needs this round, R30; None before the first deal), ``dealer``,
``wall_left``, ``dora_indicator`` and ``dora`` (the card it makes dora, R35), ``hands``
(seat -> sorted cards, the known ones; the drawn card is apart in ``drawn``), ``hand_sizes`` (seat ->
number of concealed cards, drawn card included: public, so opponents' backs can be drawn),
``discards`` (per seat: ``{"card", "called", "dora"}``), ``latest`` (``[seat, index]`` of the hand's newest discard in
``discards``, or None), ``melds`` (per seat: cards), ``request`` (the pending request of this seat, or None; each
action carries ``label``, e.g. "Pon A♥ with A♠ A♦"; a draw whose eight cards form a win without Tsumo being offered
carries ``no_tsumo``, the reason in words: the yaku a win needs, §6 (b) and §7, R30),
``last`` (what just happened, in words with card glyphs: "you draw", "greedy discards 7♠"; a call the seat answered
that another seat's claim beat is said too, R21), ``log``
(the last :data:`LOG_LINES` of those), ``said`` (how many lines were said in all), ``results`` (one per
finished hand, see below), ``game_end``
(``final_scores``, ``placements``, ``raw_scores`` and ``placement_points``, their difference, R40; or
None).

A result (``results[i]``) keeps the hand's ending so none is lost when the next deal follows at once:
``hand``, ``round``, ``kind`` ("tsumo" / "ron" / "draw" / "chombo"), ``win`` (the win event's fields
plus ``yaku_names``: [[display name, han]] with the bonuses, R26-R38; None for a draw or chombo),
``seat`` (chombo only), ``table`` (the table at that moment: ``discards``, ``melds``, ``hands`` with
the winner's hand revealed and the win card apart in ``drawn``, ``hand_sizes``, ``dora_indicator``,
``wall_left``, ``dealer``), ``settlement`` (``payments``, ``transfers``, ``scores`` after and
``before``) and ``said`` (the state's ``said`` once the hand's last line was said).
"""

from __future__ import annotations

import copy
from typing import Any

from meld8_env.actions import CHII_BASE, PASS, PON_BASE, TSUMO
from meld8_env.cards import card_str, parse_card, parse_cards
from meld8_env.display import action_words, bonus_name, card_glyph, yaku_name
from meld8_env.rules import YAKU_HAN, RuleConfig
from meld8_env.scoring import dora_of, score_hand

LOG_LINES = 40
_TABLE_KEYS = (
    "discards",
    "latest",
    "melds",
    "hands",
    "drawn",
    "hand_sizes",
    "dora_indicator",
    "dora",
    "wall_left",
    "dealer",
    # the round's minimum: the header over a result showed the next deal's (a player's walkthrough, session 47)
    "min_han",
)


def _sorted(cards: list[str]) -> list[str]:
    return [card_str(c) for c in sorted(parse_card(x) for x in cards)]


def _cards(text: str) -> list[str]:
    return [card_str(c) for c in parse_cards(text)] if text else []


def unique_names(names: list[str]) -> list[str]:
    """Seat names as the words use them: a name two seats share gets its seat ("greedy (seat 2)")."""
    return [f"{n} (seat {s})" if names.count(n) > 1 else n for s, n in enumerate(names)]


class SeatView:
    def __init__(self, seat: int | None = None, players: int = 3, names: list[str] | None = None) -> None:
        self.seat = seat
        named = unique_names(list(names or [f"seat {s}" for s in range(players)]))
        self.state: dict[str, Any] = {
            "players": players, "seat": seat, "names": named,
            "scores": [], "round": 0, "rounds": None, "hand": 0, "replay": 0, "dealer": None, "wall_left": None,
            "chiicha": None, "placement_tie": None, "min_han": None,
            "dora_indicator": None, "dora": None, "hands": {}, "drawn": {}, "hand_sizes": [0] * players,
            "discards": [[] for _ in range(players)], "latest": None, "melds": [[] for _ in range(players)],
            "request": None,
            "last": "", "log": [], "said": 0, "results": [], "game_end": None,
        }  # fmt: skip
        self._rules: RuleConfig | None = None  # the game's (its game_start event)
        self._called: str | None = None  # the call this seat answered to the claim now open ("Pon"), until resolved

    @property
    def names(self) -> list[str]:
        return self.state["names"]

    @names.setter
    def names(self, names: list[str]) -> None:
        self.state["names"] = unique_names(list(names))

    def apply(self, ev: dict) -> None:
        """Fold one event into the state."""
        getattr(self, "_" + ev["type"], self._ignore)(ev)

    def answered(self, action: int) -> None:
        """This seat's answer to its open request (the event stream never shows it): a call is remembered, so that
        a claim that beats it (R21) can be said when it happens."""
        req = self.state["request"]
        self._called = None
        if req is not None and req.get("phase") == "claim" and PON_BASE <= action < PASS:
            self._called = "Pon" if action < CHII_BASE else "Chii"

    def _beaten(self, winner: int, how: str) -> None:
        """Say that this seat's call was not made because ``winner``'s ``how`` comes first (R21)."""
        if self._called is not None and winner != self.seat:
            self._say(f"your {self._called} was not made: {self._whose(winner)} {how} comes first (R21)")
        self._called = None

    def view(self) -> dict[str, Any]:
        """A copy of the state (safe to keep as a frame)."""
        return copy.deepcopy(self.state)

    # -- words ------------------------------------------------------------------------------------
    def _who(self, seat: int) -> str:
        names = self.state["names"]
        return names[seat] if 0 <= seat < len(names) else f"seat {seat}"

    def _whose(self, seat: int) -> str:
        """``"your"`` for the human, ``"greedy's"`` for the others."""
        who = self._who(seat)
        return "your" if who == "you" else f"{who}'s"

    def _says(self, seat: int, verb: str, rest: str = "") -> str:
        """``"you draw"`` for the human, ``"greedy draws"`` for the others (verb given in base form)."""
        who = self._who(seat)
        if who != "you":
            verb = verb + ("es" if verb.endswith(("s", "sh", "ch")) else "s")
        return f"{who} {verb}" + (f" {rest}" if rest else "")

    def _say(self, text: str) -> None:
        self.state["last"] = text
        log = self.state["log"]
        log.append(text)
        del log[:-LOG_LINES]
        self.state["said"] += 1

    def _say_result(self, text: str) -> None:
        """The line that ends a hand; its result keeps ``said`` as it stands then (the page shows the log that far
        while the result is on screen, not the next deal's lines). Set once: a finished result never changes."""
        self._say(text)
        self.state["results"][-1]["said"] = self.state["said"]

    # -- one handler per event type ---------------------------------------------------------------
    def _ignore(self, ev: dict) -> None:
        pass

    def _game_start(self, ev: dict) -> None:
        s = self.state
        P = ev["players"]
        s.update(players=P, seat=ev["seat"] if self.seat is not None else None, scores=list(ev["scores"]))
        s["rounds"] = ev["rules"]["rounds"]
        s["placement_tie"] = ev["rules"]["placement_tie"]
        self._rules = RuleConfig.from_dict(ev["rules"])
        if len(s["names"]) != P:
            s["names"] = [f"seat {k}" for k in range(P)]
        s["discards"] = [[] for _ in range(P)]
        s["melds"] = [[] for _ in range(P)]
        s["hand_sizes"] = [0] * P
        self._say("the game starts")

    def _hand_start(self, ev: dict) -> None:
        s = self.state
        P = s["players"]
        s.update(round=ev["round"], hand=ev["hand"], replay=ev["replay"], dealer=ev["dealer"],
                 scores=list(ev["scores"]), dora_indicator=None, dora=None, request=None, wall_left=None)  # fmt: skip
        if s["chiicha"] is None:  # the game's first dealer: equal final scores are placed from this seat on (R40)
            s["chiicha"] = ev["dealer"]
        s["discards"] = [[] for _ in range(P)]
        s["latest"] = None
        s["melds"] = [[] for _ in range(P)]
        s["hands"], s["drawn"] = {}, {}
        self._called = None
        r = int(ev["round"])
        s["min_han"] = self._rules.min_han(r) if self._rules is not None and 1 <= r <= self._rules.rounds else None
        mine = _cards(ev["cards"])
        s["hand_sizes"] = [len(mine)] * P  # every seat is dealt the same number of cards (R10)
        if self.seat is not None:
            s["hands"][str(self.seat)] = _sorted(mine)
        replay = f" (replay {ev['replay']})" if ev["replay"] else ""
        self._say(f"hand {ev['hand']}: round {ev['round']}{replay}, {self._says(ev['dealer'], 'deal')}")

    def _draw(self, ev: dict) -> None:
        s = self.state
        s["wall_left"] = ev["wall_left"]
        s["request"] = None
        s["hand_sizes"][ev["seat"]] += 1
        if "card" in ev:
            s["drawn"][str(ev["seat"])] = ev["card"]
            self._say(self._says(ev["seat"], "draw", card_glyph(ev["card"])))
        else:
            self._say(self._says(ev["seat"], "draw"))

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
        s["hand_sizes"][ev["seat"]] -= 1
        s["discards"][ev["seat"]].append({"card": card, "called": False, "dora": ev["dora_indicator"]})
        s["latest"] = [ev["seat"], len(s["discards"][ev["seat"]]) - 1]
        if ev["dora_indicator"]:
            s["dora_indicator"] = card
            s["dora"] = card_str(dora_of(parse_card(card)))  # the page names and marks it (R35)
        s["request"] = None
        dora = " (it is the dora indicator)" if ev["dora_indicator"] else ""
        self._say(self._says(ev["seat"], "discard", card_glyph(card)) + dora)

    def _call(self, ev: dict) -> None:
        s = self.state
        self._beaten(ev["seat"], ev["kind"].capitalize())  # a Pon beats a Chii (R21)
        pile = s["discards"][ev["from"]]
        if pile and pile[-1]["card"] == ev["called"]:
            pile[-1]["called"] = True
        meld = _cards(ev["cards"])
        s["melds"][ev["seat"]] = meld
        s["hand_sizes"][ev["seat"]] -= len(meld) - 1
        hand = s["hands"].get(str(ev["seat"]))
        if hand is not None:
            for c in meld:
                if c != ev["called"] and c in hand:
                    hand.remove(c)
        s["request"] = None
        used = " ".join(card_glyph(c) for c in meld if c != ev["called"])
        kind = ev["kind"].capitalize()
        text = f"{kind} {card_glyph(ev['called'])} with {used}" if used else f"{kind} {card_glyph(ev['called'])}"
        self._say(f"{self._who(ev['seat'])}: {text} (from {self._who(ev['from'])})")

    def _request(self, ev: dict) -> None:
        req = {k: v for k, v in ev.items() if k not in ("type", "game", "actions")}
        claim = ev.get("claim_card")
        req["actions"] = [{**a, "label": action_words(int(a["id"]), claim)} for a in ev["actions"]]
        if why := self._no_tsumo(req):
            req["no_tsumo"] = why
        self.state["request"] = req

    def _no_tsumo(self, req: dict) -> str | None:
        """Why a draw whose eight cards form a win (R26) offers no Tsumo, in words: no standard yaku (§6 b, §7) or too
        few of their han for the round (R30); None where Tsumo is offered, or the cards form no win, or the scorer
        names another reason. The scorer is asked without the situation's yaku (first draw): where one of those
        would make the win, the engine offers Tsumo and nothing is said."""
        s = self.state
        mine = str(self.seat)
        if self.seat is None or self._rules is None or req.get("phase") != "draw":
            return None
        drawn = s["drawn"].get(mine)
        if drawn is None or any(int(a["id"]) == TSUMO for a in req["actions"]):
            return None
        cards, meld = s["hands"].get(mine, []) + [drawn], s["melds"][self.seat] or None
        try:  # the scorer checks the form first ("no_form": nothing to say)
            res = score_hand(
                cards, drawn, meld=meld, tsumo=True, round=s["round"], dealer=s["dealer"] == self.seat,
                dora_indicator=s["dora_indicator"], last_card=s["wall_left"] == 0, rules=self._rules,
            )  # fmt: skip
        except ValueError:  # CardError included: a state the scorer cannot place says nothing rather than a guess
            return None
        if res.win or res.reason not in ("no_yaku", "below_minimum"):
            return None
        if res.reason == "no_yaku":
            return (
                "your cards form a win, but no Tsumo: they hold no standard yaku (§6 b, §7; dora and bonuses "
                "don't count)"
            )
        return (
            f"your cards form a win, but no Tsumo: their standard yaku reach fewer than the {s['min_han']} han "
            "this round needs (R30; dora and bonuses don't count)"
        )

    def _snapshot(self) -> dict[str, Any]:
        return copy.deepcopy({k: self.state[k] for k in _TABLE_KEYS})

    def _yaku_words(self, yaku: str, han: int, ev: dict) -> str:
        """A yaku's display name, with why its han are not the table's: Toitoi 1 read as a wrong count against
        docs/rules.md's 2, and Value Triplet 2 as one yaku of 2 (a player's walkthrough, session 47)."""
        name = yaku_name(yaku)
        base = YAKU_HAN.get(yaku)
        if base is not None and han < base:  # R32: a called meld or the Joker (they do not stack: one reason is named)
            return f"{name}: {base}, less 1 for {'the called meld' if ev['meld'] else 'the Joker'} (R32)"
        each = self._rules.value_triplet_han if self._rules is not None else 0
        if yaku == "value_triplet" and each and han > each and han % each == 0:
            return f"{name} ×{han // each}"
        return name

    def _win(self, ev: dict) -> None:
        s = self.state
        if ev["discarder"] >= 0:
            self._beaten(ev["winner"], "Ron")
        s["request"] = None
        win = {k: ev[k] for k in ("winner", "discarder", "cards", "meld", "win_card", "groups", "joker_as", "yaku",
                                  "bonuses", "han", "points")}  # fmt: skip
        win["yaku_names"] = [[self._yaku_words(y, h, ev), h] for y, h in ev["yaku"]] + [
            [bonus_name(b), h] for b, h in ev["bonuses"].items()
        ]
        table = self._snapshot()
        # the winner's hand in place: concealed cards revealed (the win event makes them public), the
        # winning card apart as the drawn card, and a Ron's card marked on the discarder's pile
        concealed = _cards(ev["cards"])
        if ev["win_card"] in concealed:
            concealed.remove(ev["win_card"])
        table["hands"][str(ev["winner"])] = _sorted(concealed)
        table["drawn"] = {str(ev["winner"]): ev["win_card"]}
        table["hand_sizes"][ev["winner"]] = len(concealed) + 1
        if ev["meld"]:
            table["melds"][ev["winner"]] = _cards(ev["meld"])
        if ev["discarder"] >= 0:
            pile = table["discards"][ev["discarder"]]
            if pile and pile[-1]["card"] == ev["win_card"]:
                pile[-1]["won"] = True
        s["results"].append({"hand": s["hand"], "round": s["round"], "replay": s["replay"], "kind": ev["how"],
                             "win": win, "table": table})  # fmt: skip
        how = (
            "by Tsumo"
            if ev["discarder"] < 0
            else f"by Ron on {self._whose(ev['discarder'])} {card_glyph(ev['win_card'])}"
        )
        self._say_result(self._says(ev["winner"], "win", f"{how}: {ev['han']} han, {ev['points']:,} points"))

    def _exhausted(self, ev: dict) -> None:
        s = self.state
        s["results"].append({"hand": s["hand"], "round": s["round"], "replay": s["replay"], "kind": "draw",
                             "win": None, "table": self._snapshot()})  # fmt: skip
        s["request"] = None
        self._say_result("the wall is exhausted: the hand is drawn (R14) and the round replayed (R8)")

    def _chombo(self, ev: dict) -> None:
        s = self.state
        s["results"].append({"hand": s["hand"], "round": s["round"], "replay": s["replay"], "kind": "chombo",
                             "win": None, "seat": ev["seat"], "table": self._snapshot()})  # fmt: skip
        s["request"] = None
        self._say_result(self._says(ev["seat"], "declare", "a false win (chombo, R41)"))

    def _settlement(self, ev: dict) -> None:
        s = self.state
        before = list(s["scores"])
        s["scores"] = list(ev["scores"])
        if s["results"] and "settlement" not in s["results"][-1]:
            s["results"][-1]["settlement"] = {**{k: ev[k] for k in ("payments", "transfers", "scores")},
                                              "before": before}  # fmt: skip

    def _game_end(self, ev: dict) -> None:
        s = self.state
        s["request"] = None
        raw = list(s["scores"])
        final = list(ev["final_scores"])
        s["game_end"] = {"final_scores": final, "placements": ev["placements"], "raw_scores": raw,
                         "placement_points": [f - r for f, r in zip(final, raw, strict=True)]}  # fmt: skip
        self._say("the game is over")


def merge(views: list[SeatView], done: dict[int, dict] | None = None) -> dict[str, Any]:
    """The full-information state of a game from every seat's view (each contributes its own hand).

    ``done`` (optional, kept by the caller across calls): the merged results of finished hands, by index,
    shared by every later state instead of copied into each (a hand's result is final once a later one
    exists). Without it a replay's frames copied the whole results history at every action: quadratic,
    37 s for a 3,451-action game."""
    first = views[0].state
    out = {k: copy.deepcopy(v) for k, v in first.items() if k != "results"}
    n = len(first["results"])
    fresh = [copy.deepcopy(r) for r in first["results"][len(done) if done is not None else 0 :]]
    out["results"] = [*(done[i] for i in range(len(done))), *fresh] if done is not None else fresh
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
    # each result's table: every seat's own hand from its own view (the merged view shows all hands)
    for i, res in enumerate(out["results"]):
        if done is not None and i in done:
            continue
        for seat, v in enumerate(views):
            theirs = v.state["results"][i]["table"] if i < len(v.state["results"]) else None
            key = str(seat)
            if theirs and key in theirs["hands"] and key not in res["table"]["hands"]:
                res["table"]["hands"][key] = list(theirs["hands"][key])
                if key in theirs["drawn"]:
                    res["table"]["drawn"].setdefault(key, theirs["drawn"][key])
        if done is not None and i < n - 1 and all(len(v.state["results"]) == n for v in views):
            done[i] = res  # a later hand has ended in every view: this one is final
    return out
