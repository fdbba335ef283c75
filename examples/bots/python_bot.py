#!/usr/bin/env python3
"""A Meld8 bot speaking the seat protocol (docs/protocol.md), using only Python's standard library.

Run it in a tournament:  meld8 tournament --agents "cmd:python examples/bots/python_bot.py",greedy,defensive

Policy (deterministic): win whenever allowed; Pon a crown card (A, J, Q, K: a value triplet scores a
han); pass on every other claim; otherwise discard the card
with the fewest partners in hand (same rank, or same suit one or two ranks apart), preferring, among
equals, a rank already discarded at the table (less likely to be wanted by others), then the higher card.
It plays any number of games at once: all state is kept per game id.
"""

import json
import sys

RANKS = "A23456789TJQK"


def parse(card):
    """(rank 1..13, suit letter) of a card in R4 notation, or None for the Joker."""
    return None if card == "JK" else (RANKS.index(card[0]) + 1, card[1])


class Bot:
    def __init__(self):
        self.games = {}  # game id -> ranks seen discarded

    def on_event(self, ev):
        """Take one event; return the answer (a dict) when it is a request, else None."""
        kind, game = ev.get("type"), ev.get("game")
        if kind == "game_start" or kind == "hand_start":
            self.games[game] = set()
        elif kind == "discard":
            card = parse(ev["card"])
            if card is not None:
                self.games.setdefault(game, set()).add(card[0])
        elif kind in ("game_end", "fault"):
            self.games.pop(game, None)
        elif kind == "request":
            answer = {"game": game, "action": self.choose(ev, self.games.get(game, set()))}
            if "seq" in ev:  # echo the request's number: meld8 then tells a late answer from a new one
                answer["seq"] = ev["seq"]
            return answer
        return None

    @staticmethod
    def choose(request, seen):
        names = {a["name"]: a["id"] for a in request["actions"]}
        for win in ("tsumo", "ron"):
            if win in names:
                return names[win]
        if request["phase"] == "claim":
            pons = [i for n, i in names.items() if n.startswith("pon")]
            return pons[0] if pons and request["claim_card"][0] in "AJQK" else names["pass"]
        hand = [parse(n.split()[1]) for n in names if n.startswith("discard ")]

        def partners(card):
            score = 0
            for other in hand:
                if other is card:
                    continue
                if other[0] == card[0]:
                    score += 3
                elif other[1] == card[1] and abs(other[0] - card[0]) <= 2:
                    score += 3 - abs(other[0] - card[0])
            return score

        best = min(hand, key=lambda c: (partners(c), c[0] not in seen, -c[0]))
        return names["discard " + RANKS[best[0] - 1] + best[1]]


def main():
    """Read whatever has arrived, answer every request in it, then flush once: one write per batch
    of requests instead of one per answer (the server sends many games' requests together)."""
    stdin, out = sys.stdin.buffer, sys.stdout
    hello = json.loads(stdin.readline())
    if hello.get("protocol") != 1:
        print(f"python_bot speaks protocol 1, the server {hello.get('protocol')}", file=sys.stderr)
        return 1
    out.write(json.dumps({"type": "hello", "protocol": 1, "name": "python_bot"}) + "\n")
    out.flush()
    bot, rest = Bot(), b""
    while True:
        chunk = stdin.read1(1 << 16)
        if not chunk:
            return 0
        *lines, rest = (rest + chunk).split(b"\n")
        answers = []
        for line in lines:
            ev = json.loads(line)
            if ev.get("type") == "bye":
                return 0
            answer = bot.on_event(ev)
            if answer is not None:
                answers.append(json.dumps(answer) + "\n")
        if answers:
            out.write("".join(answers))
            out.flush()


if __name__ == "__main__":
    sys.exit(main())
