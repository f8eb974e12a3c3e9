"""The sandboxed runner against code that misbehaves."""

import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest


from autograder.engine import Call, Limits, Sandbox, runner
from autograder.core.calls import parse_call
from autograder.engine.handle import CaseCrashed
from conftest import ROOT
from autograder.grade.handin import shared_sandbox


def run(cells, *calls, timeout=2.0, cell_timeout=3.0, budget=60.0, sandbox=None):
    encoded = [Call.of(parse_call(c).encoded()) for c in calls]
    return runner.run(sandbox or shared_sandbox(), 0, cells, encoded, [timeout] * len(encoded),
                      cell_timeout, budget)


def test_values_come_back_plain():
    outcome = run(["import numpy as np\ndef f(x):\n    return np.int64(len(x)), (1, 2)"], "f([1, 2, 3])")
    assert outcome.calls[0].status == "ok"
    assert outcome.calls[0].value == [3, [1, 2]]


def test_ipython_semantics_magics_shell_lines_and_display():
    cells = ["%time x = 1", "!true", "from IPython.display import display\ndisplay('hi')\nx + 1",
             "def f():\n    return x"]
    outcome = run(cells, "f()")
    assert outcome.cell_errors == []
    assert outcome.calls[0].value == 1


def test_failing_cells_do_not_stop_the_notebook():
    outcome = run(["1 / 0", "def f():\n    return 'still here'", "undefined_name"], "f()")
    assert [i for i, _ in outcome.cell_errors] == [0, 2]
    assert "ZeroDivisionError" in outcome.cell_errors[0][1]
    assert outcome.calls[0].value == "still here"


def test_printing_and_stdin_do_not_matter():
    cells = ["import sys\nprint('x' * 100000)\nprint('noise', file=sys.stderr)",
             "try:\n    input('name? ')\nexcept EOFError:\n    pass",
             "def f():\n    print('chatty')\n    return 5"]
    outcome = run(cells, "f()")
    assert outcome.calls[0].value == 5


def test_an_infinite_loop_is_interrupted_and_grading_goes_on():
    cells = ["def slow():\n    while True:\n        pass", "def fast():\n    return 1"]
    outcome = run(cells, "slow()", "fast()", timeout=0.5)
    assert [c.status for c in outcome.calls] == ["timeout", "ok"]
    assert outcome.calls[0].message.startswith("no result within 0.5 s")
    # Where it was when the limit struck, in the student's own code.
    assert "in slow" in outcome.calls[0].traceback and "while True" in outcome.calls[0].traceback
    assert "worker.py" not in outcome.calls[0].traceback
    assert (outcome.restarts, outcome.runners) == (0, 0)  # interrupted, the worker itself went on


def test_limits_count_cpu_time_not_waiting():
    cells = ["import time\ndef snooze():\n    time.sleep(0.8)\n    return 1"]
    outcome = run(cells, "snooze()", timeout=0.5)
    assert outcome.calls[0].status == "ok"


def test_a_crashing_case_costs_one_re_run_of_the_cells_then_a_fork_and_never_other_cases():
    cells = ["import os\ndef gone():\n    os._exit(3)\ndef fine():\n    return 1"]
    outcome = run(cells, "gone()", "fine()", "gone()", "fine()", "gone()", "fine()")
    assert [c.status for c in outcome.calls] == ["crashed", "ok"] * 3
    assert "exited with code 3" in outcome.calls[0].message
    # The first crash killed the worker (the calls ran in it): the cells ran again, once;
    # every later case got a runner forked from the post-cells state.
    assert (outcome.restarts, outcome.runners) == (1, 3)


@pytest.mark.slow
def test_the_re_run_after_a_first_crash_is_not_charged_to_the_hand_in():
    cells = ["import os, time\ndef gone():\n    os._exit(3)\ndef nap():\n    time.sleep(0.3)\n    return 1",
             "started = time.process_time()\nwhile time.process_time() - started < 0.4:\n    pass"]
    # Charged: the cells once (0.4 s) and three naps (0.9 s), within 1.6 s; the cells' second
    # run (another 0.4 s) would have left the last nap without time.
    outcome = run(cells, "gone()", "nap()", "nap()", "nap()", budget=1.6)
    assert [c.status for c in outcome.calls] == ["crashed", "ok", "ok", "ok"]
    assert outcome.restarts == 1 and outcome.cell_errors == []  # the second run got the first's limits


