"""Watching a worker from outside: its CPU time and waiting time from the kernel, its folder's size, its children,
and signals that cannot hit another process.

What a worker says of itself is the student's to forge, so limits are judged here from what the kernel counts.
"""

import os
import select
import signal
import time
import typing

STALL_FACTOR = 2.0      # a limit's wall-clock backstop: this many times the limit ...
STALL_EXTRA = 1.0       # ... plus this, not counting time spent waiting for a CPU
POLL = 0.25             # how often a long call's CPU time is looked at, while far from its limit
CLOSE_POLL = 0.005      # and how often once it could be past it
OTHERS_GRACE = 10       # after an interrupt, the CPU the doer's other processes may use, in graces (answer_overdue)


def cpu_tolerance(limit):
    """How far past its limit a process may be seen before we stop it ourselves: its own CPU timer fires at
    the limit, and an honest process answers within milliseconds of it."""
    return 0.03 + 0.02 * limit


class Watch:
    """When to check on a request, and what the kernel's counts say of it.

    A request's CPU time is that of the worker and every process it started (Counts): a Pool's processes, a
    child that left its process group, and those that ended meanwhile.  Two verdicts, each of which gets the
    process doing the request an interrupt (then, without an answer, it is killed: handle.Worker._await):

    "over": its processes used more CPU than its limit allows.  The CPU timer of the one doing the request
    counts that process alone, and on a loaded machine fires late (by tenths of a second, as measured on a
    2-core VM under load 10) or was caught; a Pool's processes compute while it waits for them.
    "stalled": it made no progress for the backstop's time (sleeping, blocked, waiting on a child), counting
    wall time less the time the worker's processes waited for a CPU, summed over them.  That sum is why a
    Pool is never stopped for the machine's load: whenever any of its processes runs or waits for a CPU,
    wall time less their summed waits grows no faster than their CPU time, which the limit bounds; only
    time in which none of them runs or waits (the whole group asleep or blocked) can add up to a stall.

    The kernel's counts are read when the request starts, so an overrun is seen within a few milliseconds of
    its limit plus tolerance: the first look comes at the limit (sooner when its processes use more than one
    CPU), and later ones every few milliseconds.
    """

    def __init__(self, usage, limit, stall_after=None, first=None, doer=None):
        """`usage()`: a Usage of the worker's processes (Counts.read), or None when they cannot be counted.
        `first`: the Usage read before the request was written, if it was (see handle.Worker._exchange).
        `doer`: the pid of the process doing the request (see interrupted)."""
        self.usage, self.limit, self.doer = usage, limit, doer
        self.started = time.monotonic()
        self.first = first if first is not None else usage()      # when it started
        self.used = 0.0           # CPU seconds of its processes at the last look (never less than at the one before)
        self.doer_used = 0.0      # of which the process doing the request's own
        self.rate = 1.0           # CPU seconds per second they used so far, at least 1
        self.waited = {}          # thread -> seconds it waited for a CPU since the start, at the last look it was seen
        self.backstop = stall_after if stall_after is not None else limit * STALL_FACTOR + STALL_EXTRA
        self._interrupted = None   # (monotonic time, the doer's wait for a CPU, CPU seconds used) when interrupted

    def next_check(self):
        """Seconds until the next look: not before its processes could have used its limit, then often."""
        due = (self.limit + cpu_tolerance(self.limit) - self.used) / self.rate
        return min(POLL, max(CLOSE_POLL, due))

    def interrupted(self):
        """The grader has just interrupted the process doing the request (see answer_overdue)."""
        self._counts()
        self._interrupted = (time.monotonic(), self._doer_waited(), self._others_used())

    def answer_overdue(self, grace):
        """Has the process doing the request had `grace` seconds since its interrupt to answer, running or asleep?
        Its waits for a CPU are not counted: on a loaded machine an honest process may wait longer than that to
        run its handler.  Its own waits alone, which never outgrow the wall clock, so the grace always ends.

        It ends sooner once the other processes of its tree used OTHERS_GRACE times as much CPU since: a process
        that shrugs off the interrupt while the processes it started keep it from a CPU (each may be a session,
        so a scheduling group, of its own) costs the grader no more than that.  The doer's own CPU time is not
        in that count (an answer is made of it), and the budget is ten times the grace: with two hogs on two
        cores, a child that left its session used 0.1 CPU-s before the interrupted worker, waiting its turn,
        wrote its answer, and a worker that would have answered was killed."""
        self._counts()
        since, waited, others = self._interrupted
        return (time.monotonic() - since - (self._doer_waited() - waited) >= grace
                or self._others_used() - others >= grace * OTHERS_GRACE)

    def _others_used(self):
        """CPU seconds the worker's processes but the doer used since the request started."""
        return max(0.0, self.used - self.doer_used)

    def _doer_waited(self):
        return sum(seconds for (process, _, thread), seconds in self.waited.items()
                   if process == thread == self.doer)

    def _counts(self):
        """(wall seconds, CPU seconds of its processes or None when unknown, wall seconds not spent waiting for a
        CPU) so far."""
        elapsed = time.monotonic() - self.started
        now = self.usage()
        if now is None or self.first is None:
            return elapsed, None, elapsed
        # A look can miss a process the instant its parent reaps it (its time is in neither yet): never less.
        self.used = max(self.used, now.cpu - self.first.cpu)
        self.doer_used = max(self.doer_used, now.doer_cpu - self.first.doer_cpu)
        self.rate = max(1.0, self.used / elapsed) if elapsed > 0 else 1.0
        for thread, seconds in now.waits.items():
            # A thread that ended keeps what it was last seen to wait; one new since the start waited from zero.
            waited = seconds - self.first.waits.get(thread, 0.0)
            if waited > self.waited.get(thread, 0.0):
                self.waited[thread] = waited
        return elapsed, self.used, elapsed - sum(self.waited.values())

    def verdict(self):
        _, used, not_waiting = self._counts()
        if used is not None and used > self.limit + cpu_tolerance(self.limit):
            return "over"
        if not_waiting >= self.backstop:
            return "stalled"
        return None

    def end(self):
        """(CPU seconds its processes used or None, seconds to charge to the budget, seconds it was busy) once the
        request is over.  The charge: its wall time not spent waiting for a CPU, or the CPU time of its processes
        where that is more (a Pool's processes use more than one CPU at a time).

        Busy: the same, but with the CPU time's floor lowered by two clock ticks, the resolution of the counts it
        is the difference of.  It is how long a judged call took as if it had had a CPU to itself: a speed case
        and its baseline may be timed seconds apart, under different loads, and wall time would judge the load.
        The waits are the kernel's, counted outside the hand-in, and the floor keeps a hand-in from shrinking
        its time by keeping its own processes waiting: whatever they compute counts as CPU time."""
        _, used, not_waiting = self._counts()
        floor = max(0.0, (used or 0.0) - 2 / CLOCK_TICKS)
        return used, max(0.0, not_waiting, used or 0.0), max(not_waiting, floor)



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


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class Usage(typing.NamedTuple):
    cpu: float           # CPU seconds of a worker and of every process it started, ended ones included
    waits: dict          # {(pid, its start, thread id): seconds that thread has waited for a CPU}
    doer_cpu: float = 0.0   # of those, the CPU seconds of the process doing the request itself (not its children)


