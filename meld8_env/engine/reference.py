"""The readable reference engine: one Meld8 game, rule by rule (docs/rules.md R6-R44).

This is the slow path: plain Python, one game at a time, written to be read next to docs/rules.md.
The batched engine is checked against it step by step.

Flow of a deal (phases): ``DRAW`` (the current seat holds 8 cards: Tsumo or discard, R11) ->
a discard opens ``CLAIM`` when any other seat may Ron/Pon/Chii (asked one at a time in turn order,
each seeing only its own options, resolved Ron > Pon > Chii after all answered, R21/R22) ->
a call leads to ``CALL_DISCARD`` (the caller must discard, R19/R20) -> the next seat draws.
A win or an exhausted wall ends the deal (R8, R14, R39); after the last round the game is ``OVER``.
"""

from __future__ import annotations

import dataclasses

from meld8_env.actions import (
    CHII_HIGH,
    CHII_LOW,
    PASS,
    PON_BASE,
    RON,
    TSUMO,
    IllegalActionError,
    illegal_action_message,
    is_action_id,
)
from meld8_env.calls import call_pair, kuikae_mask
from meld8_env.cards import JOKER, card_str, rank_of, suit_of
from meld8_env.codes import HAND_SIZE, PHASE_NAMES, Phase, Result, WinFlag
from meld8_env.engine.seeding import check_seed, shuffled_deck
from meld8_env.hands import is_win_form_mask
from meld8_env.outcomes import HandOutcome
from meld8_env.rules import RuleConfig
from meld8_env.scoring import ScoreResult, dora_of, score_masks

PHASE_DRAW, PHASE_CALL_DISCARD, PHASE_CLAIM, PHASE_OVER = Phase.DRAW, Phase.CALL_DISCARD, Phase.CLAIM, Phase.OVER
REWARD_MODES = ("points", "rank")


__all__ = ["Game", "IllegalActionError", "PHASE_NAMES"]


def _bit(c: int) -> int:
    return 1 << c


def _cards(mask: int) -> list[int]:
    return [c for c in range(53) if mask >> c & 1]


def dealer_draw_strength(card: int, suit_order: str = "shdc") -> tuple[int, int]:
    """R7: Joker > A > K > ... > 2; equal ranks by suit order (spades strongest by default)."""
    if card == JOKER:
        return (100, 0)
    r = rank_of(card)
    return (14 if r == 1 else r, 3 - suit_order.index("shdc"[suit_of(card)]))


@dataclasses.dataclass
class Claim:
    card: int
    discarder: int
    final: bool  # the discard after the last draw: Ron only (R14)
    asked: list[int]  # seats with an option, in turn order from the discarder
    options: dict[int, list[int]]
    responses: dict[int, int] = dataclasses.field(default_factory=dict)
    index: int = 0