@pytest.mark.slow
def test_limits_hold_when_the_grader_inherited_an_ignored_interrupt():
    # As under `nohup` or `cmd &`: the zygote and its workers inherit SIGINT ignored.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with Sandbox() as sandbox:
            outcome = run(["import time\ndef nap():\n    time.sleep(100)\ndef fine():\n    return 1"],
                          "nap()", "fine()", timeout=0.3, sandbox=sandbox)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert [c.status for c in outcome.calls] == ["timeout", "ok"]
    # Interrupted, not killed: its worker lived on, and its frames were kept.
    assert "time.sleep(100)" in outcome.calls[0].traceback
    assert (outcome.restarts, outcome.runners) == (0, 0)


def test_code_that_ignores_interrupts_is_stopped_and_costs_no_other_case():
    cells = ["import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)",
             "def stubborn():\n    for s in (signal.SIGINT, signal.SIGPROF):\n        signal.signal(s, signal.SIG_IGN)\n"
             "    while True:\n        pass",
             "def fine():\n    return 2"]
    started = time.monotonic()
    outcome = run(cells, "stubborn()", "fine()", timeout=0.5)
    assert [c.status for c in outcome.calls] == ["timeout", "ok"]
    assert (outcome.restarts, outcome.runners) == (1, 1)  # a second run of the cells, then a runner
    assert time.monotonic() - started < 30


def test_a_top_level_loop_is_stopped_and_later_cells_still_run():
    outcome = run(["while True:\n    pass", "def f():\n    return 3"], "f()", cell_timeout=0.5)
    assert outcome.calls[0].value == 3
    assert outcome.cell_errors[0][0] == 0


def test_a_cell_that_kills_the_interpreter_is_skipped_on_restart():
    outcome = run(["def f():\n    return 4", "import os\nos._exit(3)", "def g():\n    return 5"],
                  "f()", "g()")
    assert [c.value for c in outcome.calls] == [4, 5]
    assert outcome.cells_skipped == [1]


def test_exiting_from_a_call_is_that_case_failing():
    cells = ["import os, sys\ndef bye():\n    sys.exit(0)\ndef gone():\n    os._exit(0)\ndef ok():\n    return 1"]
    outcome = run(cells, "bye()", "gone()", "ok()")
    assert [c.status for c in outcome.calls] == ["error", "crashed", "ok"]


@pytest.mark.slow
def test_memory_is_limited():
    cells = ["def hog():\n    return len(bytearray(4 * 1024 ** 3))"]
    with Sandbox(Limits(memory_mb=1024)) as sandbox:
        outcome = run(cells, "hog()", sandbox=sandbox)
    assert outcome.calls[0].status == "memory"
    assert "MemoryError" in outcome.calls[0].message


def test_custom_objects_come_back_opaque():
    cells = ["class Liar:\n    def __eq__(self, other):\n        return True\ndef f():\n    return Liar()"]
    outcome = run(cells, "f()")
    assert outcome.calls[0].value == {"__opaque__": "__main__.Liar"}


def test_a_hand_in_has_a_time_budget():
    cells = ["import time\ndef nap():\n    time.sleep(0.4)\n    return 1"]
    outcome = run(cells, "nap()", "nap()", "nap()", "nap()", budget=1.0)
    statuses = [c.status for c in outcome.calls]
    assert statuses[0] == "ok" and statuses[-1] == "timeout"
    assert "used up its 1 s" in outcome.calls[-1].message


def test_children_of_the_worker_die_with_it():
    # A grandchild that double-forks and leaves the process group must die too.
    code = ("import os, time\n"
            "def escape():\n"
            "    if os.fork() == 0:\n"
            "        os.setsid()\n"
            "        if os.fork() == 0:\n"
            "            while True:\n"
            "                time.sleep(0.05)\n"
            "        os._exit(0)\n"
            "    time.sleep(0.2)\n"
            "    return os.getuid()")
    sandbox = shared_sandbox()
    worker = sandbox.worker(0)
    try:
        assert worker.run_cell(code, 10)["ok"]
        assert worker.call(Call("escape", []), 10)["ok"]
        # Its user id as seen from here: inside a user namespace (an ordinary user, or root without
        # CAP_SYS_ADMIN) the worker's own os.getuid() is another number.
        uid = _uid_of(str(worker.pid))
        # In the namespaces layer the slot's next worker (a spare) may have the same user id (as an ordinary user),
        # in a PID namespace of its own: what must die is what shares the closed worker's.
        namespace = os.readlink(f"/proc/{worker.pid}/ns/pid") if sandbox.isolation == "namespaces" else None
        assert len(_processes(uid, namespace)) >= 2  # the worker and the escaped grandchild, at least
    finally:
        worker.close()
    if sandbox.isolation not in ("namespaces", "users"):
        return
    # Killed, not waited for: the worker (its namespace's PID 1) ends, then the kernel kills the rest, then the
    # zygote reaps the worker; under load that chain took longer than the 0.2 s once waited here.
    deadline = time.monotonic() + 30
    while _processes(uid, namespace) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes(uid, namespace) == []


