"""multiprocessing in every isolation layer (issue 41): what Colab runs works, and what a layer cannot allow says so.

In the namespaces layer each worker has a /dev/shm of its own; in users and landlock multiprocessing's semaphores
have no name (engine/semaphores.py).  Either way a Pool, a Queue, a Lock and a shared Value work with the start
method every Colab notebook uses ('fork'), and nothing of one hand-in's is left where the next could find it.
Where a layer shares the machine's /dev/shm, what needs a name there ('spawn', multiprocessing.shared_memory) is
refused in words the student reads.  A Pool's processes are its case's: their CPU time counts against the case's
limit, a child that leaves its process group included, and they die with it (engine/watch.py's Counts).  Run as
root (as CI does), each layer in-process; the ordinary user and root without CAP_SYS_ADMIN grade the Pool hand-ins
in tests/engine/test_isolation_layers.py.
"""

import ctypes
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from autograder.core.calls import parse_call
from autograder.engine import Call, handle, runner
from autograder.engine.isolation import has_cap_sys_admin
from autograder.engine.sandbox import Sandbox
from autograder.engine.semaphores import SHARED_MEMORY_REFUSED, SPAWN_REFUSED
from autograder.engine import watch
from autograder.engine.watch import OTHERS_GRACE, STALL_EXTRA, STALL_FACTOR, Counts, Usage, Watch

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _umask_kept():
    """A "users" sandbox makes what its process writes from then on private (umask 077, sandbox._make_private):
    what the tests run after these in the same process would make (an --out for another user id) must not be."""
    mask = os.umask(0o022)
    os.umask(mask)
    yield
    os.umask(mask)

NOTEBOOK = '''
import multiprocessing, os

def _square(x):
    return x * x

def pool():
    with multiprocessing.Pool() as workers:
        return sum(workers.map(_square, range(100)))

def _add(total, lock, n):
    for _ in range(n):
        with lock:
            total.value += 1

def shared():
    total, lock = multiprocessing.Value("i", 0, lock=False), multiprocessing.Lock()
    queue = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=_add, args=(total, lock, 500)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    queue.put(total.value)
    return queue.get()

def leave_a_file():
    with open("/dev/shm/left-by-" + TOKEN, "w") as handle:
        handle.write("x")
    return True

def spawned():
    return multiprocessing.get_context("spawn").Lock() is not None

def named():
    from multiprocessing import shared_memory
    block = shared_memory.SharedMemory(create=True, size=64)
    block.close()
    block.unlink()
    return True
'''


_FOLDERS = []


@pytest.fixture(autouse=True, scope="module")
def _sandbox_folders_removed():
    """The sandbox folders below are made in /tmp, not pytest's folder (root's alone), and removed after the module:
    every run of it left six to eleven empty ones behind."""
    yield
    while _FOLDERS:
        shutil.rmtree(_FOLDERS.pop(), ignore_errors=True)


def _sandbox_folder():
    folder = tempfile.mkdtemp(prefix="autograder-mp-")
    os.chmod(folder, 0o755)      # a worker's own user id must reach the sandbox's folder
    _FOLDERS.append(folder)
    return folder


def _run(layer, token, *calls):
    folder = _sandbox_folder()
    with Sandbox(workdir=folder, isolation=layer) as sandbox:
        encoded = [Call.of(parse_call(call).encoded()) for call in calls]
        return runner.run(sandbox, 0, [f"TOKEN = {token!r}", NOTEBOOK], encoded, [10.0] * len(calls), 20, 120)


