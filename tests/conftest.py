"""Shared fixtures: every hand test runs on both backends (C and the pure-Python twin)."""

from __future__ import annotations

import pytest

import meld8_env.hands as hands


@pytest.fixture(params=["c", "python"])
def backend(request):
    """Run the test once per evaluator backend; restores the previous one afterwards."""
    previous = hands.BACKEND
    hands.set_backend(request.param)
    yield request.param
    hands.set_backend(previous)
