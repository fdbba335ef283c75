"""agents.torch_threads.one_torch_thread: one torch thread inside, the caller's setting back when the last block ends,
also when blocks on several threads overlap (the web table plays each table's game on a thread of its own)."""

from __future__ import annotations

import threading

import pytest

torch = pytest.importorskip("torch")

from agents.torch_threads import one_torch_thread  # noqa: E402


def test_blocks_overlapping_on_two_threads_give_the_setting_back_once_both_end():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    a_in, b_in, a_may_leave, b_left = (threading.Event() for _ in range(4))
    seen: dict[str, int] = {}

    def a() -> None:
        with one_torch_thread():
            seen["a"] = torch.get_num_threads()
            a_in.set()
            a_may_leave.wait(10)
        seen["a after"] = torch.get_num_threads()  # b's block is still open: still one thread

    def b() -> None:
        a_in.wait(10)
        with one_torch_thread():
            seen["b"] = torch.get_num_threads()
            b_in.set()
            a_may_leave.set()
            ta.join(10)  # a leaves while b's block is open
            seen["b, a gone"] = torch.get_num_threads()
        b_left.set()

    try:
        ta, tb = threading.Thread(target=a), threading.Thread(target=b)
        ta.start()
        tb.start()
        tb.join(20)
        assert b_left.is_set()
        assert seen == {"a": 1, "b": 1, "a after": 1, "b, a gone": 1}
        assert torch.get_num_threads() == 2  # the caller's setting, back once the last block ended
        with one_torch_thread():  # and a later block starts from it again
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