def _processes(uid, pid_namespace=None):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if _uid_of(pid) == uid and (pid_namespace is None or os.readlink(f"/proc/{pid}/ns/pid") == pid_namespace):
                found.append(pid)
        except OSError:
            pass
    return found


def _uid_of(pid):
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except FileNotFoundError:
        return None


@pytest.mark.slow
def test_no_isolation_still_limits_time_and_cleans_up():
    # --isolation none: no protection of files, but limits and clean-up.
    cells = ["import subprocess, sys\n"
             "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
             " start_new_session=True)\n"
             "def pid():\n    return child.pid",
             "def slow():\n    while True:\n        pass"]
    with Sandbox(isolation="none") as sandbox:
        assert sandbox.isolation == "none"
        outcome = run(cells, "pid()", "slow()", timeout=0.5, sandbox=sandbox)
        assert [c.status for c in outcome.calls] == ["ok", "timeout"]
        child = outcome.calls[0].value
        # In this layer the sweep is not waited for: the zygote kills the escaped child once it sees the worker
        # dead, which under load may take more than the 0.3 s once waited here.
        deadline = time.monotonic() + 30
        while not _gone(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(child), "the escaped child survived"


def _gone(pid):
    """Ended: no such process, or a zombie (reaped or not, it runs nothing)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1].startswith("Z")
    except OSError:       # (ProcessLookupError too: reaped between open and read)
        return True


@pytest.mark.slow
def test_cells_cannot_eat_the_time_the_cases_need():
    # A top-level loop may take the cells' share of the budget, never the cases'.
    outcome = run(["while True:\n    pass", "def f():\n    return 1"], "f()", timeout=1.0, cell_timeout=10,
                  budget=4.0)
    assert outcome.cell_errors[0][0] == 0
    assert outcome.calls[0].value == 1


def test_a_loop_of_forks_is_interrupted_not_killed():
    # Time spent forking can escape the process's own CPU timer: the grader, seeing the
    # kernel's count past the limit and SIGINT still caught, interrupts it itself.
    loop = "import os\nwhile True:\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n    os.waitpid(pid, 0)"
    outcome = run([loop, "def f():\n    return 1"], "f()", cell_timeout=0.5)
    assert outcome.calls[0].value == 1
    # Interrupted, the worker kept (on a machine so loaded that the 1 s grace ran out: killed, skipped).
    assert [i for i, _ in outcome.cell_errors] == [0] or outcome.cells_skipped == [0]


def test_a_slot_whose_zygote_died_gets_a_new_one_and_grading_goes_on():
    with Sandbox() as sandbox:
        assert run(["def f():\n    return 1"], "f()", sandbox=sandbox).calls[0].value == 1
        # The slot's next worker was asked for as that one closed: its zygote answers, then dies.
        assert select.select([sandbox._slots[0].socket], [], [], 60)[0]
        zygote = os.pidfd_open(sandbox._slots[0].pid)
        os.kill(sandbox._slots[0].pid, signal.SIGKILL)
        try:     # dead for sure before the next worker is asked for (a pidfd turns readable as its process ends)
            assert select.select([zygote], [], [], 60)[0]
        finally:
            os.close(zygote)
        outcome = run(["def f():\n    return 2"], "f()", sandbox=sandbox)
        assert outcome.calls[0].value == 2
        # The worker asked for ahead died with that zygote: it is not handed over, so no cell is blamed for it.
        assert outcome.cells_skipped == [] and outcome.restarts == 0


def test_calls_queued_behind_an_interrupted_call_run_once_in_order_after_it():
    """`nap` sleeps, so the grader interrupts it.  The calls already sent behind it are dropped by the worker
    (the interrupt ends their epoch) and sent again: each runs exactly once, after it, in order."""
    cells = ["import os, signal, time\nruns = []\ndef nap():\n    runs.append('nap')\n    time.sleep(100)\n"
             "def one():\n    runs.append('one')\n    return 1\ndef order():\n    runs.append('order')\n    return runs"]
    outcome = run(cells, "nap()", "one()", "one()", "order()", timeout=0.3)
    assert [c.status for c in outcome.calls] == ["timeout", "ok", "ok", "ok"]
    assert outcome.calls[3].value == ["nap", "one", "one", "order"]


# `nap` holds the grader's interrupt off (blocked), takes it once it is pending, and returns; `late`, already sent
# behind it, is then interrupted (here by itself, as a grader's interrupt that came too late for `nap` would).
LATE_INTERRUPT = """import os, signal, time
runs = []
def nap():
    runs.append('nap')
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
    signal.sigtimedwait([signal.SIGINT], 30)
    return 0
def late():
    runs.append('late')
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.05)
    return 1