class Game:
    """One game. ``acting_seat``, ``legal_actions()``, ``step(action)``; ``rewards`` after each step."""

    def __init__(self, rules: RuleConfig | None = None, seed: int = 0, reward: str = "points") -> None:
        self.rules = rules or RuleConfig()
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        self.reward_mode = reward
        self.P = self.rules.num_players
        self.seed = check_seed(seed)
        self.scores = [self.rules.starting_score] * self.P
        self.chiicha = self._starting_dealer()
        self.round = 0  # 0-based round index (R8)
        self.replays = 0  # consecutive replays of this round after draws
        self.deals = 0  # deals started so far (each uses its own random stream)
        self.rewards = [0.0] * self.P
        self.results: list[HandOutcome] = []  # how each deal ended, in the fast engine's vocabulary
        self.final_scores: list[int] | None = None
        self.placements: list[int] | None = None
        self._start_deal()

    # -- setup ------------------------------------------------------------------------------------
    def _starting_dealer(self) -> int:
        sd = self.rules.starting_dealer
        if sd != "draw":
            return int(sd)
        deck = shuffled_deck(self.seed, 0)  # each player draws one card (R7), then it is reshuffled
        strengths = [dealer_draw_strength(deck[p], self.rules.dealer_draw_suit_order) for p in range(self.P)]
        return max(range(self.P), key=lambda p: strengths[p])

    @property
    def dealer(self) -> int:
        return (self.chiicha + self.round) % self.P

    def _start_deal(self) -> None:
        self.deals += 1
        deck = shuffled_deck(self.seed, self.deals)
        self.hands = [0] * self.P
        pos = 0
        for _ in range(HAND_SIZE):  # one at a time, from the dealer (R10)
            for k in range(self.P):
                self.hands[(self.dealer + k) % self.P] |= _bit(deck[pos])
                pos += 1
        self.wall = deck[pos:]
        self.wall_pos = 0
        self.wall_end = len(self.wall) - self.rules.wall_limit
        self.melds = [0] * self.P
        self.discards: list[list[list]] = [[] for _ in range(self.P)]  # [card, called]
        self.calls_used = [0] * self.P
        self.dead = [False] * self.P
        self.draws_taken = [0] * self.P
        self.any_call = False
        self.dora_indicator = -1
        self.dealer_discarded = False
        self.claim: Claim | None = None
        self.kuikae = 0  # cards the caller may not discard right now (R20)
        self.first_draw = False
        self.last_card = False
        self.drawn = -1
        self._draw(self.dealer)

    def _draw(self, seat: int) -> None:
        card = self.wall[self.wall_pos]
        self.wall_pos += 1
        self.hands[seat] |= _bit(card)
        self.drawn = card
        self.draws_taken[seat] += 1
        self.first_draw = self.draws_taken[seat] == 1 and not self.any_call  # Tenhou / Chiihou
        self.last_card = self.wall_pos == self.wall_end  # Haitei
        self.current = seat
        self.phase = PHASE_DRAW
        self.kuikae = 0

    # -- queries ----------------------------------------------------------------------------------
    @property
    def over(self) -> bool:
        return self.phase == PHASE_OVER

    @property
    def acting_seat(self) -> int:
        if self.phase == PHASE_CLAIM:
            assert self.claim is not None
            return self.claim.asked[self.claim.index]
        return -1 if self.over else self.current

    @property
    def wall_left(self) -> int:
        return self.wall_end - self.wall_pos

    def furiten_mask(self, seat: int) -> int:
        """Own discards still in front of the player (called ones removed, R33)."""
        m = 0
        for card, called in self.discards[seat]:
            if not called:
                m |= _bit(card)
        return m

    def _dora(self) -> int:
        return dora_of(self.dora_indicator) if self.dora_indicator >= 0 else -1

    def _score(self, seat: int, hand: int, win_card: int, tsumo: bool, last_card: bool) -> ScoreResult:
        return score_masks(
            hand,
            self.melds[seat],
            win_card,
            tsumo=tsumo,
            min_han=self.rules.min_yaku_han[self.round],
            dealer=seat == self.dealer,
            dora=self._dora(),
            first_draw=tsumo and self.first_draw,
            last_card=last_card,
            discards=0 if tsumo else self.furiten_mask(seat),
            rules=self.rules,
        )

    def _wins(self, seat: int, hand: int, win_card: int, tsumo: bool, last_card: bool) -> bool:
        """A legal win (R26-R33); the cheap form test first, full scoring only for winning forms."""
        if not is_win_form_mask(hand, self.melds[seat]):
            return False
        return self._score(seat, hand, win_card, tsumo, last_card).win

    def _discard_options(self, seat: int) -> list[int]:
        forbidden = self.kuikae | _bit(JOKER)  # the Joker is never discarded (R12)
        return [c for c in _cards(self.hands[seat]) if not forbidden >> c & 1]

    def legal_actions(self) -> list[int]:
        """The acting seat's legal actions, ascending (empty when the game is over)."""
        if self.over:
            return []
        if self.phase == PHASE_CLAIM:
            assert self.claim is not None
            return sorted(self.claim.options[self.acting_seat] + [PASS])
        seat = self.current
        acts = self._discard_options(seat)
        if self.phase == PHASE_DRAW and not self.dead[seat]:
            if self._wins(seat, self.hands[seat], self.drawn, True, self.last_card):
                acts.append(TSUMO)
        return acts

    # -- claims (R15-R22) -------------------------------------------------------------------------
    def _after_call_discards_exist(self, hand_after: int, forbidden: int) -> bool:
        return any(not (forbidden | _bit(JOKER)) >> c & 1 for c in _cards(hand_after))

    def _kuikae_after(self, action: int, card: int) -> int:
        """R20: what the caller may not discard right after calling ``card`` with ``action``."""
        return kuikae_mask(action, card, self.rules.kuikae != "off")

    def _call_cards(self, action: int, card: int) -> tuple[int, int] | None:
        """The two hand cards a Pon/Chii action uses on ``card`` (None if the shape is impossible)."""
        pair = call_pair(action, card)
        if not pair:
            return None
        low = (pair & -pair).bit_length() - 1
        return low, (pair & ~(1 << low)).bit_length() - 1

    def _claim_options(self, seat: int, card: int, discarder: int, final: bool, dealer_first: bool) -> list[int]:
        if self.dead[seat]:
            return []
        opts = []
        hand = self.hands[seat]
        if self._wins(seat, hand | _bit(card), card, False, final):
            opts.append(RON)
        if final or dealer_first or self.calls_used[seat]:  # R14, R17, R18
            return opts
        chii_ok = seat == (discarder + 1) % self.P  # only the shimocha (R16)
        candidates = list(range(PON_BASE, CHII_HIGH + 1 if chii_ok else CHII_LOW))
        for action in candidates:
            pair = self._call_cards(action, card)
            if pair is None or not (hand >> pair[0] & 1 and hand >> pair[1] & 1):
                continue
            after = hand & ~_bit(pair[0]) & ~_bit(pair[1])
            if self._after_call_discards_exist(after, self._kuikae_after(action, card)):
                opts.append(action)
        return opts

    def _open_claims(self, discarder: int, card: int, dealer_first: bool) -> None:
        final = self.wall_left == 0
        asked, options = [], {}
        for k in range(1, self.P):
            seat = (discarder + k) % self.P
            opts = self._claim_options(seat, card, discarder, final, dealer_first)
            if opts:
                asked.append(seat)
                options[seat] = opts
        if not asked:
            self._no_claim(discarder, final)
            return
        self.claim = Claim(card, discarder, final, asked, options)
        self.phase = PHASE_CLAIM

    def _no_claim(self, discarder: int, final: bool) -> None:
        if final:
            self._end_deal(self._outcome(Result.DRAW, (0,) * self.P))  # R14, R39
        else:
            self._draw((discarder + 1) % self.P)

    def _resolve_claims(self) -> None:
        """R21: Ron > Pon > Chii; among equals the seat nearest the discarder (asked order)."""
        c = self.claim
        assert c is not None
        self.claim = None
        answers = [(seat, c.responses[seat]) for seat in c.asked]
        for wanted in (lambda a: a == RON, lambda a: PON_BASE <= a < CHII_LOW, lambda a: CHII_LOW <= a <= CHII_HIGH):
            for seat, a in answers:
                if wanted(a):
                    if a == RON:
                        self._win(seat, c.card, discarder=c.discarder, last_card=c.final)
                    else:
                        self._call(seat, a, c.card, c.discarder)
                    return
        self._no_claim(c.discarder, c.final)

    def _call(self, seat: int, action: int, card: int, discarder: int) -> None:
        a, b = self._call_cards(action, card)  # type: ignore[misc]
        self.hands[seat] &= ~_bit(a) & ~_bit(b)
        self.melds[seat] = _bit(a) | _bit(b) | _bit(card)  # exposed, fixed (R19)
        self.discards[discarder][-1][1] = True  # leaves the discarder's furiten history (R33)
        self.calls_used[seat] = 1
        self.any_call = True
        self.current = seat
        self.phase = PHASE_CALL_DISCARD
        self.kuikae = self._kuikae_after(action, card)
        self.drawn = -1

    # -- ends of deals ----------------------------------------------------------------------------
    def _win(self, seat: int, card: int, discarder: int = -1, last_card: bool = False) -> None:
        tsumo = discarder < 0
        hand = self.hands[seat] | (0 if tsumo else _bit(card))
        res = self._score(seat, hand, card, tsumo, last_card)
        assert res.win
        deltas = [0] * self.P
        if tsumo:  # R38: the others share; with two players the opponent pays all ([decision])
            share = res.points // (self.P - 1) if self.P == 3 else res.points
            for p in range(self.P):
                if p != seat:
                    deltas[p] -= share
                    deltas[seat] += share
        else:
            deltas[discarder] -= res.points
            deltas[seat] += res.points
        flags = (WinFlag.TSUMO if tsumo else WinFlag(0)) | (WinFlag.DEALER if seat == self.dealer else WinFlag(0))
        flags |= (WinFlag.FIRST_DRAW if tsumo and self.first_draw else WinFlag(0)) | (
            WinFlag.LAST_CARD if last_card else WinFlag(0)
        )
        self._end_deal(
            self._outcome(
                Result.TSUMO if tsumo else Result.RON, tuple(deltas), winner=seat, discarder=discarder,
                han=res.han, points=res.points, win_hand=hand, win_meld=self.melds[seat], win_card=card,
                flags=flags, dora=self._dora(), min_han=self.rules.min_yaku_han[self.round],
            )
        )  # fmt: skip

    def _chombo(self, seat: int) -> None:
        """R41: a false win declaration pays each other player; the deal is void."""
        deltas = [0] * self.P
        for p in range(self.P):
            if p != seat:
                deltas[p] += self.rules.chombo_payment
                deltas[seat] -= self.rules.chombo_payment
        self._end_deal(self._outcome(Result.CHOMBO, tuple(deltas), discarder=seat))

    def _outcome(self, kind: Result, payments: tuple[int, ...], **win) -> HandOutcome:
        """The deal that ends now as a ``meld8_env.outcomes.HandOutcome`` (the one outcome vocabulary)."""
        return HandOutcome(game=0, hand=self.deals, round=self.round, kind=kind, winner=win.pop("winner", -1),
                           discarder=win.pop("discarder", -1), han=win.pop("han", 0), points=win.pop("points", 0),
                           payments=payments, rules=self.rules, **win)  # fmt: skip

    def _end_deal(self, result: HandOutcome) -> None:
        self.results.append(result)
        for p, d in enumerate(result.payments):
            self.scores[p] += d
            if self.reward_mode == "points":
                self.rewards[p] += d / 10_000
        cap = self.rules.max_replays
        if result.kind == Result.DRAW and (cap is None or self.replays < cap):
            self.replays += 1  # renchan: same round, same dealer (R8)
        else:
            self.round += 1
            self.replays = 0
        self.claim = None
        if self.round >= self.rules.rounds:
            self._finish()
        else:
            self._start_deal()

    def _finish(self) -> None:
        """R40: placement points; equal raw scores ranked by seat order from the chiicha."""
        order = sorted(range(self.P), key=lambda p: (-self.scores[p], (p - self.chiicha) % self.P))
        pts = list(self.rules.placement_points)
        bonus = [0] * self.P
        if self.rules.placement_tie == "share":
            i = 0
            while i < self.P:
                j = i
                while j + 1 < self.P and self.scores[order[j + 1]] == self.scores[order[i]]:
                    j += 1
                share = sum(pts[i : j + 1]) // (j - i + 1)
                for k in range(i, j + 1):
                    bonus[order[k]] = share
                i = j + 1
        else:
            for place, p in enumerate(order):
                bonus[p] = pts[place]
        self.placements = [order.index(p) + 1 for p in range(self.P)]
        self.final_scores = [self.scores[p] + bonus[p] for p in range(self.P)]
        for p in range(self.P):
            if self.reward_mode == "points":
                self.rewards[p] += bonus[p] / 10_000
            else:
                self.rewards[p] += 1.0 if self.placements[p] == 1 else (-1.0 if self.placements[p] == self.P else 0.0)
        self.phase = PHASE_OVER
        self.current = -1

    # -- acting -----------------------------------------------------------------------------------
    def step(self, action: int) -> None:
        """Apply the acting seat's action. Illegal actions raise (default) or are penalised (R41-R43)."""
        if self.over:
            raise IllegalActionError("the game is over; no action is legal")
        seat = self.acting_seat
        legal = self.legal_actions()
        if not is_action_id(action):  # refused in every mode: not an action at all
            raise IllegalActionError(illegal_action_message(action, f"seat {seat}", PHASE_NAMES[self.phase], legal))
        action = int(action)
        self.rewards = [0.0] * self.P
        if action not in legal:
            if not self.rules.penalty_mode:
                raise IllegalActionError(illegal_action_message(action, f"seat {seat}", PHASE_NAMES[self.phase], legal))
            action = self._penalty(seat, action, legal)
            if action < 0:
                return
        if self.phase == PHASE_CLAIM:
            assert self.claim is not None
            self.claim.responses[seat] = action
            self.claim.index += 1
            if self.claim.index == len(self.claim.asked):
                self._resolve_claims()
        elif action == TSUMO:
            self._win(seat, self.drawn, last_card=self.last_card)
        else:
            self._discard(seat, action)

    def _penalty(self, seat: int, action: int, legal: list[int]) -> int:
        """R41/R42 (penalty mode): chombo for a false win; otherwise a dead hand and a legal substitute."""
        if action in (TSUMO, RON):
            self._chombo(seat)
            return -1
        self.dead[seat] = True
        if self.phase == PHASE_CLAIM:
            return PASS
        discards = self._discard_options(seat)
        return self.drawn if self.drawn in discards else max(discards)

    def _discard(self, seat: int, card: int) -> None:
        self.hands[seat] &= ~_bit(card)
        self.discards[seat].append([card, False])
        dealer_first = seat == self.dealer and not self.dealer_discarded
        if dealer_first:
            self.dealer_discarded = True
            self.dora_indicator = card  # fixed as soon as it is placed (R35)
        self.drawn = -1
        self.kuikae = 0
        self._open_claims(seat, card, dealer_first)

    def __repr__(self) -> str:
        hands = " / ".join(" ".join(card_str(c) for c in _cards(h)) for h in self.hands)
        return f"Game(round={self.round + 1}, phase={PHASE_NAMES[self.phase]}, acting={self.acting_seat}, {hands})"
