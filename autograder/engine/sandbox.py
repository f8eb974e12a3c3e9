"""The grader's side of the sandbox: a zygote process and the workers it forks.

`Sandbox` starts the zygote (zygote.py) from a private temporary folder that
holds only the four files the sandbox needs, so nothing of the grader is
importable there.  `Sandbox.worker(slot)` asks it for a fresh worker; a
`Worker` sends requests over two pipes and enforces the time limits from
this side.  Killing a worker kills everything it started.
"""

import atexit
import collections
import functools
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from . import replies
from .isolation import LAYERS, python_paths, remove_tree
from ..core.errors import AutograderError

_HERE = Path(__file__).parent
# What the zygote's private folder holds: the engine's sandboxed half and the
# comparison rules it converts replies with (autograder/runtime.py).
SANDBOX_FILES = (_HERE / "zygote.py", _HERE / "isolation.py", _HERE / "cgroups.py", _HERE / "worker.py",
                 _HERE.parent / "runtime.py")
DEFAULT_PRELOAD = ("numpy", "sympy", "sympy.utilities.iterables")
_INTERRUPT_GRACE = 0.1  # seconds a sleeping or blocked worker gets to answer after an interrupt


class SandboxError(AutograderError):
    """The sandbox itself could not be started: the grader cannot work."""


def no_layer_message(wanted, refused):
    """One line: why no layer hides the course here, what would, and how to grade anyway."""
    why = "; ".join(f"{layer}: {reason}" for layer, reason in refused.items())
    if wanted != "auto":
        return f"the {wanted!r} isolation layer does not work here ({why})"
    return (f"no isolation layer can hide the course from student code here ({why}). Enable unprivileged "
            "user namespaces (sysctl kernel.unprivileged_userns_clone=1, or "
            "kernel.apparmor_restrict_unprivileged_userns=0) for 'namespaces', or run as root for 'users'; "
            "to grade anyway, unprotected, pass --isolation none")


def _make_private(workdir, sandbox_folder, protect, trees=(), needed=()):
    """The "users" layer hides the grader's files by their permissions.

    Everything the grader writes from now on is private (umask 077); what it
    already keeps (the output folder's contents, the hand-ins, every `protect`
    path) loses every permission for other users.  Each of `trees` (the course
    folder) is made private whole, but for the way to what a worker must reach
    (`needed`: Python when it sits inside the course, the sandbox's folder when
    --out does), whose folders stay traversable, never listable.  Returns
    {path: its mode before} of what it changed.
    """
    os.umask(0o077)
    changed = {}
    needed = [Path(os.path.realpath(n)) for n in (*needed, sandbox_folder)]
    targets = list(protect)
    if workdir is not None:
        workdir = Path(workdir).resolve()
        _chmod(workdir, 0o711, changed)
        targets += [entry for entry in workdir.iterdir() if entry.resolve() != sandbox_folder]
    for tree in trees:
        _private_tree(Path(os.path.realpath(tree)), needed, changed)
    for path in targets:
        path = Path(path)
        if path.exists() and not path.is_symlink():
            _chmod(path, path.stat().st_mode & 0o700, changed)
    return changed


def _private_tree(folder, needed, changed):
    """`folder` private to its owner, but for the way down to each of `needed` (see _make_private)."""
    on_the_way = [n for n in needed if folder == n or folder in n.parents]
    if not on_the_way:
        _chmod(folder, folder.stat().st_mode & 0o700, changed)
        return
    if folder in on_the_way:
        return                               # Python itself, or the sandbox: as they are
    _chmod(folder, (folder.stat().st_mode & 0o700) | 0o011, changed)
    for entry in folder.iterdir():
        if not entry.is_symlink():
            _private_tree(entry, needed, changed)


def _chmod(path, mode, changed):
    old = path.stat().st_mode & 0o7777
    if old & 0o777 != mode:
        path.chmod(mode)
        changed.setdefault(str(path), old)


@dataclass
class _Link:
    socket: socket.socket
    lock: threading.Lock  # one request and its answer at a time
    pid: int              # the slot's zygote
    # The slot's next worker, asked for when the last one closed (see Sandbox._ask_ahead): the grader's
    # ends of its pipes while the zygote's answer is unread, or None.
    asked: tuple | None = None
    ready: "Worker | None" = None  # an asked-for worker whose answer had to be read before another's


_STOP_WAIT = 15.0  # seconds the zygotes get to kill and sweep every worker at the end


class WorkerTimeout(Exception):
    """The worker did not answer in time and did not yield to an interrupt."""


class WorkerDied(Exception):
    """The worker process ended (crash, os._exit, a limit, ...)."""


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 2048       # address space of each process
    processes: int = 64         # processes of one hand-in at once
    file_mb: int = 64           # largest file it may write
    disk_mb: int = 128          # its whole writable file system (namespaces layer)
    cpu_seconds: int = 600      # CPU time of the worker process, a backstop to the wall-clock limits
    max_reply_bytes: int = 64 * 1024 * 1024