def order():
    runs.append('order')
    return runs"""


def test_a_call_a_late_interrupt_may_have_landed_in_runs_again_before_the_calls_behind_it():
    outcome = run([LATE_INTERRUPT], "nap()", "late()", "order()", "order()", timeout=0.3)
    # nap is a time-out (the grader had to interrupt it); late, which came back interrupted when that interrupt may
    # have been meant for nap, runs once more on its own before it counts as a time-out; the calls queued behind it
    # were dropped, and ran after it.
    assert [c.status for c in outcome.calls] == ["timeout", "timeout", "ok", "ok"]
    assert outcome.calls[3].value == ["nap", "late", "late", "order", "order"]


def test_each_request_is_sent_behind_the_ones_before(monkeypatch):
    """Pipelining: the cells, the first call behind the last cell, then the calls are written before the answers
    to the ones before them are read, so the worker starts each without waiting a round trip; results are
    unchanged."""
    from autograder.engine import handle as engine
    events = []
    write, wait = engine.Worker._write_line, engine.Worker._await
    monkeypatch.setattr(engine.Worker, "_write_line", lambda self, line: (
        events.append(json.loads(line)["op"]), write(self, line))[1])
    monkeypatch.setattr(engine.Worker, "_await", lambda self, *args: (events.append("answer"),
                                                                       wait(self, *args))[1])
    outcome = run(["x = 1", "x += 1", "def f(y):\n    return x + y"], "f(1)", "f(2)", "f(3)")
    assert [c.value for c in outcome.calls] == [3, 4, 5] and outcome.cell_errors == []
    assert events == ["cell", "cell", "cell", "call", "answer", "answer", "answer",
                      "call", "call", "answer", "answer", "answer"]


@pytest.mark.slow
def test_requests_sent_ahead_stay_under_a_page_so_a_busy_worker_never_blocks_the_grader():
    """A case's input can be large.  What is written ahead, unanswered, stays under 4 KiB (a pipe holds at least a
    page), and a larger request is written only when nothing is queued before it: a worker that will not stop
    (`spin` catches every interrupt) reads nothing, and the grader must not wait on a full pipe behind it."""
    big = "[" + ", ".join(["1"] * 10_000) + "]"  # 30 KB: three of them would not fit in a 64 KiB pipe
    cells = ["def f(x):\n    return len(x)\ndef spin(x):\n    while True:\n        try:\n            while True:\n"
             "                pass\n        except BaseException:\n            pass"]

    def stuck(signum, frame):
        raise AssertionError("the grader blocked writing to a worker that reads nothing")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(120)
    try:
        outcome = run(cells, f"spin({big})", f"f({big})", f"f({big})", f"f({big})", timeout=0.3)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert [c.status for c in outcome.calls] == ["timeout", "ok", "ok", "ok"]
    assert [c.value for c in outcome.calls[1:]] == [10_000] * 3


def test_a_cell_sent_ahead_of_one_that_is_stopped_runs_once_and_in_order():
    """Behind a cell stopped at its limit (a loop: its own timer; a sleep: the grader's interrupt, which may land
    in the cell already sent behind it), the next cell still runs exactly once, after it."""
    for stuck in ("while True:\n    pass", "import time\ntime.sleep(100)"):
        cells = ["log = []", f"log.append('a')\n{stuck}", "log.append('b')", "def f():\n    return log"]
        outcome = run(cells, "f()", cell_timeout=0.3)
        assert outcome.calls[0].value == ["a", "b"], stuck
        assert outcome.cells_stopped == [1] and [i for i, _ in outcome.cell_errors] == [1]


ORPHAN = ("import os, time\n"
          "def orphan_parent():\n"
          "    read, write = os.pipe()\n"
          "    if os.fork() == 0:\n"
          "        os.setsid()\n"
          "        if os.fork() == 0:\n"
          "            time.sleep(0.2)  # its parent is gone by now: whose child is it?\n"
          "            os.write(write, str(os.getppid()).encode())\n"
          "            os._exit(0)\n"
          "        os._exit(0)\n"
          "    return int(os.read(read, 32)), os.getpid()")


@pytest.mark.slow
def test_a_hand_ins_orphans_stay_its_workers_so_a_late_sweep_never_takes_them():
    """Outside the namespaces layer the zygote hands the slot's next worker over before it sweeps what the last
    hand-in left (which means waiting for that worker to die): what the sweep takes is the zygote's children.  A
    running hand-in's orphans must therefore never become the zygote's: its worker is their subreaper."""
    for layer in ("none", "landlock"):
        try:
            sandbox = Sandbox(isolation=layer)
        except Exception as error:  # noqa: BLE001 - no Landlock on this kernel
            assert layer == "landlock", error
            continue
        with sandbox:
            outcome = run([ORPHAN], "orphan_parent()", sandbox=sandbox)
            parent, worker = outcome.calls[0].value
            assert parent == worker, layer


@pytest.mark.slow
def test_a_slots_next_worker_is_asked_for_as_its_last_one_closes():
    """The zygote hands the next worker over while the grader scores the hand-in before it.  A worker asked for
    ahead and not yet taken must not confuse a question asked meanwhile, and must not outlive the sandbox."""
    before = len(os.listdir("/proc/self/fd"))
    with Sandbox(isolation="none") as sandbox:
        first = sandbox.worker(0)
        assert first.run_cell("pass", 5)["ok"]
        first.close()
        assert sandbox._slots[0].asked is not None  # asked for, its answer not read yet
        second = sandbox.worker(0)
        assert second.run_cell("x = 1", 5)["ok"]
        # Two live workers of one slot: the first to close asks ahead; the second asks how it ended.
        third = sandbox.worker(0)
        second.close()
        third.close(want_status=True)
        assert third.exit_status == -signal.SIGKILL
        ready = sandbox._slots[0].ready  # its answer was read before `third`'s questions
        fourth = sandbox.worker(0)  # the one asked for when `second` closed
        assert fourth is ready and fourth.pid not in (first.pid, second.pid, third.pid)
        assert fourth.run_cell("y = 2", 5)["ok"]
        # A worker read ahead and never used is let go with its slot's link, live no more.
        fifth = sandbox.worker(0)
        fourth.close()
        fifth.close(want_status=True)
        unused = sandbox._slots[0].ready
        sandbox._drop_link(0)
        assert unused.pid not in sandbox._live
    assert len(os.listdir("/proc/self/fd")) == before  # nothing asked for ahead is left open


def test_a_cell_that_ends_the_process_is_the_one_skipped_even_when_the_grader_lags(monkeypatch):
    """Cells are sent ahead, so the worker may run into a cell that ends it before the grader has read the answers
    to the ones before: the grader, failing to write more behind them, must still skip the cell that ended it, not
    the one it was asking about.  (A slow grader is simulated: each answer is read a moment late.)"""
    from autograder.engine import handle as engine
    wait = engine.Worker._await
    monkeypatch.setattr(engine.Worker, "_await", lambda self, *args: (time.sleep(0.05), wait(self, *args))[1])
    cells = ["x = 1", "def f():\n    return x", "import os\nos._exit(0)"] + [f"y{i} = {i}" for i in range(20)] + \
        ["def g():\n    return y19"]
    outcome = run(cells, "f()", "g()")
    assert outcome.cells_skipped == [2]
    assert [c.value for c in outcome.calls] == [1, 19]


@pytest.mark.slow
def test_a_close_that_cannot_ask_ahead_still_closes_and_the_next_worker_comes(monkeypatch):
    """Asking for the next worker as one closes is an optimisation: with no pipe to be had at that moment (a
    process out of file descriptors), the close still ends the worker and the next worker() asks itself."""
    from autograder.engine import handle as engine
    with Sandbox(isolation="none") as sandbox:
        worker = sandbox.worker(0)
        pipe = os.pipe

        def no_pipe():
            raise OSError(24, "Too many open files")

        monkeypatch.setattr(engine.os, "pipe", no_pipe)
        worker.close()
        monkeypatch.setattr(engine.os, "pipe", pipe)
        assert sandbox._slots[0].asked is None
        assert run(["def f():\n    return 3"], "f()", sandbox=sandbox).calls[0].value == 3


def test_the_kernels_counts_are_read_from_the_process_not_from_its_number():
    """The grader keeps the watched worker's /proc files open (read twice per request): once that process is
    gone the counts are unknown, never those of whatever took its number next."""
    from autograder.engine.watch import Counts
    child = os.fork()
    if child == 0:
        time.sleep(30)
        os._exit(0)
    counts = Counts(child)
    try:
        usage = counts.read(child)
        assert usage.cpu >= 0 and list(usage.waits) and min(usage.waits.values()) >= 0
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    try:
        assert counts.read(child) is None
        assert counts.read(child) is None     # (never opened again, whatever took its number)
    finally:
        counts.close()


def _counts_files_open():
    names = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            names.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue
    return sum(name.endswith("/schedstat") for name in names)


def test_a_worker_keeps_only_its_own_and_its_live_runners_counts_open():
    """Each case runner that crashed and was replaced gives up its counts file; closing the worker gives up
    the rest, so a class of hand-ins never runs the grader out of file descriptors."""
    before = _counts_files_open()
    outcome = run(["import os\ndef gone():\n    os._exit(3)\ndef fine():\n    return 1"],
                  *["gone()", "fine()"] * 6)
    assert [c.status for c in outcome.calls] == ["crashed", "ok"] * 6 and outcome.runners == 6
    assert _counts_files_open() == before
    worker = shared_sandbox().worker(0)
    try:
        worker.run_cell("import os\ndef gone():\n    os._exit(3)\ndef fine():\n    return 1", 2.0)
        for _ in range(4):
            with pytest.raises(CaseCrashed):  # the runner is gone; the worker lives on
                worker.call(Call.of(parse_call("gone()").encoded()), 2.0, fork_runners=True)
            assert worker.call(Call.of(parse_call("fine()").encoded()), 2.0, fork_runners=True)["value"] == 1
            assert _counts_files_open() - before <= 2  # the worker's and its live runner's
    finally:
        worker.close()
    assert _counts_files_open() == before


def test_a_call_whose_time_is_judged_is_sent_alone_even_when_timed_once(monkeypatch):
    """A speed case (compare = "faster_than") without `repeat` is timed once, and its time is judged: sent ahead,
    the worker could start it before the grader's clock does, and a slow answer would look fast.  It is written
    only once every answer before it has been read, and nothing goes behind it."""
    from autograder.engine import handle as engine
    events = []
    write, wait = engine.Worker._write_line, engine.Worker._await
    monkeypatch.setattr(engine.Worker, "_write_line", lambda self, line: (
        events.append(json.loads(line).get("function", "cell")), write(self, line))[1])
    monkeypatch.setattr(engine.Worker, "_await", lambda self, *args: (events.append("answer"),
                                                                       wait(self, *args))[1])
    calls = [Call.of(parse_call(text).encoded(), timed=timed)
             for text, timed in (("f(1)", False), ("g(2)", True), ("f(3)", False))]
    outcome = runner.run(shared_sandbox(), 0, ["def f(y):\n    return y", "g = f"], calls, [2.0] * 3, 3.0, 60.0)
    assert [c.value for c in outcome.calls] == [1, 2, 3]
    timed = events.index("g")
    assert events[:timed].count("answer") == 3 and events[timed + 1] == "answer"


# What a hand-in could find of the grader's requests in its own process: the worker's queue and read buffer
# (through gc, as the red team did), and every request dict still alive.  Returned as text.
QUEUE_READER = '''
import gc, json

def _held():
    found = []
    for thing in gc.get_objects():
        if type(thing).__name__ == "_Channel":
            found.append(bytes(thing._buffer).decode(errors="replace"))
            found += [json.dumps(request) for request in thing._waiting]
        elif type(thing) is dict and thing.get("op") in ("call", "cell"):
            found.append(json.dumps(thing))
    return "\\n".join(found)

def peek(x):
    return _held()
'''


def _sealed_calls(*texts_and_sealed):
    return [Call.of(parse_call(text).encoded(), sealed=sealed) for text, sealed in texts_and_sealed]


def test_no_sealed_call_is_in_the_worker_while_an_open_call_or_another_sealed_one_runs():
    """Issue 32, item 1: requests went up to 16 ahead, hidden ones behind public ones, so a public case could read
    the hidden calls queued in its worker (through gc) and raise them in a message its feedback shows.  A sealed
    call (a hidden case) is written only on its turn, with nothing before it unanswered and nothing behind it."""
    calls = _sealed_calls(("peek(1)", False), ("peek(2)", False), ("peek('SEALED-1')", True),
                          ("peek('SEALED-2')", True), ("peek('SEALED-3')", True))
    outcome = runner.run(shared_sandbox(), 0, [QUEUE_READER], calls, [2.0] * len(calls), 3.0, 60.0)
    assert [c.status for c in outcome.calls] == ["ok"] * 5
    seen = [c.value for c in outcome.calls]
    assert "SEALED" not in seen[0] + seen[1]
    assert "SEALED-2" not in seen[2] and "SEALED-3" not in seen[2] + seen[3]
    assert "SEALED-1" in seen[2]            # (the probe does see the request it is answering)


def test_no_sealed_call_is_sent_behind_the_last_cell():
    """A cell's error message is shown too: with only sealed calls left, none goes behind the last cell."""
    calls = _sealed_calls(("peek('SEALED-1')", True), ("peek('SEALED-2')", True))
    outcome = runner.run(shared_sandbox(), 0, [QUEUE_READER, "raise ValueError(_held())"], calls, [2.0] * 2,
                         3.0, 60.0)
    assert [index for index, _ in outcome.cell_errors] == [1]
    assert "SEALED" not in outcome.cell_errors[0][1]


