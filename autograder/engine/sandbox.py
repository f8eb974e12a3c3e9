"""The grader's side of the sandbox: a zygote process and the workers it forks.

`Sandbox` starts the zygote (zygote.py) from a private temporary folder that
holds only the files the sandbox needs, so nothing of the grader is
importable there.  `Sandbox.worker(slot)` asks it for a fresh worker, whose
grader's end is a handle.Worker.  Killing a worker kills everything it started.
"""

import atexit
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from .handle import Worker
from .isolation import LAYERS, python_paths
from .sweep import remove_tree
from .watch import alive
from ..core.errors import AutograderError

_HERE = Path(__file__).parent
# What the zygote's private folder holds: the engine's sandboxed half and the
# comparison rules it converts replies with (autograder/runtime.py).
SANDBOX_FILES = tuple(_HERE / f"{name}.py" for name in ("zygote", "slot_zygote", "forks", "reaper", "sweep",
                                                         "isolation", "landlock", "seccomp", "cgroups", "worker",
                                                         "colab_standin", "semaphores")) + \
    (_HERE.parent / "runtime.py",)
DEFAULT_PRELOAD = ("numpy", "sympy", "sympy.utilities.iterables")


def preload_for(codes, candidates=DEFAULT_PRELOAD):
    """The modules of `candidates` to import once in the zygote for a run whose hand-ins' code is `codes` (one
    string each): those whose top-level package any of them names.

    A module no hand-in names is left out: a run of a class that never imports sympy no longer pays 0.35 CPU-s
    for it at every start. One that a hand-in names is preloaded even for that hand-in alone (one hand-in, as
    Gradescope grades): imported in its worker instead, inside a function, the import is charged to the case
    that first calls it, and sympy's 0.22-0.35 CPU-s is most of the 0.25 s floor of a case's limit. The
    hand-ins' text only chooses among these trusted names; one that imports a module in a way no word shows
    imports it in its own worker.
    """
    words = {module: re.compile(rf"\b{re.escape(module.split('.')[0])}\b") for module in candidates}
    return tuple(module for module in candidates if any(words[module].search(code) for code in codes))


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
            if (link.asked or link.ready) and not alive(link.pid):
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
        if link.ready is not None:
            link.ready.let_go()
            with self._lock:
                self._live.pop(link.ready.pid, None)
        for fd in link.asked or ():
            try:
                os.close(fd)
            except OSError:
                pass
        link.asked = link.ready = None

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

    def worker_ended(self, worker, want_status):
        """A worker was killed (Worker.close): sweep its leftovers; learn how it ended when that is wanted (it
        costs a wait)."""
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
                    # Unanswered: the grader goes on (scores, the gradebook) while the slot's zygote sweeps;
                    # the slot's next worker, asked for below, comes after the sweep (slot_zygote.py).
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