class Sandbox:
    def __init__(self, limits=Limits(), preload=DEFAULT_PRELOAD, workdir=None, isolation="auto", protect=(),
                 protect_trees=()):
        """`workdir`: where the sandbox keeps its private folder (default: the system's temp).

        `isolation`: "auto" uses the strongest layer that works here (see
        isolation.py); a layer's name forces that one, and fails if it cannot
        work.  "none" must be asked for by name.  `protect`: the grader's
        files and folders that the "users" layer must make unreadable to
        other user ids (the course's hidden parts, the hand-ins).
        """
        if isolation != "auto" and isolation not in LAYERS:
            raise SandboxError(f"unknown isolation layer {isolation!r} (one of: auto, {', '.join(LAYERS)})")
        self.limits = limits
        self.folder = Path(tempfile.mkdtemp(prefix="autograder-sandbox-", dir=workdir)).resolve()
        for path in SANDBOX_FILES:
            shutil.copy(path, self.folder / path.name)
        self._lock = threading.Lock()
        self._live = {}  # pid -> slot
        self._slots = {}  # slot -> _Link to that slot's zygote
        self._closing = False  # close() has begun: no new worker (a hand-in still running may not start one)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._control = ours
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
               "HOME": str(self.folder), "IPYTHONDIR": str(self.folder / ".ipython"), "PYTHONHASHSEED": "0",
               **{k: v for k, v in os.environ.items() if k in ("AUTOGRADER_LANDLOCK", "AUTOGRADER_SECCOMP")},
               # Inherited by every worker: lets a test find a hand-in's processes.
               "AUTOGRADER_SANDBOX": str(self.folder)}
        # Its own session: a kill of the grader's process group (Ctrl-C, kill -9 -PGID)
        # leaves the zygote alive just long enough to see its socket close and
        # kill every worker; the workers themselves die with the zygote.
        self.zygote = subprocess.Popen(
            [sys.executable, "-I", "-B", str(self.folder / "zygote.py"), str(theirs.fileno()),
             json.dumps(list(preload)), isolation],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, cwd=self.folder, env=env, start_new_session=True)
        theirs.close()
        ready = self._receive(self._control, timeout=120)
        if not ready.get("ready"):
            self.close()
            raise SandboxError("the sandbox did not start")
        self.isolation = ready["isolation"]
        self.refused = ready.get("refused", {})  # {layer: why it does not work here}
        self.lacks = ready.get("lacks", [])      # what the layer chosen cannot hold on this machine
        self.cpu_groups = ready.get("cpu_groups", False)  # each slot's CPU share held by a cgroup
        if self.isolation is None:
            self.close()
            raise SandboxError(no_layer_message(isolation, self.refused))
        # What the "users" layer made private, with each path's mode before (a benchmark puts them back).
        self.previous_modes = _make_private(workdir, self.folder, protect, protect_trees, python_paths()) \
            if self.isolation == "users" else {}
        self.protected = list(self.previous_modes)
        atexit.register(self.close)

    def worker(self, slot):
        """A fresh worker for grading slot `slot` (0 .. jobs-1).

        A slot whose zygote has died (it never runs student code, but the kernel
        may still refuse it a fork, or kill it) gets a new one, once per call.
        """
        if self._closing:   # Ctrl-C: the hand-in that was running must end, not start over in a new worker
            raise SandboxError("the sandbox is closing")
        try:
            return self._spawn(slot)
        except SandboxError:
            if self.zygote.poll() is not None:
                raise  # the first zygote is gone too: nothing can make a slot
            self._drop_link(slot)
            return self._spawn(slot)

    def _spawn(self, slot):
        link = self._link(slot)
        with link.lock:
            if (link.asked or link.ready) and not _alive(link.pid):
                # Its workers died with it (PR_SET_PDEATHSIG): the one asked for ahead is no use.
                self._forget_ahead(link)
                raise SandboxError(f"slot {slot}'s zygote has ended")
            if link.ready is not None:
                worker, link.ready = link.ready, None
                return worker
            if link.asked is None:
                self._ask_for_worker(link, slot)
            return self._asked_worker(link, slot)

    def _ask_for_worker(self, link, slot):
        """Send the slot's zygote a request for a worker; its answer is read by _asked_worker."""
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        message = {"op": "spawn", "slot": slot, "limits": asdict(self.limits)}
        try:
            socket.send_fds(link.socket, [json.dumps(message).encode()], [request_read, reply_write])
        except OSError as error:
            os.close(request_write)
            os.close(reply_read)
            raise SandboxError(f"slot {slot}'s zygote stopped answering ({error})") from None
        finally:
            os.close(request_read)
            os.close(reply_write)
        link.asked = (request_write, reply_read)

    def _asked_worker(self, link, slot):
        """The worker the slot's zygote was asked for (link.lock held)."""
        (request_write, reply_read), link.asked = link.asked, None
        try:
            reply = self._receive(link.socket)
            pid, home = reply.get("pid"), reply.get("home")
            if type(pid) is not int:
                raise SandboxError(f"slot {slot}'s zygote could not start a worker ({reply.get('error')})")
            if home is not None and not (type(home) is str and re.fullmatch(rf"slot-{slot}-\d+-\d+", home)):
                raise SandboxError(f"slot {slot}'s zygote named a folder that is not the slot's ({home!r:.60})")
            with self._lock:
                self._live[pid] = slot
        except BaseException:
            os.close(request_write)
            os.close(reply_read)
            raise
        return Worker(self, pid, slot, request_write, reply_read, home)

    def _ask_ahead(self, link, slot):
        """Ask for the slot's next worker now, as its last one closes (link.lock held), and read the answer
        when that worker is wanted: the zygote hands it over while the grader scores the hand-in before,
        instead of while the grader waits (waking the zygote alone costs up to a millisecond here).

        The zygote serves its requests in order, so the sweep of the hand-in before comes first.  A worker
        asked for and never used is one of the slot's live workers, ended with the sandbox."""
        if link.asked is None and link.ready is None and not self._closing:
            try:
                self._ask_for_worker(link, slot)
            except (SandboxError, OSError):
                pass  # the zygote is gone, or no pipe is to be had now: the next worker() tries again

    def _settle(self, link, slot):
        """Read the answer to a worker asked for ahead before any other request on the link (link.lock held):
        that worker is kept, live, for the next worker() of the slot."""
        if link.asked is not None:
            try:
                worker = self._asked_worker(link, slot)
            except SandboxError:
                return
            link.ready = worker

    def _forget_ahead(self, link):
        """Let go of a worker asked for ahead and never used: the grader's ends of its pipes, and its place
        among the live workers (its zygote, ending or gone, ends it)."""
        fds = list(link.asked or ())
        if link.ready is not None:
            fds += [link.ready._requests, link.ready._replies]
            with self._lock:
                self._live.pop(link.ready.pid, None)
        link.asked = link.ready = None
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass

    def renew(self, slot):
        """Give slot `slot` a new zygote, with user ids and folders of its own, for its next worker: after a
        hand-in the grader failed on, which is graded again there (grade/pool.py)."""
        self._drop_link(slot)

    def _drop_link(self, slot):
        """Forget a slot's zygote; the next worker of the slot comes from a new one."""
        with self._lock:
            link = self._slots.pop(slot, None)
        if link is not None:
            self._forget_ahead(link)
            link.socket.close()  # a zygote still alive sees end-of-file and ends its workers

    def _link(self, slot):
        """The socket to slot `slot`'s own zygote, which the first zygote forks on first use."""
        with self._lock:
            link = self._slots.get(slot)
            if link is None:
                ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                try:
                    socket.send_fds(self._control, [json.dumps({"op": "slot", "slot": slot}).encode()],
                                    [theirs.fileno()])
                    pid = self._receive(self._control)["pid"]
                finally:
                    theirs.close()
                link = self._slots[slot] = _Link(ours, threading.Lock(), pid)
            return link

    def _ended(self, worker, want_status):
        """Kill a worker's leftovers; learn how it ended when that is wanted (it costs a wait)."""
        with self._lock:
            self._live.pop(worker.pid, None)
            keep = [pid for pid, slot in self._live.items() if slot == worker.slot]
        link = self._slots[worker.slot]
        with link.lock:
            if want_status:
                self._settle(link, worker.slot)  # the answers to come must be to the questions below
            # In the namespaces layer the kernel ended every process of the hand-in
            # with its worker (PID 1 of their namespace): there is nothing to sweep.
            if self.isolation != "namespaces":
                sweep = {"op": "sweep", "slot": worker.slot, "keep": keep, "dead": worker.pid}
                if want_status:
                    try:
                        self._ask(link.socket, sweep)
                    except (OSError, SandboxError):
                        pass  # as below
                else:
                    # Unanswered: the grader goes on (scores, the gradebook) while the slot's zygote sweeps.
                    # Where that means waiting for the worker to die (1-3 ms), the zygote hands the slot's
                    # next worker over first, and sweeps before it makes another (zygote._wait_for_request).
                    try:
                        link.socket.send(json.dumps({**sweep, "answer": False}).encode())
                    except OSError:
                        pass  # the zygote is gone, and its workers with it; the next worker() makes a new one
            status = None
            if want_status:
                try:
                    status = self._ask(link.socket, {"op": "exit-status", "pid": worker.pid})["status"]
                except (OSError, SandboxError):
                    pass  # the slot's zygote is gone, and the worker with it; the next worker() makes a new one
            self._ask_ahead(link, worker.slot)
            return status

    def _ask(self, channel, message):
        channel.send(json.dumps(message).encode())
        return self._receive(channel)

    def _receive(self, channel, timeout=60):
        channel.settimeout(timeout)
        try:
            data = channel.recv(1 << 16)
        except (TimeoutError, OSError) as error:
            raise SandboxError(f"the sandbox stopped answering ({error})") from None
        if not data:
            code = self.zygote.poll()
            raise SandboxError(f"the sandbox process ended (exit code {code})")
        return json.loads(data)

    def close(self):
        # Each slot's zygote kills and sweeps its workers, then the first zygote
        # waits for them and removes the CPU groups.
        self._closing = True
        for link in self._slots.values():
            try:
                link.socket.send(json.dumps({"op": "stop"}).encode())
            except OSError:
                pass
        if self.zygote.poll() is None:
            try:
                self._control.send(json.dumps({"op": "stop"}).encode())
                self.zygote.wait(_STOP_WAIT)
            except (OSError, subprocess.TimeoutExpired):
                self.zygote.kill()
                self.zygote.wait()
        for link in self._slots.values():
            self._forget_ahead(link)
            link.socket.close()
        self._slots.clear()
        self._control.close()
        remove_tree(str(self.folder))   # (whatever a hand-in left in its folder, if a zygote could not remove it)
        atexit.unregister(self.close)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Worker:
    """The grader's end of one worker: cells run in it, cases in a runner it forks.

    Replies are untrusted (see replies.py).  Limits are CPU seconds, judged by
    the worker's own CPU timer and, from here, by the kernel's count of the
    process's CPU time; a wall-clock backstop stops what uses no CPU (sleeping,
    blocked) without counting the time it waited for a CPU, so a busy machine
    cannot make honest code time out.
    """

    def __init__(self, sandbox, pid, slot, requests_fd, replies_fd, home=None):
        self.sandbox, self.pid, self.slot = sandbox, pid, slot
        self._requests = requests_fd
        self._lines = replies.Lines(replies_fd, sandbox.limits.max_reply_bytes)
        self._replies = replies_fd
        self._sequence = 0
        # Requests sent before their turn (see call's `ahead`), in order: (number, (message, limit), bytes).
        self._queue = collections.deque()
        self._queued_bytes = 0
        self._call_requests = {}  # id(call) -> (call, its request): built once per call, not once per exchange
        self._epoch = 0  # requests carry it; the worker drops queued ones of an epoch cancelled (worker._Channel)
        self._interrupted_last = False  # the grader interrupted the last request it waited for
        # A cancel was written and no answer read since: the worker may still be running what was cancelled.
        self._unsettled = False
        self.runner = None  # pid of the live case runner, as seen from here (checked to be our child)
        self._runner_fd = None  # a pidfd for it: liveness and signals without a pid race
        self.runners_started = 0
        # False: calls run in the worker itself, saving a fork and its first-touch page
        # copies (about 10 ms) for the hand-ins that never crash; a call that kills
        # the worker then costs one re-run of the cells (runner.py), after which
        # every case of that hand-in gets a runner of its own.
        self.fork_runners = False
        self.forgiven = 0.0  # of `charged`, the seconds not charged to the hand-in (see runner.py)
        self.exit_status = None
        self._closed = False
        # Seconds of the hand-in's budget its requests used: wall time minus the
        # time its processes waited for a CPU, so a busy machine costs it nothing.
        self.charged = 0.0
        self._last_cpu = None  # CPU seconds the last request used, as the kernel counted them
        self._counts = _Counts(pid)  # the kernel's counts of the worker's (and its runner's) time
        # Outside the namespaces layer (whose tmpfs has its own size), the worker's folder lies on the
        # grader's disk, where only RLIMIT_FSIZE (one file) would hold it: its whole size is watched.
        # (`home`: which of its slot's two folders it has; see zygote._make_spare.)
        self.home = home
        self._folder = None if sandbox.isolation == "namespaces" or home is None else sandbox.folder / "home" / home

    def run_cell(self, code, limit, ahead=()):
        """Run one cell in the worker; its reply (checked), with "timed_out" when it was stopped.

        `ahead`: [(what runs next, as cell_request or call_request makes it, its limit), ...], sent
        right behind this one (see call).
        Raises WorkerTimeout when it would not stop, WorkerDied when it ended or misbehaved.
        """
        reply, timed_out = self._worker_request(cell_request(code), limit,
                                                "no answer within the time limit, even after an interrupt", ahead)
        reply["timed_out"] = timed_out or reply["interrupted"]
        return reply

    def put_files(self, files, limit=5.0):
        """Put {name: bytes} in the worker's folder, before its cells: the hand-in's helper modules.

        Raises WorkerDied or WorkerTimeout as run_cell does; returns the checked reply.
        """
        message = {"op": "files", "files": [[name, data.decode("latin-1")] for name, data in files.items()]}
        reply, _ = self._worker_request(message, limit, "no answer while putting the hand-in's files in place")
        return reply

    def _worker_request(self, message, limit, no_answer, ahead=()):
        """A request the worker itself answers with a cell's reply: (checked reply, whether it was stopped).
        Any failure ends the worker (WorkerDied, or WorkerTimeout with `no_answer`)."""
        try:
            reply, timed_out = self._exchange(message, limit, self.pid, "cell", ahead)
        except replies.BadReply as error:
            self.close()
            raise WorkerDied(str(error)) from None
        if reply is None:
            self.close()
            raise WorkerTimeout(no_answer)
        return reply, timed_out

    def call(self, call, limit, ahead=()):
        """Run one encoded call in the case runner (forking one if needed), or in the worker.

        Returns the checked reply, with "timed_out" and "cpu_seconds".  Raises
        CaseCrashed when the call's runner died or answered badly (the worker is
        still fine), WorkerDied when the worker itself must be replaced.
        `ahead`: [(a call that comes next, its limit), ...] in order, sent right behind this one
        when the worker answers calls itself, so each starts the moment the one before it is
        answered instead of a round trip later.
        """
        if self.runner not in (None, self.pid) and not _alive(self.runner, self._runner_fd):
            self._stop_runner()  # it ended after its last answer: that costs no case
        if self.runner is None:
            if self.fork_runners:
                self._start_runner()
            else:
                self.runner = self.pid
        runner = self.runner
        if runner != self.pid:
            ahead = ()  # a runner that crashes would leave the next call for the worker to run: one at a time
        if call.get("sealed") is True and (ahead or self._queue or self._unsettled):
            # (runner.sealed: never written beside another request; the runner never asks it.)
            raise RuntimeError("a sealed call would have shared its worker with another request")
        try:
            reply, timed_out = self._exchange(self._call_request(call), limit, runner, "call",
                                              ahead=[(self._call_request(c), t) for c, t in ahead])
        except _RunnerEnded as ended:
            raise CaseCrashed(f"the Python process running it stopped: {_how_it_ended(ended.status)}") from None
        except replies.BadReply as error:
            if runner == self.pid:
                self.close()
                raise WorkerDied(f"it sent back something that is not an answer: {error}") from None
            self._stop_runner()
            raise CaseCrashed(f"the Python process running it sent back something that is not an answer: "
                              f"{error}") from None
        if reply is None:
            if runner == self.pid:
                self.close()
                raise WorkerTimeout("no answer within the time limit, even after an interrupt")
            self._stop_runner()
            return {"ok": False, "timed_out": True, "error": "", "traceback": "", "seconds": 0.0,
                    "cpu_seconds": limit}
        used = self._last_cpu
        if used is not None and used > limit + _cpu_tolerance(limit):
            timed_out = True  # it outran its limit but its CPU timer did not stop it: judged from here
        reply["timed_out"] = timed_out or bool(reply.get("interrupted"))
        reply["cpu_seconds"] = used
        return reply

    def _call_request(self, call):
        # The same request object each time it is asked for: comparing what was sent ahead with what
        # comes next is then mostly an identity check (the call itself is kept, so its id is never reused).
        known = self._call_requests.get(id(call))
        if known is None or known[0] is not call:
            known = self._call_requests[id(call)] = (call, call_request(call))
        return known[1]

    def _start_runner(self):
        try:
            reply, _ = self._exchange({"op": "runner"}, _RUNNER_START, self.pid, "runner")
        except (replies.BadReply, _RunnerEnded) as error:
            self.close()
            raise WorkerDied(f"it did not start a case runner ({error})") from None
        if reply is not None and reply["pid"] == 0:  # it could not fork: it answers calls itself
            self.runner = self.pid
            return
        pid = reply and _child_of(self.pid, reply["pid"])
        handle = _pidfd(pid) if pid else None
        if not pid or (handle is not None and _child_of(self.pid, reply["pid"]) != pid):
            if handle is not None:
                os.close(handle)
            self.close()
            raise WorkerDied("it did not start a case runner")
        self.runner, self._runner_fd = pid, handle
        self.runners_started += 1

    def _stop_runner(self):
        """Kill the case runner; the worker must then say it ended, or it is replaced."""
        runner, self.runner = self.runner, None
        handle, self._runner_fd = self._runner_fd, None
        if runner is None:
            return
        _kill(runner, signal.SIGKILL, handle)
        if handle is not None:
            os.close(handle)
        deadline = time.monotonic() + _RUNNER_START
        while True:
            try:
                line = self._lines.next(max(0.0, deadline - time.monotonic()))
                if line is None:
                    break
                message = replies.parse(line) if line.strip() else {}
                if "event" in message and replies.check("event", message)["event"] == "runner-ended":
                    return
            except replies.ChannelClosed:
                break
            except replies.BadReply:
                continue  # what the runner left half-written, or a late answer: not what we wait for
        self.close()
        raise WorkerDied("it did not notice its case runner end")

    def _exchange(self, message, limit, pid, kind, ahead=()):
        """Send a request; return (checked reply or None if it never came, whether it was stopped).

        `pid` is the process doing the work, watched for CPU time.  `ahead`: [(a request that comes
        next, its limit), ...], written right behind this one (see call).  Raises BadReply,
        _RunnerEnded (its runner ended instead of answering) and WorkerDied (the worker ended).
        """
        wanted = [(message, limit)] + (list(ahead) if pid == self.pid else [])
        if len(self._queue) > len(wanted) or any(queued != want for (_, queued, _), want in zip(self._queue, wanted)):
            # What was sent ahead is not what comes next (the budget ran short, say): the worker drops
            # whatever of it has not started, and late answers are skipped by their numbers.
            self._cancel()
        # After an interrupt that may have landed in the request sent ahead, that request may run again:
        # nothing more goes behind it until its answer says.
        leaked = bool(self._queue) and self._interrupted_last
        for following in wanted[len(self._queue):1 if leaked else None]:
            if not self._send(following, first=not self._queue):
                break
        number, _, size = self._queue.popleft()
        self._queued_bytes -= size
        # A cell is also held to its limit in wall time (less time waiting for a CPU), as a
        # top-level loop of forks spends it in the kernel, where the CPU timer sees little.
        waited = _Watch(functools.partial(self._counts.read, pid), limit,
                        stall_after=limit if kind == "cell" else None)
        try:
            reply, stopped = self._await(number, kind, pid, waited)
        finally:
            self._last_cpu, charge = waited.end()
            # A request is charged at most its limit: what it took the grader to notice and stop an
            # overrun is the grader's time, never the hand-in's budget.
            self.charged += min(charge, limit)
        if reply is not None and reply.get("interrupted"):
            # The worker drops what was sent behind an interrupted request (worker._Channel).
            self._forget_queue()
            self._epoch += 1
        if leaked and not stopped and reply is not None and reply.get("interrupted"):
            # The interrupt the grader sent its predecessor may have landed in this request, which the
            # worker had already begun: it runs again, on its own.
            return self._exchange(message, limit, pid, kind)
        return reply, stopped

    def _send(self, following, first):
        """Write one request, (message, limit), queued until its answer is awaited; False when it must wait
        its turn.

        Requests written and not yet answered are kept under _AHEAD_BYTES, so a write never blocks on a
        full pipe while the worker is busy (a worker that will not stop would block the grader too);
        only the first, which a waiting worker reads at once, may be larger."""
        number = self._sequence + 1
        message, limit = following
        line = (json.dumps({**message, "limit": limit, "id": number, "epoch": self._epoch}) + "\n").encode()
        if not first and self._queued_bytes + len(line) > _AHEAD_BYTES:
            return False
        try:
            self._write_line(line)
        except OSError:
            if first:
                raise WorkerDied(self._death()) from None
            # The worker has ended, in a request already queued: awaiting that one says so, and says
            # which request it was (a cell that ends the process is skipped, not the one asked for now).
            return False
        self._sequence = number
        self._queue.append((number, following, len(line)))
        self._queued_bytes += len(line)
        return True

    def _cancel(self):
        if self._queue:
            try:
                self._write_line((json.dumps({"op": "cancel", "epoch": self._epoch}) + "\n").encode())
            except OSError:
                pass  # the worker has ended: nothing it was sent runs
            self._forget_queue()
            self._epoch += 1
            self._unsettled = True

    def _forget_queue(self):
        self._queue.clear()
        self._queued_bytes = 0

    def _write_line(self, line):
        _write_all(self._requests, line)

    def _await(self, number, kind, pid, waited):
        interrupted_at = None
        while True:
            try:
                line = self._lines.next(waited.next_check())
            except replies.ChannelClosed:
                raise WorkerDied(self._death()) from None
            if line is None:
                self._check_disk()
                if interrupted_at is not None:
                    if time.monotonic() - interrupted_at >= _INTERRUPT_GRACE:
                        return None, True
                    continue
                verdict = waited.verdict()
                if verdict == "evading":
                    # Its own CPU timer interrupted it at the limit and it did not answer: it caught the
                    # interrupt, or is deep in C code or a recursion it cannot unwind quickly.  No second
                    # chance: it is killed now, and the time it took is the grader's, not the hand-in's.
                    return None, True
                if verdict == "stalled":
                    # Sleeping or blocked (no CPU, so its timer never fires): an interrupt, then a moment.
                    _kill(pid, signal.SIGINT, self._runner_fd if pid == self.runner else None)
                    interrupted_at = time.monotonic()
                    waited.grace(_INTERRUPT_GRACE)
                continue
            if not line.strip():
                continue
            reply = replies.parse(line)
            if "event" in reply and kind == "call":
                event = replies.check("event", reply)
                if event["event"] == "runner-ended":
                    self.runner = None
                    raise _RunnerEnded(event["status"])
                raise replies.BadReply(f"it sent an unknown event {event['event'][:40]!r}")
            if type(reply.get("id")) is int and reply["id"] < number:
                continue  # the late answer to a request already given up on
            if reply.get("id") != number:
                raise replies.BadReply("it wrote something other than the answer to the grader's request")
            self._interrupted_last = interrupted_at is not None
            self._unsettled = False  # it answers in order: what was cancelled before this is over
            return replies.check(kind, reply), interrupted_at is not None

    def _check_disk(self):
        """Stop a worker whose folder outgrew Limits.disk_mb (or holds more files than a notebook makes, or a
        folder the grader cannot look into: what is not measured is not allowed)."""
        if self._folder is None:
            return
        size, count, hidden = folder_usage(self._folder, _MAX_FILES)
        if hidden:
            self.close()
            raise WorkerDied("it made a folder in its own that the grader cannot look into, so what it holds "
                             "cannot be measured")
        if size > self.sandbox.limits.disk_mb * 1024 * 1024 or count > _MAX_FILES:
            self.close()
            raise WorkerDied(f"it wrote more than {self.sandbox.limits.disk_mb} MB (or {_MAX_FILES} files) into "
                             "its folder")

    def _death(self):
        self.close(want_status=True)
        return _how_it_ended(self.exit_status)

    def close(self, want_status=False):
        """Kill the worker and everything it started; idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            _kill(self.pid, signal.SIGKILL)
        if self.runner not in (None, self.pid):  # in its own process group, if student code moved it
            _kill(self.runner, signal.SIGKILL, self._runner_fd)
        if self._runner_fd is not None:
            os.close(self._runner_fd)
        for fd in (self._requests, self._replies):
            os.close(fd)
        self._counts.close()
        self.exit_status = self.sandbox._ended(self, want_status)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class CaseCrashed(Exception):
    """The case's runner died or answered badly; the worker can fork another."""