class Counts:
    """What the kernel counts of a worker and every process it started: CPU time, time waited for a CPU.

    The processes are the worker's tree, walked from /proc/PID/task/TID/children.  No process of a hand-in can
    leave it: the worker is their subreaper (PID 1 of its namespace in the namespaces layer), so an orphan, a
    double fork or a process that called setsid or setpgid is still the worker's descendant, and seccomp.py
    refuses the one call that would make a sibling of the worker (clone with CLONE_PARENT).  Each process
    counts its own CPU time (utime, stime: all its threads, ended ones included) and its reaped children's
    (cutime, cstime): the kernel moves an ended child's time into its parent's when the parent reaps it, so
    the sum over the live tree holds every process the hand-in has ever started, whenever it ended.  One
    exception: the children of a parent that ignores SIGCHLD (or sets SA_NOCLDWAIT) are reaped by the kernel,
    and their time goes to nobody once they end (a process seen before then has its time counted, Watch).
    A filter cannot refuse that without breaking honest code (dash's `wait` and multiprocessing's forkserver
    need a SIGCHLD handler, and seccomp cannot tell a handler from SIG_IGN); such a case is still bounded by
    its backstop and its hand-in's budget (docs/security.md).

    Why this and not a cgroup per worker (whose cpu.stat counts every process, that one included): the tree
    is there in every layer, for an ordinary user and in a container too, where the grader can make no
    cgroup; it gives the time each process waited for a CPU, which the backstop needs and cgroup v1 does not
    count; and reading it costs three reads of open files for a worker alone (a few microseconds), where a
    cgroup per worker costs a migration into it, which waits for the kernel.

    The files of the worker and of the process doing the request stay open and are read again from their
    start; a child's are opened for each look.  An open file names its process, not its number: once that
    process is gone, reads fail rather than count another that reused the number.  A walk reads each
    process before its children, so a child reaped meanwhile is missed for that look, never counted twice.
    """

    def __init__(self, worker):
        self.worker = worker
        self._files = {}  # pid -> its open files (_kept_files): the worker's, and the one doing the request's
        self._kept = None  # the processes whose files were kept at the last walk
        self._ended = False  # the worker's own files failed once: it is gone, whatever takes its number next

    def read(self, pid):
        """The Usage of the worker's tree (`pid`: the process doing the request, whose files stay open too); None
        once the worker is gone."""
        ticks, doer, waits = 0, 0, {}
        for process, (fields, threads) in self._walk(keep=(self.worker, pid)).items():
            ticks += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
            if process == pid:
                doer = int(fields[11]) + int(fields[12])
            start = int(fields[19])
            for thread, waited in threads.items():
                waits[(process, start, thread)] = waited / 1e9
        if not waits:
            return None
        return Usage(ticks / CLOCK_TICKS, waits, doer / CLOCK_TICKS)

    def members(self):
        """{pid: its start time} of the live processes of the worker's tree but the worker (zombies are not)."""
        return {process: int(fields[19]) for process, (fields, _) in self._walk(keep=(self.worker,)).items()
                if process != self.worker and fields[0] not in (b"Z", b"X")}

    def stop_strays(self, kept, wait=5.0):
        """Kill every live process of the worker's tree but the worker and `kept` (members() before a case runner
        started, less the runner): what a runner that ended left behind, its process group's or not.  Each is
        checked to be the process seen (its start time) through a pidfd before it is sent SIGKILL; what they
        start meanwhile is found and killed next time round.  They become the worker's zombies (it reaps them).
        False if some were still alive after `wait` seconds."""
        deadline = time.monotonic() + wait
        while True:
            strays = {pid: start for pid, start in self.members().items() if kept.get(pid) != start}
            if not strays:
                return True
            if time.monotonic() > deadline:
                return False
            for pid, start in strays.items():
                handle = pidfd(pid)
                try:
                    if _start_time(pid) == start:
                        kill(pid, signal.SIGKILL, handle)
                finally:
                    if handle is not None:
                        os.close(handle)
            time.sleep(0.001)   # SIGKILL is not instant: a killed process is a zombie a moment later

    def _walk(self, keep):
        """{pid: (its /proc/PID/stat fields after the name, {thread id: nanoseconds it waited for a CPU})} of the
        worker's tree, parents before children; empty once the worker is gone.  (Twice per request and at each
        look: kept lean.)"""
        if keep != self._kept:
            for old in set(self._files) - set(keep):
                self._forget(old)   # a runner that has been replaced
            self._kept = keep
        found, stack = {}, [] if self._ended else [self.worker]
        while stack:
            pid = stack.pop()
            if pid in found:
                continue
            try:
                kept = self._kept_files(pid) if pid in keep else None
                stat = os.pread(kept[0], 4096, 0) if kept else _read_once(f"/proc/{pid}/stat")
                fields = stat[stat.rindex(b")") + 2:].split()
                if pid != self.worker and int(fields[1]) not in found:
                    continue   # not a child of the tree's (its number was reused after the child ended)
                if fields[17] == b"1":   # one thread (most processes): its files, the process's own
                    if kept:
                        threads = {pid: os.pread(kept[1], 4096, 0)}
                        children = _whole(kept[2])
                    else:
                        threads = {pid: _read_once(f"/proc/{pid}/schedstat")}
                        children = _read_once(f"/proc/{pid}/task/{pid}/children")
                else:
                    threads, children = {}, b""
                    for thread in os.listdir(f"/proc/{pid}/task"):
                        threads[int(thread)] = _read_once(f"/proc/{pid}/task/{thread}/schedstat")
                        children += b" " + _read_once(f"/proc/{pid}/task/{thread}/children")
                waited = {thread: int(line.split(None, 2)[1]) for thread, line in threads.items()}
            except (OSError, ValueError, IndexError):
                self._forget(pid)
                self._ended = self._ended or pid == self.worker
                continue   # gone (or going): its time is in its parent's now, or will be at the next look
            found[pid] = (fields, waited)
            if children:
                stack += map(int, children.split())
        return found

    def _kept_files(self, pid):
        """The open stat, schedstat and children files of a process read at every look."""
        files = self._files.get(pid)
        if files is None:
            files = []
            try:
                for name in ("stat", "schedstat", f"task/{pid}/children"):
                    files.append(os.open(f"/proc/{pid}/{name}", os.O_RDONLY | os.O_CLOEXEC))
            except OSError:
                for fd in files:
                    os.close(fd)
                raise
            self._files[pid] = files
        return files

    def _forget(self, pid):
        for fd in self._files.pop(pid, ()):
            os.close(fd)

    def close(self):
        for pid in list(self._files):
            self._forget(pid)


def _read_once(path):
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return _whole(fd)
    finally:
        os.close(fd)


def _whole(fd, size=4096):
    """A /proc file read whole from its start (one read unless it is longer than `size`: a long list of children)."""
    data = os.pread(fd, size, 0)
    while len(data) == size:
        size *= 16
        data = os.pread(fd, size, 0)
    return data


def _start_time(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None



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