def test_a_sealed_call_never_comes_before_an_open_one():
    """A hand-in that keeps the inputs it is called with could hand a sealed one back in a later open call's
    value or message: the engine refuses that order, whoever builds the calls."""
    calls = _sealed_calls(("peek('SEALED-1')", True), ("peek(1)", False))
    with pytest.raises(ValueError, match="sealed"):
        runner.run(shared_sandbox(), 0, [QUEUE_READER], calls, [2.0] * 2, 3.0, 60.0)


def test_a_hand_ins_files_that_cannot_be_put_beside_it_are_the_graders_failure_never_a_score():
    """Issue 32, item 3: a classmate whose code lives in a helper module scored 0.0 as `graded` when the grader
    could not put the module in a folder the hand-in before had wrecked.  Nothing of a hand-in has run when its
    files are put: a failure there is the grader's (SandboxError: graded again in a fresh slot, or a
    `grader-error` row), never a score without the files."""
    from autograder.engine import SandboxError
    with pytest.raises(SandboxError, match="files could not be put beside it"):
        runner.run(shared_sandbox(), 0, ["import helper"], [Call.of(parse_call("f(1)").encoded())], [2.0], 3.0, 60.0,
                   files={"x" * 300 + ".py": b"def f(x):\n    return x\n"})     # a name no file system takes


