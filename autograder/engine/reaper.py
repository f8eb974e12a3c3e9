"""How a zygote's children ended: reaped as they end (SIGCHLD), each one's status kept until it is asked for.

Both zygote roles (zygote.FirstZygote, slot_zygote.SlotZygote) reap their children this way.  A namespaces
worker made by an ordinary user (or root without CAP_SYS_ADMIN) is the child of a *guard*, which waits for it
and exits the way it ended (128 + N for signal N): its ending is filed under the worker's pid.
Standard library only: copied into the sandbox's folder with the zygote.
"""

import os

_KEPT = 10_000   # statuses kept at most (of children nobody asked about)


class Reaper:
    def __init__(self):
        self.exits = {}            # pid -> exit code (negative: killed by that signal), until asked for
        self.guards = {}           # namespaces worker pid -> the guard process that waits for it
        self.worker_of_guard = {}  # and back
        self.ns_workers = set()    # live workers forked straight into a PID namespace (as root)

    def reap(self, signum=None, frame=None):
        """The SIGCHLD handler: file the ending of every child that has ended."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            code = os.waitstatus_to_exitcode(status)
            self.ns_workers.discard(pid)
            worker_pid = self.worker_of_guard.pop(pid, None)
            if worker_pid is not None:  # a guard: file its worker's ending under the worker's pid
                self.guards.pop(worker_pid, None)
                self.exits[worker_pid] = from_guard(code)
            else:
                self.exits[pid] = code
            if len(self.exits) > _KEPT:
                self.exits.pop(next(iter(self.exits)))

    def guarded(self, worker_pid, guard):
        """`guard` is the process that waits for the namespaces worker `worker_pid`."""
        self.guards[worker_pid] = guard
        self.worker_of_guard[guard] = worker_pid
        if guard in self.exits:  # the guard ended (and was reaped) before it was filed as one
            self.guards.pop(worker_pid)
            self.worker_of_guard.pop(guard)
            self.exits[worker_pid] = from_guard(self.exits.pop(guard))

    def exit_status(self, pid):
        """How a (killed or ended) worker ended, waiting for it if it is not reaped yet."""
        self.ns_workers.discard(pid)
        guard = self.guards.pop(pid, None)
        if guard is not None:  # a namespaces worker: its guard exits the way it ended
            self.worker_of_guard.pop(guard, None)
            try:
                _, status = os.waitpid(guard, 0)
                return from_guard(os.waitstatus_to_exitcode(status))
            except ChildProcessError:  # the SIGCHLD handler reaped it meanwhile
                code = self.exits.pop(guard, None)
                return from_guard(code) if code is not None else self.exits.pop(pid, None)
        if pid not in self.exits:
            try:
                _, status = os.waitpid(pid, 0)
                return os.waitstatus_to_exitcode(status)
            except ChildProcessError:
                pass  # the SIGCHLD handler got there first
        return self.exits.pop(pid, None)


def from_guard(code):
    """A guard exits 128 + N when its worker died of signal N (see forks.namespaces_worker)."""
    return code - 128 if code is not None and code > 128 else code
