"""Information sets: everything one seat may know about a game, and nothing else (issue 19 item 3).

``infoset(record, seat, rules) -> InfoSet`` reads one engine record (dtype ``STATE_DTYPE``) and keeps

- the seat's own concealed hand (and the card it just drew, when it is the seat that drew);
- everything public: melds, calls used, each seat's discards in order with the called marks, dead
  hands (R42), draws taken, scores, round, replays, deals played, first dealer (chiicha) and dealer, the
  dora indicator once it is shown (R35), the kuikae cards of the seat that just called (R20), whose turn
  it is (``current``), the phase, the card under claim and its discarder in a claim window, cards left
  in the live wall and in the dead part, the last step's public outcome, and final scores at the end;
- its own legal actions (``legal``, 0 when it is not asked);
- the hidden cards as one **unordered pool** (``pool``, a 53-bit mask: the other seats' concealed
  cards and the undrawn wall) with the known size of each part (``hidden`` per seat, ``wall_left``,
  ``dead_wall``): ``popcount(pool) == sum(hidden) + wall_left + dead_wall``.

Not in it, on purpose: the seed (it fixes every future deal), the wall order, other seats' hands, which
other seats a claim window asks and what they answered (R22; a seat sees only whether it is asked
itself), and the acting seat when that is not this seat. One thing a claim window does show every seat
is that it is open (``phase`` is claim while someone decides), as the table's pause shows it in play (the order in
which a face hands out events shows it the same way). In penalty mode a seat that answers a claim illegally is dead
at once (R42), and dead hands are public: the others then learn that it was asked.

``InfoSet.to_bytes()`` is canonical (the repr of the (name, value) pairs: only ints, bools and tuples),
so two records that differ only by hidden cards (a permutation among the other hands and the wall)
and the seed give equal bytes; the leak test (``tests/test_infoset_leak.py``) checks that on
thousands of states from bot games.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from meld8_env.cards import card_str
from meld8_env.codes import HAND_SIZE, MAX_DISCARDS, MAX_PLAYERS, N_CARDS, Phase, Result
from meld8_env.config_io import check_int, short_repr
from meld8_env.engine.fast import STATE_DTYPE
from meld8_env.rules import MAX_ROUNDS, RuleConfig

ALL_CARDS = (1 << N_CARDS) - 1
INT32 = (1 << 31) - 1
"""The largest value of a record's int32 fields (scores, deals, replays)."""

__all__ = ["ALL_CARDS", "InfoSet", "infoset"]