@pytest.mark.slow
def test_a_slot_that_cannot_be_cleaned_is_replaced_and_the_next_hand_in_is_not_charged():
    """A folder its slot's zygote cannot remove (made immutable here, as nothing a hand-in may do could make it):
    once the zygote has failed to remove it, it hands over no other worker; the slot gets a new zygote, with user
    ids and folders of its own, and the hand-ins after it are graded as ever.  The folder stayed hidden meanwhile.
    (CI once saw a third worker from the old zygote: asked for ahead as the second closed, before the zygote had
    tried the removal.  The test waited for the removal after closing the second; it now waits before.)"""
    import shutil
    import subprocess
    from autograder.engine import isolation
    if os.geteuid() != 0 or not shutil.which("chattr") or isolation.landlock_abi() < 1:
        pytest.skip("needs root (chattr +i) and Landlock")
    import tempfile
    from pathlib import Path
    workdir = Path(tempfile.mkdtemp(prefix="autograder-unclean-"))
    workdir.chmod(0o755)   # (a worker's user id must reach its folder: pytest's own is root's alone)
    with Sandbox(isolation="landlock", workdir=workdir) as sandbox:
        first = sandbox.worker(0)
        reply = first.run_cell("open('stuck', 'w').write('x')\nopen('removable', 'w').write('x')", 5)
        assert reply["ok"], reply
        stuck = sandbox.folder / "home" / first.home / "stuck"
        hidden = sandbox.folder / "home" / ".ended" / first.home
        subprocess.run(["chattr", "+i", str(stuck)], check=True)
        zygote = _parent_of(first.pid)
        try:
            first.close()
            second = sandbox.worker(0)   # asked for ahead as the first closed: handed over before any removal
            # The zygote, idle while the second runs, fails to remove the first's folder.  When it has failed
            # shows only in the folder: it makes the folder 0700 to empty it, removes the file it can, marks
            # itself unfit, and hides the folder again (mode 0).  The wait lasts while the second is live: its
            # closing asks the zygote for the next worker ahead, and a worker asked for before the zygote has
            # failed is rightly still its own (the folder it could not remove was hidden all along).
            deadline = time.monotonic() + 60
            while not (hidden.is_dir() and "removable" not in os.listdir(hidden)
                       and (hidden.stat().st_mode & 0o777) == 0):
                assert time.monotonic() < deadline, "the zygote never tried to remove the ended hand-in's folder"
                time.sleep(0.05)
            assert second.run_cell("x = 1", 5)["ok"]
            second.close()
            third = sandbox.worker(0)
            assert third.run_cell("import os\nassert not os.listdir('.')", 5)["ok"]
            assert _parent_of(third.pid) != zygote
            lane = _uid_of(third.pid) - isolation.worker_uid(sandbox.zygote.pid, 0)
            assert lane >= 2                       # not the first zygote's lanes: 0 and 1
            third.close()
            assert hidden.is_dir() and (hidden.stat().st_mode & 0o777) == 0
        finally:
            for found in (stuck, hidden / "stuck"):
                subprocess.run(["chattr", "-i", str(found)], capture_output=True)
    shutil.rmtree(workdir)


