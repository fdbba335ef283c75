"""The fast engine: B games as one numpy structured array, stepped in C (``_fast``).

The state is a C-contiguous array of shape (B,) whose dtype mirrors the C ``game_t`` (built from the
extension's own ``layout()``, so a mismatch cannot go unnoticed); ``FastBatch.state`` is a read-only
view of it. Fields, per game (P = 3 slots; unused slots stay zero with two players):

| field | dtype, shape | meaning |
|---|---|---|
| hands, melds | uint64 (3,) | 53-bit card masks of concealed cards / the exposed meld |
| scores, final_scores | int32 (3,) | current scores; final scores with placement points (R40) |
| rewards | float32 (3,) | reward of the last step for each seat |
| deltas | int32 (3,) | point change of each seat from the hand that ended on the last step |
| discards | int8 (3, 24) | discard order per seat (-1 beyond ``ndisc``); ``called`` bit i: i-th was called |
| wall | int8 (53,) | draw order after the deal; ``wall_pos`` / ``wall_end`` |
| phase, acting, round, replays | | :class:`~meld8_env.codes.Phase`; the seat to act; round; replays |
| mask | uint64 | legal actions of the acting seat (bit = action id) |
| result, win_seat, lose_seat | | how the last step ended a hand (:class:`~meld8_env.codes.Result`) |
| caller, hand_round | int8 | seat whose call the last step resolved (-1: none); round of the hand that ended |

The wait table: beside the records, a FastBatch keeps a private wait table (B, 9) uint64, per seat the R33
waits of one hand and meld with that hand and meld as the key (C ``wait_table_t``). An entry is used only
when its key is the seat's hand and meld now, so it is right whatever was restored or edited, and records
stay as they were (why outside the record: the "wait table" comment in ``_engine.c``).
:meth:`FastBatch.waits` (uint64 (B, P)) reads and fills it, so asking after every step recomputes only
the hands that changed; :func:`meld8_env.engine.records.waits_records` computes the same from records.
The engine's own Ron/Tsumo checks can read it too (``waits & card`` before the scorer's yaku check, the
scorer's furiten test reusing the waits), chosen by :func:`wait_mode`: ``"tenpai"`` (the default: a win-form search
until one passes for the seat's hand, then the table; the only mode measured no slower than none),
``"off"`` (every check a search), ``"lazy"`` (an entry whenever a check needs one), ``"eager"`` (also at
the seat's discard). Games
are identical in every mode (tests/test_wait_table.py); ``bench/wait_table.py`` measures them.

Everything the C side shares with Python is checked here at import: the state layout (offsets from
the C struct), every code (``codes.check_native_constants``), the rules record (packed by field name,
:func:`rules_record`) and, per rule set, the observation layout (:func:`check_obs_layout`).

The same seed gives the same game as ``reference.Game`` (tests compare them step by step).
"""

from __future__ import annotations

import functools

import numpy as np

from meld8_env import observation
from meld8_env.actions import as_action_array, illegal_action_message, legal_ids
from meld8_env.codes import Phase, check_native_constants
from meld8_env.engine import _fast
from meld8_env.engine.seeding import MASK64, check_game_index, check_seed_array
from meld8_env.engine.view import GameView, view_of
from meld8_env.rules import MAX_ROUNDS, RuleConfig, score_bound
from meld8_env.scoring import score_params

check_native_constants(_fast.constants())

_fields, _itemsize = _fast.layout()
STATE_DTYPE = np.dtype(
    {
        "names": [f[0] for f in _fields],
        "formats": [(f[2], f[3]) if f[3] is not None else f[2] for f in _fields],
        "offsets": [f[1] for f in _fields],
        "itemsize": _itemsize,
    }
)
if STATE_DTYPE.itemsize != _itemsize:  # pragma: no cover - a build/layout mismatch
    raise ImportError("meld8 fast engine: numpy state dtype does not match the C struct")

WAIT_MODES = ("off", "lazy", "eager", "tenpai")
WAIT_TABLE_WORDS = _fast.wait_mode()[1] // 8
"""uint64 words of one game's wait table (C ``wait_table_t``: waits, hand, meld per seat slot)."""


