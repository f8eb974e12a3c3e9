"""A grading slot's zygote: it forks, hands over, sweeps and reaps that slot's workers, on the grader's requests.

Forked once per slot (and again for a slot that could not be cleaned) by the sandbox's first zygote (zygote.py).
It joins the slot's CPU group once, so every worker is born in it: moving a process between cgroups waits for
an RCU grace period (about 10 ms here), which each hand-in would otherwise pay.  Slots do not share a process,
so one slot's fork never waits for another's.

Requests come over the slot's link (a Unix socket), with pipe ends attached:
    {"op": "spawn", "slot", "limits"} + two pipe ends   -> {"pid", "home"} (or {"pid": null, "error"[, "dirty"]})
    {"op": "sweep", "slot", "keep", "dead"[, "answer": false]}   -> {"killed"} (unless answer is false)
    {"op": "exit-status", "pid"}                          -> {"status"}
Standard library only: copied into the sandbox's folder with the zygote.
"""

import ctypes
import functools
import json
import os
import select
import signal
import socket
import stat
import time

if __package__:   # imported by the grader (its tests)
    from . import isolation, sweep
    from .forks import Forks
    from .reaper import Reaper
else:             # in the sandbox's folder, beside zygote.py
    import isolation
    import sweep
    from forks import Forks
    from reaper import Reaper

PR_SET_CHILD_SUBREAPER = 36
# A folder of `home/` that only the zygotes' own user may enter: ended workers' folders are moved there.
ENDED = ".ended"
# Seconds after handing a worker over before the slot's next spare is made.  A hand-in's first
# milliseconds are the grader's and its worker's (sending and starting the cells); making a spare
# takes 3-5 ms of CPU (the fork, the isolation), which on a 2-core machine they would wait for.
SPARE_DELAY = 0.008