@pytest.mark.skipif(os.geteuid() != 0, reason="the users layer, and landlock with a user id per slot, need root")
@pytest.mark.parametrize("layer", ["namespaces", "users", "landlock"])
def test_a_pool_a_queue_a_lock_and_a_shared_value_work_and_what_needs_a_name_says_why(layer, tmp_path):
    token = tmp_path.name
    outcome = _run(layer, token, "pool()", "shared()", "leave_a_file()", "spawned()", "named()")
    if any("cannot read Python's own files" in (c.message or "") for c in outcome.calls):
        pytest.skip("Python is installed where other users cannot read it (.ci/run makes it readable)")
    pool, shared, left, spawned, named = outcome.calls
    assert (pool.status, pool.value) == ("ok", 328350), pool
    assert (shared.status, shared.value) == ("ok", 1000), shared
    assert not os.path.exists(f"/dev/shm/left-by-{token}")     # never the machine's /dev/shm
    if layer == "namespaces":
        # Its own /dev/shm, as in Colab: named semaphores and shared memory work, and end with the hand-in.
        assert left.status == "ok" and spawned.status == "ok" and named.status == "ok", (left, spawned, named)
    else:
        assert left.status == "error"
        assert spawned.status == "error" and SPAWN_REFUSED in spawned.message, spawned
        assert named.status == "error" and SHARED_MEMORY_REFUSED in named.message, named


# Processes that compute a known CPU time, whatever the machine's load: the judge is CPU time, not the wall clock.
BURNERS = '''
import ctypes, multiprocessing, os, platform, signal, time

def _burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return seconds

def burst(seconds):
    # Two processes compute `seconds` each while this one waits for both: twice that in all.
    with multiprocessing.Pool(2) as pool:
        return sum(pool.map(_burn, [seconds, seconds]))

def gone():
    os._exit(3)

def escape(seconds):
    # A child that leaves its process group computes while this one waits for it.
    child = os.fork()
    if child == 0:
        os.setsid()
        _burn(seconds)
        os._exit(0)
    os.waitpid(child, 0)
    return seconds

def stubborn_escape(seconds):
    for number in (signal.SIGINT, signal.SIGPROF):
        signal.signal(number, signal.SIG_IGN)
    return escape(seconds)

def sibling():
    # clone(CLONE_PARENT | SIGCHLD): a child of this process's parent, outside its tree.
    libc = ctypes.CDLL(None, use_errno=True)
    pid = libc.syscall({"x86_64": 56, "aarch64": 220}[platform.machine()], 0x8000 | 17, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    return os.strerror(ctypes.get_errno()) if pid < 0 else "made"
'''


def _sandbox(layer):
    return Sandbox(workdir=_sandbox_folder(), isolation=layer)


@pytest.mark.skipif(os.geteuid() != 0, reason="the users layer, and landlock with a user id per slot, need root")
@pytest.mark.parametrize("layer", ["namespaces", "users", "landlock"])
def test_a_pool_past_its_case_limit_is_stopped_by_its_cpu_time_in_every_layer(layer):
    """A Pool's processes are counted with the case that started them: two of them computing 0.75 s each under a
    1 s limit time out (before, the case passed: the process that started them used no CPU while it waited), in
    the worker itself and in a case runner; a pool within its limit passes, before and after."""
    calls = ["burst(0.05)", "burst(0.75)", "burst(0.05)", "gone()", "burst(0.75)", "burst(0.05)"]
    with _sandbox(layer) as sandbox:
        outcome = runner.run(sandbox, 0, [BURNERS], [Call.of(parse_call(c).encoded()) for c in calls],
                             [1.0] * len(calls), 20, 120)
    assert [c.status for c in outcome.calls] == ["ok", "timeout", "ok", "crashed", "timeout", "ok"], \
        (outcome.cell_errors, outcome.calls)
    assert all(c.message == "no result within 1 s (time limit, counted in CPU time)"
               for c in outcome.calls if c.status == "timeout"), outcome.calls
    assert outcome.calls[-1].value == 0.1