class _RunnerEnded(Exception):
    def __init__(self, status):
        super().__init__(_how_it_ended(status))
        self.status = status


_RUNNER_START = 5.0      # seconds a worker gets to fork a runner, or to report its end
_AHEAD_BYTES = 4096      # requests written and not yet answered (a pipe holds at least a page)
_STALL_FACTOR = 2.0      # a limit's wall-clock backstop: this many times the limit ...
_STALL_EXTRA = 1.0       # ... plus this, not counting time spent waiting for a CPU
_POLL = 0.25             # how often a long call's CPU time is looked at, while far from its limit
_CLOSE_POLL = 0.005      # and how often once it could be past it


def cell_request(code):
    return {"op": "cell", "code": code}


def call_request(call):
    """What the worker is sent for a call: the call alone (how the grader times or seals it is the grader's)."""
    return {"op": "call", "function": call["function"], "args": call["args"], "kwargs": call["kwargs"]}


def _cpu_tolerance(limit):
    """How far past its limit a process may be seen before we stop it ourselves: its own CPU timer fires at
    the limit, and an honest process answers within milliseconds of it."""
    return 0.03 + 0.02 * limit


class _Watch:
    """When to check on a process doing a request, and what its CPU time says.

    "evading": it used more CPU than its limit allows, so its own timer did not stop it.
    "stalled": it used no CPU for the backstop's time (sleeping, blocked, waiting
    on a child), counting wall time minus the time it waited for a CPU.

    The kernel's counts are read when the request starts (one small read), so an
    overrun is seen within a few milliseconds of its limit plus tolerance: the
    first check comes at the limit, and later ones every few milliseconds.
    """

    def __init__(self, usage, limit, stall_after=None):
        """`usage()`: the process's (CPU seconds, seconds spent waiting for a CPU), or (None, None)."""
        self.usage, self.limit = usage, limit
        self.started = time.monotonic()
        self.first = usage()  # (CPU, queued seconds) when it started
        self.used = 0.0           # CPU seconds at the last check
        self.backstop = stall_after if stall_after is not None else limit * _STALL_FACTOR + _STALL_EXTRA
        self.extra = 0.0

    def next_check(self):
        """Seconds until the next look: not before it could have used its limit, then often."""
        due = self.limit + _cpu_tolerance(self.limit) - self.used
        return min(_POLL, max(_CLOSE_POLL, due))

    def grace(self, seconds):
        self.extra += seconds

    def _counts(self):
        """(wall seconds, CPU seconds used, wall seconds not spent waiting for a CPU) so far."""
        elapsed = time.monotonic() - self.started
        cpu, queued = self.usage()
        cpu0, queued0 = self.first
        if cpu is None or cpu0 is None:
            return elapsed, None, elapsed
        self.used = cpu - cpu0
        return elapsed, self.used, elapsed - (queued - queued0)

    def verdict(self):
        elapsed, used, not_waiting = self._counts()
        if used is not None and used > self.limit + _cpu_tolerance(self.limit):
            return "evading"
        if not_waiting >= self.backstop + self.extra:
            return "stalled"
        return None

    def end(self):
        """(CPU seconds used or None, seconds to charge to the budget) once the request is over."""
        _, used, not_waiting = self._counts()
        return used, max(0.0, not_waiting)


