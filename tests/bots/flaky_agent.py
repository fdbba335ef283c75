"""An in-process agent that fails on purpose, for the browser table's fallback tests
(tests/test_web_trust.py): it plays like ``random`` for ``FlakyAgent.LIMIT`` decisions, then raises
(as a checkpoint whose first forward pass fails would)."""

import numpy as np


class FlakyAgent:
    name = "flaky"
    LIMIT = 2

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.calls = 0

    def act(self, obs, mask):
        return int(self.act_batch(np.asarray(obs)[None], np.asarray(mask)[None])[0])

    def act_batch(self, obs, masks):
        self.calls += 1
        if self.calls > self.LIMIT:
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (1x190 and 200x64)")
        return np.array([self.rng.choice(np.flatnonzero(m)) for m in masks], np.int64)
