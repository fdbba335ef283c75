"""Meld8: a reinforcement-learning environment for a 3-player mahjong-style card game.

Subpackages: ``cards`` (ids, notation), ``rules`` (rule config), ``hands`` (winning forms, waits,
distance to win; C with a pure-Python twin), ``scoring`` (yaku, han, points).
"""

from meld8_env.cards import JOKER, CardError, format_cards, parse_cards
from meld8_env.rules import RuleConfig, RuleConfigError

__version__ = "0.1.0"
__all__ = ["JOKER", "CardError", "RuleConfig", "RuleConfigError", "format_cards", "parse_cards"]