_MAX_FILES = 20_000      # files and folders a worker's folder may hold


def folder_usage(folder, most):
    """(bytes on disk, entries, whether a folder could not be listed) under `folder`, counting at most `most` + 1
    entries; no link followed.

    A hand-in may make a folder it can enter but nobody can list (mode 0300: 320 MB went unseen that way).
    As root the grader lists it all the same; as the folder's owner (an ordinary user, whose workers are
    itself) it gives itself back the right to list it, which the hand-in cannot take away again (it can change
    no mode, isolation.shut_system_calls).  Whatever still cannot be listed is reported, never skipped."""
    size, count, stack, hidden = 0, 0, [folder], False
    while stack and count <= most:
        path = stack.pop()
        try:
            entries = _listed(path, os.path.realpath(folder))
        except FileNotFoundError:
            continue              # removed meanwhile
        except OSError:
            hidden = True
            continue
        for entry in entries:
            count += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue          # removed meanwhile
            size += info.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return size, count, hidden


def _listed(path, root):
    """The entries of the folder `path`, under `root`; as its owner, made listable first if it was not."""
    try:
        with os.scandir(path) as entries:
            return list(entries)
    except PermissionError:
        pass
    # The mode is changed through a handle on the folder itself, once it is known to be under `root`: the hand-in
    # may have put a link where a folder was, and only its own folders are the grader's to change.
    fd = os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not os.readlink(f"/proc/self/fd/{fd}").startswith(root.rstrip("/") + "/"):
            raise PermissionError(f"{path} is not under the hand-in's folder")
        os.chmod(f"/proc/self/fd/{fd}", 0o700)
    finally:
        os.close(fd)
    with os.scandir(path) as entries:
        return list(entries)


