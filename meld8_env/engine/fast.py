"""The fast engine: B games as one numpy structured array, stepped in C (``_fast``).

``state`` is a C-contiguous array of shape (B,) whose dtype mirrors the C ``game_t`` (built from the
extension's own ``layout()``, so a mismatch cannot go unnoticed). Fields, per game (P = 3 slots;
unused slots stay zero with two players):

| field | dtype, shape | meaning |
|---|---|---|
| hands, melds | uint64 (3,) | 53-bit card masks of concealed cards / the exposed meld |
| scores, final_scores | int32 (3,) | current scores; final scores with placement points (R40) |
| rewards | float32 (3,) | reward of the last step for each seat |
| discards | int8 (3, 24) | discard order per seat (-1 beyond ``ndisc``); ``called`` bit i: i-th was called |
| wall | int8 (53,) | draw order after the deal; ``wall_pos`` / ``wall_end`` |
| phase, acting, round, replays | | 0 draw, 1 call_discard, 2 claim, 3 over; the seat to act; round; replays |
| mask | uint64 | legal actions of the acting seat (bit = action id) |
| result, win_seat, lose_seat | | how the last step ended a deal: 0 none, 1 ron, 2 tsumo, 3 draw, 4 chombo |

The same seed gives the same game as ``reference.Game`` (tests compare them step by step).
"""

from __future__ import annotations

import numpy as np

from meld8_env.engine import _fast
from meld8_env.rules import RuleConfig
from meld8_env.scoring import score_params

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

RESULT_NAMES = ("none", "ron", "tsumo", "draw", "chombo")


def rules_tuple(rules: RuleConfig, reward: str = "points") -> tuple[int, ...]:
    """The flat int encoding of the rules that the C engine reads (order fixed in _fast.c)."""
    if rules.rounds > 16:
        raise ValueError("the fast engine supports at most 16 rounds")
    order = rules.dealer_draw_suit_order
    suit_rank = [3 - order.index(ch) for ch in "shdc"]
    min_han = list(rules.min_yaku_han) + [0] * (16 - rules.rounds)
    placement = list(rules.placement_points) + [0] * (3 - rules.num_players)
    sd = -1 if rules.starting_dealer == "draw" else int(rules.starting_dealer)
    return (
        rules.num_players,
        rules.rounds,
        rules.starting_score,
        sd,
        *suit_rank,
        rules.wall_limit,
        1 if rules.kuikae == "other_end" else 0,
        1 if rules.penalty_mode else 0,
        rules.chombo_payment,
        -1 if rules.max_replays is None else rules.max_replays,
        1 if rules.placement_tie == "share" else 0,
        1 if reward == "rank" else 0,
        *min_han,
        *placement,
        *score_params(rules),  # the scorer's own parameters, in its order
    )


class FastBatch:
    """B games in C. ``reset(seeds)``, ``step(actions)`` (returns a bool array of rejected actions),
    ``observe(seats=None)`` -> (obs uint8[B, D], masks bool[B, 64])."""

    def __init__(self, num_games: int, rules: RuleConfig | None = None, reward: str = "points", oracle: bool = False):
        if num_games < 1:
            raise ValueError(f"num_games must be >= 1, got {num_games}")
        self.rules = rules or RuleConfig()
        self.reward = reward
        self.oracle = oracle
        self._rt = _fast.pack_rules(rules_tuple(self.rules, reward))
        self.B = num_games
        self.P = self.rules.num_players
        self.obs_size = _fast.obs_size(self._rt, oracle)
        self.state = np.zeros(num_games, STATE_DTYPE)
        self._illegal = np.zeros(num_games, np.uint8)
        self._obs = np.zeros((num_games, self.obs_size), np.uint8)
        self._masks = np.zeros((num_games, 64), np.uint8)

    def reset(self, seeds: np.ndarray) -> None:
        seeds = np.ascontiguousarray(seeds, dtype=np.uint64)
        if seeds.shape != (self.B,):
            raise ValueError(f"seeds must have shape ({self.B},), got {seeds.shape}")
        _fast.reset(self.state, self._rt, seeds)

    def reset_games(self, index: np.ndarray, seeds: np.ndarray) -> None:
        """Reset only the games at ``index`` (autoreset)."""
        sub = self.state[index]
        _fast.reset(sub, self._rt, np.ascontiguousarray(seeds, dtype=np.uint64))
        self.state[index] = sub

    def step(self, actions: np.ndarray) -> np.ndarray:
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        if actions.shape != (self.B,):
            raise ValueError(f"actions must have shape ({self.B},), got {actions.shape}")
        _fast.step(self.state, self._rt, actions, self._illegal)
        return self._illegal.view(bool)

    def observe(self, seats: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        s = np.full(self.B, -1, np.int8) if seats is None else np.ascontiguousarray(seats, dtype=np.int8)
        _fast.observe(self.state, self._rt, s, self.oracle, self._obs, self._masks)
        return self._obs, self._masks.view(bool)

    @property
    def acting(self) -> np.ndarray:
        return self.state["acting"]

    @property
    def over(self) -> np.ndarray:
        return self.state["phase"] == 3

    def legal_actions(self, i: int) -> list[int]:
        m = int(self.state["mask"][i])
        return [a for a in range(64) if m >> a & 1]
