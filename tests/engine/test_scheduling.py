"""The grader's threads never preempt a worker on waking, except while a judged time is measured."""

import os
import pwd
import shutil
import signal
import subprocess
import sys
import threading
from types import SimpleNamespace

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.core.calls import parse_call
from autograder.engine import Call, runner
from autograder.engine import handle as engine
from autograder.engine.scheduling import defer_to_workers, promptly
from autograder.grade.handin import shared_sandbox
from autograder.grade import pool
from autograder.grade.handin import SubmissionResult
from autograder.intake.collect import Handin
from conftest import ROOT


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
        seen.setdefault(request.function, os.sched_getscheduler(0)), call(self, request, *args))[1])
    calls = [Call.of(parse_call(text).encoded(), timed=timed) for text, timed in (("f(1)", False), ("g(2)", True))]

    def grade():
        defer_to_workers()
        return runner.run(shared_sandbox(), 0, ["def f(y):\n    return y", "g = f"], calls, [2.0] * 2, 3.0, 60.0)

    outcome = in_a_thread(grade)
    assert [c.value for c in outcome.calls] == [1, 2]
    assert seen == {"f": os.SCHED_BATCH, "g": os.SCHED_OTHER}


def test_where_the_kernel_refuses_threads_stay_as_they_were(monkeypatch):
    def refuse(*args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setscheduler", refuse)
    assert not defer_to_workers()
    with promptly():
        assert os.sched_getscheduler(0) == os.SCHED_OTHER


CHECK = ("import os; from autograder.engine.scheduling import defer_to_workers, promptly\n"
         "made = defer_to_workers(); batch = os.sched_getscheduler(0)\n"
         "with promptly():\n    prompt = os.sched_getscheduler(0)\n"
         "print(made, batch == os.SCHED_BATCH, prompt == os.SCHED_OTHER, os.sched_getscheduler(0) == os.SCHED_BATCH)")


@pytest.mark.conditions
@pytest.mark.parametrize("condition", ["ordinary-user", "no-cap-sys-admin", "sigint-ignored"])
def test_the_policy_needs_no_privilege(condition):
    """As an instructor's own user, in a container without CAP_SYS_ADMIN, or launched with SIGINT ignored."""
    if os.geteuid() != 0:
        pytest.skip("these conditions are set up from root (as CI runs)")
    command, preexec = [sys.executable, "-c", CHECK], None
    if condition == "ordinary-user":
        user = os.environ.get("AUTOGRADER_TEST_USER")
        if not user:
            pytest.skip("set AUTOGRADER_TEST_USER (.ci/run creates one)")
        entry = pwd.getpwnam(user)
        command = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups", "--"] + command
    elif condition == "no-cap-sys-admin":
        if not shutil.which("capsh"):
            pytest.skip("capsh is missing (apt-get install libcap2-bin)")
        command = ["capsh", "--drop=cap_sys_admin", "--", "-c", 'exec "$@"', "check"] + command
    else:
        def preexec():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, preexec_fn=preexec, timeout=60)
    assert done.stdout.split() == ["True"] * 4, done.stderr