def _parent_of(pid):
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])



def test_a_repeated_call_reports_its_fastest_cpu_time_beside_the_median():
    """build judges a recorded timing by the fastest of the reference's runs (limits.timing_is_current): the
    runner must report the least CPU time of a repeated call, not the median again.  Runs of about 60 ms, 30 ms
    and nothing: the median is the 30 ms one, the fastest the last."""
    cell = ("import time\nruns = []\n"
            "def work():\n"
            "    spend = (0.06, 0.03, 0.0)[len(runs)]\n"
            "    runs.append(spend)\n"
            "    end = time.process_time() + spend\n"
            "    while time.process_time() < end:\n"
            "        pass\n"
            "    return len(runs)\n")
    outcome = runner.run(shared_sandbox(), 0, [cell], [Call.of(parse_call("work()").encoded(), repeat=3)],
                         [5.0], 5.0, 60.0)
    call = outcome.calls[0]
    assert call.status == "ok", call
    assert call.cpu_fastest is not None and call.cpu_fastest < 0.015 < 0.025 <= call.cpu_seconds, call


POOL_THAT_NEVER_ENDS = '''
import multiprocessing, os, signal

def gone():
    os._exit(3)

def _spin(x):
    while True:
        pass

def hang():
    # The runner shrugs off the interrupt, so the grader must kill it: its pool's processes are orphans then.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGPROF, signal.SIG_IGN)
    with multiprocessing.Pool(2) as pool:
        return pool.map(_spin, range(4))

def processes():
    # The hand-in's own PID namespace: /proc lists its processes only.
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())

def pooled(n):
    with multiprocessing.Pool(2) as pool:
        return sum(pool.map(abs, range(-n, n)))
'''