class SlotZygote(Reaper):
    """One slot's zygote.  `identity` numbers it among the sandbox's slot zygotes: its two lanes (user ids, as
    root: 2 * identity and the next) and its folders are its own; `master`: the first zygote's pid."""

    def __init__(self, link, shell, slot, identity, master, level, mountpoint, homes, groups, own_pid_namespace):
        super().__init__()
        self.link, self.slot, self.identity, self.master, self.level = link, slot, identity, master, level
        self.homes, self.groups = homes, groups
        self.spare = None  # (pid, socket, limits, home folder, uid) of its next worker, made ahead
        self.spare_wanted = None  # (the spawn request the spare is for, when to make it), or None
        self.home_of, self.uid_of = {}, {}  # worker pid -> its own folder (None in namespaces), its user id
        self.made = 0  # workers made so far; consecutive ones get the zygote's two lanes in turn
        self.doomed = []  # folders of ended workers, hidden, to remove when the zygote is idle
        self.dirty = None  # why it could not clean up after a hand-in (the grader then replaces it)
        # Unanswered sweeps that wait for their worker's death: dead worker pid -> (slot, pids to keep, a pidfd).
        self.pending = {}
        self.handed = set()  # workers handed to the grader that it has not said are dead
        self.leftovers = sweep.Leftovers()
        self.by_uid = level == "users" or (level == "landlock" and os.geteuid() == 0)
        self._shell, self._mountpoint, self._own_pid_namespace = shell, mountpoint, own_pid_namespace
        self.forks = None   # (serve)

    # What the kernel and the environment say does not change in a zygote's life: asked once, when first needed.
    @functools.cached_property
    def spares_safe(self):
        return spares_are_safe(self.level)

    @functools.cached_property
    def writes_confined(self):
        return _writes_confined(self.level)

    def serve(self):
        """Answer the grader's requests until it hangs up; never returns."""
        # Orphans of a worker (a double fork, setsid) come back to us, to be killed
        # (a subreaper's role is not inherited through fork).
        ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        signal.signal(signal.SIGTERM, lambda signum, frame: self.shut_down())
        signal.signal(signal.SIGCHLD, self.reap)
        if self.groups is not None:
            self.groups.join(self.slot)
        alive_read = alive_write = None
        if self._own_pid_namespace is not None:
            # Held open for our whole life: workers see end-of-file on it once we are gone.
            alive_read, alive_write = os.pipe()
        self.forks = Forks(self._shell, self.level, self._mountpoint, self, self._own_pid_namespace, alive_read,
                           closed_in_children=(alive_write,) if alive_write is not None else ())
        while True:
            self._wait_for_request()
            message, fds, _, _ = socket.recv_fds(self.link, 1 << 16, 2)
            if not message:
                self.shut_down()
            request = json.loads(message)
            if request["op"] == "spawn":
                self._answer_spawn(request, fds)
            elif request["op"] == "sweep":
                self._answer_sweep(request)
            elif request["op"] == "exit-status":
                self._send({"status": self.exit_status(request["pid"])})
            else:
                self.shut_down()

    def _answer_spawn(self, request, fds):
        if self.dirty is not None:
            # What the last hand-in left could not be cleaned up: no worker of ours may follow it.
            for fd in fds:
                os.close(fd)
            self._send({"pid": None, "error": self.dirty, "dirty": True})
            return
        try:
            pid = self._spawn(request, fds)
        except OSError as error:  # no fork to spare (memory, a process limit): this hand-in's problem
            self._send({"pid": None, "error": str(error)[:300]})
            return
        home = self.home_of.get(pid)
        self.handed.add(pid)
        self._send({"pid": pid, "home": os.path.basename(home) if home else None})
        # Not at once: the grader and the new worker are starting the hand-in, and on a small machine the
        # fork would take the CPU they wait for (see _wait_for_request).
        self.spare_wanted = (request, time.monotonic() + SPARE_DELAY) if self.spares_safe else None

    def _answer_sweep(self, request):
        dead = request.get("dead")
        self.handed.discard(dead)
        if not request.get("answer", True) and self.level == "none" and dead is not None:
            # Only in the none layer, which promises nothing, may a sweep wait, unanswered, for the dead worker to
            # die (a few ms, see _sweep) while the next worker is handed over.  Elsewhere every leftover of a
            # hand-in is gone before the next one runs: one still running beside the next could reach it through
            # what no layer shuts, such as a lock on a file both can read.
            self.pending[dead] = (request["slot"], set(request["keep"]), _pidfd(dead))
            return
        killed = self._sweep(self._kept(request["keep"]), dead)
        if request.get("answer", True):
            self._send({"killed": killed})

    def _kept(self, keep):
        """Processes a sweep must spare: the grader's live workers, those handed since it asked, and the spare
        (made and shut in by us, see _make_spare).  A hand-in's own children stay its worker's descendants
        even when orphaned (a worker is their subreaper, see forks.py), so none of them is our child."""
        return set(keep) | self.handed | ({self.spare[0]} if self.spare is not None else set())

    def _wait_for_request(self):
        """Block until a request comes; meanwhile sweep each pending hand-in as soon as its worker has died,
        make the spare when it is due, and remove ended workers' folders."""
        while self.pending or self.spare_wanted is not None or self.doomed:
            handles = [handle for _, _, handle in self.pending.values() if handle is not None]
            if len(handles) < len(self.pending):  # a worker gone (and reaped) before it could be watched
                ready = []
            else:
                wait = None if self.spare_wanted is None else max(0.0, self.spare_wanted[1] - time.monotonic())
                ready, _, _ = select.select([self.link, *handles], [], [], 0 if self.doomed else wait)
                if self.link in ready:
                    return
                if self.doomed and not ready:   # idle: a hidden folder of an ended worker goes
                    self._remove_doomed(self.doomed.pop())
                    continue
            for dead, (_, _, handle) in list(self.pending.items()):
                if handle is None or handle in ready:
                    self._finish_sweep(dead)
            if self.spare_wanted is not None and time.monotonic() >= self.spare_wanted[1]:
                request, self.spare_wanted = self.spare_wanted[0], None
                self._sweep_pending()
                self._make_spare(request)

    def _sweep_pending(self):
        for dead in list(self.pending):
            self._finish_sweep(dead)

    def _finish_sweep(self, dead):
        _, keep, handle = self.pending.pop(dead)
        if handle is not None:
            os.close(handle)
        self._sweep(self._kept(keep), dead)

    def _spawn(self, request, fds):
        """A worker for the slot, serving the pipes `fds`; returns its pid (as we see it).  It is the spare
        made after the last request when there is one (see _make_spare): it only has to be handed its pipes."""
        spare, self.spare = self.spare, None
        if spare is not None:
            pid, channel, limits, home, uid = spare
            handed = False
            try:
                # A spare is handed over only as it was made: its folder empty and private, whatever the hand-in
                # that ran beside it tried (it should have been able to do nothing to it: see isolation.py).
                if limits == request["limits"] and _pristine(home, uid if self._has_own_uid() else os.geteuid()):
                    socket.send_fds(channel, [b"pipes"], fds)
                    handed = True
            except OSError:
                pass  # it is gone: a fresh one below
            finally:
                channel.close()
            if handed:
                for fd in fds:
                    os.close(fd)
                self._remember(pid, home, uid)
                return pid
            _kill_quietly(pid)
            self.uid_of[pid], self.home_of[pid] = uid, home   # swept, and its folder removed, as any ended worker's
            self._sweep(self._kept([]), pid)
        self._sweep_pending()  # a new worker may get the folder of one whose leftovers are not swept yet
        try:
            return self._fork(request["slot"], request["limits"], fds)
        finally:
            for fd in fds:
                os.close(fd)

    def _make_spare(self, request):
        """Fork and shut in the slot's next worker now, while the grader is busy, where nothing the running
        hand-in does can reach it (spares_are_safe).

        It waits, fully isolated, for its pipes (_spawn), so the next hand-in does not
        wait for a fork and a sandbox to be built: 3 ms as root, 12 ms through a user
        namespace, 3-4 ms in the other layers.  It has a folder of its own, never used before.
        """
        if not self.spares_safe:
            return
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            pid = self._fork(request["slot"], request["limits"], theirs, drop=ours)
        except OSError:
            ours.close()
            return
        finally:
            theirs.close()
        self.spare = (pid, ours, request["limits"], self.home_of.pop(pid, None), self.uid_of.pop(pid, None))

    def _fork(self, slot, limits, pipes, drop=None):
        """Fork a worker with the zygote's next lane and a folder of its own, never used before: nothing an
        earlier hand-in did to its own can reach it.  The two lanes in turn: a spare is made while the hand-in
        before it still runs under the other."""
        self.made += 1
        uid = isolation.worker_uid(self.master, 2 * self.identity + self.made % 2)
        private = None if self.level == "namespaces" else \
            _private_dir(self.homes, f"slot-{slot}-{self.identity}-{self.made}", uid if self._has_own_uid() else None)
        pid = self.forks.fork(self.link, limits, pipes, uid, private, drop)
        self._remember(pid, private, uid)
        return pid

    def _remember(self, pid, home, uid):
        """A worker's folder and user id, until it is swept (in the namespaces layer nothing is swept: the
        kernel ends the hand-in with its PID namespace, and its folder is a tmpfs)."""
        if self.level != "namespaces":
            self.home_of[pid], self.uid_of[pid] = home, uid

    def _has_own_uid(self):
        """Does a worker run under its lane's user id (as root) rather than ours?"""
        return self.level in ("users", "landlock") and os.geteuid() == 0

    def _sweep(self, keep, dead):
        """Clean up after the slot's hand-in whose worker `dead` has ended (None: every worker, at the end).

        First its folder is hidden (_hide), at once; then every process it left is killed; then what it left
        outside its folder is removed (where the layer let it write there); its folder goes when the zygote is
        next idle (_remove_doomed).  What cannot be cleaned up makes the zygote dirty: it hands over no other
        worker, and the grader replaces it.

        Leftover processes: "namespaces": the worker was PID 1 of its PID namespace, and the kernel killed the
        rest with it.  As root each worker has a user id of its own, which finds them all.  Otherwise the orphans
        come back to us (the subreaper) once their worker is gone, so we wait for it, and for each generation.
        `keep` holds the live workers and the spare.
        """
        workers = [dead] if dead is not None else list(self.uid_of)
        for pid in workers:
            self._hide(self.home_of.pop(pid, None))
        uids = {self.uid_of.pop(pid, None) for pid in workers} - {None}
        if self.level in ("namespaces", None):
            # Nothing to wait for: the kernel ends the namespace with its PID 1, and the guard is reaped when
            # it exits (tearing the namespaces down takes milliseconds no grading slot should wait through).
            return 0
        # The grader has killed the dead worker itself: only what it left is looked for.
        killed, already = set(), {dead}
        if not self.by_uid and dead:
            self.exits[dead] = self.exit_status(dead)  # reparents its children to us
        found = []
        for _ in range(100):  # a fork racing the sweep is caught on the next pass
            found = [pid for pid in ([p for uid in uids for p in sweep.pids_of(uid)] if self.by_uid
                                     else sweep.children())
                     if pid not in keep and pid not in killed and pid not in already]
            if not found:
                break
            for pid in found:
                _kill_quietly(pid)
                killed.add(pid)
            if not self.by_uid:
                for pid in found:
                    self.exit_status(pid)  # reaped, so its own children come back to us
        if found:
            self._make_dirty(f"{len(found)} process(es) of a hand-in would not die")
        for uid in uids if self.by_uid else ():
            self.leftovers.remove(uid, files=not self.writes_confined)
        return len(killed)

    def _hide(self, folder):
        """Make an ended worker's folder unreachable at once, and queue it for removal: moved into ENDED, which
        no worker's user id may enter (as root, whatever a leftover of the hand-in does to the folder's own mode
        before it is killed), and made mode 000 (as an ordinary user, where every worker is us: no hand-in can
        change a mode there, see seccomp.py).  No other hand-in can even `stat` what is in it."""
        if folder is None:
            return
        hidden = os.path.join(os.path.dirname(folder), ENDED, os.path.basename(folder))
        try:
            os.chmod(folder, 0o700)   # (moving a folder takes the right to write in it, as its owner)
            os.rename(folder, hidden)
            os.chmod(hidden, 0)
        except FileNotFoundError:
            return
        except OSError as error:
            self._make_dirty(f"an ended hand-in's folder could not be hidden ({error.strerror})")
            return
        self.doomed.append(hidden)

    def _remove_doomed(self, folder):
        if not sweep.remove_tree(folder):
            self._make_dirty("an ended hand-in's folder could not be removed")
            try:
                os.chmod(folder, 0)   # hidden again: removing it made its folders ours to list
            except OSError:
                pass

    def _make_dirty(self, why):
        self.dirty = self.dirty or f"this slot could not be cleaned up after a hand-in: {why}"

    def shut_down(self):
        """At the end: kill every worker and whatever is left of its hand-in."""
        # Workers forked straight into their PID namespaces: kill each and wait, which
        # lasts until the kernel has ended every process of its namespace.
        for pid in list(self.ns_workers):
            _kill_quietly(pid)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for pid in list(self.ns_workers):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        for worker_pid, guard in list(self.guards.items()):  # namespaces workers still running
            for pid in (worker_pid, guard):
                _kill_quietly(pid)
            self.exit_status(worker_pid)
        self._sweep(set(), None)
        while self.doomed:
            self._remove_doomed(self.doomed.pop())
        os._exit(0)

    def _send(self, message):
        self.link.send(json.dumps(message).encode())


