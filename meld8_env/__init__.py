"""Meld8: a reinforcement-learning environment for a 3-player mahjong-style card game.

Subpackages: ``cards`` (ids, notation), ``rules`` (rule config), ``hands`` (winning forms, waits,
distance to win; C with a pure-Python twin), ``scoring`` (yaku, han, points).
"""

from meld8_env.cards import JOKER, CardError, format_cards, parse_cards
from meld8_env.rules import RuleConfig, RuleConfigError

__version__ = "0.1.0"
__all__ = ["JOKER", "CardError", "RuleConfig", "RuleConfigError", "format_cards", "parse_cards"]


def env(**kwargs):
    """PettingZoo AEC env ``meld8_v0`` (wrapped); see ``meld8_env.aec``. Needs pettingzoo."""
    from meld8_env.aec import env as _env

    return _env(**kwargs)


def raw_env(**kwargs):
    from meld8_env.aec import raw_env as _raw_env

    return _raw_env(**kwargs)
