"""The rule config (docs/rules.md §12): every [choice] of docs/rules.md as a named, validated option.

``RuleConfig()`` is the 3-player default of docs/rules.md; ``RuleConfig.two_player()`` is R44.
The object is frozen; ``replace(**changes)`` returns a validated copy. ``rules_hash`` is a stable
digest of all options (same options -> same hash) that replay files carry. Unknown keys and bad
values raise :class:`RuleConfigError` naming the key and what is allowed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from meld8_env.codes import HAND_SIZE
from meld8_env.config_io import check_int, is_int, plain_int, read_yaml_mapping, short_repr
from meld8_env.paths import nonempty_path

STARTING_DEALER_CHOICES = ("draw",)
KUIKAE_CHOICES = ("other_end", "off")
PLACEMENT_TIE_CHOICES = ("chiicha_order", "share")
READING_TIEBREAK_CHOICES = ("yaku_han", "canonical")
DEALER_DRAW_SUIT_ORDERS = ("shdc",)
YAKU_HAN = {
    "closed_tsumo": 1, "tanyao": 1, "four_pairs": 1, "all_red": 2, "all_black": 2, "toitoi": 2, "chanta": 2,
    "identical_sequences": 2, "pinfu": 2, "jun_chanta": 3, "tenhou": 4, "chiihou": 4, "two_quads": 6,
    "pure_straight": 6,
}  # fmt: skip
"""Han of each standard yaku of the section 7 table (before the R32 reductions), except Value Triplet and Haitei,
whose han are the options ``value_triplet_han`` and ``haitei_han``. The scorer (``meld8_env.scoring``) reads its han
here, and the ``min_yaku_han`` bound (:func:`max_standard_yaku_han`) is derived from it."""


class RuleConfigError(ValueError):
    """A bad rule option: unknown key, wrong type or value, or an inconsistent combination."""


@dataclasses.dataclass(frozen=True)
class RuleConfig:
    """Rule options with docs/rules.md defaults (rule ids in brackets)."""

    num_players: int = 3
    """Players, 3 or 2 (R44)."""
    rounds: int = 6
    """Rounds per game; each player deals rounds / num_players times (R8)."""
    starting_score: int = 30_000
    """Starting score of every player (R9)."""
    starting_dealer: str | int = "draw"
    """'draw' (R7: strongest drawn card deals) or a fixed seat number."""
    dealer_draw_suit_order: str = "shdc"
    """Suit strength for the dealer draw, strongest first (R7 [decision])."""
    wall_limit: int = 0
    """Cards left undrawn at the end of the wall (R44 [decision]: 7 for two players)."""
    min_yaku_han: tuple[int, ...] = (1, 1, 1, 2, 2, 2)
    """Minimum han of standard yaku for each round (R30); one entry per round."""
    value_triplet_han: int = 1
    """Han of each value triplet (§7 [decision])."""
    haitei_han: int = 1
    """Han of Haitei (§7 [decision])."""
    points_per_han: int = 2_000
    """Points per han (R37)."""
    counted_yakuman_han: int = 10
    """Total han from which a hand is a counted yakuman (R37)."""
    yakuman_value: int = 20_000
    """Points of a single yakuman; a double is twice this (R37 [decision])."""
    sequence_bonus_max: int = 2
    """Largest sequence bonus in han (R34)."""
    kuikae: str = "other_end"
    """Swap-calling ban after a call (R20 [decision]); 'off' allows swap calls."""
    reading_tiebreak: str = "yaku_han"
    """Tie rule between equally scored readings (R28 [decision])."""
    placement_points: tuple[int, ...] = (20_000, 0, -20_000)
    """Placement points for 1st, 2nd, ... (R40 [decision]); must sum to 0."""
    placement_tie: str = "chiicha_order"
    """Equal raw scores: 'chiicha_order' (nearer the chiicha places higher, R40) or 'share'."""
    penalty_mode: bool = False
    """Apply chombo / dead-hand penalties instead of rejecting illegal actions (R41-R43)."""
    chombo_payment: int = 5_000
    """What a chombo costs, paid to each other player (R41)."""
    max_replays: int | None = None
    """Cap on consecutive replays of a drawn round (None: no cap, R8)."""

    def __post_init__(self) -> None:
        for key in ("min_yaku_han", "placement_points"):  # lists are accepted on every path (from_dict too)
            if isinstance(getattr(self, key), list):
                object.__setattr__(self, key, tuple(getattr(self, key)))
        for field in dataclasses.fields(self):  # numpy integers are integers: kept as int (JSON, hashing, equality)
            value = getattr(self, field.name)
            if isinstance(value, tuple):
                object.__setattr__(self, field.name, tuple(plain_int(v) for v in value))
            else:
                object.__setattr__(self, field.name, plain_int(value))
        _validate(self)

    # -- construction -------------------------------------------------------------------
    @classmethod
    def two_player(cls, **changes: Any) -> RuleConfig:
        """The R44 variant: 2 players, 4 rounds, wall limit 7."""
        base: dict[str, Any] = {
            "num_players": 2,
            "rounds": 4,
            "wall_limit": 7,
            "min_yaku_han": (1, 1, 2, 2),
            "placement_points": (20_000, -20_000),
        }
        base.update(changes)
        return cls.from_dict(base)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleConfig:
        """Build from a mapping; unknown keys are an error listing the known ones."""
        if not isinstance(data, dict):
            raise RuleConfigError(f"rule config must be a mapping, got {type(data).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known, key=str)  # keys 1 and foo failed to sort (red team, session 37)
        if unknown:
            raise RuleConfigError(
                f"unknown rule option {short_repr(unknown[0])}; known options: {', '.join(sorted(known))}"
            )
        return cls(**data)

    @classmethod
    def from_yaml(cls, path: str | Path) -> RuleConfig:
        """Load a YAML file of options (missing keys take the defaults)."""
        p = Path(path)
        data = read_yaml_mapping(p, "rule config file", RuleConfigError, kind="rules")
        base = data.pop("base", "default")  # 'base: two_player' starts from the R44 defaults
        if base not in ("default", "two_player"):
            raise RuleConfigError(f"{p}: base must be 'default' or 'two_player', got {short_repr(base)}")
        try:
            return cls.two_player(**data) if base == "two_player" else cls.from_dict(data)
        except RuleConfigError as exc:  # an unknown option or a bad value: say which file holds it
            raise RuleConfigError(f"{p}: {exc}") from None

    @classmethod
    def load(cls, spec: RuleConfig | str | Path | dict[str, Any] | None) -> RuleConfig:
        """Accept a config, None (defaults), a dict, a YAML path, or a built-in name ('default',
        'two_player', or any ``meld8_env/configs/rules/NAME.yaml``)."""
        if spec is None or spec == "default":
            return cls()
        if isinstance(spec, RuleConfig):
            return spec
        if isinstance(spec, dict):
            return cls.from_dict(spec)
        if not isinstance(spec, str | os.PathLike):  # 5 failed inside pathlib ("expected str, bytes or os.PathLike")
            raise TypeError(
                f"rules must be a RuleConfig, a dict of options, a built-in name or a YAML path, got {short_repr(spec)}"
            )
        # an empty name is not the defaults (those are None, or leaving it out)
        nonempty_path(spec, "rules", "a built-in name (e.g. 'two_player') or a YAML path", RuleConfigError)
        if spec == "two_player":
            return cls.two_player()
        return cls.from_yaml(spec)

    def replace(self, **changes: Any) -> RuleConfig:
        return RuleConfig.from_dict({**self.to_dict(), **changes})

    # -- views --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        for key in ("min_yaku_han", "placement_points"):
            out[key] = list(out[key])
        return out

    @property
    def rules_hash(self) -> str:
        """Stable 16-hex-digit digest of every option (for replay files)."""
        blob = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def hand_size(self) -> int:
        return HAND_SIZE

    @property
    def wall_size(self) -> int:
        """Cards left after the deal (R10: 32 with 3 players; R44: 39 with 2)."""
        return 53 - self.num_players * self.hand_size

    @property
    def wall_draws(self) -> int:
        """Cards that can be drawn in a deal: the wall less the cards left undrawn (R10, R14, R44)."""
        return self.wall_size - self.wall_limit

    def first_draws(self, dealer: bool) -> range:
        """Which draws of a deal (1-based) can be a seat's first draw with no call before it (Tenhou, Chiihou):
        the dealer's first draw opens the deal (R11) and the others follow in turn (R6), so draw 1 for the dealer
        and draws 2..num_players for the others - those the drawable wall reaches."""
        return range(1, 2) if dealer else range(2, min(self.num_players, self.wall_draws) + 1)

    def min_han(self, round_index: int) -> int:
        """Minimum standard-yaku han in round ``round_index`` (1-based, R30)."""
        index = check_int(round_index, "round", 1, self.rounds, error=RuleConfigError)  # '1', 1.5 failed in a compare
        return self.min_yaku_han[index - 1]


MAX_ROUNDS = 16
"""The most rounds a game may have: the engine's records hold each round's settings (min_yaku_han) in 16 slots."""


def _fail(key: str, value: Any, allowed: str) -> None:
    raise RuleConfigError(f"bad value for rule option {key!r}: {short_repr(value)} (allowed: {allowed})")


def _validate(c: RuleConfig) -> None:
    if not is_int(c.num_players) or c.num_players not in (2, 3):  # 3.0 == 3, but the engine needs an int
        _fail("num_players", c.num_players, "2 or 3")
    if not is_int(c.rounds) or not 1 <= c.rounds <= MAX_ROUNDS:  # the engine's records hold 16 rounds' settings
        _fail("rounds", c.rounds, f"an integer 1..{MAX_ROUNDS}")
    for key in ("starting_score", "points_per_han", "yakuman_value", "chombo_payment"):
        v = getattr(c, key)
        if not is_int(v) or v < 0:
            _fail(key, v, "an integer >= 0")
    for key in ("value_triplet_han", "haitei_han", "counted_yakuman_han"):
        v = getattr(c, key)
        if not is_int(v) or v < 1:
            _fail(key, v, "an integer >= 1")
    if not is_int(c.sequence_bonus_max) or c.sequence_bonus_max < 0:
        _fail("sequence_bonus_max", c.sequence_bonus_max, "an integer >= 0")
    sd = c.starting_dealer
    if not (sd in STARTING_DEALER_CHOICES or (is_int(sd) and 0 <= sd < c.num_players)):
        _fail("starting_dealer", sd, f"'draw' or a seat 0..{c.num_players - 1}")
    if c.dealer_draw_suit_order not in DEALER_DRAW_SUIT_ORDERS and not (
        isinstance(c.dealer_draw_suit_order, str) and sorted(c.dealer_draw_suit_order) == sorted("shdc")
    ):
        _fail("dealer_draw_suit_order", c.dealer_draw_suit_order, "a permutation of 'shdc'")
    if not is_int(c.wall_limit) or not 0 <= c.wall_limit < c.wall_size:
        _fail("wall_limit", c.wall_limit, f"an integer 0..{c.wall_size - 1}")
    if not isinstance(c.min_yaku_han, tuple) or not all(is_int(v) and v >= 1 for v in c.min_yaku_han):
        _fail("min_yaku_han", c.min_yaku_han, "a list of integers >= 1, one per round")
    if len(c.min_yaku_han) != c.rounds:
        raise RuleConfigError(
            f"rule option 'min_yaku_han' has {len(c.min_yaku_han)} entries but 'rounds' is {c.rounds}"
        )
    if c.kuikae not in KUIKAE_CHOICES:
        _fail("kuikae", c.kuikae, " | ".join(KUIKAE_CHOICES))
    if c.reading_tiebreak not in READING_TIEBREAK_CHOICES:
        _fail("reading_tiebreak", c.reading_tiebreak, " | ".join(READING_TIEBREAK_CHOICES))
    pp = c.placement_points
    if not isinstance(pp, tuple) or not all(is_int(v) for v in pp):
        _fail("placement_points", pp, "a list of integers, one per player")
    if len(pp) != c.num_players:
        raise RuleConfigError(
            f"rule option 'placement_points' has {len(pp)} entries but 'num_players' is {c.num_players}"
        )
    if sum(pp) != 0:
        raise RuleConfigError(f"rule option 'placement_points' must sum to 0 (zero-sum), got {sum(pp)}")
    if c.placement_tie not in PLACEMENT_TIE_CHOICES:
        _fail("placement_tie", c.placement_tie, " | ".join(PLACEMENT_TIE_CHOICES))
    if not isinstance(c.penalty_mode, bool):
        _fail("penalty_mode", c.penalty_mode, "true or false")
    if c.max_replays is not None and (not is_int(c.max_replays) or c.max_replays < 0):
        _fail("max_replays", c.max_replays, "null or an integer >= 0")
    _check_engine_range(c)
    # A round whose minimum no reading reaches is replayed until a yakuman comes (with max_replays null, in
    # practice forever: simulate hung). A minimum close to the bound is legal but rare (docs/rules.md R30).
    top = max_standard_yaku_han(c)
    if max(c.min_yaku_han) > top:
        _fail(
            "min_yaku_han",
            list(c.min_yaku_han),
            f"integers 1..{top}, the most standard-yaku han a hand can reach under these options (section 7); "
            f"above it only a yakuman, which ignores the minimum, could end the round (R30)",
        )


def max_standard_yaku_han(c: RuleConfig) -> int:
    """The most standard-yaku han (section 7) any winning reading reaches under ``c`` - exact, not just a bound.

    Derived from the yaku definitions (``YAKU_HAN``, ``meld8_env.scoring._evaluate``). A call takes away Closed
    Tsumo, Tanyao and Tenhou / Chiihou, and a call or the Joker lowers the reducible yaku (R32); every other yaku is
    judged on the cards the reading resolves to, the Joker as its stand-in (a card the hand does not hold, R27). So
    no hand beats the best concealed, Joker-free one. Any 8 cards can be a dealt hand plus the first draw, or be
    kept to the last card, so the maximum is the sum of two independent parts:

    * when the hand is won: Closed Tsumo goes with every Tsumo; Tenhou / Chiihou (first draw) and Haitei (last
      card) go together only where a first draw can be the last card (:meth:`RuleConfig.first_draws`);
    * what the 8 cards are, the best of each winning form (R26) with the yaku that exclude each other left out:
      Tanyao excludes crowns (so Chanta, Jun Chanta and Value Triplets); a triplet or quad spans three or four
      suits, so it is never All Red / All Black; Toitoi needs two triplets, Pinfu and Identical Sequences two
      sequences. A witness hand reaching each sum is named beside it. (All Red + Jun Chanta + Identical Sequences +
      Pinfu, 9, is left out: its only hand, Jh Qh Kh Jd Qd Kd Ah Ad, is Four Crown Pairs, a yakuman: review, s37.)

    A minimum above the result is met by no reading, only by a yakuman (royal straight, four crown pairs), which
    ignores the minimum. ``tests/test_score_distance_checks.py`` scores every winning hand against it.
    """
    y = YAKU_HAN
    first_draw = max(y["tenhou"], y["chiihou"])
    first_and_last = c.wall_draws in c.first_draws(True) or c.wall_draws in c.first_draws(False)
    timing = y["closed_tsumo"] + (first_draw + c.haitei_han if first_and_last else max(first_draw, c.haitei_han))
    shapes = (
        # As Ah Ad  Ks Kh Kd  Js Jh: two crown triplets and a crown pair
        2 * c.value_triplet_han + y["toitoi"] + y["jun_chanta"],
        # one triplet and one sequence: As Ah Ad  Jh Qh Kh  Ks Kd
        c.value_triplet_han + y["jun_chanta"],
        # As Ah Ad Ac  Ks Kh Kd Kc: two crown quads
        y["two_quads"] + y["jun_chanta"],
        # 2h .. 9h: a pure straight (it replaces All Red / All Black)
        y["pure_straight"] + y["tanyao"],
        # four pairs of one colour: 3s 3c 9s 9c Js Jc Ks Kc (with Jun Chanta every pair would be a crown pair of one
        # colour: Four Crown Pairs, a yakuman that counts no standard han)
        y["four_pairs"] + max(y["all_red"], y["all_black"]),
    )
    return timing + max(shapes)


INT32_MAX = 2**31 - 1
MAX_HAN = 127  # han counts are small integers in the engine (int8/int16 fields)


def largest_payment(c: RuleConfig) -> int:
    """The most points one hand moves between two seats: a double yakuman, the biggest counted hand, or a chombo
    paid to everyone (R37, R41)."""
    return max(
        2 * c.yakuman_value, (c.counted_yakuman_han - 1) * c.points_per_han, c.chombo_payment * (c.num_players - 1)
    )


def score_bound(c: RuleConfig) -> int:
    """No score a game under ``c`` reaches lies outside ``+-score_bound(c)`` before placement points: every hand that
    moves points ends a round (the engine's record check uses the same bound, ``_state.c: eng_check_ranges``)."""
    return c.starting_score + c.rounds * largest_payment(c)


def _check_engine_range(c: RuleConfig) -> None:
    """Refuse options under which a reachable score (or a hand's points) would overflow the engine's
    32-bit integers. A hand moves at most ``largest`` points between seats (a double yakuman, the
    biggest counted hand, or a chombo paid to everyone), every hand that moves points ends a round,
    so no score leaves ``starting_score +- rounds * largest`` before placement points."""
    for key in ("value_triplet_han", "haitei_han", "counted_yakuman_han", "sequence_bonus_max"):
        if getattr(c, key) > MAX_HAN:
            _fail(key, getattr(c, key), f"an integer <= {MAX_HAN}")
    if c.max_replays is not None and c.max_replays > INT32_MAX:
        _fail("max_replays", c.max_replays, f"null or an integer <= {INT32_MAX}")
    for v in c.min_yaku_han:
        if v > MAX_HAN:
            _fail("min_yaku_han", c.min_yaku_han, f"integers 1..{MAX_HAN}")
    largest = largest_payment(c)
    worst = score_bound(c) + max(abs(v) for v in c.placement_points)
    if worst > INT32_MAX:
        raise RuleConfigError(
            f"rule options can overflow the engine's 32-bit scores: starting_score ({c.starting_score:,}) + "
            f"{c.rounds} rounds x the largest payment of a hand ({largest:,}) + placement points reach "
            f"{worst:,} > {INT32_MAX:,}; lower starting_score, points_per_han, yakuman_value or chombo_payment"
        )


DEFAULT_RULES = RuleConfig()
