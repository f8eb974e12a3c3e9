"""Watching a worker from outside: its CPU time and waiting time from the kernel, its folder's size, its children,
and signals that cannot hit another process.

What a worker says of itself is the student's to forge, so limits are judged here from what the kernel counts.
"""

import os
import select
import signal
import time

STALL_FACTOR = 2.0      # a limit's wall-clock backstop: this many times the limit ...
STALL_EXTRA = 1.0       # ... plus this, not counting time spent waiting for a CPU
POLL = 0.25             # how often a long call's CPU time is looked at, while far from its limit
CLOSE_POLL = 0.005      # and how often once it could be past it


def cpu_tolerance(limit):
    """How far past its limit a process may be seen before we stop it ourselves: its own CPU timer fires at
    the limit, and an honest process answers within milliseconds of it."""
    return 0.03 + 0.02 * limit


class Watch:
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
        self.backstop = stall_after if stall_after is not None else limit * STALL_FACTOR + STALL_EXTRA
        self.extra = 0.0

    def next_check(self):
        """Seconds until the next look: not before it could have used its limit, then often."""
        due = self.limit + cpu_tolerance(self.limit) - self.used
        return min(POLL, max(CLOSE_POLL, due))

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
        if used is not None and used > self.limit + cpu_tolerance(self.limit):
            return "evading"
        if not_waiting >= self.backstop + self.extra:
            return "stalled"
        return None

    def end(self):
        """(CPU seconds used or None, seconds to charge to the budget) once the request is over."""
        _, used, not_waiting = self._counts()
        return used, max(0.0, not_waiting)



MAX_FILES = 20_000      # files and folders a worker's folder may hold


def folder_usage(folder, most):
    """(bytes on disk, entries, whether a folder could not be listed) under `folder`, counting at most `most` + 1
    entries; no link followed.

    A hand-in may make a folder it can enter but nobody can list (mode 0300: 320 MB went unseen that way).
    As root the grader lists it all the same; as the folder's owner (an ordinary user, whose workers are
    itself) it gives itself back the right to list it, which the hand-in cannot take away again (it can change
    no mode, seccomp.py).  Whatever still cannot be listed is reported, never skipped."""
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


class Counts:
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



def child_of(parent, reported):
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


def how_it_ended(status):
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


def pidfd(pid):
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # before Linux 5.3, or it is gone already
        return None


def takes_interrupts(pid):
    """Does the process catch SIGINT, not blocking or ignoring it (per the kernel, not its word)?"""
    bit = 1 << (signal.SIGINT - 1)
    try:
        with open(f"/proc/{pid}/status") as handle:
            masks = {line.split(":")[0]: int(line.split()[1], 16) for line in handle
                     if line.startswith(("SigBlk", "SigIgn", "SigCgt"))}
    except (OSError, ValueError, IndexError):
        return False
    return bool(masks.get("SigCgt", 0) & bit) and not (masks.get("SigBlk", 0) | masks.get("SigIgn", 0)) & bit


def alive(pid, handle=None):
    if handle is not None:  # a pidfd turns readable when its process ends
        return not select.select([handle], [], [], 0)[0]
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def kill(pid, signum, handle=None):
    try:
        if handle is not None:
            signal.pidfd_send_signal(handle, signum)
        else:
            os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