def spares_are_safe(level):
    """Whether a worker may exist before its hand-in, beside the one running.

    A spare has its own user id (as root) or the hand-in's (an ordinary user), so only where the hand-in being
    graded cannot signal, trace or write to it:
      namespaces  its own PID, mount, network and IPC namespaces;
      landlock, users (with Landlock)  Landlock ABI 6 (Linux 6.12): a domain signals only
                  itself and what it started, traces nothing outside it, and writes only its
                  own folder, while the spare's is another;
      none        promises nothing, so a spare gives nothing away.
    Elsewhere (users without Landlock, older kernels) no worker exists beside a running hand-in.
    """
    if level in ("namespaces", "none"):
        return True
    landlock = level == "landlock" or os.environ.get("AUTOGRADER_LANDLOCK") != "0"
    return level in ("landlock", "users") and landlock and isolation.landlock_abi() >= 6


def _writes_confined(level):
    """Landlock holds a hand-in's writes to its own folder: it can have left nothing in /tmp and the like."""
    if level == "landlock":
        return True
    return level == "users" and os.environ.get("AUTOGRADER_LANDLOCK") != "0" and isolation.landlock_abi() > 0


def _private_dir(homes, name, owner=None):
    """A new folder `name` for a hand-in, private to `owner` (a user id), or to us where the worker is us.

    Never one used before (os.mkdir refuses one that exists): an ended worker's folder is hidden, then
    removed (SlotZygote._sweep), and whatever it was left as cannot reach the next."""
    path = os.path.join(homes, name)
    os.mkdir(path, 0o700)
    if owner is not None:
        os.chown(path, owner, owner)
    return path


def _pristine(home, owner):
    """Is a spare's folder as it was made: empty, mode 0700, `owner`'s?  (None: no folder, in namespaces.)"""
    if home is None:
        return True
    try:
        info = os.lstat(home)
        with os.scandir(home) as entries:
            empty = next(entries, None) is None
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == owner and empty


def _pidfd(pid):
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # gone already (and reaped), or a kernel without pidfds
        return None


def _kill_quietly(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
