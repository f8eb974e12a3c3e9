"""Making one worker: a slot zygote's child that shuts itself into its sandbox (isolation.py), then serves the
grader's requests (worker.py) over its pipes, or (a spare) first waits for them.

Standard library only: copied into the sandbox's folder with the zygote.
"""

import ctypes
import os
import select
import signal
import socket

if __package__:   # imported by the grader (its tests)
    from . import isolation, worker
else:             # in the sandbox's folder, beside zygote.py
    import isolation
    import worker

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
# What a spare runs before its hand-in (see _pipes): a definition, a call, nothing left behind.
WARM_CELL = "def _autograder_warm_up(x):\n    return [x, {'x': (x,)}]\n_autograder_warm_up(1)\ndel _autograder_warm_up"


class Forks:
    """How a slot's zygote makes its workers, shut in by `level`.

    `own_pid_namespace`: as root with CAP_SYS_ADMIN in the namespaces layer, a handle on the zygote's PID namespace,
    to come back to after forking each worker into a new one; `alive_read`: then the read end of a pipe the zygote
    holds open for its whole life, on which workers see end-of-file once it is gone.  `closed_in_children`: file
    descriptors of the zygote's that no worker may keep."""

    def __init__(self, shell, level, mountpoint, reaper, own_pid_namespace=None, alive_read=None,
                 closed_in_children=()):
        self.shell, self.level, self.mountpoint, self.reaper = shell, level, mountpoint, reaper
        self.own_pid_namespace, self.alive_read = own_pid_namespace, alive_read
        self.closed_in_children = tuple(closed_in_children) + \
            ((own_pid_namespace,) if own_pid_namespace is not None else ())
        self._libc = ctypes.CDLL(None)

    def fork(self, control, limits, pipes, uid, private, drop=None):
        """Fork a worker; its pid as we see it.  `pipes`: its two pipe ends, or a socket to await them on (a spare);
        `uid`: its user id (as root); `private`: its own folder (None in namespaces: a tmpfs); `drop`: a socket the
        child must not keep (the zygote's end of a spare's); `control`: the zygote's link to the grader."""
        zygote = os.getpid()
        if self.level == "namespaces" and self.own_pid_namespace is not None:
            return self._as_root(control, limits, pipes, uid, drop)
        report_read, report_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                os.close(report_read)
                self._child_start(control, drop)
                if self.level == "namespaces":
                    self._namespaces_worker(pipes, uid, limits, report_write, zygote)
                else:
                    os.write(report_write, str(os.getpid()).encode())
                    os.close(report_write)
                    self._enter(uid, limits, private)
                    # Its hand-in's orphans come to it, as to PID 1 in the namespaces layer, not to us: anything
                    # that is our child and no worker is a dead hand-in's leftover, whatever runs meanwhile.
                    self._libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
                    self._die_with_parent(lambda: os.getppid() == zygote)
                    worker.serve(self.shell, *self._pipes(pipes))
                code = 0
            finally:
                os._exit(code)
        os.close(report_write)
        with os.fdopen(report_read, "rb") as report:
            answer = report.read()
        try:
            worker_pid = int(answer)
        except ValueError:
            return pid  # it failed before it could serve: the grader sees it die at once
        if worker_pid != pid:
            self.reaper.guarded(worker_pid, pid)
        return worker_pid

    def _enter(self, uid, limits, private):
        if self.level == "users":
            # AUTOGRADER_LANDLOCK=0: permissions alone, as on a kernel without Landlock (for tests).
            extra = None if os.environ.get("AUTOGRADER_LANDLOCK") == "0" else isolation.landlock_read_paths()
            isolation.enter_users(uid, limits, private, extra)
        elif self.level == "landlock":
            isolation.enter_landlock(limits, private, isolation.landlock_read_paths(),
                                     uid if os.geteuid() == 0 else None)
        else:
            isolation.enter_none(limits, private)

    def _child_start(self, control, drop=None):
        """What every worker does first, in the zygote's child, before any isolation."""
        control.close()
        if drop is not None:
            drop.close()
        # The zygote's end of its life pipe (a worker must not keep it open), and
        # its handle on the grader's PID namespace (nothing in a hand-in needs it).
        for fd in self.closed_in_children:
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)

    def _as_root(self, control, limits, pipes, uid, drop):
        """Root with CAP_SYS_ADMIN: the worker is forked straight into a new PID namespace, as its PID 1.

        One fork, no guard (the unprivileged path needs a child to make the user
        namespace first): the zygote makes the PID namespace for its next child,
        forks, and goes back to its own for the children after.
        """
        isolation.unshare_pid()
        pid = -1
        try:
            pid = os.fork()
        finally:
            if pid != 0:  # the zygote, even if the fork failed: its next children are its own again
                isolation.restore_pid(self.own_pid_namespace)
        if pid == 0:
            code = 70
            try:
                self._child_start(control, drop)
                state = isolation.enter_namespaces(uid, limits, self.mountpoint, new_pid=False)
                isolation.finish_namespaces(state, limits, self.mountpoint)
                # getppid() is 0 in a new PID namespace: the zygote's life pipe tells instead.
                self._die_with_parent(lambda: not select.select([self.alive_read], [], [], 0)[0])
                worker.serve(self.shell, *self._pipes(pipes))
                code = 0
            finally:
                os._exit(code)
        self.reaper.ns_workers.add(pid)
        return pid

    def _namespaces_worker(self, pipes, uid, limits, report_write, zygote):
        """In the zygote's child (the guard): new namespaces, then the worker as PID 1 of the new PID namespace.

        The guard stays, waiting for the worker, and exits the way it ended
        (128 + N for signal N).  Each dies with its parent (PR_SET_PDEATHSIG), so
        the chain zygote -> guard -> worker holds even through kill -9; and the
        worker, being PID 1, takes every process of its hand-in with it.
        """
        state = isolation.enter_namespaces(uid, limits, self.mountpoint)
        self._die_with_parent(lambda: os.getppid() == zygote)
        alive_read, alive_write = os.pipe()  # end-of-file on it: the guard is gone
        child = os.fork()
        if child == 0:
            code = 70
            try:
                os.close(report_write)
                os.close(alive_write)
                # A process group of its own: kill(0, ...) must not reach the guard,
                # which is outside the PID namespace but, in a user namespace, the same user.
                os.setsid()
                isolation.finish_namespaces(state, limits, self.mountpoint)
                self._die_with_parent(lambda: not select.select([alive_read], [], [], 0)[0])
                os.close(alive_read)
                worker.serve(self.shell, *self._pipes(pipes))
                code = 0
            finally:
                os._exit(code)
        if isinstance(pipes, socket.socket):
            pipes.close()
        else:
            for fd in pipes:
                os.close(fd)
        os.write(report_write, str(child).encode())
        os.close(report_write)
        _, status = os.waitpid(child, 0)
        code = os.waitstatus_to_exitcode(status)
        os._exit(128 - code if code < 0 else min(code, 127))

    def _die_with_parent(self, parent_alive):
        """Be killed when our parent dies.

        Armed only now, after the last change of identity: the kernel forgets a
        parent-death signal whenever a process's credentials change (setuid,
        a new user namespace).  If the parent died before it was armed, go now.
        """
        self._libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if not parent_alive():
            os._exit(70)

    def _pipes(self, pipes):
        """The worker's request and reply pipes: given, or (a spare) awaited from the zygote."""
        if not isinstance(pipes, socket.socket):
            return pipes
        # A spare has time to spare: it runs IPython's path through a cell once now, so the pages that path
        # writes (reference counts, caches: a forked copy's first touch of each costs a page fault and a
        # copy, about 1 ms in all) are its own before its hand-in's first cell, not during it.  It changes
        # nothing a notebook can see: the zygote ran the same cell before any fork.
        self.shell.run_cell(WARM_CELL, store_history=False)
        _, fds, _, _ = socket.recv_fds(pipes, 16, 2)
        pipes.close()
        if len(fds) != 2:  # the zygote dropped this spare, or is gone
            os._exit(0)
        return fds