@pytest.mark.skipif(os.geteuid() != 0, reason="the users layer, and landlock with a user id per slot, need root")
@pytest.mark.parametrize("layer", ["namespaces", "users", "landlock"])
def test_a_child_that_leaves_its_process_group_is_counted_and_dies_with_its_case(layer):
    """setsid() takes a process out of its process group, not out of its worker's tree (the worker is its
    subreaper): its CPU time is the case's, and when the case is stopped it is killed, in the worker itself and
    in a case runner that shrugs off its interrupt (killed, with its group; the child is not in that group).  The
    one call that would make a process outside the tree, clone(CLONE_PARENT), is refused (seccomp.py)."""
    with _sandbox(layer) as sandbox:
        worker = _worker_with_burners(sandbox)      # it answers its calls itself (the first call says so)
        try:
            reply = worker.call(Call.of(parse_call("escape(3)").encoded()), 1.0)
            assert reply["timed_out"] and reply["cpu_seconds"] > 1.0, reply
            assert Counts(worker.pid).members() == {}       # the worker alone is left running
            # A grader slow to look (a loaded machine) finds the child there already: still the call's.
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(handle, "Watch", _late(worker.pid))
                reply = worker.call(Call.of(parse_call("escape(3)").encoded()), 1.0)
            assert reply["timed_out"], reply
            assert Counts(worker.pid).members() == {}
        finally:
            worker.close()
        worker = _worker_with_burners(sandbox)      # each call in a runner of its own, as after a worker died
        try:
            reply = worker.call(Call.of(parse_call("stubborn_escape(30)").encoded()), 1.0, fork_runners=True)
            assert reply["timed_out"], reply
            assert Counts(worker.pid).members() == {}
            reply = worker.call(Call.of(parse_call("sibling()").encoded()), 1.0, fork_runners=True)
            assert reply["value"] == os.strerror(13), reply
            assert worker.call(Call.of(parse_call("burst(0.05)").encoded()), 1.0, fork_runners=True)["value"] == 0.1
        finally:
            worker.close()


class _Scripted:
    """A clock and the kernel's counts of a worker (pid 10, doing the request) and its child (pid 11), moved by
    the test: what a loaded machine does to them, without the load."""
    def __init__(self):
        self.clock, self.doer_cpu, self.child_cpu, self.doer_waited = 100.0, 0.0, 0.0, 0.0

    def usage(self):
        return Usage(self.doer_cpu + self.child_cpu, {(10, 1, 10): self.doer_waited, (11, 2, 11): 0.0}, self.doer_cpu)

    def run(self, seconds, doer_cpu=0.0, doer_waited=0.0, child_cpu=0.0):
        self.clock += seconds
        self.doer_cpu += doer_cpu
        self.doer_waited += doer_waited
        self.child_cpu += child_cpu


def test_an_interrupted_worker_waiting_for_a_cpu_is_not_killed_for_what_its_child_computes(monkeypatch):
    """After its interrupt, a worker has 0.1 s to answer, not counting its waits for a CPU.  Its child (its own
    session: a scheduling group of its own) may compute on the other core meanwhile: that ended the grace once
    it used 0.1 CPU-s, and a worker that would have answered was killed (the test above failed beside two
    hogs).  The doer's other processes now get ten graces of CPU; the doer's own running or sleeping still
    ends it after one."""
    grace = handle.INTERRUPT_GRACE
    for shrugs_off in (False, True):
        state = _Scripted()
        monkeypatch.setattr(watch.time, "monotonic", lambda: state.clock)
        watched = Watch(state.usage, limit=1.0, doer=10)
        state.run(1.2, child_cpu=1.2)            # the child computed past the limit; the worker waits for it
        assert watched.verdict() == "over"
        watched.interrupted()
        # Waiting its turn on a loaded core, the worker runs its handler; the child computes on the other core.
        state.run(0.5, doer_cpu=0.01, doer_waited=0.49, child_cpu=0.5)
        assert not watched.answer_overdue(grace)
        if shrugs_off:      # it runs on, or sleeps, without answering: one grace of its own time
            state.run(grace, doer_cpu=grace / 2)
            assert watched.answer_overdue(grace)
        else:               # the child computes on and the worker never gets a CPU: a bounded cost
            state.run(grace * OTHERS_GRACE, doer_waited=grace * OTHERS_GRACE, child_cpu=grace * OTHERS_GRACE)
            assert watched.answer_overdue(grace)


