"""Batched self-play API over the fast engine: B games stepped together, one action per game.

After ``reset()`` and after each ``step(actions)`` these arrays describe every game:

| attribute | shape, dtype | meaning |
|---|---|---|
| ``current_seat`` | (B,) int8 | the seat to act (claims interrupt the turn order) |
| ``observation`` | (B, D) uint8 | that seat's observation (layout: ``meld8_env.observation``) |
| ``action_mask`` | (B, 64) bool | its legal actions (table: ``meld8_env.actions``) |
| ``rewards`` | (B, P) float32 | every seat's reward from this step |
| ``terminated`` | (B,) bool | the game ended on this step |
| ``final_scores`` | (B, P) int32 | final scores of games that ended on this step (else 0) |
| ``ended_index``, ``ended_states`` | (K,), (K,) state | games that ended on this step and their last engine state |

Autoreset (default ``autoreset=True``, "same step"): a game that ends is reset at once with the next
seed, so the returned observation is already the new game's first one; its ``rewards``,
``terminated`` and ``final_scores`` still describe the game that ended. With ``autoreset=False`` an
ended game stays over (empty mask, its action ignored) until ``reset()``.

Seeds: with ``seed=S`` game i of the first batch uses seed ``S + i``; later games take ``S + B``,
``S + B + 1``, ... in the order they start (lowest index first). A game's seed alone fixes its deals,
so game i of a batch equals a batch of one seeded ``S + i`` given the same actions.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from meld8_env.actions import action_name
from meld8_env.engine.fast import FastBatch
from meld8_env.engine.reference import PHASE_NAMES, IllegalActionError
from meld8_env.rules import RuleConfig

_BITS = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))


class Meld8Vector:
    def __init__(
        self,
        num_envs: int,
        rules: RuleConfig | str | dict | None = None,
        seed: int | None = None,
        autoreset: bool = True,
        reward: str = "points",
        threads: int | None = None,
        oracle: bool = False,
    ) -> None:
        self.rules = RuleConfig.load(rules)
        if reward not in ("points", "rank"):
            raise ValueError(f"reward must be 'points' or 'rank', got {reward!r}")
        self.num_envs = int(num_envs)
        self.autoreset = autoreset
        self.engine = FastBatch(self.num_envs, self.rules, reward=reward, oracle=oracle)
        self.P = self.rules.num_players
        self.obs_size = self.engine.obs_size
        n_threads = threads if threads is not None else 1  # measured: one thread is fastest at B <= 4096
        self._parts = [p for p in np.array_split(np.arange(self.num_envs), max(1, n_threads)) if p.size]
        self._pool = ThreadPoolExecutor(len(self._parts)) if len(self._parts) > 1 else None
        self._base_seed = seed
        self.rewards = np.zeros((self.num_envs, self.P), np.float32)
        self.terminated = np.zeros(self.num_envs, bool)
        self.final_scores = np.zeros((self.num_envs, self.P), np.int32)
        self.seeds = np.zeros(self.num_envs, np.uint64)

    # -- seeds --------------------------------------------------------------------------------------
    def _take_seeds(self, n: int) -> np.ndarray:
        out = (np.uint64(self._next_seed) + np.arange(n, dtype=np.uint64)).astype(np.uint64)
        self._next_seed += n
        return out

    def reset(self, seed: int | None = None) -> None:
        """Start B new games (seeds ``seed + i``; a random base seed when none was ever given)."""
        if seed is not None:
            self._base_seed = int(seed)
        if self._base_seed is None:
            self._base_seed = int(np.random.default_rng().integers(0, 2**62))
        self._next_seed = self._base_seed
        self.seeds[:] = self._take_seeds(self.num_envs)
        self.engine.reset(self.seeds)
        self.rewards[:] = 0
        self.terminated[:] = False
        self.final_scores[:] = 0
        self._observe()

    # -- stepping -----------------------------------------------------------------------------------
    def _run(self, fn) -> None:
        if self._pool is None:
            fn(slice(0, self.num_envs))
        else:
            list(self._pool.map(fn, [slice(int(p[0]), int(p[-1]) + 1) for p in self._parts]))

    def _observe(self) -> None:
        eng = self.engine
        obs = np.empty((self.num_envs, self.obs_size), np.uint8)
        masks = np.empty((self.num_envs, 64), np.uint8)
        seats = np.full(self.num_envs, -1, np.int8)

        def work(sl: slice) -> None:
            from meld8_env.engine import _fast

            _fast.observe(eng.state[sl], eng._rt, seats[sl], eng.oracle, obs[sl], masks[sl])

        self._run(work)
        self.observation = obs
        self.action_mask = masks.view(bool)
        self.current_seat = eng.state["acting"].copy()

    def step(self, actions: np.ndarray) -> None:
        """Apply one action per game. An illegal action (default rules) raises before any game moves."""
        acts = np.ascontiguousarray(actions, dtype=np.int64)
        if acts.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {acts.shape}")
        eng = self.engine
        if not self.rules.penalty_mode:
            inside = (acts >= 0) & (acts < 64)
            legal = inside & ((eng.state["mask"] & _BITS[np.clip(acts, 0, 63)]) != 0)
            legal |= eng.state["phase"] == 3  # a finished game (autoreset off) ignores its action
            if not legal.all():
                i = int(np.flatnonzero(~legal)[0])
                self._raise_illegal(i, int(acts[i]))
        illegal = np.zeros(self.num_envs, np.uint8)

        def work(sl: slice) -> None:
            from meld8_env.engine import _fast

            _fast.step(eng.state[sl], eng._rt, acts[sl], illegal[sl])

        self._run(work)
        st = eng.state
        self.rewards = st["rewards"][:, : self.P].copy()
        self.terminated = st["phase"] == 3
        self.final_scores = np.where(self.terminated[:, None], st["final_scores"][:, : self.P], 0).astype(np.int32)
        self.ended_index = np.flatnonzero(self.terminated)
        self.ended_states = st[self.ended_index].copy()  # before autoreset replaces them
        if self.autoreset and self.terminated.any():
            idx = self.ended_index
            new = self._take_seeds(idx.size)
            self.seeds[idx] = new
            eng.reset_games(idx, new)
        self._observe()

    def _raise_illegal(self, i: int, action: int) -> None:
        st = self.engine.state[i]
        legal = [a for a in range(64) if int(st["mask"]) >> a & 1]
        name = action_name(action) if 0 <= action < 64 else "out of range 0..63"
        raise IllegalActionError(
            f"game {i}: illegal action {action} ({name}) for seat {int(st['acting'])} in phase "
            f"{PHASE_NAMES[int(st['phase'])]}; legal: {', '.join(f'{a} ({action_name(a)})' for a in legal)}"
        )

    def sample_actions(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """A uniformly random legal action per game, drawn in C (games that are over get 0).

        Seeded from ``rng`` on first use (or from the env seed), reproducible run to run."""
        if getattr(self, "_sample_state", None) is None:
            base = rng.integers(0, 2**63) if rng is not None else (self._base_seed or 0) + 0x5EED
            self._sample_state = np.uint64(base) + np.arange(self.num_envs, dtype=np.uint64) * np.uint64(7919)
        from meld8_env.engine import _fast

        out = np.empty(self.num_envs, np.int64)
        _fast.random_legal(self.engine.state, self._sample_state, out)
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
