"""PettingZoo AEC face of the engine: ``meld8_v0``. The only engine face that imports PettingZoo.

Agents ``player_0 .. player_{P-1}`` (seat numbers). Each observation is a dict
``{"observation": uint8[D], "action_mask": int8[64]}`` (layout: ``meld8_env.observation``; actions:
``meld8_env.actions``); the mask is all zero for agents not to act. ``agent_selection`` follows the
engine, so claims interrupt the turn order (R21, R22). Rewards (``reward="points"``, default): each
deal's point change / 10,000 for every seat, plus placement points at the end, so a seat's return is
(final score - 30,000) / 10,000; ``reward="rank"``: +1 / 0 / -1 by final placement.

``state()`` is the full-information view (``state_space``): seat 0's observation in the oracle layout
(every concealed hand and the wall appended), for centralised critics and
``turn_based_aec_to_parallel``. ``max_cycles=N`` truncates every agent once N agent steps (actions,
claims and passes included) have been taken in a game that has not ended; the default ``None`` never
truncates. Game lengths vary widely: the bots (greedy, defensive) finish a game in about 100-200 agent
steps, but random legal play takes thousands (2,000-17,000 measured: drawn hands are replayed), as may
an untrained policy, so a limit like 500 truncates most of such games.
``render_mode="human"`` prints the table after every step (``render()`` prints and returns None);
``"ansi"`` returns it as a string. ``reset`` ignores ``options`` (PettingZoo's api_test requires that it
take some). After the game, once every agent was stepped with None, ``step`` and ``last`` raise
``RuntimeError`` ("call reset()").

Version history: v0 - first release.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from meld8_env.actions import NUM_ACTIONS, IllegalActionError, is_action_id, legal_ids, unwrap_action
from meld8_env.codes import Phase
from meld8_env.config_io import check_flag, check_int, short_repr
from meld8_env.engine.fast import FastBatch
from meld8_env.engine.seeding import check_seed
from meld8_env.one_game import observe_seat
from meld8_env.render import render_table
from meld8_env.replay import save_replay
from meld8_env.rules import RuleConfig
from meld8_env.spaces import LegalDiscrete

_OVER = int(Phase.OVER)  # a plain int: numpy compares it without probing the enum
GONE = "the game is over and every agent has been stepped out (env.agents is empty): call reset() to play again"


class _PerAgent(dict):
    """``rewards``, ``terminations``, ... : a plain dict whose missing agent is named in one line. After the game,
    PettingZoo removes each agent stepped with None, and ``last()`` read the removed one: ``KeyError: 'player_1'``
    (a newcomer's walkthrough, session 47)."""

    def __init__(self, agents: list[str], *args: object) -> None:
        super().__init__(*args)
        self._all = agents

    def __missing__(self, agent: object):
        if agent in self._all:
            raise RuntimeError(f"{agent} has left: {GONE}")
        raise ValueError(f"unknown agent {short_repr(agent)}; the agents are {', '.join(self._all)}")


def env(**kwargs) -> AECEnv:
    """The wrapped env (PettingZoo's order enforcement). Out-of-range and illegal actions are
    rejected by the engine itself with an error listing the legal ones (no assertion wrapper)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


class raw_env(AECEnv):  # noqa: N801 - PettingZoo naming convention
    metadata = {"render_modes": ["ansi", "human"], "name": "meld8_v0", "is_parallelizable": False}

    def __init__(
        self,
        rules: RuleConfig | str | dict | None = None,
        render_mode: str | None = None,
        reward: str = "points",
        oracle: bool = False,
        max_cycles: int | None = None,
    ) -> None:
        super().__init__()
        self.rules = RuleConfig.load(rules)
        if max_cycles is not None:  # numpy ints are integers here as in every other option (red team, session 37)
            max_cycles = check_int(max_cycles, "max_cycles (None: no limit)", 1)
        if reward not in ("points", "rank"):
            raise ValueError(f"reward must be 'points' or 'rank', got {reward!r}")
        self.max_cycles = max_cycles
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.render_mode = render_mode
        self.reward_mode = reward
        self.oracle = check_flag(oracle, "oracle")  # 'no' switched the cheating full-information observation on
        self.possible_agents = [f"player_{i}" for i in range(self.rules.num_players)]
        self.engine = FastBatch(1, self.rules, reward=reward, oracle=self.oracle)  # a single env is a batch of one
        size = self.engine.obs_size
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0, 255, (size,), np.uint8),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.state_space = spaces.Box(0, 255, (self.engine.oracle_size,), np.uint8)
        # Discrete(64) each; sample() draws a legal action of that agent (PettingZoo's tests sample them)
        self.action_spaces = {a: LegalDiscrete(lambda a=a: self._legal_mask(a)) for a in self.possible_agents}
        self._seeds = np.random.default_rng()
        self._act = np.zeros(1, np.int64)
        self._illegal = np.zeros(1, np.uint8)
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}

    def _seat(self, agent: object) -> int:
        """The seat of ``agent``, or one ValueError naming the agents there are (a bare KeyError before)."""
        if agent not in self._seat_of:
            raise ValueError(f"unknown agent {short_repr(agent)}; the agents are {', '.join(self.possible_agents)}")
        return self._seat_of[agent]  # type: ignore[index]

    def _started(self) -> None:
        """Refuse a game view before the first reset (observe gave a made-up table, step an AttributeError)."""
        if not hasattr(self, "record"):
            raise RuntimeError("call reset() first: no game has started")

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[self.possible_agents[self._seat(agent)]]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[self.possible_agents[self._seat(agent)]]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        # options are ignored, and cannot be refused: PettingZoo's api_test resets with options={"options": 1}
        if seed is not None:
            game_seed = check_seed(seed)
            self._seeds = np.random.default_rng(game_seed)
        else:
            game_seed = int(self._seeds.integers(0, 2**63))
        self.game_seed = game_seed
        self.engine.reset(np.array([game_seed], np.uint64))
        self.record = self.engine.record(0)  # read-only view of the engine record (fields: engine.fast)
        self.action_log: list[int] = []
        self.agents = self.possible_agents[:]
        self.rewards = self._per_agent({a: 0.0 for a in self.agents})
        self._cumulative_rewards = self._per_agent({a: 0.0 for a in self.agents})
        self.terminations = self._per_agent({a: False for a in self.agents})
        self.truncations = self._per_agent({a: False for a in self.agents})
        self.infos = self._per_agent({a: {} for a in self.agents})
        self.agent_selection = self.agents[int(self.record["acting"])]

    def _per_agent(self, values: dict) -> _PerAgent:
        return _PerAgent(self.possible_agents, values)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat(agent)
        self._started()
        obs, mask = observe_seat(self.engine, seat)
        return {"observation": obs, "action_mask": mask.view(np.int8)}

    def state(self) -> np.ndarray:
        """The full-information view: seat 0's observation in the oracle layout (``state_space``)."""
        self._started()
        out = np.empty((1, self.engine.oracle_size), np.uint8)
        self.engine.observe_into(np.zeros(1, np.int8), out, np.empty((1, NUM_ACTIONS), np.uint8), oracle=True)
        return out[0]

    def _legal_mask(self, agent: str) -> np.ndarray:
        mask = np.zeros(NUM_ACTIONS, bool)
        if hasattr(self, "record") and agent == self.agent_selection:
            mask[legal_ids(int(self.record["mask"]))] = True  # the engine's own legal set, no observation built
        return mask

    def action_mask(self, agent: str | None = None) -> np.ndarray:
        return self.observe(agent or self.agent_selection)["action_mask"]

    def step(self, action: int) -> None:
        self._started()
        if not self.agents:  # every agent was stepped out; PettingZoo's wrapper only warns, raw_env said KeyError
            raise RuntimeError(GONE)
        action = unwrap_action(action)  # a 0-d integer array, as Discrete.contains accepts
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if not is_action_id(action):  # -1, floats, out of range: refused (None is only for dead agents)
            raise IllegalActionError(self.engine.illegal_message(0, action, who=agent))
        self._act[0] = action
        self.engine.step_into(self._act, self._illegal)
        if self._illegal[0]:
            raise IllegalActionError(self.engine.illegal_message(0, action, who=agent))
        self.action_log.append(int(action))
        self._cumulative_rewards[agent] = 0.0
        st = self.record
        self.rewards = self._per_agent(zip(self.possible_agents, st["rewards"].tolist(), strict=False))
        if int(st["phase"]) == _OVER:
            self.terminations = self._per_agent({a: True for a in self.agents})
            scores, places = st["final_scores"].tolist(), st["placements"].tolist()
            infos = {a: {"final_score": scores[i], "placement": places[i]} for i, a in enumerate(self.possible_agents)}
            self.infos = self._per_agent(infos)
        else:
            self.agent_selection = self.possible_agents[int(st["acting"])]
            if self.max_cycles is not None and len(self.action_log) >= self.max_cycles:
                self.truncations = self._per_agent({a: True for a in self.agents})
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def save_replay(self, path: str) -> None:
        """Write this (finished) game as a replay file (``meld8 replay FILE`` re-simulates it)."""
        self._started()  # before the first reset: AttributeError 'game_seed' (a newcomer's walkthrough, session 47)
        save_replay(path, self.rules, self.game_seed, self.action_log)

    @property
    def game(self):
        """A read-only view of the game with the reference engine's attribute names."""
        return self.engine.view(0)

    def render(self) -> str | None:
        """``"ansi"``: the table as a string; ``"human"``: print it (returns None); no mode: None."""
        if self.render_mode is None:
            return None
        self._started()
        game = self.game
        text = render_table(game, game.acting_seat if not game.over else 0)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass
