"""Single-seat training face for stable-baselines3: the learner plays one seat of each game.

``SingleSeatVecEnv(n_envs, opponents, rules, seed)`` is an SB3 ``VecEnv`` over the batched engine.
Game i seats the learner at ``i % P`` (seats rotate across games); the other seats are played by
``opponents`` (agents with ``act_batch``, relative seats 1..P-1) inside ``step_wait``, batched per
agent, until the learner is to act again in every game. An episode is a whole game. The learner gets
only its own seat's rewards (every step, its opponents' moves included), so its return is
(final score - 30,000) / 10,000 with the default rewards. ``action_masks()`` serves sb3-contrib's
``MaskablePPO``. ``infos`` of finished games carry ``final_score`` and ``placement`` (and
``terminal_observation``, as SB3 expects; the learner's last view is not kept, so it is zeros).
With ``features=True`` observations carry the look-ahead features of ``agents.lookahead``.
A game that ends before the learner ever acts (possible with very short rule configs, e.g. an
opponent's Tenhou in a one-round game) holds no learner decision; it is skipped and counted in
``infos[i]["idle_games"]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from agents.lookahead import augment, augmented_size
from meld8_env.actions import NUM_ACTIONS
from meld8_env.rules import RuleConfig
from meld8_env.vector import Meld8Vector


class SingleSeatVecEnv(VecEnv):
    def __init__(
        self,
        n_envs: int,
        opponents: Sequence,
        rules: RuleConfig | None = None,
        seed: int = 0,
        reward: str = "points",
        features: bool = False,
    ) -> None:
        self.rules = rules or RuleConfig()
        P = self.rules.num_players
        if len(opponents) != P - 1:
            raise ValueError(f"give {P - 1} opponents (relative seats 1..{P - 1}), got {len(opponents)}")
        self.opponents = list(opponents)
        for a in self.opponents:
            if hasattr(a, "setup"):
                a.setup(self.rules)
        self.vec = Meld8Vector(n_envs, rules=self.rules, seed=seed, reward=reward)
        self.learner_seat = (np.arange(n_envs) % P).astype(np.int64)
        self.features = features
        size = augmented_size(self.rules) if features else self.vec.obs_size
        obs_space = spaces.Box(0, 255, (size,), np.uint8)
        self.render_mode = None
        super().__init__(n_envs, obs_space, spaces.Discrete(NUM_ACTIONS))
        self._actions = np.zeros(n_envs, np.int64)
        self._seed = seed

    # -- the learner's turn --------------------------------------------------------------------
    def _play_opponents(self, rewards: np.ndarray, dones: np.ndarray, infos: list[dict]) -> None:
        """Step opponents until the learner is to act in every game; accumulate the learner's rewards."""
        v, P, n = self.vec, self.rules.num_players, self.num_envs
        while True:
            rel = (v.current_seat.astype(np.int64) - self.learner_seat) % P
            waiting = rel != 0
            if not waiting.any():
                return
            acts = np.full(n, -1, np.int64)
            for k, agent in enumerate(self.opponents):
                rows = np.flatnonzero(rel == k + 1)
                if rows.size:
                    acts[rows] = agent.act_batch(v.observation[rows], v.action_mask[rows])
            v.step(acts)
            self._collect(rewards, dones, infos)

    def _collect(self, rewards: np.ndarray, dones: np.ndarray, infos: list[dict]) -> None:
        v = self.vec
        rows = np.arange(self.num_envs)
        mine = v.rewards[rows, self.learner_seat]
        self._ep_return += np.where(dones, 0.0, mine)
        # after a game ended in this step, its slot plays the next game: those rewards open the next
        # episode, so they wait for the next step
        self._carry += np.where(dones, mine, 0.0)
        rewards += np.where(dones, 0.0, mine)
        for i in np.flatnonzero(v.terminated):
            if dones[i]:  # a whole game passed without a learner action: nothing to learn from it
                self._carry[i] = 0.0
                infos[i]["idle_games"] = infos[i].get("idle_games", 0) + 1
                continue
            dones[i] = True
            seat = self.learner_seat[i]
            episode = {"r": float(self._ep_return[i]), "l": int(self._ep_length[i]), "t": 0.0}
            self._ep_return[i] = 0.0
            self._ep_length[i] = 0
            state = v.ended_states[np.flatnonzero(v.ended_index == i)[0]]
            infos[i] = {
                "final_score": int(v.final_scores[i, seat]),
                "placement": int(state["placements"][seat]),
                "terminal_observation": np.zeros(self.observation_space.shape, np.uint8),
                "episode": episode,  # SB3 logs rollout/ep_rew_mean from this
            }

    def reset(self) -> np.ndarray:
        self.vec.reset(seed=self._seed)
        self._carry = np.zeros(self.num_envs, np.float64)
        self._ep_return = np.zeros(self.num_envs, np.float64)
        self._ep_length = np.zeros(self.num_envs, np.int64)
        opening = np.zeros(self.num_envs, np.float64)
        self._play_opponents(opening, np.zeros(self.num_envs, bool), [{} for _ in range(self.num_envs)])
        self._carry += opening  # e.g. an opponent's Tenhou before the learner's first action
        return self._observation()

    def _observation(self) -> np.ndarray:
        if self.features:
            return augment(self.vec.observation, self.vec.action_mask, self.rules)
        return self.vec.observation.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self):
        rewards, self._carry = self._carry, np.zeros(self.num_envs, np.float64)
        self._ep_return += rewards  # carried rewards open these episodes
        self._ep_length += 1
        dones = np.zeros(self.num_envs, bool)
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        self.vec.step(self._actions)
        self._collect(rewards, dones, infos)
        self._play_opponents(rewards, dones, infos)
        return self._observation(), rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        return self.vec.action_mask.copy()

    # -- VecEnv plumbing -------------------------------------------------------------------------
    def close(self) -> None:
        self.vec.close()

    def seed(self, seed: int | None = None):
        if seed is not None:
            self._seed = int(seed)
        return [self._seed + i for i in range(self.num_envs)]

    def get_attr(self, attr_name: str, indices=None) -> list:
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *args, indices=None, **kwargs) -> list:
        if method_name == "action_masks":
            return list(self.action_masks()[self._indices(indices)])
        return [getattr(self, method_name)(*args, **kwargs) for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)