class _Counts:
    """(CPU seconds, seconds spent waiting for a CPU) of a worker or its runner, from the kernel.

    Read twice per request, so each process's /proc/PID/schedstat stays open and
    is read again from its start (a tenth of opening it each time).  An open file
    names its process, not its number: once that process is gone, reads fail
    (None, None) rather than count another that reused the number.
    """

    def __init__(self, worker):
        self.worker = worker
        self._files = {}  # pid -> open schedstat: the worker's, and its live runner's

    def read(self, pid):
        fd = self._files.get(pid)
        try:
            if fd is None:
                for old in [p for p in self._files if p != self.worker]:
                    os.close(self._files.pop(old))  # a runner that has been replaced
                fd = self._files[pid] = os.open(f"/proc/{pid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
            run, wait, _ = os.pread(fd, 256, 0).split()
            return int(run) / 1e9, int(wait) / 1e9
        except (OSError, ValueError):
            return None, None

    def close(self):
        for fd in self._files.values():
            os.close(fd)
        self._files.clear()


def _child_of(parent, reported):
    """The pid, as seen here, of `parent`'s child that calls itself `reported` (its own namespace's pid).

    Never trust a pid a worker reports: it must be a child of the worker right now.
    """
    if type(reported) is not int or reported <= 0:
        return None
    try:
        children = []
        for task in os.listdir(f"/proc/{parent}/task"):
            with open(f"/proc/{parent}/task/{task}/children") as handle:
                children += [int(pid) for pid in handle.read().split()]
        for child in children:
            with open(f"/proc/{child}/status") as handle:
                for line in handle:
                    if line.startswith("NSpid:"):
                        if int(line.split()[-1]) == reported:
                            return child
                        break
    except (OSError, ValueError):
        return None
    return None


def _how_it_ended(status):
    if status is None:
        return "it ended"
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            return f"it was stopped by signal {-status}"
        return {"SIGKILL": "it was killed (SIGKILL), often for using too much memory",
                "SIGXCPU": "it used up its CPU time", "SIGXFSZ": "it wrote a file larger than allowed",
                "SIGSEGV": "it crashed (SIGSEGV), often from recursion too deep for the stack",
                }.get(name, f"it was stopped by {name}")
    return f"it exited with code {status}"


def _pidfd(pid):
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # before Linux 5.3, or it is gone already
        return None


def _takes_interrupts(pid):
    """Does the process catch SIGINT, not blocking or ignoring it (per the kernel, not its word)?"""
    bit = 1 << (signal.SIGINT - 1)
    try:
        with open(f"/proc/{pid}/status") as handle:
            masks = {line.split(":")[0]: int(line.split()[1], 16) for line in handle
                     if line.startswith(("SigBlk", "SigIgn", "SigCgt"))}
    except (OSError, ValueError, IndexError):
        return False
    return bool(masks.get("SigCgt", 0) & bit) and not (masks.get("SigBlk", 0) | masks.get("SigIgn", 0)) & bit


def _alive(pid, handle=None):
    if handle is not None:  # a pidfd turns readable when its process ends
        return not select.select([handle], [], [], 0)[0]
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def _kill(pid, signum, handle=None):
    try:
        if handle is not None:
            signal.pidfd_send_signal(handle, signum)
        else:
            os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


_shared = None
_shared_lock = threading.Lock()


def shared_sandbox():
    """One sandbox per process for callers that grade one thing at a time (build, tests)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared.zygote.poll() is not None:
            _shared = Sandbox()
        return _shared