@dataclasses.dataclass(frozen=True)
class InfoSet:
    """One seat's view of one game (module docstring). Card sets are 53-bit int masks; per-seat tuples
    are indexed by absolute seat (0..P-1)."""

    num_players: int
    seat: int
    phase: int  # meld8_env.codes.Phase
    my_turn: bool  # this seat is the one asked to act now
    current: int  # whose turn it is (the discarder during a claim window); -1 when over
    hand: int  # own concealed cards (the drawn card included)
    drawn: int  # the card this seat just drew (-1: none, or not this seat's draw)
    legal: int  # this seat's legal actions (bit = action id); 0 when not asked
    melds: tuple[int, ...]
    calls_used: tuple[int, ...]
    discards: tuple[tuple[int, ...], ...]  # in order, called ones included
    called: tuple[int, ...]  # bit i: discard i of that seat was called
    dead: tuple[int, ...]
    draws_taken: tuple[int, ...]
    scores: tuple[int, ...]
    round: int
    replays: int
    deals: int
    chiicha: int
    dealer: int
    dora_ind: int  # -1 until the dealer's first discard (R35)
    kuikae: int  # cards the current caller may not discard now (R20)
    any_call: bool
    first_draw: bool
    last_card: bool
    claim_card: int  # -1 outside a claim window
    claim_discarder: int
    claim_final: bool
    pool: int  # hidden cards: the other seats' concealed cards and the undrawn wall, unordered
    hidden: tuple[int, ...]  # concealed cards of each seat hidden from this one (0 for itself)
    wall_left: int  # cards still to draw from the live wall
    dead_wall: int  # undrawn cards that are never drawn (wall_limit)
    result: int  # public outcome of the last step (meld8_env.codes.Result)
    win_seat: int
    lose_seat: int
    deltas: tuple[int, ...]
    final_scores: tuple[int, ...]  # zeros until the game is over
    placements: tuple[int, ...]

    def to_bytes(self) -> bytes:
        """Canonical bytes: equal infosets, equal bytes (the leak test compares these)."""
        return repr(tuple((f, getattr(self, f)) for f in _FIELDS)).encode()

    @property
    def opponents(self) -> tuple[int, ...]:
        return tuple(s for s in range(self.num_players) if s != self.seat)

    def opponent(self, j: object) -> int:
        """``j`` as an int when it names an opponent of this seat, else one ValueError (the per-opponent helpers
        read the seat itself, wrapped -1 to the last seat, or failed with IndexError: red team, session 37)."""
        if isinstance(j, bool) or not isinstance(j, int | np.integer) or j not in self.opponents:
            raise ValueError(
                f"j must be an opponent of seat {self.seat}, one of {list(self.opponents)}, got {short_repr(j)}"
            )
        return int(j)

    def check(self) -> InfoSet:
        """This infoset, or one ValueError naming the first field that no game gives (a hand-built or edited
        InfoSet failed deep inside the sampler: red team, session 37, and again in session 48, where a hand size,
        a seat, a discard or a count out of range crashed in numpy (IndexError, OverflowError) or gave worlds of a
        game that cannot exist): integer fields in the ranges a game gives, per-seat tuples of length P, every
        seat's hand size for the phase, each card in exactly one place (the hand, the pool, a meld, an uncalled
        discard) and the pool's size ``popcount(pool) == sum(hidden) + wall_left + dead_wall``. About 30 us, once
        per ``sample_worlds`` call."""
        P = self.num_players
        if isinstance(P, bool) or P not in range(2, MAX_PLAYERS + 1):
            raise ValueError(f"InfoSet.num_players must be 2..{MAX_PLAYERS}, got {short_repr(P)}")
        for name, kind in _KINDS:
            v = getattr(self, name)
            if kind == "bool":
                ok = isinstance(v, bool | np.bool_)
            elif kind == "int":
                ok = type(v) is int or (isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_))
            else:  # the per-seat tuples (discards: a tuple of card tuples per seat)
                ok = isinstance(v, tuple) and len(v) == P
            if not ok:
                raise ValueError(f"InfoSet.{name} is not a {kind} (per seat: {P} entries), got {short_repr(v)}")
        check_int(self.seat, "InfoSet.seat", 0, P - 1)
        for name in ("wall_left", "dead_wall"):
            check_int(getattr(self, name), f"InfoSet.{name}", 0, N_CARDS)
        if self.wall_left + self.dead_wall > N_CARDS - HAND_SIZE * P:
            raise ValueError(
                f"InfoSet.wall_left + dead_wall are {self.wall_left + self.dead_wall}, but a {P}-player deal leaves "
                f"{N_CARDS - HAND_SIZE * P} cards in the wall"
            )
        for p, h in enumerate(self.hidden):
            check_int(h, f"InfoSet.hidden[{p}]", 0, 0 if p == self.seat else HAND_SIZE + 1)
        for name in ("pool", "hand"):
            check_int(getattr(self, name), f"InfoSet.{name} (a {N_CARDS}-bit card mask)", 0, ALL_CARDS)
        if self.pool & self.hand:
            raise ValueError("InfoSet.pool holds cards of the seat's own hand")
        if self.pool.bit_count() != sum(self.hidden) + self.wall_left + self.dead_wall:
            raise ValueError(
                f"InfoSet.pool holds {self.pool.bit_count()} cards, but hidden + wall_left + dead_wall are "
                f"{sum(self.hidden) + self.wall_left + self.dead_wall}"
            )
        self._check_public()
        return self

    def _check_public(self) -> None:
        """The rest of :meth:`check`: the public fields' ranges, hand sizes and where each card is."""
        P, top = self.num_players, self.num_players - 1
        for name, lo, hi in (
            ("phase", 0, max(Phase)), ("current", -1, top), ("round", 0, MAX_ROUNDS - 1), ("chiicha", 0, top),
            ("drawn", -1, N_CARDS - 1), ("dora_ind", -1, N_CARDS - 1), ("claim_card", -1, N_CARDS - 1),
            ("claim_discarder", -1, top), ("win_seat", -1, top), ("lose_seat", -1, top), ("result", 0, max(Result)),
            ("replays", 0, INT32), ("deals", 0, INT32), ("kuikae", 0, ALL_CARDS), ("legal", 0, (1 << 64) - 1),
        ):  # fmt: skip
            v = getattr(self, name)
            if type(v) is not int or not lo <= v <= hi:  # the common case without a call (a decision's cost)
                check_int(v, f"InfoSet.{name}", lo, hi)
        over = self.phase == Phase.OVER
        if self.dealer != (self.chiicha + self.round) % P:
            raise ValueError(
                f"InfoSet.dealer is {short_repr(self.dealer)}, but chiicha {self.chiicha} and round {self.round} make "
                f"seat {(self.chiicha + self.round) % P} the dealer"
            )
        if bool(self.my_turn) != (self.legal != 0):
            raise ValueError(
                f"InfoSet.legal is {self.legal:#x} with my_turn {bool(self.my_turn)}: a seat asked to act has legal "
                "actions, any other has none"
            )
        if not over and self.current < 0:
            raise ValueError("InfoSet.current is -1 (no seat's turn), but the game is not over")
        claim = self.phase == Phase.CLAIM
        if (self.claim_card >= 0) != claim or (self.claim_discarder >= 0) != claim:
            raise ValueError(
                f"InfoSet.claim_card {self.claim_card} and claim_discarder {self.claim_discarder}: both are set in a "
                f"claim window and -1 elsewhere (phase {Phase(self.phase).label})"
            )
        for name, lo, hi in (
            ("melds", 0, ALL_CARDS), ("calls_used", 0, 1), ("dead", 0, 1), ("draws_taken", 0, 255),
            ("scores", -INT32 - 1, INT32), ("deltas", -INT32 - 1, INT32), ("final_scores", -INT32 - 1, INT32),
            ("placements", 0, P),
        ):  # fmt: skip
            for p, v in enumerate(getattr(self, name)):
                if type(v) is not int or not lo <= v <= hi:
                    check_int(v, f"InfoSet.{name}[{p}]", lo, hi)
        melds = 0
        for p in range(P):
            m, d = self.melds[p], self.discards[p]
            if m.bit_count() not in (0, 3) or self.calls_used[p] != (m != 0):
                raise ValueError(
                    f"InfoSet.melds[{p}] holds {m.bit_count()} cards with calls_used[{p}] {self.calls_used[p]}: a seat "
                    "has no meld and no call, or one meld of 3 cards and one call (R17, R19)"
                )
            melds |= m
            if not isinstance(d, tuple) or len(d) > MAX_DISCARDS:
                raise ValueError(
                    f"InfoSet.discards[{p}] must be a tuple of at most {MAX_DISCARDS} cards, got {short_repr(d)}"
                )
            for i, c in enumerate(d):
                if type(c) is not int or not 0 <= c < N_CARDS - 1:
                    check_int(c, f"InfoSet.discards[{p}][{i}] (a card id)", 0, N_CARDS - 1)
                if c == N_CARDS - 1:
                    raise ValueError(f"InfoSet.discards[{p}][{i}] is the Joker (JK), which is never discarded (R12)")
            check_int(self.called[p], f"InfoSet.called[{p}] (a bit per discard: {len(d)})", 0, (1 << len(d)) - 1)
        if over:  # nothing is hidden any more (the sampler refuses it in its own words)
            return
        for p in range(P):
            held = (self.hand.bit_count() if p == self.seat else self.hidden[p]) + self.melds[p].bit_count()
            want = HAND_SIZE + (p == self.current and self.phase in (Phase.DRAW, Phase.CALL_DISCARD))
            if held != want:
                part = "hand" if p == self.seat else f"hidden[{p}]"
                raise ValueError(
                    f"InfoSet: seat {p} holds {held} cards ({part} and melds[{p}]), but the {Phase(self.phase).label} "
                    f"phase gives it {want} (R10, R11, R19)"
                )
        if self.drawn >= 0 and not (
            self.hand >> self.drawn & 1 and self.phase == Phase.DRAW and self.current == self.seat
        ):
            raise ValueError(
                f"InfoSet.drawn is {card_str(self.drawn)}, but only the seat that drew, in the draw phase, has a drawn "
                "card, one of its hand"
            )
        places = [("the hand", self.hand), ("the pool", self.pool)]
        places += [(f"melds[{p}]", self.melds[p]) for p in range(P)]
        places += [(f"seat {p}'s uncalled discards", self.uncalled_discards(p)) for p in range(P)]
        seen = 0
        for k, (where, m) in enumerate(places):
            if seen & m:
                c = (seen & m & -(seen & m)).bit_length() - 1
                first = next(w for w, x in places[:k] if x >> c & 1)
                raise ValueError(f"InfoSet: card {card_str(c)} is in {first} and in {where}")
            seen |= m
        if seen != ALL_CARDS:
            c = (ALL_CARDS & ~seen & -(ALL_CARDS & ~seen)).bit_length() - 1
            raise ValueError(f"InfoSet: card {card_str(c)} is nowhere (not in the hand, the pool, a meld or a discard)")
        for p in range(P):
            for i, c in enumerate(self.discards[p]):
                if self.called[p] >> i & 1 and not melds >> c & 1:
                    raise ValueError(
                        f"InfoSet.called[{p}] marks discard {i} ({card_str(c)}) called, but no meld holds it"
                    )

    def uncalled_discards(self, seat: int) -> int:
        """Mask of ``seat``'s discards that stayed in its discard history (its furiten set, R33)."""
        m = 0
        for i, c in enumerate(self.discards[seat]):
            if not self.called[seat] >> i & 1:
                m |= 1 << c
        return m