def wait_mode(mode: str | None = None) -> str:
    """The wait table's mode before this call; ``mode`` (one of :data:`WAIT_MODES`) sets it for the whole
    process. A bench and test knob: set it between steps, never while another thread steps."""
    if mode is None:
        return WAIT_MODES[_fast.wait_mode()[0]]
    if mode not in WAIT_MODES:
        raise ValueError(f"wait mode must be one of {', '.join(WAIT_MODES)}, got {mode!r}")
    return WAIT_MODES[_fast.wait_mode(WAIT_MODES.index(mode))[0]]


def rules_record(rules: RuleConfig, reward: str = "points") -> dict[str, int | list[int]]:
    """The rules as the C engine reads them, by field name (``_fast.rules_fields()`` lists the names)."""
    if rules.rounds > MAX_ROUNDS:
        raise ValueError(f"the fast engine supports at most {MAX_ROUNDS} rounds, got {rules.rounds}")
    order = rules.dealer_draw_suit_order
    names = ("value_triplet_han", "haitei_han", "points_per_han", "counted_yakuman_han", "yakuman_value")
    names += ("sequence_bonus_max", "tiebreak_yaku")
    return {
        "P": rules.num_players,
        "rounds": rules.rounds,
        "starting_score": rules.starting_score,
        "starting_dealer": -1 if rules.starting_dealer == "draw" else int(rules.starting_dealer),
        "suit_rank": [3 - order.index(ch) for ch in "shdc"],
        "wall_limit": rules.wall_limit,
        "kuikae_on": int(rules.kuikae == "other_end"),
        "penalty_mode": int(rules.penalty_mode),
        "chombo_payment": rules.chombo_payment,
        "max_replays": -1 if rules.max_replays is None else rules.max_replays,
        "placement_share": int(rules.placement_tie == "share"),
        "reward_rank": int(reward == "rank"),
        "min_han": list(rules.min_yaku_han) + [0] * (MAX_ROUNDS - rules.rounds),
        "placement": list(rules.placement_points) + [0] * (3 - rules.num_players),
        # the scorer's own parameters, named as in its C struct
        **{f"sp.{n}": v for n, v in zip(names, score_params(rules), strict=True)},
    }


def pack_rules(rules: RuleConfig, reward: str = "points") -> bytes:
    return _fast.pack_rules(rules_record(rules, reward))


@functools.cache
def check_obs_layout(rules: RuleConfig, oracle: bool = False) -> None:
    """Raise RuntimeError if the C encoder's observation layout differs from ``observation.layout``."""
    native = {name: (off, size) for name, off, size in _fast.obs_layout(pack_rules(rules), oracle)}
    python = {name: spec for name, spec in observation.layout(rules, oracle).items() if spec[1]}
    if native != python:
        diff = sorted(k for k in set(native) | set(python) if native.get(k) != python.get(k))
        raise RuntimeError(
            "meld8: the C observation layout differs from meld8_env.observation.layout in "
            + ", ".join(f"{k} (C {native.get(k)}, Python {python.get(k)})" for k in diff)
        )


def as_seats(seats: object, n: int, P: int) -> np.ndarray:
    """``seats`` as the int8 (n,) array observations take, each -1 (the acting seat) or 0..P-1, checked before the
    cast (int8 would read seat 200 as -56: the acting seat)."""
    s = np.asarray(seats)
    if s.shape != (n,) or s.dtype.kind not in "iu":
        raise ValueError(f"seats must be {n} integers, got shape {s.shape} and dtype {s.dtype}")
    if ((s < -1) | (s >= P)).any():
        raise ValueError(f"seats must be -1 (the acting seat) or 0..{P - 1}, got {int(s[(s < -1) | (s >= P)][0])}")
    return np.ascontiguousarray(s, dtype=np.int8)


