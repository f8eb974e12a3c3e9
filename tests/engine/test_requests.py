"""What is written to a worker, and when, decided without a process: engine/requests.py.

The queue of requests sent ahead of their turn (their numbers, epochs, cancels, the byte cap and the rule for a
request a late interrupt may have hit) and the choice of what may go ahead (never a timed or sealed call, each
only while the budget gives it its full limit) are pure; the tests that run real workers are in test_runner.py.
"""

import json

import pytest

from autograder.engine.requests import (AHEAD_BYTES, MOST_AHEAD, Call, RequestQueue, calls_ahead, cells_ahead,
                                        check_sealed_last, first_call)


def _write_all(queue):
    """Write every line the queue gives, as a Worker does: the lines, decoded."""
    written = []
    while (line := queue.next_line()) is not None:
        queue.sent(line)
        written.append(json.loads(line))
    return written


def _call(name, **needs):
    return Call(name, [1], **needs)


def test_requests_get_numbers_in_order_and_the_epoch_they_were_written_in():
    queue = RequestQueue()
    f, g, h = (_call(n).message for n in "fgh")
    assert queue.ask([(f, 1.0), (g, 1.0), (h, 2.0)]).cancel is None
    written = _write_all(queue)
    assert [(w["function"], w["id"], w["epoch"], w["limit"]) for w in written] == \
        [("f", 1, 0, 1.0), ("g", 2, 0, 1.0), ("h", 3, 0, 2.0)]
    assert queue.take() == 1 and not queue.idle
    queue.answered(False)
    # What comes next is what was sent ahead: nothing is written again.
    queue.ask([(g, 1.0), (h, 2.0)])
    assert _write_all(queue) == [] and queue.take() == 2


def test_what_was_sent_ahead_but_is_not_what_comes_next_is_cancelled_and_sent_again_in_a_new_epoch():
    queue = RequestQueue()
    f, g = _call("f").message, _call("g").message
    queue.ask([(f, 1.0), (g, 1.0)])
    _write_all(queue)
    queue.take()
    queue.answered(False)
    asking = queue.ask([(g, 0.5)])              # the budget ran short: g's limit is not the one it was sent with
    assert json.loads(asking.cancel) == {"op": "cancel", "epoch": 0}
    assert [(w["id"], w["epoch"], w["limit"]) for w in _write_all(queue)] == [(3, 1, 0.5)]
    assert not queue.idle                       # the worker may still be running what was cancelled
    number = queue.take()
    assert queue.judge(2, number) == "late" and queue.judge(3, number) == "ours" and queue.judge(9, number) == "wrong"
    assert queue.judge("3", number) == "wrong"
    queue.answered(False)
    assert queue.idle


def test_an_interrupted_answer_drops_what_was_queued_behind_it():
    queue = RequestQueue()
    f, g, h = (_call(n).message for n in "fgh")
    queue.ask([(f, 1.0), (g, 1.0), (h, 1.0)])
    _write_all(queue)
    queue.take()
    queue.answered(False)
    queue.interrupted()                         # the worker drops g and h unanswered
    assert queue.idle
    queue.ask([(g, 1.0), (h, 1.0)])
    assert [(w["function"], w["epoch"]) for w in _write_all(queue)] == [("g", 1), ("h", 1)]


def test_a_request_a_late_interrupt_may_have_hit_runs_again_alone_before_anything_goes_behind_it():
    queue = RequestQueue()
    f, g, h = (_call(n).message for n in "fgh")
    queue.ask([(f, 1.0), (g, 1.0)])
    _write_all(queue)
    queue.take()
    queue.answered(True)                        # the grader interrupted f: the interrupt may land in g
    asking = queue.ask([(g, 1.0), (h, 1.0)])
    assert asking.leaked and _write_all(queue) == []       # h waits
    queue.take()
    queue.answered(False)
    assert queue.rerun(stopped=False, interrupted=True)    # g came back interrupted: it runs again
    queue.interrupted()
    assert not queue.rerun(stopped=True, interrupted=True)  # (stopped by the grader itself: not again)


