"""The zygote: a warm process that forks one sandboxed worker per hand-in.

It imports the heavy modules (IPython, numpy, ...) once and finds the
strongest isolation layer that works here.  Then, for each grading slot,
it forks a slot zygote (slot_zygote.py): a copy of itself that joins the
slot's CPU group once and, for each request, forks a child that enters its
sandbox (isolation.py) and serves the grader's requests (worker.py).  A fork
costs a few milliseconds where a fresh interpreter with those imports costs
hundreds.  No zygote runs student code or holds anything secret.  Started
by sandbox.py as

    python -I -B zygote.py CONTROL_FD PRELOAD_JSON auto|namespaces|users|landlock|none

from a private folder holding only the engine's sandboxed modules (sandbox.SANDBOX_FILES) and runtime.py.
Requests come over Unix sockets (one to the first zygote, one to each slot's), with pipe ends attached.
"""

import ctypes
import json
import os
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves our folder off sys.path
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # no thread pools: threads do not survive fork

import cgroups  # noqa: E402
import colab_standin  # noqa: E402
import isolation  # noqa: E402
import semaphores  # noqa: E402
import sweep  # noqa: E402
import worker  # noqa: E402
from reaper import Reaper  # noqa: E402
from slot_zygote import ENDED, SlotZygote, _private_dir  # noqa: E402

PR_SET_CHILD_SUBREAPER = 36
SLOT_SHUTDOWN = 10.0  # seconds the slots' zygotes get to kill and sweep their workers


class FirstZygote(Reaper):
    """The sandbox's first zygote: it probes the layers, then forks a slot zygote for each slot the grader asks
    for (and again for one that could not be cleaned), reaps them, and removes the CPU groups at the end."""

    def __init__(self, control, shell, level, mountpoint, homes):
        super().__init__()
        self.control, self.shell, self.level, self.mountpoint, self.homes = control, shell, level, mountpoint, homes
        self.pid = os.getpid()   # workers' user ids are named after it (isolation.worker_uid)
        self.slot_zygotes = {}   # identity -> the pid of that slot zygote
        self.identities = iter(range(isolation.PROBE_LANE // 2))   # each slot zygote's two lanes
        self.groups = None       # cgroups.SlotGroups: each slot's CPU share, where cgroups can be made
        self.own_pid_namespace = None  # as root: our PID namespace, to come back to after each worker's fork

    def start(self, refused, lacking):
        """Say what was found to the grader; then serve it (never returns)."""
        # Workers orphaned by a slot's zygote that failed come to us, to be reaped.
        ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        # If the grader dies (even by kill -9) our socket reads end-of-file and we
        # clean up and go (see the loop); SIGTERM does the same.
        signal.signal(signal.SIGTERM, lambda signum, frame: self.shut_down())
        signal.signal(signal.SIGCHLD, self.reap)
        self.groups = cgroups.SlotGroups(os.getpid()) if self.level is not None else None
        if self.level == "namespaces" and os.geteuid() == 0 and isolation.has_cap_sys_admin():
            self.own_pid_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY)
        self._send({"ready": True, "isolation": self.level, "refused": refused, "lacks": lacking,
                    "cpu_groups": bool(self.groups and self.groups.base)})
        if self.level is None:
            self.shut_down()
        while True:
            message, fds, _, _ = socket.recv_fds(self.control, 1 << 16, 1)
            if not message:
                self.shut_down()
            request = json.loads(message)
            if request["op"] == "slot" and len(fds) == 1:
                identity = next(self.identities, None)
                if identity is None:   # every lane has been given: a slot replaced over and over
                    os.close(fds[0])
                    self._send({"pid": None, "error": "no user ids left for another slot in this sandbox"})
                    continue
                self._send({"pid": self._start_slot_zygote(request["slot"], identity, fds[0])})
            else:
                self.shut_down()

    def _start_slot_zygote(self, slot, identity, link_fd):
        """Fork the zygote of one grading slot, which forks that slot's workers (slot_zygote.py).

        `identity` numbers it among the sandbox's slot zygotes: its lanes (user ids) and folders are its own, so a
        slot's new zygote (after one that could not clean up) shares nothing with the old one."""
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                self.control.close()
                link = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, fileno=link_fd)
                SlotZygote(link, self.shell, slot, identity, self.pid, self.level, self.mountpoint, self.homes,
                           self.groups, self.own_pid_namespace).serve()
                code = 0
            finally:
                os._exit(code)
        os.close(link_fd)
        self.slot_zygotes[identity] = pid
        return pid

    def shut_down(self):
        """Wait for the slots' zygotes (told to stop, or seeing the grader gone), then remove the CPU groups."""
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        deadline = time.monotonic() + SLOT_SHUTDOWN
        for pid in self.slot_zygotes.values():
            while pid not in self.exits:
                try:
                    ended, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    break
                if ended or time.monotonic() > deadline:
                    break
                time.sleep(0.01)
        for pid in self.slot_zygotes.values():
            try:  # one that would not stop: its workers die with it (their parent-death signal)
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        while time.monotonic() < deadline + 1:  # and come to us, as orphans, to be reaped
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    time.sleep(0.01)
            except ChildProcessError:
                break
        if self.groups is not None:
            self.groups.close()
        os._exit(0)

    def _send(self, message):
        self.control.send(json.dumps(message).encode())


def main():
    control = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, fileno=int(sys.argv[1]))
    colab_standin.install()   # `from google.colab import files` imports in every worker (it does nothing)
    for module in json.loads(sys.argv[2]):
        try:
            __import__(module)
        except Exception:  # noqa: BLE001 - a missing preload only costs time later
            pass
    shell = worker.make_shell()
    # Pay IPython's first-cell costs here, once, not in every worker.
    shell.run_cell("pass", store_history=False)
    # The check helpers are already here: hand-ins need not run their copy.
    shell.user_ns.update(worker.runtime_names())
    here = os.path.dirname(os.path.abspath(__file__))
    mountpoint = os.path.join(here, "root")
    os.makedirs(mountpoint, exist_ok=True)
    homes = os.path.join(here, "home")
    os.makedirs(homes, exist_ok=True)
    os.chmod(here, 0o711)   # a worker's own user id must reach its folder below, and see nothing else
    os.chmod(homes, 0o711)
    probe_dir = _private_dir(homes, "probe", isolation.worker_uid(os.getpid(), isolation.PROBE_LANE)
                             if os.geteuid() == 0 else None)
    level, refused, lacking = isolation.probe(mountpoint, probe_dir, sys.argv[3])
    if level in isolation.SHARED_DEV_SHM:
        semaphores.install()   # multiprocessing without /dev/shm, before any worker is forked (semaphores.py)
    sweep.remove_tree(probe_dir)
    os.mkdir(os.path.join(homes, ENDED), 0o700)   # ours alone: ended workers' folders wait here to be removed
    FirstZygote(control, shell, level, mountpoint, homes).start(refused, lacking)


if __name__ == "__main__":
    main()