def check_records(rec: np.ndarray, rules: RuleConfig) -> None:
    """Raise ValueError naming the first field of ``rec`` that the C engine could not index safely, or a score no
    game under ``rules`` reaches (the numpy twin of ``_state.c: eng_check_ranges``)."""
    from meld8_env.codes import MAX_DISCARDS, N_CARDS

    P = rules.num_players

    def bad(name: str, ok: np.ndarray) -> None:
        if not np.all(ok):
            raise ValueError(f"engine record field {name!r} out of range in game {int(np.argmin(ok))}")

    bad("phase", np.isin(rec["phase"], [int(p) for p in Phase]))
    bad("acting", (rec["acting"] >= -1) & (rec["acting"] < P))
    bad("current", (rec["current"] >= -1) & (rec["current"] < P))
    bad("ndisc", (rec["ndisc"] <= MAX_DISCARDS).all(axis=1))
    bad("discards", ((rec["discards"] >= -1) & (rec["discards"] < N_CARDS)).all(axis=(1, 2)))
    bad("wall_len", rec["wall_len"] <= N_CARDS)
    bad("wall_pos", (rec["wall_pos"] <= rec["wall_len"]) & (rec["wall_end"] <= rec["wall_len"]))
    bad("wall", ((rec["wall"] >= 0) & (rec["wall"] < N_CARDS)).all(axis=1) | (rec["wall_len"] == 0))
    bad("round", (rec["round"] >= 0) & (rec["round"] < MAX_ROUNDS))
    bad("claim_n", (rec["claim_n"] >= 0) & (rec["claim_n"] <= 2) & (rec["claim_idx"] >= 0) & (rec["claim_idx"] <= 2))
    for f in ("drawn", "dora_ind", "claim_card", "win_card"):
        bad(f, (rec[f] >= -1) & (rec[f] < N_CARDS))
    for f in ("claim_asked", "claim_discarder", "win_seat", "lose_seat", "caller"):
        bad(f, ((rec[f] >= -1) & (rec[f] < P)).reshape(len(rec), -1).all(axis=1))
    bad("chiicha", (rec["chiicha"] >= 0) & (rec["chiicha"] < P))
    bad("current", (rec["phase"] == int(Phase.OVER)) | (rec["current"] >= 0))
    bound = score_bound(rules)
    bad("scores", (np.abs(rec["scores"][:, :P].astype(np.int64)) <= bound).all(axis=1))