def test_what_is_written_and_unanswered_stays_under_a_page_but_the_first_may_be_larger():
    queue = RequestQueue()
    big = Call("f", ["x" * 3000]).message
    queue.ask([(big, 1.0), (big, 1.0), (_call("g").message, 1.0)])
    written = _write_all(queue)
    assert [w["function"] for w in written] == ["f"]       # a second 3 KB request would pass the cap
    assert sum(len(json.dumps(w)) + 1 for w in written) < AHEAD_BYTES
    huge = Call("f", ["x" * 10_000]).message
    fresh = RequestQueue()
    fresh.ask([(huge, 1.0)])
    assert len(_write_all(fresh)) == 1                     # alone, nothing queued before it: it is written
    assert fresh.first_unwritten is False


def test_a_sealed_or_timed_call_never_goes_ahead_and_nothing_goes_behind_it():
    calls = [_call("a"), _call("b"), _call("c", timed=True), _call("d"), _call("e", repeat=3), _call("f"),
             _call("h1", sealed=True), _call("h2", sealed=True)]
    limits = [1.0] * len(calls)
    assert [c.function for c, _ in calls_ahead(calls, limits, 0, 100.0)] == ["b"]
    assert calls_ahead(calls, limits, 2, 100.0) == []      # behind a timed call: nothing
    assert [c.function for c, _ in calls_ahead(calls, limits, 3, 100.0)] == []
    assert [c.function for c, _ in calls_ahead(calls, limits, 5, 100.0)] == []    # the next one is sealed
    assert calls_ahead(calls, limits, 6, 100.0) == []      # behind a sealed one: nothing
    assert first_call(calls, limits, 6, False, None) is None and first_call(calls, limits, 2, False, None) is None
    assert first_call(calls, limits, 0, False, None) == (calls[0], 1.0)
    assert first_call(calls, limits, 0, True, None) is None and first_call(calls, limits, 0, False, print) is None


def test_a_call_goes_ahead_only_while_the_budget_would_give_it_its_full_limit():
    calls = [_call(str(n)) for n in range(40)]
    limits = [1.0] * 40
    assert len(calls_ahead(calls, limits, 0, 3.5)) == 3    # 3.5 s after the first: three more, each its 1 s
    assert len(calls_ahead(calls, limits, 0, 1000.0)) == MOST_AHEAD


def test_cells_go_ahead_while_the_budget_keeps_the_cases_reserve_and_the_first_call_behind_the_last():
    first = (_call("f"), 12.0)
    # 90 s to spare, 10 kept for the cases: two cells of 30 s, not a third (20 s would be left).
    assert cells_ahead([1, 2, 3], spare=90.0, reserve=10.0, timeout=30.0, last=first) == ([(1, 30.0), (2, 30.0)],
                                                                                         False)
    assert cells_ahead([1, 2], spare=100.0, reserve=10.0, timeout=30.0, last=first) == ([(1, 30.0), (2, 30.0)], True)
    # 11 s left after the cell: not the call's 12 (the call's limit is not held to the cases' reserve).
    assert cells_ahead([1], spare=41.0, reserve=10.0, timeout=30.0, last=first) == ([(1, 30.0)], False)
    assert cells_ahead([], spare=12.0, reserve=10.0, timeout=30.0, last=first) == ([], True)
    assert cells_ahead(list(range(30)), spare=1e9, reserve=0.0, timeout=1.0, last=first) == \
        ([(i, 1.0) for i in range(MOST_AHEAD)], False)


def test_every_sealed_call_comes_after_every_open_one():
    check_sealed_last([_call("a"), _call("h", sealed=True)])
    with pytest.raises(ValueError, match="sealed"):
        check_sealed_last([_call("h", sealed=True), _call("a")])


def test_a_calls_message_is_the_call_alone_and_one_object():
    call = Call("f", [[0, 2]], {"k": 1}, repeat=3, timed=True, sealed=True)
    assert call.message == {"op": "call", "function": "f", "args": [[0, 2]], "kwargs": {"k": 1}}
    assert call.message is call.message and call.alone
    assert Call.of({"function": "g", "args": []}).kwargs == {}
