"""The grader's threads never preempt a worker on waking, except while a judged time is measured."""

import os
import threading
from types import SimpleNamespace

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from autograder.core.calls import parse_call
from autograder.engine import runner
from autograder.engine import sandbox as engine
from autograder.engine.sandbox import shared_sandbox
from autograder.engine.scheduling import defer_to_workers, promptly
from autograder.grade import pool
from autograder.grade.handin import SubmissionResult
from autograder.intake.collect import Handin


def in_a_thread(function):
    """function()'s result, from a thread of its own (a policy set there dies with it)."""
    box = []
    thread = threading.Thread(target=lambda: box.append(function()))
    thread.start()
    thread.join()
    return box[0]


def test_a_deferring_thread_is_batch_and_prompt_only_inside_promptly():
    def policies():
        assert defer_to_workers()
        seen = [os.sched_getscheduler(0)]
        with promptly():
            seen.append(os.sched_getscheduler(0))
        seen.append(os.sched_getscheduler(0))
        return seen

    assert in_a_thread(policies) == [os.SCHED_BATCH, os.SCHED_OTHER, os.SCHED_BATCH]
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # other threads are left as they were
    with promptly():  # an ordinary thread stays ordinary, and is not made batch after
        assert os.sched_getscheduler(0) == os.SCHED_OTHER
    assert os.sched_getscheduler(0) == os.SCHED_OTHER


def test_every_thread_of_a_class_run_grades_as_batch(tmp_path, monkeypatch):
    seen = []

    def fake_grade(assignment, expected, student, path, *args, **kwargs):
        seen.append(os.sched_getscheduler(0))
        return SubmissionResult(student, "a", str(path), 5.0, 5.0, "graded")

    monkeypatch.setattr(pool, "grade", fake_grade)
    handins = []
    for number in range(6):
        path = tmp_path / f"s{number}.ipynb"
        nbformat.write(new_notebook(cells=[new_code_cell("x = 1")]), path)
        handins.append(Handin(f"s{number}", path.name, path, None))
    results = list(pool.grade_all(SimpleNamespace(id="a", max_score=5.0), {}, handins, None, 2, None))
    assert [result.status for _, result in results] == ["graded"] * 6
    assert seen == [os.SCHED_BATCH] * 6


def test_a_judged_time_is_measured_by_a_thread_that_wakes_at_once(monkeypatch):
    """A speed case's answer is read as it comes, even in a batch thread; the others are read batch."""
    seen = {}
    call = engine.Worker.call
    monkeypatch.setattr(engine.Worker, "call", lambda self, request, *args: (
        seen.setdefault(request["function"], os.sched_getscheduler(0)), call(self, request, *args))[1])
    calls = [{**parse_call(text).encoded(), "repeat": 1, "timed": timed}
             for text, timed in (("f(1)", False), ("g(2)", True))]

    def grade():
        defer_to_workers()
        return runner.run(shared_sandbox(), 0, ["def f(y):\n    return y", "g = f"], calls, [2.0] * 2, 3.0, 60.0)

    outcome = in_a_thread(grade)
    assert [c.value for c in outcome.calls] == [1, 2]
    assert seen == {"f": os.SCHED_BATCH, "g": os.SCHED_OTHER}
