"""Single-seat training face for stable-baselines3: an SB3 ``VecEnv`` adapter over the Gymnasium face.

``SingleSeatVecEnv(n_envs, opponents, rules, seed)`` (``opponents``: one agent name for every other seat, or P - 1
names or agents, as the Gymnasium face takes them) holds a :class:`meld8_env.gym_env.Meld8VectorEnv`
(which owns the seating, the opponents' play and the reward crediting) and speaks SB3's dialect:
``reset() -> obs``, ``step_wait() -> (obs, rewards, dones, infos)`` with a list of per-env dicts, and
``action_masks()`` for sb3-contrib's ``MaskablePPO``. ``infos`` of finished games carry
``final_score``, ``placement``, ``terminal_observation`` (the learner's view of the ended game) and
``episode`` (SB3 logs rollout/ep_rew_mean from it).

``oracle=True`` (for an oracle critic, ``agents.networks.OracleCriticPolicy``): each observation is the
learner's usual one (H columns) followed by its oracle part (O = P*53 + 53 columns: every seat's concealed
cards from the learner's seat on, then the wall order; ``meld8_env.observation``), shape (N, H + O). A
terminal observation's oracle part is zeros: the game is over, and SB3 reads terminal observations only to
bootstrap truncated episodes, which never happen here (a game always ends).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from meld8_env.actions import NUM_ACTIONS, as_action_array
from meld8_env.config_io import check_flag
from meld8_env.engine.seeding import check_seed
from meld8_env.gym_env import Meld8VectorEnv
from meld8_env.rules import RuleConfig


class SingleSeatVecEnv(VecEnv):
    def __init__(
        self,
        n_envs: int,
        opponents: str | Sequence,
        rules: RuleConfig | str | dict | None = None,
        seed: int = 0,
        reward: str = "points",
        features: bool = False,
        shaping: float = 0.0,
        oracle: bool = False,
    ) -> None:
        self.rules = RuleConfig.load(rules)  # a name or file, as every face takes (a name raised AttributeError)
        # passed on as given: the Gymnasium face's load_opponents reads one name as every opponent and checks the
        # count (a newcomer's walkthrough, session 47: list("greedy") made six opponents of its letters)
        self.env = Meld8VectorEnv(n_envs, opponents, self.rules, features=features, reward=reward, seed=seed,
                                  shaping=shaping)  # fmt: skip
        self.render_mode = None
        self.oracle = check_flag(oracle, "oracle")  # a truthy 'no' switched the CHEATING critic input on
        space = self.env.single_observation_space
        self.honest_size = int(space.shape[0])
        if self.oracle:
            engine = self.env.vec.engine
            self.oracle_extra = int(engine.oracle_size - engine.obs_size)
            space = spaces.Box(0, 255, (self.honest_size + self.oracle_extra,), np.uint8)
            self._oracle_buf = np.empty((n_envs, engine.oracle_size), np.uint8)
            self._mask_buf = np.empty((n_envs, NUM_ACTIONS), np.uint8)
        super().__init__(n_envs, space, self.env.single_action_space)
        self._actions = np.zeros(n_envs, np.int64)
        self._seed = check_seed(seed)

    @property
    def opponents(self) -> list:
        """The agents in the learner's relative seats 1..P-1 (self-play swaps them in place)."""
        return self.env.opponents

    @property
    def vec(self):
        return self.env.vec

    @property
    def learner_seat(self) -> np.ndarray:
        return self.env.learner_seat

    def reset(self) -> np.ndarray:
        obs, _ = self.env.reset(seed=self._seed)
        return self._with_oracle(obs)

    def _with_oracle(self, obs: np.ndarray) -> np.ndarray:
        """``obs`` (N, H), the learner's view now in every game, followed by its oracle part when asked for."""
        if not self.oracle:
            return obs
        # the learner is to act in every game after reset and step: the engine's view of its seat
        engine = self.env.vec.engine
        engine.observe_into(self.learner_seat.astype(np.int8), self._oracle_buf, self._mask_buf, oracle=True)
        return np.concatenate([obs, self._oracle_buf[:, engine.obs_size :]], axis=1)

    def step_async(self, actions: np.ndarray) -> None:
        # checked here, not cast: floats were truncated, strings parsed and -1 stepped nothing (red team, session 37)
        self._actions = as_action_array(actions, self.num_envs, hold=False)

    def step_wait(self):
        obs, rewards, terminated, truncated, info = self.env.step(self._actions)
        dones = terminated | truncated
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        if "final_info" in info:
            final = info["final_info"]
            for i in np.flatnonzero(info["_final_obs"]):
                infos[i] = {
                    "final_score": int(final["final_score"][i]),
                    "placement": int(final["placement"][i]),
                    "terminal_observation": self._terminal(info["final_obs"][i]),
                    "episode": {"r": float(final["episode_return"][i]), "l": int(final["episode_length"][i]), "t": 0.0},
                }
        return self._with_oracle(obs), rewards, dones, infos

    def _terminal(self, obs: np.ndarray) -> np.ndarray:
        return np.concatenate([obs, np.zeros(self.oracle_extra, np.uint8)]) if self.oracle else obs

    def action_masks(self) -> np.ndarray:
        return self.env.action_masks()

    # -- VecEnv plumbing -------------------------------------------------------------------------
    def close(self) -> None:
        self.env.close()

    def seed(self, seed: int | None = None):
        if seed is not None:  # checked now: 1.5 and "7" were int()ed, -1 only failed at the next reset
            self._seed = check_seed(seed)
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
