"""Compatibility name: the policy networks moved to ``agents.networks`` (checkpoints pickled before the
move name these classes by this module)."""

from agents.networks import CardFeatureExtractor, Meld8Policy, Meld8Trunk, policy_for

__all__ = ["CardFeatureExtractor", "Meld8Policy", "Meld8Trunk", "policy_for"]