_FIELDS = tuple(f.name for f in dataclasses.fields(InfoSet))
_KINDS = tuple((f.name, f.type) for f in dataclasses.fields(InfoSet))


_STATE_FIELDS = {name: STATE_DTYPE.fields[name][0] for name in STATE_DTYPE.names}


def _not_state(dtype: np.dtype) -> str | None:
    """Why a structured ``dtype`` does not hold the engine record's fields (None: it does, at any offsets)."""
    fields = dtype.fields or {}
    for name, want in _STATE_FIELDS.items():
        if name not in fields:
            return f"its dtype has no field {name!r}"
        if fields[name][0] != want:
            return f"its field {name!r} is {fields[name][0]}, not {want}"
    return None


def infoset(record: np.void | np.ndarray, seat: int, rules: RuleConfig | str | dict | None) -> InfoSet:
    """The information set of ``seat`` in one engine record (a ``STATE_DTYPE`` row)."""
    rules = RuleConfig.load(rules)
    P = rules.num_players
    seat = check_int(seat, "seat", 0, P - 1)  # int() read 1.5, "1" and True as seat 1 (red team, session 37)
    if not isinstance(record, np.void) or record.dtype.names is None:
        raise ValueError(f"infoset takes one engine record (engine.record(i)), got {short_repr(record)}")
    # a record whose fields are not the engine's failed with KeyError / IndexError, or was read silently (a float
    # phase 0.5 as 0): red team, session 48. The same fields at other offsets (a repacked copy) read the same
    if record.dtype != STATE_DTYPE and (why := _not_state(record.dtype)):
        raise ValueError(f"infoset takes one engine record (dtype meld8_env.engine.fast.STATE_DTYPE): {why}")
    # a record of another player count gave a wrong pool (45 cards for 37) or a phantom seat: a deal of P hands
    # leaves 53 - 7P cards in the wall (0 before the first deal)
    if int(record["wall_len"]) != N_CARDS - HAND_SIZE * P:
        raise ValueError(f"the record is not a {P}-player game: its wall holds {int(record['wall_len'])} cards, "
                         f"a {P}-player deal leaves {N_CARDS - HAND_SIZE * P}")  # fmt: skip
    # one conversion of the whole record (field access on a numpy record costs microseconds each)
    values = zip(record.dtype.names, record.item(), strict=True)
    r = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in values}
    phase = int(r["phase"])
    over = phase == Phase.OVER
    acting = int(r["acting"])
    current = int(r["current"])
    hands = [int(h) for h in r["hands"][:P]]
    melds = tuple(int(m) for m in r["melds"][:P])
    ndisc = [int(n) for n in r["ndisc"][:P]]
    discards = tuple(tuple(r["discards"][p][: ndisc[p]]) for p in range(P))
    called = tuple(int(r["called"][p]) & ((1 << ndisc[p]) - 1) for p in range(P))
    seen = hands[seat]
    for p in range(P):
        seen |= melds[p]
        for i, c in enumerate(discards[p]):
            if not called[p] >> i & 1:
                seen |= 1 << c
    wall_pos, wall_end, wall_len = int(r["wall_pos"]), int(r["wall_end"]), int(r["wall_len"])
    claim = phase == Phase.CLAIM
    my_turn = acting == seat and not over
    chiicha, rnd = int(r["chiicha"]), int(r["round"])
    return InfoSet(
        num_players=P,
        seat=seat,
        phase=phase,
        my_turn=my_turn,
        current=current,
        hand=hands[seat],
        drawn=int(r["drawn"]) if phase == Phase.DRAW and current == seat else -1,
        legal=int(r["mask"]) if my_turn else 0,
        melds=melds,
        calls_used=tuple(r["calls_used"][:P]),
        discards=discards,
        called=called,
        dead=tuple(r["dead"][:P]),
        draws_taken=tuple(r["draws_taken"][:P]),
        scores=tuple(r["scores"][:P]),
        round=rnd,
        replays=int(r["replays"]),
        deals=int(r["deals"]),
        chiicha=chiicha,
        dealer=(chiicha + rnd) % P,
        dora_ind=int(r["dora_ind"]),
        kuikae=int(r["kuikae"]) if phase == Phase.CALL_DISCARD else 0,
        any_call=bool(r["any_call"]),
        first_draw=bool(r["first_draw"]) and phase == Phase.DRAW,
        last_card=bool(r["last_card"]) and phase == Phase.DRAW,
        claim_card=int(r["claim_card"]) if claim else -1,
        claim_discarder=int(r["claim_discarder"]) if claim else -1,
        claim_final=bool(r["claim_final"]) if claim else False,
        pool=0 if over else ALL_CARDS & ~seen,
        hidden=tuple(0 if (p == seat or over) else hands[p].bit_count() for p in range(P)),
        wall_left=0 if over else max(wall_end - wall_pos, 0),
        dead_wall=0 if over else wall_len - max(wall_end, wall_pos),
        result=int(r["result"]),
        win_seat=int(r["win_seat"]),
        lose_seat=int(r["lose_seat"]),
        deltas=tuple(r["deltas"][:P]),
        final_scores=tuple(r["final_scores"][:P]) if over else (0,) * P,
        placements=tuple(r["placements"][:P]) if over else (0,) * P,
    )
