"""Meld8: a reinforcement-learning environment for a 3-player mahjong-style card game.

Subpackages: ``cards`` (ids, notation), ``rules`` (rule config), ``hands`` (winning forms, waits,
distance to win; C with a pure-Python twin), ``scoring`` (yaku, han, points).
"""

from meld8_env.cards import JOKER, CardError, format_cards, parse_cards
from meld8_env.config_io import env_flag
from meld8_env.rules import RuleConfig, RuleConfigError
from meld8_env.version import __version__

__all__ = ["JOKER", "CardError", "RuleConfig", "RuleConfigError", "__version__", "format_cards", "parse_cards"]


def env(**kwargs):
    """PettingZoo AEC env ``meld8_v0`` (wrapped); see ``meld8_env.aec``. Needs pettingzoo."""
    from meld8_env.aec import env as _env

    return _env(**kwargs)


def raw_env(**kwargs):
    from meld8_env.aec import raw_env as _raw_env

    return _raw_env(**kwargs)


def _register() -> None:
    """Make the faces reachable by name: ``pettingzoo.make("aec", "meld8/meld8_v0")`` (PettingZoo >= 1.27),
    ``gymnasium.make("meld8_env:Meld8-v0")`` and ``gymnasium.make_vec(...)``. Skipped with
    ``MELD8_NO_REGISTER=1`` (a lighter import for tools that use only the rules core)."""
    if env_flag("MELD8_NO_REGISTER"):
        return
    try:
        from pettingzoo import register as register_aec  # the registry arrived in PettingZoo 1.27
    except ImportError:
        register_aec = None
    if register_aec is not None:
        import warnings

        with warnings.catch_warnings():  # importing twice (e.g. a reload) re-registers the same spec
            warnings.simplefilter("ignore")
            register_aec("aec", "meld8/meld8_v0", entry_point="meld8_env.aec:env")
    try:
        from gymnasium.envs.registration import register as register_gym
        from gymnasium.envs.registration import registry
    except ImportError:
        return
    if "Meld8-v0" not in registry:
        register_gym(
            id="Meld8-v0",
            entry_point="meld8_env.gym_env:Meld8SingleEnv",
            vector_entry_point="meld8_env.gym_env:Meld8VectorEnv",
        )


_register()
