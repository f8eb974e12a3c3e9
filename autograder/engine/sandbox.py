"""The grader's side of the sandbox: a zygote process and the workers it forks.

`Sandbox` starts the zygote (zygote.py) from a private temporary folder that
holds only the four files the sandbox needs, so nothing of the grader is
importable there.  `Sandbox.worker(slot)` asks it for a fresh worker; a
`Worker` sends requests over two pipes and enforces the time limits from
this side.  Killing a worker kills everything it started.
"""

import atexit
import json
import os
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

from .isolation import LAYERS

_HERE = Path(__file__).parent
# What the zygote's private folder holds: the engine's sandboxed half and the
# comparison rules it converts replies with (autograder/runtime.py).
SANDBOX_FILES = (_HERE / "zygote.py", _HERE / "isolation.py", _HERE / "cgroups.py", _HERE / "worker.py",
                 _HERE.parent / "runtime.py")
DEFAULT_PRELOAD = ("numpy", "sympy", "sympy.utilities.iterables")
_INTERRUPT_GRACE = 1.0  # seconds a worker gets to answer after an interrupt


class SandboxError(Exception):
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


def _make_private(workdir, sandbox_folder, protect):
    """The "users" layer hides the grader's files by their permissions.

    Everything the grader writes from now on is private (umask 077); what it
    already keeps (the output folder's contents, the course's hidden parts,
    the hand-ins) loses every permission for other users.  The output folder
    itself stays traversable, so a slot's user can reach its own folder in
    the sandbox's, and list nothing.  Returns the paths it changed.
    """
    os.umask(0o077)
    changed = []
    targets = list(protect)
    if workdir is not None:
        workdir = Path(workdir).resolve()
        _chmod(workdir, 0o711, changed)
        targets += [entry for entry in workdir.iterdir() if entry.resolve() != sandbox_folder]
    for path in targets:
        path = Path(path)
        if path.exists() and not path.is_symlink():
            _chmod(path, path.stat().st_mode & 0o700, changed)
    return changed


def _chmod(path, mode, changed):
    if path.stat().st_mode & 0o777 != mode:
        path.chmod(mode)
        changed.append(str(path))


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
    def __init__(self, limits=Limits(), preload=DEFAULT_PRELOAD, workdir=None, isolation="auto", protect=()):
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
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._control = ours
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
               "HOME": str(self.folder), "IPYTHONDIR": str(self.folder / ".ipython"), "PYTHONHASHSEED": "0",
               **{k: v for k, v in os.environ.items() if k == "AUTOGRADER_LANDLOCK"},
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
        ready = self._receive(timeout=120)
        if not ready.get("ready"):
            self.close()
            raise SandboxError("the sandbox did not start")
        self.isolation = ready["isolation"]
        self.refused = ready.get("refused", {})  # {layer: why it does not work here}
        self.cpu_groups = ready.get("cpu_groups", False)  # each slot's CPU share held by a cgroup
        if self.isolation is None:
            self.close()
            raise SandboxError(no_layer_message(isolation, self.refused))
        self.protected = _make_private(workdir, self.folder, protect) if self.isolation == "users" else []
        atexit.register(self.close)

    def worker(self, slot):
        """A fresh worker for grading slot `slot` (0 .. jobs-1)."""
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        message = {"op": "spawn", "slot": slot, "limits": asdict(self.limits)}
        try:
            with self._lock:
                socket.send_fds(self._control, [json.dumps(message).encode()], [request_read, reply_write])
                pid = self._receive()["pid"]
                self._live[pid] = slot
        finally:
            os.close(request_read)
            os.close(reply_write)
        return Worker(self, pid, slot, request_write, reply_read)

    def _ended(self, worker, want_status):
        """Kill a worker's leftovers; learn how it ended when that is wanted (it costs a wait)."""
        with self._lock:
            self._live.pop(worker.pid, None)
            self._ask({"op": "sweep", "slot": worker.slot, "keep": list(self._live), "dead": worker.pid})
            if want_status:
                return self._ask({"op": "exit-status", "pid": worker.pid})["status"]
            return None

    def _ask(self, message):
        self._control.send(json.dumps(message).encode())
        return self._receive()

    def _receive(self, timeout=60):
        self._control.settimeout(timeout)
        try:
            data = self._control.recv(1 << 16)
        except (TimeoutError, OSError) as error:
            raise SandboxError(f"the sandbox stopped answering ({error})") from None
        if not data:
            code = self.zygote.poll()
            raise SandboxError(f"the sandbox process ended (exit code {code})")
        return json.loads(data)

    def close(self):
        if self.zygote.poll() is None:
            try:
                self._control.send(json.dumps({"op": "stop"}).encode())
                self.zygote.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.zygote.kill()
                self.zygote.wait()
        self._control.close()
        shutil.rmtree(self.folder, ignore_errors=True)
        atexit.unregister(self.close)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Worker:
    def __init__(self, sandbox, pid, slot, requests_fd, replies_fd):
        self.sandbox, self.pid, self.slot = sandbox, pid, slot
        self._requests, self._replies = requests_fd, replies_fd
        self._buffer = b""
        self._sequence = 0
        self.exit_status = None
        self._closed = False

    def request(self, message, timeout):
        """Send one request; return its reply, interrupting the worker at `timeout`."""
        self._sequence += 1
        message = {**message, "id": self._sequence}
        try:
            os.write(self._requests, (json.dumps(message) + "\n").encode())
        except BrokenPipeError:
            raise WorkerDied(self._death()) from None
        reply = self._read_reply(timeout)
        if reply is None:
            self._signal(signal.SIGINT)
            reply = self._read_reply(_INTERRUPT_GRACE)
            if reply is None:
                self.close()
                raise WorkerTimeout("no answer within the time limit, even after an interrupt")
            reply["timed_out"] = True
        if type(reply) is not dict or reply.get("id") != self._sequence:
            # Something in the process wrote to the reply pipe itself.
            self.close()
            raise WorkerDied("it wrote something other than the answer to the grader's request")
        return reply

    def _read_reply(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not _readable(self._replies, left):
                return None
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise WorkerDied(self._death())
            self._buffer += chunk
            if len(self._buffer) > self.sandbox.limits.max_reply_bytes:
                self.close()
                raise WorkerDied("it sent back more data than the limit allows")
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return {"id": None}

    def _signal(self, signum):
        try:
            os.kill(self.pid, signum)
        except ProcessLookupError:
            pass

    def _death(self):
        self.close(want_status=True)
        status = self.exit_status
        if status is None:
            return "it ended"
        if status < 0:
            name = signal.Signals(-status).name
            return {"SIGKILL": "it was killed (SIGKILL), often for using too much memory",
                    "SIGXCPU": "it used up its CPU time", "SIGXFSZ": "it wrote a file larger than allowed",
                    }.get(name, f"it was stopped by {name}")
        return f"it exited with code {status}"

    def close(self, want_status=False):
        """Kill the worker and everything it started; idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            self._signal(signal.SIGKILL)
        for fd in (self._requests, self._replies):
            os.close(fd)
        self.exit_status = self.sandbox._ended(self, want_status)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _readable(fd, timeout):
    ready, _, _ = select.select([fd], [], [], timeout)
    return bool(ready)


_shared = None
_shared_lock = threading.Lock()


def shared_sandbox():
    """One sandbox per process for callers that grade one thing at a time (build, tests)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared.zygote.poll() is not None:
            _shared = Sandbox()
        return _shared