def _late(worker):
    """A Watch that first waits until the worker has started a process, as a grader descheduled between writing
    a request and looking at the worker would find it."""
    class Late(Watch):
        def __init__(self, *args, **kwargs):
            deadline = time.monotonic() + 30
            while not Counts(worker).members():
                assert time.monotonic() < deadline, "the call started no process"
                time.sleep(0.001)
            super().__init__(*args, **kwargs)
    return Late


def _worker_with_burners(sandbox):
    worker = sandbox.worker(0)
    reply = worker.run_cell(BURNERS, 20)
    assert reply["ok"], reply
    return worker


@pytest.mark.skipif(os.geteuid() != 0, reason="hogs that take priority over the grader (nice -10) need root")
def test_an_honest_pool_is_not_stopped_for_the_machines_load():
    """A stress test: two CPU hogs that take priority over the grader share the one CPU its sandbox runs on, so a
    Pool's processes spend most of their time waiting for it while the process that started them sleeps.  The
    backstop subtracts every process's waits (watch.Watch): a pool that computes 0.2 s in all under a 0.5 s limit
    passes, however long it waits (before, it was stopped as stalled once twice its limit plus 1 s had gone by).
    Each hog has a session of its own: where the kernel groups a session's processes to share the CPU fairly
    between sessions (autogroup), a session's niceness is its group's, which is set too."""
    limit = 0.5
    mask = os.sched_getaffinity(0)
    cpu = max(mask)
    os.sched_setaffinity(0, {cpu})
    try:
        sandbox = _sandbox("auto")     # its processes, and all they start, run on that one CPU
    finally:
        os.sched_setaffinity(0, mask)

    def pinned_and_first():
        os.setsid()
        # Killed with this process however it ends: a pytest stopped outright once left two such hogs, at nice
        # -10, taking a CPU from everything on the machine for an hour and more.
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)     # PR_SET_PDEATHSIG
        os.sched_setaffinity(0, {cpu})
        os.nice(-10)
        if os.path.exists("/proc/self/autogroup"):
            # Without CAP_SYS_ADMIN the kernel takes one such change per 0.1 s, machine-wide (EAGAIN before).
            deadline = time.monotonic() + 10
            while True:
                try:
                    with open("/proc/self/autogroup", "w") as autogroup:
                        autogroup.write("-10")
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.01)

    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=pinned_and_first)
            for _ in range(2)]
    try:
        with sandbox:
            calls = [Call.of(parse_call("burst(0.1)").encoded()) for _ in range(2)]
            outcome = runner.run(sandbox, 0, [BURNERS], calls, [limit] * 2, 20, 120)
    finally:
        for hog in hogs:
            hog.send_signal(signal.SIGKILL)
            hog.wait()
    assert [(c.status, c.value) for c in outcome.calls] == [("ok", 0.2)] * 2, outcome.calls
    # What makes this a test of the backstop: the pool did wait for longer than a stall is allowed.
    assert max(c.seconds for c in outcome.calls) > limit * STALL_FACTOR + STALL_EXTRA, outcome.calls


@pytest.mark.skipif(os.geteuid() != 0 or not has_cap_sys_admin(),
                    reason="the namespaces layer with a user id per slot needs root with CAP_SYS_ADMIN")
def test_a_namespaces_worker_reaches_python_whatever_the_graders_umask():
    """The folders on the way to Python in a worker's new root (the pyenv's /root/.pyenv/versions, the folders
    above a virtual environment) are made by the zygote, under the grader's umask: 077 once a "users" sandbox
    or a private course set it.  They were then root's alone, and the worker (a user id of its slot) could not
    import what the zygote had not preloaded: `import multiprocessing` failed, and with it every Pool above."""
    cell = ("import os, sysconfig\n"
            "for path in (sysconfig.get_paths()['stdlib'], sysconfig.get_paths()['purelib']):\n"
            "    assert os.listdir(path), path\n"
            "import multiprocessing")
    mask = os.umask(0o077)
    try:
        with _sandbox("namespaces") as sandbox:
            worker = sandbox.worker(0)
            try:
                reply = worker.run_cell(cell, 20)
            finally:
                worker.close()
    finally:
        os.umask(mask)
    assert reply["ok"], reply
