"""Batched self-play API over the fast engine: B games stepped together, one action per game.

After ``reset()`` and after each ``step(actions)`` these arrays describe every game:

| attribute | shape, dtype | meaning |
|---|---|---|
| ``current_seat`` | (B,) int8 | the seat to act (claims interrupt the turn order) |
| ``observation`` | (B, D) uint8 | that seat's observation (layout: ``meld8_env.observation``) |
| ``action_mask`` | (B, 64) bool | its legal actions (table: ``meld8_env.actions``) |
| ``rewards`` | (B, P) float32 | every seat's reward from this step |
| ``terminated`` | (B,) bool | the game ended on this step |
| ``final_scores``, ``placements`` | (B, P) int32, uint8 | of games that ended on this step (else 0) |
| ``result`` | (B,) int8 | ``codes.Result`` of a hand that ended on this step (0: none) |
| ``caller`` | (B,) int8 | seat whose Pon/Chii was resolved on this step (-1: none) |
| ``ended_index``, ``ended_states`` | (K,), (K,) state | games that ended on this step and their last engine state |

Typed outcomes of the last step: ``hand_outcomes()`` (one ``HandOutcome`` per settled hand: result,
winner, discarder, han, points, yaku, every seat's payment) and ``game_outcomes()`` (final scores,
placements, seed). ``start_games(index, seeds)`` starts chosen games with chosen seeds; ``state`` is a
read-only view of the engine records.

The arrays are reused: each ``step`` overwrites them, so copy what you keep (rollout buffers do). Before the
first ``reset()`` there are no games: the arrays hold zeros (``current_seat`` -1, no legal action) and ``step``,
``sample_actions`` and ``start_games`` raise ``RuntimeError`` ("call reset() first").

Autoreset (default ``autoreset=True``, "same step"): a game that ends is reset at once with the next
seed, so the returned observation is already the new game's first one; its ``rewards``,
``terminated`` and ``final_scores`` still describe the game that ended. With ``autoreset=False`` an
ended game stays over (empty mask, its action ignored) until ``reset()``.

Shaping (``shaping=c``, default 0: off): potential-based reward shaping (Ng, Harada & Russell, 1999)
for learners facing a sparse reward. A seat's potential is ``-c * distance to win`` of its hand (the
static distance of ``meld8_env.hands.distance_batch``: melds counted, every unheld card available);
each step adds to every seat's reward the change of its potential, and an ended game has potential 0.
Over a whole game a seat's shaping therefore sums to ``c *`` the distance of its first hand, whatever
it played: the best policy is unchanged, but a discard that brings the hand closer to winning is
rewarded at once instead of only when a hand is won. The Gymnasium, SB3 and RLlib faces pass the
option through (``shaping=``); the PettingZoo AEC env pays the game's rewards only.

Threads: the batch is split into contiguous halves stepped in parallel (the C code releases the
GIL); by default two threads from B = 2048 on, one below (``threads=`` overrides).

Seeds: with ``seed=S`` game i of the first batch uses seed ``S + i``; later games take ``S + B``,
``S + B + 1``, ... in the order they start (lowest index first), wrapping to 0 past 2**63 (the largest seed).
A game's seed alone fixes its deals, so game i of a batch equals a batch of one seeded ``S + i`` given the same
actions.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from meld8_env.actions import IllegalActionError, as_action_array
from meld8_env.config_io import check_flag, check_int
from meld8_env.engine.fast import FastBatch
from meld8_env.engine.seeding import MAX_SEED, check_game_index, check_seed, check_seed_array
from meld8_env.hands import distance_batch
from meld8_env.outcomes import GameOutcome, HandOutcome, game_outcomes, hand_outcomes
from meld8_env.rules import RuleConfig


def check_shaping(shaping: object) -> float:
    """The shaping coefficient as a float, or ValueError naming the allowed range (train configs check
    it when loaded, before anything starts)."""
    if isinstance(shaping, bool) or not (isinstance(shaping, int | float) and 0 <= shaping < 1):
        raise ValueError(f"shaping must be a number in [0, 1) (reward a step of distance to win), got {shaping!r}")
    return float(shaping)


MAX_ENVS = 2**20  # games in one vector: ~1.4 GB of records and observation buffers


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
        shaping: float = 0.0,
    ) -> None:
        self.rules = RuleConfig.load(rules)
        if reward not in ("points", "rank"):
            raise ValueError(f"reward must be 'points' or 'rank', got {reward!r}")
        self.shaping = check_shaping(shaping)
        # 2.5 was read as 2, True as 1; 10**7 games failed deep in numpy (about 1.3 KB of buffers per game)
        self.num_envs = check_int(num_envs, "num_envs", 1, MAX_ENVS)
        # switches are bools, never truthy values: oracle='no' turned the cheating full-information observation on
        self.autoreset = check_flag(autoreset, "autoreset")
        oracle = check_flag(oracle, "oracle")
        n_threads = None if threads is None else check_int(threads, "threads", 1)  # 2.5 and -3 were taken
        self._base_seed = None if seed is None else check_seed(seed)
        self.engine = FastBatch(self.num_envs, self.rules, reward=reward, oracle=oracle)
        self.P = self.rules.num_players
        self.obs_size = self.engine.obs_size
        if n_threads is None:  # measured (bench/env_throughput.py): a second thread pays off from ~a thousand games
            n_threads = 2 if self.num_envs >= 2048 else 1
        self._parts = [p for p in np.array_split(np.arange(self.num_envs), n_threads) if p.size]
        self._pool = ThreadPoolExecutor(len(self._parts)) if len(self._parts) > 1 else None
        self.seeds = np.zeros(self.num_envs, np.uint64)
        # sample_actions: each game's stream (restarted at its seed where _sample_new), moved by _sample_offset
        self._sample_new = np.ones(self.num_envs, bool)
        self._sample_state = np.zeros(self.num_envs, np.uint64)
        self._sample_offset: np.uint64 | None = None
        self._started = False  # no game exists before the first reset()
        self._buffers()
        self._no_outcomes()

    # -- seeds --------------------------------------------------------------------------------------
    def _take_seeds(self, n: int) -> np.ndarray:
        # past 2**63 the seeds wrap to 0: every game's seed is one a single game accepts (check_seed), where a
        # batch seeded near the top played seeds up to 2**63 + B that no single game could replay (seeds audit)
        out = (self._next_seed + np.arange(n, dtype=object)) % (MAX_SEED + 1)
        self._next_seed = (self._next_seed + n) % (MAX_SEED + 1)
        return out.astype(np.uint64)

    def reset(self, seed: int | None = None) -> None:
        """Start B new games (seeds ``seed + i``; a random base seed when none was ever given)."""
        if seed is not None:
            self._base_seed = check_seed(seed)
        if self._base_seed is None:
            self._base_seed = int(np.random.default_rng().integers(0, 2**62))
        self._next_seed = self._base_seed
        self.seeds[:] = self._take_seeds(self.num_envs)
        self._sample_new[:] = True
        self.engine.reset(self.seeds)
        self._started = True
        self._observe()
        self._no_outcomes()
        if self.shaping:
            self._potential = self._potentials(np.arange(self.num_envs))

    def start_games(self, index: np.ndarray, seeds: np.ndarray) -> None:
        """Start new games with chosen ``seeds`` at ``index`` (others untouched); their observations,
        masks and acting seats are updated, their rewards and flags cleared."""
        self._check_started("start_games()")
        index = check_game_index(index, self.num_envs)
        if index.size == 0:
            return
        seeds = check_seed_array(seeds)
        if seeds.shape != index.shape:
            raise ValueError(f"give one seed per game: {index.shape[0]} games, seeds of shape {seeds.shape}")
        self.seeds[index] = seeds
        self._sample_new[index] = True
        self.engine.start(index, seeds)
        self._observe_rows(index)
        self._rewards[index] = 0
        self._terminated[index] = 0
        self._finals[index] = 0
        self._placements[index] = 0
        self._result[index] = 0
        self._caller[index] = -1
        if self.shaping:
            self._potential[index] = self._potentials(index)

    @property
    def base_seed(self) -> int | None:
        """The seed of game 0 of the last ``reset`` (drawn at random when none was given)."""
        return self._base_seed

    @property
    def state(self) -> np.ndarray:
        """Read-only view of the engine records of the B games (fields: ``meld8_env.engine.fast``)."""
        return self.engine.state

    # -- stepping -----------------------------------------------------------------------------------
    def _check_started(self, what: str) -> None:
        """Refuse ``what`` before the first ``reset()``: no game exists yet (a newcomer's walkthrough, session 47:
        the mask held uninitialised memory, a step it allowed was refused as "the game is over", and
        sample_actions gave zeros)."""
        if not self._started:
            raise RuntimeError(f"call reset() first: {what} needs games, and none has started")

    def _run(self, fn) -> None:
        if self._pool is None:
            fn(slice(0, self.num_envs))
        else:
            list(self._pool.map(fn, [slice(int(p[0]), int(p[-1]) + 1) for p in self._parts]))

    def _observe(self) -> None:
        self._run(self._observe_part)

    def _buffers(self) -> None:
        B, P = self.num_envs, self.P
        # zeros, not empty: before the first reset the arrays are read as "no legal action, no seat to act"
        self._obs_buf = np.zeros((B, self.obs_size), np.uint8)
        self._mask_buf = np.zeros((B, 64), np.uint8)
        self._seats = np.full(B, -1, np.int8)
        self._illegal = np.zeros(B, np.uint8)
        self._rewards = np.zeros((B, P), np.float32)
        self._terminated = np.zeros(B, np.uint8)
        self._finals = np.zeros((B, P), np.int32)
        self._placements = np.zeros((B, P), np.uint8)
        self._acting = np.full(B, -1, np.int8)
        self._result = np.zeros(B, np.int8)
        self._caller = np.full(B, -1, np.int8)
        self._views: dict = {}
        self._out = {
            "rewards": self._rewards,
            "terminated": self._terminated,
            "final_scores": self._finals,
            "placements": self._placements,
            "acting": self._acting,
            "result": self._result,
            "caller": self._caller,
        }
        self.observation = self._obs_buf
        self.action_mask = self._mask_buf.view(bool)
        self.current_seat = self._acting
        self.rewards = self._rewards
        self.terminated = self._terminated.view(bool)
        self.final_scores = self._finals
        self.placements = self._placements
        self.result = self._result
        self.caller = self._caller

    def _part_buffers(self, sl: slice) -> tuple:
        """The buffers of one slice of the batch (views made once: a step reuses them)."""
        key = (sl.start, sl.stop)
        views = self._views.get(key)
        if views is None:
            views = (self._seats[sl], self._obs_buf[sl], self._mask_buf[sl], {k: v[sl] for k, v in self._out.items()})
            self._views[key] = views
        return views

    def _observe_part(self, sl: slice) -> None:
        seats, obs, masks, out = self._part_buffers(sl)
        self.engine.observe_part(sl, seats, obs, masks)
        self.engine.outputs_part(sl, out)

    def _observe_rows(self, idx: np.ndarray) -> None:
        """Observations, masks and acting seats of the games at ``idx`` only."""
        obs = np.empty((idx.size, self.obs_size), np.uint8)
        masks = np.empty((idx.size, 64), np.uint8)
        self.engine.observe_index(idx, self._seats[: idx.size], obs, masks)
        self._obs_buf[idx] = obs
        self._mask_buf[idx] = masks
        self._acting[idx] = self.engine.acting[idx]

    def _no_outcomes(self) -> None:
        if not hasattr(self, "_empty"):
            self._empty = (np.zeros(0, np.int64), self.engine.snapshot(slice(0, 0)), np.zeros(0, np.uint64))
        self.hand_index, self.ended_states, self.ended_seeds = self._empty
        self.ended_index = self.hand_index
        self._hand_ended = np.zeros(0, bool)

    def step(self, actions: np.ndarray) -> None:
        """Apply one action per game; ``-1`` holds that game still for this step (no move, no reward).

        An illegal action (default rules) raises before any game moves."""
        self._check_started("step()")
        acts = as_action_array(actions, self.num_envs)  # integers -1..63 only, in every mode
        eng = self.engine
        if not self.rules.penalty_mode:
            bad = eng.first_illegal(acts)  # a finished game (autoreset off) ignores its action
            if bad >= 0:
                raise IllegalActionError(f"game {bad}: " + eng.illegal_message(bad, int(acts[bad])))

        def work(sl: slice) -> None:
            eng.step_part(sl, acts[sl], self._illegal[sl])
            self._observe_part(sl)

        self._run(work)
        if self.shaping:
            self._shape(acts)
        # games whose hand (and maybe game) ended; the records of ended games are copied before autoreset
        # replaces them, the others stay in the engine until the next step (hand_outcomes reads them)
        self.hand_index = np.flatnonzero(self._result)
        if self.hand_index.size == 0:
            self._no_outcomes()
            return
        self._hand_ended = self._terminated[self.hand_index].view(bool)
        self.ended_index = self.hand_index[self._hand_ended]
        self.ended_states = eng.snapshot(self.ended_index)
        self.ended_seeds = self.seeds[self.ended_index]
        if self.autoreset and self.ended_index.size:
            idx = self.ended_index
            new = self._take_seeds(idx.size)
            self.seeds[idx] = new
            self._sample_new[idx] = True
            eng.start(idx, new)
            # the new games' first observations; rewards, flags and final scores stay those of the ended games
            self._observe_rows(idx)
            if self.shaping:
                self._potential[idx] = self._potentials(idx)

    # -- shaping ------------------------------------------------------------------------------------
    def _potentials(self, index: np.ndarray) -> np.ndarray:
        """(len(index), P) float32: -shaping * distance to win of each seat's hand in those games."""
        st = self.engine.state
        hands = st["hands"][index, : self.P].reshape(-1)  # records hold 3 seats; 2 players use the first two
        dist = distance_batch(hands, st["melds"][index, : self.P].reshape(-1)).astype(np.float32)
        return (-self.shaping * dist).reshape(len(index), self.P)

    def _shape(self, acts: np.ndarray) -> None:
        """Add each seat's change of potential to its reward (an ended game's potential is 0)."""
        moved = np.flatnonzero(acts >= 0)
        new = np.zeros((moved.size, self.P), np.float32)
        live = self._mask_buf[moved].any(axis=1)  # an ended game (this step or before) has no legal action
        new[live] = self._potentials(moved[live])
        self._rewards[moved] += new - self._potential[moved]
        self._potential[moved] = new

    # -- outcomes of the last step ------------------------------------------------------------------
    def hand_outcomes(self) -> list[HandOutcome]:
        """How each hand that ended on the last step was settled (see ``meld8_env.outcomes``).

        Call it before the next step (like the other per-step outputs, the next step replaces it)."""
        if self.hand_index.size == 0:
            return []
        rows = self.engine.snapshot(self.hand_index)
        rows[self._hand_ended] = self.ended_states
        return hand_outcomes(self.hand_index, rows, self.rules)

    def game_outcomes(self) -> list[GameOutcome]:
        """Final scores and placements of each game that ended on the last step."""
        return game_outcomes(self.ended_index, self.ended_seeds, self.ended_states, self.rules)

    def sample_actions(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """A uniformly random legal action per game, drawn in C (games that are over get 0).

        Each game draws from its own stream, started from its seed when the game starts (moved by ``rng``'s first
        draw when one is given on first use): game i of a batch seeded S samples as the single game seeded S + i
        whatever the batch, and a reset with the same seed samples the same games again (the streams were per slot
        and never restarted, so ``meld8 simulate --batch`` changed the games: seeds audit, session 35)."""
        if rng is not None and not isinstance(rng, np.random.Generator):  # 5 failed deep inside ('no attribute')
            raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)) or None, got {rng!r}")
        self._check_started("sample_actions()")
        if self._sample_offset is None:
            self._sample_offset = np.uint64(rng.integers(0, 2**63) if rng is not None else 0x5EED)
        new = self._sample_new
        if new.any():
            self._sample_state[new] = self.seeds[new] + self._sample_offset  # uint64: wraps
            new[:] = False
        out = np.empty(self.num_envs, np.int64)
        self.engine.random_legal(self._sample_state, out)
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
