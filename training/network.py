"""Compatibility name: the policy networks moved to ``agents.networks`` (checkpoints pickled before the
move name this module)."""

from agents.networks import *  # noqa: F403
from agents.networks import CardFeatureExtractor, Meld8Policy, Meld8Trunk  # noqa: F401 - pickled class paths