@pytest.mark.slow
def test_a_pool_s_processes_die_with_the_case_runner_that_started_them():
    """Issue 41: a Pool's processes belong to the case that made them.  A runner killed on its limit takes its pool
    with it (its process group), so no process of that case burns the CPU of the next one; a Pool still works
    after.  (In the namespaces layer, as here as root, /proc shows the hand-in's own processes only.)"""
    outcome = run([POOL_THAT_NEVER_ENDS], "gone()", "hang()", "processes()", "pooled(50)", timeout=1.0)
    assert [c.status for c in outcome.calls] == ["crashed", "timeout", "ok", "ok"], outcome.calls
    assert len(outcome.calls[2].value) == 2, outcome.calls[2].value     # the worker and the runner asking
    assert outcome.calls[3].value == 2500


_ON_ONE_CPU_BESIDE_A_HOG = r'''
import json, os, subprocess, sys
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # on that one CPU too: affinity is inherited
try:
    from autograder.core.calls import parse_call
    from autograder.engine import Call, Sandbox, runner
    cells = ["import time\ndef burn(s):\n    end = time.process_time() + s\n    while time.process_time() < end:\n"
             "        pass\n    return s"]
    calls = [Call.of(parse_call("burn(0.3)").encoded(), timed=timed) for timed in (True, False)]
    outcome = runner.run(Sandbox(), 0, cells, calls, [5.0, 5.0], 5.0, 60.0)
    print(json.dumps([[c.status, c.seconds] for c in outcome.calls]))
finally:
    hog.kill()
'''


def test_a_judged_time_leaves_out_the_waits_for_a_cpu_that_a_hog_causes():
    """A speed case and its baseline are timed apart: a CPU hog beside one of them must not decide the case.
    Pinned to one CPU with a hog, a call that computes for 0.3 s took 0.44 to 0.71 s of wall time (judged by wall
    time before); judged now, it takes its 0.3 s: the kernel's count of its waits for the CPU, taken outside the
    hand-in, is left out."""
    done = subprocess.run([sys.executable, "-c", _ON_ONE_CPU_BESIDE_A_HOG], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    (judged_status, judged), (plain_status, wall) = json.loads(done.stdout.strip().splitlines()[-1])
    assert judged_status == plain_status == "ok"
    assert wall > judged + 0.08  # the hog had its share of the CPU: the load is there
    assert 0.29 < judged < 0.36  # and the judged time is the call's own
