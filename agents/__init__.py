"""Agents that play Meld8 through one protocol (``act``, ``act_batch``, ``name``).

Bots and the policy adapter are built on the engine; see the project issues for the roadmap.
"""