class FastBatch:
    """B games in C: ``reset(seeds)`` / ``start(index, seeds)``, ``step(actions)`` (returns a bool array
    of rejected actions), ``observe(seats=None)`` -> (obs uint8[B, D], masks bool[B, 64]).

    The ``*_part`` methods take a slice of the batch and caller-owned buffers; the vector env uses
    them to split one batch over threads (the C loops release the GIL)."""

    def __init__(
        self,
        num_games: int,
        rules: RuleConfig | None = None,
        reward: str = "points",
        oracle: bool = False,
        wait_table: bool = True,
    ):
        if num_games < 1:
            raise ValueError(f"num_games must be >= 1, got {num_games}")
        self.rules = rules or RuleConfig()
        self.reward = reward
        self.oracle = oracle
        self.packed_rules = pack_rules(self.rules, reward)
        check_obs_layout(self.rules, oracle)
        self.B = num_games
        self.P = self.rules.num_players
        self.obs_size = _fast.obs_size(self.packed_rules, oracle)
        self._state = np.zeros(num_games, STATE_DTYPE)
        # the same bytes as opaque records: numpy copies a structured record field by field (56 fields),
        # much slower than one byte copy, and the seat protocol snapshots records around every step
        self._raw = self._state.view(np.dtype((np.void, STATE_DTYPE.itemsize)))
        self._view = self._state.view()
        self._view.flags.writeable = False
        self._illegal = np.zeros(num_games, np.uint8)
        self._obs = np.zeros((num_games, self.obs_size), np.uint8)
        self._masks = np.zeros((num_games, 64), np.uint8)
        # the wait table (module docstring): all zero is empty, and a key match is all an entry needs
        self._wait_table = np.zeros((num_games, WAIT_TABLE_WORDS), np.uint64) if wait_table else None

    # -- state ----------------------------------------------------------------------------------
    @property
    def state(self) -> np.ndarray:
        """Read-only view of every game's engine record (fields: module docstring)."""
        return self._view

    def record(self, i: int) -> np.void:
        """Read-only view of game ``i``'s record (it follows the game as it is stepped)."""
        return self._view[i]

    def snapshot(self, index: np.ndarray | slice) -> np.ndarray:
        """A copy of the records of the games at ``index``."""
        return self._raw[index].copy().view(STATE_DTYPE)

    def restore(self, index: np.ndarray | slice, records: np.ndarray) -> None:
        """Put back records taken by :meth:`snapshot` (save/restore for search); fields that would take
        the C engine out of bounds are refused (ValueError naming the field), and so is a record whose cards
        are not each in exactly one place or whose claim window / mask is stale
        (:func:`meld8_env.engine.records.check_conservation`; an edited record needs ``refresh`` first)."""
        records = np.asarray(records)
        if records.dtype != STATE_DTYPE:
            raise TypeError("restore takes records made by FastBatch.snapshot (dtype STATE_DTYPE)")
        records = np.ascontiguousarray(records)
        bad = _fast.check_cards(records, self.packed_rules)  # card conservation and stale caches (records.py)
        if bad is not None:
            raise ValueError(f"engine record {bad[0]}: {bad[1]}")
        self._raw[index] = records.view(self._raw.dtype)

    @property
    def acting(self) -> np.ndarray:
        return self._view["acting"]

    @property
    def phase(self) -> np.ndarray:
        return self._view["phase"]

    @property
    def over(self) -> np.ndarray:
        return self._view["phase"] == int(Phase.OVER)

    def waits(self) -> np.ndarray:
        """uint64 (B, P): each seat's waits (R33: the cards that would complete a win form, yaku ignored) from
        the wait table, filling missing entries. The drawer's are those of its hand before the draw; 0 for the
        seat holding 8 cards after a call and for finished games."""
        out = np.zeros((self.B, self.P), np.uint64)
        _fast.waits(self._state, self.packed_rules, out, self._wait_table)
        return out

    def legal_actions(self, i: int) -> list[int]:
        return legal_ids(int(self._state["mask"][i]))

    def illegal_message(self, i: int, action: object, who: str | None = None) -> str:
        """The illegal-action error text for game ``i`` (names the legal actions)."""
        row = self._state[i]
        who = who or f"seat {int(row['acting'])}"
        phase = Phase(int(row["phase"])).label
        return illegal_action_message(action, who, phase, self.legal_actions(i))

    def view(self, i: int) -> GameView:
        """Game ``i`` with the reference engine's attribute names (for rendering and replays)."""
        return view_of(self._state[i], self.rules)

    # -- whole batch ----------------------------------------------------------------------------
    def reset(self, seeds: np.ndarray) -> None:
        seeds = check_seed_array(seeds, top=MASK64)
        if seeds.shape != (self.B,):
            raise ValueError(f"seeds must have shape ({self.B},), got {seeds.shape}")
        _fast.reset(self._state, self.packed_rules, seeds)

    def start(self, index: np.ndarray, seeds: np.ndarray) -> None:
        """Start new games at ``index`` with the given seeds (the others are untouched)."""
        index = check_game_index(index, self.B)
        seeds = check_seed_array(seeds, top=MASK64)
        if seeds.shape != index.shape:
            raise ValueError(f"give one seed per game: {index.shape} games, {seeds.shape} seeds")
        sub = self._raw[index].view(STATE_DTYPE)
        _fast.reset(sub, self.packed_rules, seeds)
        self._raw[index] = sub.view(self._raw.dtype)

    def step(self, actions: np.ndarray) -> np.ndarray:
        """Apply int64 actions (one per game; -1 holds a game still); returns where each was rejected."""
        actions = as_action_array(actions, self.B)
        _fast.step(self._state, self.packed_rules, actions, self._illegal, self._wait_table)
        return self._illegal.view(bool)

    def observe(self, seats: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Observations and masks of ``seats`` (-1 or None: the acting seat); buffers are reused."""
        s = np.full(self.B, -1, np.int8) if seats is None else as_seats(seats, self.B, self.P)
        _fast.observe(self._state, self.packed_rules, s, self.oracle, self._obs, self._masks)
        return self._obs, self._masks.view(bool)

    # -- caller-owned buffers (no conversions: the C side checks every buffer's size) --------------
    def step_into(self, actions: np.ndarray, illegal: np.ndarray) -> None:
        """:meth:`step` with caller-owned buffers: actions int64[B], illegal uint8[B] (the AEC's path)."""
        _fast.step(self._state, self.packed_rules, actions, illegal, self._wait_table)

    def observe_into(self, seats: np.ndarray, obs: np.ndarray, masks: np.ndarray, oracle: bool | None = None) -> None:
        """:meth:`observe` into caller-owned buffers: seats int8[B], obs uint8[B, D], masks 1-byte[B, 64].
        ``oracle=True`` writes the full-information layout (size ``oracle_size``) whatever the batch's view."""
        _fast.observe(self._state, self.packed_rules, seats, self.oracle if oracle is None else oracle, obs, masks)

    def observe_records(self, records: np.ndarray, seats: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> None:
        """Observations of engine records outside the batch (e.g. ``Meld8Vector.ended_states``, a game
        that has already been replaced), checked like :meth:`restore`."""
        records = np.ascontiguousarray(records)
        if records.dtype != STATE_DTYPE:
            raise TypeError("observe_records takes records made by this engine (dtype STATE_DTYPE)")
        check_records(records, self.rules)
        _fast.observe(records, self.packed_rules, seats, self.oracle, obs, masks)

    @property
    def oracle_size(self) -> int:
        """Size of the full-information observation (every hand and the wall appended)."""
        return _fast.obs_size(self.packed_rules, True)

    # -- slices, caller-owned buffers -------------------------------------------------------------
    def step_part(self, sl: slice, actions: np.ndarray, illegal: np.ndarray) -> None:
        """Step games ``sl`` (actions int64, -1 holds a game still); ``illegal`` uint8 gets 1 where rejected."""
        table = None if self._wait_table is None else self._wait_table[sl]
        _fast.step(self._state[sl], self.packed_rules, actions, illegal, table)

    def observe_part(self, sl: slice, seats: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> None:
        _fast.observe(self._state[sl], self.packed_rules, seats, self.oracle, obs, masks)

    def observe_index(self, index: np.ndarray, seats: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> None:
        """Observations and masks of the games at ``index`` (fancy index) into caller-owned buffers."""
        _fast.observe(self._raw[index].view(STATE_DTYPE), self.packed_rules, seats, self.oracle, obs, masks)

    def outputs_part(self, sl: slice, out: dict[str, np.ndarray]) -> None:
        """Per-step outputs of games ``sl`` into ``out``: rewards f4[n,P], terminated u1, final_scores
        i4[n,P], placements u1[n,P], acting i1, result i1, caller i1."""
        _fast.outputs(
            self._state[sl], self.P, out["rewards"], out["terminated"], out["final_scores"], out["placements"],
            out["acting"], out["result"], out["caller"],
        )  # fmt: skip

    def first_illegal(self, actions: np.ndarray) -> int:
        """Index of the first game whose action is not legal (-1: none; finished games and -1 pass)."""
        return int(_fast.check(self._state, actions))

    def random_legal(self, rng_state: np.ndarray, out: np.ndarray) -> None:
        """A uniformly random legal action per game from per-game splitmix64 states (advanced in place)."""
        _fast.random_legal(self._state, rng_state, out)

    def call_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """The C engine's (call cards, kuikae) tables, shaped like ``meld8_env.calls.call_tables``."""
        pairs, kk = _fast.call_tables(self.packed_rules)
        return np.frombuffer(pairs, np.uint64).reshape(-1, 52), np.frombuffer(kk, np.uint64).reshape(-1, 52)
