"""Gymnasium faces: the learner plays one seat of N games stepped together in the C engine.

``gymnasium.make_vec("meld8_env:Meld8-v0", num_envs=N, vectorization_mode="vector_entry_point", ...)``
gives :class:`Meld8VectorEnv`, a real ``gymnasium.vector.VectorEnv``; ``gymnasium.make("meld8_env:Meld8-v0")``
gives :class:`Meld8SingleEnv`, a ``gymnasium.Env`` (one game). Options (both): ``opponents`` (agent
names or objects for the other seats; one name fills every other seat; default ``"defensive"``),
``rules`` (a name, YAML path, dict or RuleConfig), ``features`` (append the look-ahead features of
``meld8_env.features``), ``reward`` (``"points"`` or ``"rank"``), ``shaping`` (potential-based shaping of
the reward by distance to win, ``meld8_env.vector``; default 0, off), ``seed``. ``reset(seed=S)`` plays games
S, S + 1, ... with the opponents loaded from names seeded from S, so it is a function of S alone (opponent objects
keep their own seeds).

Seating: game i seats the learner at ``i % P`` (seats rotate across games); opponents act inside
``step``, batched per agent through the shared ``meld8_env.table.Table``, until the learner is to act
again in every game. Opponents are bound to a game when it starts: replacing ``opponents[k]`` takes
effect from each slot's next game (a game is never played by two different opponents in one seat). An episode is a whole
game; the learner gets only its own seat's rewards, so with the default reward an episode's return is
(final score - 30,000) / 10,000. Shapes: observations ``(N, D)`` uint8, rewards ``(N,)`` float32,
``info["action_mask"]`` ``(N, 64)`` bool (legal actions of the learner now).

Autoreset: ``metadata["autoreset_mode"] == AutoresetMode.SAME_STEP``: a game that ends is replaced at
once, so the observation returned is the next game's first; ``info["final_obs"]`` (an object array,
``info["_final_obs"]`` marking the ended envs) holds the learner's view of the ended game and
``info["final_info"]`` its ``final_score``, ``placement``, ``episode_return`` and ``episode_length``.
Rewards that reach the learner after its game ended (opponents playing on in the next game before the
learner's first action) belong to the next episode and are paid with the next step.

This is the one implementation of single-seat play: ``training.single_seat.SingleSeatVecEnv`` (SB3)
adapts it.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from meld8_env.actions import NUM_ACTIONS, IllegalActionError, as_action_array, is_action_id, unwrap_action
from meld8_env.agent import as_agent, reseed_in_place
from meld8_env.agent_spec import load_agent
from meld8_env.config_io import check_finite, check_flag, short_repr
from meld8_env.engine.seeding import check_seed
from meld8_env.features import augment, augmented_size
from meld8_env.one_game import observe_seat
from meld8_env.rules import RuleConfig
from meld8_env.spaces import LegalDiscrete
from meld8_env.table import Table
from meld8_env.vector import Meld8Vector


def check_reset_options(options: object) -> None:
    """Refuse reset options: these envs read none, and a key given there was dropped silently (a newcomer's
    walkthrough, session 47). None and {} (what Gymnasium's checker and wrappers pass) are fine. (The PettingZoo env
    accepts any: PettingZoo's api_test resets it with options={"options": 1}.)"""
    if options is None or (isinstance(options, dict) and not options):
        return
    if not isinstance(options, dict):
        raise ValueError(f"reset options must be a dict or None, got {type(options).__name__} (Meld8 reads none)")
    key = short_repr(next(iter(options)), 40)
    raise ValueError(f"unknown reset option {key}: Meld8-v0's reset() knows no option keys; give options=None or {{}}")


def no_render(what: str, render_mode: object = None) -> str:
    """Why a Gymnasium face refuses ``render_mode`` or ``render()``, naming the env the caller made (the single env's
    refusal named Meld8VectorEnv, a class the caller never created: a newcomer's walkthrough, session 47)."""
    mode = "" if render_mode is None else f" (render_mode must be None, got {short_repr(render_mode)})"
    return (
        f"{what} renders nothing{mode}; watch games through the PettingZoo env "
        "(meld8_env.env(render_mode='ansi')) or save them as replays"
    )


def load_opponents(opponents: str | Sequence, rules: RuleConfig, seed: int = 0) -> list:
    """Agent objects for the P - 1 other seats from specs (``meld8_env.agent_spec``) or objects (given the
    whole contract by ``meld8_env.agent.as_agent``)."""
    P = rules.num_players
    if not isinstance(opponents, str | Sequence):  # 123 failed inside list() ("'int' object is not iterable")
        raise ValueError(f"opponents must be an agent name or a list of {P - 1} agents, got {type(opponents).__name__}")
    specs = [opponents] * (P - 1) if isinstance(opponents, str) else list(opponents)
    if len(specs) != P - 1:
        raise ValueError(f"give {P - 1} opponents (the other seats), got {len(specs)}")
    return [load_agent(s, rules, seed + 1 + k) if isinstance(s, str) else as_agent(s) for k, s in enumerate(specs)]


class Meld8VectorEnv(VectorEnv):
    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        opponents: str | Sequence = "defensive",
        rules: RuleConfig | str | dict | None = None,
        features: bool = False,
        reward: str = "points",
        seed: int | None = None,
        render_mode: str | None = None,
        shaping: float = 0.0,
    ) -> None:
        if render_mode is not None:
            raise ValueError(no_render("Meld8VectorEnv (gymnasium.make_vec of Meld8-v0)", render_mode))
        self.rules = RuleConfig.load(rules)
        self.features = check_flag(features, "features")  # 'no' was truthy: features on
        # the batch checks num_envs (2.5 was int()ed to 2), seed, reward and shaping before any opponent starts
        self.vec = Meld8Vector(num_envs, rules=self.rules, seed=seed, reward=reward, shaping=shaping)
        self.num_envs = self.vec.num_envs
        self._opponents_seed = 0 if seed is None else check_seed(seed)
        self.opponents = load_opponents(opponents, self.rules, self._opponents_seed)
        self._opponent_specs = [opponents] * len(self.opponents) if isinstance(opponents, str) else list(opponents)
        for a in self.opponents:
            a.setup(self.rules)
        # the opponents this env loaded from names: a seeded reset re-seeds exactly these (one put in their place,
        # e.g. by a self-play pool, stays as it is)
        self._loaded = list(self.opponents)
        self.table = Table(self.vec)
        self.P = self.rules.num_players
        self.learner_seat = (np.arange(self.num_envs) % self.P).astype(np.int64)
        size = augmented_size(self.rules) if self.features else self.vec.obs_size
        self.single_observation_space = spaces.Box(0, 255, (size,), np.uint8)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        self._seed = None if seed is None else check_seed(seed)  # a numpy int made every reset() fail in Gymnasium
        self._started = False

    # -- the learner's turn ----------------------------------------------------------------------
    def _observation(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if self.features:
            return augment(obs, masks, self.rules)
        return obs.copy()

    def _lineups(self, slots: np.ndarray) -> list[list]:
        """Who sits where in the games at ``slots``: None for the learner, opponents[k] k + 1 seats on."""
        out = []
        for i in slots.tolist():
            ls = int(self.learner_seat[i])
            out.append([None if s == ls else self.opponents[(s - ls) % self.P - 1] for s in range(self.P)])
        return out

    def _engine_step(self, acts: np.ndarray, rewards: np.ndarray, ended: list) -> None:
        """One engine step through the table (stream opponents see the learner's moves too); credit
        the rewards, note ended games and seat the current opponents in the games that replace them."""
        self.table.step(acts)
        self._collect(rewards, ended)
        idx = self.vec.ended_index
        if idx.size:
            self.table.seat(idx, self._lineups(idx))

    def _play_opponents(self, rewards: np.ndarray, ended: list) -> None:
        """Step the opponents until the learner is to act in every game; collect the learner's rewards."""
        v, n = self.vec, self.num_envs
        while (v.current_seat != self.learner_seat).any():
            acts = np.full(n, -1, np.int64)
            self.table.act(acts)
            self._engine_step(acts, rewards, ended)

    def _collect(self, rewards: np.ndarray, ended: list) -> None:
        """Credit this engine step's rewards to the learner's episode (or the next one) and note ended games."""
        v = self.vec
        mine = v.rewards[np.arange(self.num_envs), self.learner_seat].astype(np.float64)
        done = np.zeros(self.num_envs, bool)
        done[[e[0] for e in ended]] = True
        rewards += np.where(done, 0.0, mine)
        self._carry += np.where(done, mine, 0.0)  # after its game ended, a slot already plays the next one
        for k, i in enumerate(v.ended_index.tolist()):
            if done[i]:  # a whole game passed without a learner action: nothing to learn from it
                self._carry[i] = 0.0
                self._idle[i] += 1
                continue
            seat = int(self.learner_seat[i])
            rec = v.ended_states[k]
            final_obs, mask = observe_seat(v.engine, seat, record=rec)
            ended.append((i, final_obs[None], mask[None], int(rec["final_scores"][seat]), int(rec["placements"][seat])))
            done[i] = True

    def _reseed_opponents(self, seed: int) -> None:
        """Opponents loaded from names play as seeded from ``seed`` (seat k + 1 from ``seed + 1 + k``, as the
        constructor seeds them), so ``reset(seed=S)`` plays the same games whatever the constructor's seed was
        (seeds audit, session 35: a ``random`` or ``search`` opponent kept the constructor's seed). Agent objects
        given by the caller keep their own seeds. An agent is re-seeded in place where its class declares ``reseed``
        (the built-ins: no checkpoint is read and no bot process started again, which cost 0.1-1 s per reset), and
        loaded again from its name otherwise."""
        if seed == self._opponents_seed:
            return
        for k, spec in enumerate(self._opponent_specs):
            agent = self.opponents[k]
            if not isinstance(spec, str) or agent is not self._loaded[k] or reseed_in_place(agent, seed + 1 + k):
                continue
            agent = load_agent(spec, self.rules, seed + 1 + k)
            agent.setup(self.rules)
            self.opponents[k].close()
            self.opponents[k] = self._loaded[k] = agent
        self._opponents_seed = seed

    # -- Gymnasium API ---------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        check_reset_options(options)
        if seed is not None:  # before any state changes: a refused seed re-seeded the opponents, and was kept for
            seed = check_seed(seed)  # every later reset() to refuse again (review, session 36); a Python int for
            # Gymnasium, which refuses numpy ints
        # the constructor's seed seeds np_random too at the first reset: a later reset without a seed drew its games
        # from a generator Gymnasium had seeded from the OS (seeds audit, session 35)
        first = seed is None and not self._started and self._seed is not None
        super().reset(seed=self._seed if first else seed)
        # a seed restarts the same games; no seed continues with new games drawn from np_random
        # (itself seeded by the last seeded reset, or the constructor's seed, so a run stays reproducible)
        if seed is None and (self._started or self._seed is None):
            self._seed = int(self.np_random.integers(0, 2**62))
        elif seed is not None:
            self._seed = int(seed)
            self._reseed_opponents(self._seed)
        self.vec.reset(seed=self._seed)
        n = self.num_envs
        self.table.seat(np.arange(n), self._lineups(np.arange(n)))
        self._carry = np.zeros(n, np.float64)
        self._return = np.zeros(n, np.float64)
        self._length = np.zeros(n, np.int64)
        self._idle = np.zeros(n, np.int64)
        opening = np.zeros(n, np.float64)
        self._play_opponents(opening, [])
        self._carry += opening  # e.g. an opponent's Tenhou before the learner's first action
        self._started = True
        return self._observation(self.vec.observation, self.vec.action_mask), self._infos([])

    def step(self, actions):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        # (4, 1) and (2, 2) were reshaped silently (red team, session 32); -1, the batch's "hold this game still",
        # is no Gymnasium action (it stepped nothing and counted in the episode's length: red team, session 37)
        acts = as_action_array(actions, self.num_envs, hold=False)
        carry, self._carry = self._carry, np.zeros(self.num_envs, np.float64)
        rewards = np.zeros(self.num_envs, np.float64)
        ended: list = []
        try:
            self._engine_step(acts, rewards, ended)
        except IllegalActionError:  # refused before any game moved: the carried rewards are still owed
            self._carry = carry
            raise
        self._play_opponents(rewards, ended)
        rewards += carry  # rewards that reached the learner before this episode's first action
        self._return += rewards
        self._length += 1
        terminated = np.zeros(self.num_envs, bool)
        infos_ended = []
        for i, final_obs, masks, score, place in ended:
            terminated[i] = True
            infos_ended.append((i, final_obs, masks, score, place, float(self._return[i]), int(self._length[i])))
            self._return[i] = 0.0
            self._length[i] = 0
        obs = self._observation(self.vec.observation, self.vec.action_mask)
        return obs, rewards.astype(np.float32), terminated, np.zeros(self.num_envs, bool), self._infos(infos_ended)

    def _infos(self, ended: list) -> dict[str, Any]:
        infos: dict[str, Any] = {
            "action_mask": self.vec.action_mask.copy(),
            "_action_mask": np.ones(self.num_envs, bool),
        }
        for i, final_obs, masks, score, place, ret, length in ended:
            info = {
                "final_obs": self._observation(final_obs, masks)[0],
                "final_info": {
                    "final_score": score,
                    "placement": place,
                    "episode_return": ret,
                    "episode_length": length,
                },
            }
            infos = self._add_info(infos, info, i)
        return infos

    def action_masks(self) -> np.ndarray:
        """(N, 64) bool: the learner's legal actions now (sb3-contrib's MaskablePPO asks for this)."""
        return self.vec.action_mask.copy()

    def close_extras(self, **kwargs: Any) -> None:
        if sys.is_finalizing():  # an env never closed, collected at exit: numpy is half torn down by now, and
            return  # the external bots' processes end through their own exit hook (meld8_env.seat_process)
        # a construction that failed half way (a bad argument) is closed by __del__ too: close what was made, or
        # its ValueError was followed by a second traceback ("no attribute 'table'")
        if hasattr(self, "table"):
            self.table.close()
        for agent in getattr(self, "opponents", ()):  # external bots' processes end with the env
            agent.close()
        if hasattr(self, "vec"):
            self.vec.close()


ENDED = "the episode has ended: call reset() before step()"


class Meld8SingleEnv(gymnasium.Env):
    """One game as a ``gymnasium.Env`` (options: :class:`Meld8VectorEnv`). ``info["action_mask"]`` (64,)
    bool; the episode ends with the game (``terminated``); ``reset()`` starts the next one. Its
    action space samples legal actions (:class:`LegalDiscrete`), reseeded from the env at each reset.

    An illegal action (generic tools step with unmasked samples): ``illegal_action="terminate"``
    (default, PettingZoo's classic-game convention) ends the episode at once with ``illegal_reward``
    (default -1.0) and ``info["illegal_action"] = True`` plus the legal ids; ``"raise"`` refuses it with
    ``IllegalActionError`` like every other face. An action of the wrong type (a string, a float, a list: anything
    but a Python or numpy integer or a 0-d integer array) is a bug, not a move: ``IllegalActionError`` in both
    modes. ``step()`` before the first ``reset()`` or after the episode ended raises ``RuntimeError``. No render
    modes, and ``reset`` takes no options (None or {})."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        illegal_reward: float = -1.0,
        **kwargs: Any,
    ) -> None:
        if illegal_action not in ("terminate", "raise"):
            raise ValueError(f"illegal_action must be 'terminate' or 'raise', got {illegal_action!r}")
        self.illegal_reward = check_finite(illegal_reward, "illegal_reward")
        if "num_envs" in kwargs:
            raise ValueError("Meld8SingleEnv plays one game; for several use Meld8VectorEnv (gymnasium.make_vec)")
        known = [k for k in inspect.signature(Meld8VectorEnv).parameters if k not in ("num_envs", "render_mode")]
        unknown = [k for k in kwargs if k not in known]
        if unknown:  # Python's own TypeError named Meld8VectorEnv.__init__, which the caller never called
            raise TypeError(
                f"Meld8SingleEnv (gymnasium.make of Meld8-v0) got an unknown option {unknown[0]!r}; its options: "
                f"{', '.join(['illegal_action', 'illegal_reward', *known])}"
            )
        if render_mode is not None:
            raise ValueError(no_render("Meld8SingleEnv (gymnasium.make of Meld8-v0)", render_mode))
        self.illegal_action = illegal_action
        self._vec = Meld8VectorEnv(num_envs=1, **kwargs)
        self.observation_space = self._vec.single_observation_space
        self.action_space = LegalDiscrete(lambda: self._mask)
        self._mask = np.ones(NUM_ACTIONS, bool)
        self._pending = None  # the next game's first observation, already started by autoreset
        self._over: str | None = "call reset() before step()"  # why step() is refused now, None while a game runs

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        check_reset_options(options)
        if seed is not None:  # the project's ValueError, before Gymnasium's own (which refuses numpy ints too)
            seed = check_seed(seed)
        super().reset(seed=seed)
        if seed is not None or self._pending is None:
            obs, info = self._vec.reset(seed=seed)  # no seed: new games from the env's own generator
        else:
            obs, info = self._pending
        self._pending = None
        self._over = None
        self._mask = info["action_mask"][0]
        # the action space's samples follow the env's seed, so a seeded run is reproducible end to end
        self.action_space.seed(int(self._vec.np_random.integers(0, 2**31)))
        return obs[0], {"action_mask": self._mask.copy()}

    def step(self, action):
        if self._over is not None:  # after the end, a step played a move in the next game the caller never saw
            raise RuntimeError(self._over)
        action = unwrap_action(action)  # SB3's predict gives a 0-d array: it was penalised as illegal
        if not isinstance(action, int | np.integer) or isinstance(action, bool | np.bool_):
            # a wrong type ("pass", 6.0, [6]) is a bug in the caller, not a move to penalise: refused in every mode,
            # as the AEC and vector faces refuse it (a newcomer's walkthrough, session 47: it ended the episode at -1)
            raise IllegalActionError(self._vec.vec.engine.illegal_message(0, action))
        if self.illegal_action == "terminate" and not (is_action_id(action) and self._mask[int(action)]):
            # PettingZoo's classic convention (TerminateIllegalWrapper): the episode ends with a penalty
            legal = np.flatnonzero(self._mask).tolist()
            self._pending = None  # the next reset starts a new game
            self._mask = np.zeros(NUM_ACTIONS, bool)
            self._over = ENDED
            obs = self._vec._observation(self._vec.vec.observation[:1], self._vec.vec.action_mask[:1])[0]
            info = {"illegal_action": True, "legal_actions": legal, "action_mask": self._mask.copy()}
            return obs, self.illegal_reward, True, False, info
        obs, rew, term, trunc, info = self._vec.step(np.array([action]))
        if term[0]:
            self._pending = (obs, {"action_mask": info["action_mask"]})
            self._over = ENDED
            final = info["final_info"]
            self._mask = np.zeros(NUM_ACTIONS, bool)
            out_info = {k: v[0] for k, v in final.items() if not k.startswith("_")}
            out_info["action_mask"] = self._mask.copy()
            return info["final_obs"][0], float(rew[0]), True, False, out_info
        self._mask = info["action_mask"][0]
        return obs[0], float(rew[0]), False, False, {"action_mask": self._mask.copy()}

    def action_masks(self) -> np.ndarray:
        return self._mask.copy()

    def render(self) -> None:
        # Gymnasium's own raised NotImplementedError with no message at all
        raise NotImplementedError(no_render("Meld8SingleEnv (gymnasium.make of Meld8-v0)"))

    def close(self) -> None:
        self._vec.close()
