"""The zygote: a warm process that forks one sandboxed worker per hand-in.

It imports the heavy modules (IPython, numpy, ...) once and finds the
strongest isolation layer that works here.  Then, for each grading slot,
it forks a slot zygote: a copy of itself that joins the slot's CPU group
once and, for each request, forks a child that enters its sandbox
(isolation.py) and serves the grader's requests (worker.py).  A fork costs
a few milliseconds where a fresh interpreter with those imports costs
hundreds.  No zygote runs student code or holds anything secret.  Started
by sandbox.py as

    python -I -B zygote.py CONTROL_FD PRELOAD_JSON auto|namespaces|users|landlock|none

from a private folder holding only zygote.py, isolation.py, cgroups.py,
worker.py and runtime.py.  Requests come over Unix sockets (one to the first
zygote, one to each slot's), with pipe ends attached.
"""

import ctypes
import functools
import json
import os
import select
import signal
import shutil
import socket
import stat
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves our folder off sys.path
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # no thread pools: threads do not survive fork

import cgroups  # noqa: E402
import isolation  # noqa: E402
import worker  # noqa: E402

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
_exits = {}
_groups = None  # cgroups.SlotGroups: each slot's CPU share, where cgroups can be made
_master = None  # the first zygote's pid: workers' user ids are named after it (isolation.worker_uid)
_slot_zygotes = {}  # in the first zygote: identity -> the pid of that slot zygote
_identities = iter(range(isolation.PROBE_LANE // 2))  # in the first zygote: each slot zygote's two lanes
_identity = None  # in a slot's zygote: its number among the sandbox's slot zygotes (its lanes: 2i, 2i + 1)
_spare = None  # in a slot's zygote: (pid, socket, limits, home folder, uid) of its next worker (see _make_spare)
_homes = {}  # in a slot's zygote: worker pid -> its own folder (None in the namespaces layer: a tmpfs)
_uids = {}  # in a slot's zygote: worker pid -> its user id
_made = 0  # in a slot's zygote: workers made so far; consecutive ones get the zygote's two lanes in turn
_doomed = []  # in a slot's zygote: folders of ended workers, hidden, to remove when the zygote is idle
_dirty = None  # in a slot's zygote: why it could not clean up after a hand-in (it is then replaced)
_SLOT_SHUTDOWN = 10.0  # seconds the slots' zygotes get to kill and sweep their workers
_guards = {}  # namespaces worker pid -> the guard process that waits for it
_worker_of_guard = {}  # and back
_own_pid_namespace = None  # as root: our PID namespace, to come back to after each worker's fork
_alive_read = None
_keep = []
_ns_workers = set()  # live workers forked straight into a PID namespace (as root)
_libc = ctypes.CDLL(None)


def main():
    control = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, fileno=int(sys.argv[1]))
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
    os.chmod(here, 0o711)   # a slot's own user id must reach its folder below, and see nothing else
    os.chmod(homes, 0o711)
    global _groups, _own_pid_namespace, _master
    _master = os.getpid()
    probe_dir = _private_dir(homes, "probe", isolation.worker_uid(_master, isolation.PROBE_LANE)
                             if os.geteuid() == 0 else None)
    level, refused, lacking = isolation.probe(mountpoint, probe_dir, sys.argv[3])
    isolation.remove_tree(probe_dir)
    os.mkdir(os.path.join(homes, ENDED), 0o700)   # ours alone: ended workers' folders wait here to be removed
    # Workers orphaned by a slot's zygote that failed come to us, to be reaped.
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # If the grader dies (even by kill -9) our socket reads end-of-file and we
    # clean up and go (see the loop); SIGTERM does the same.
    signal.signal(signal.SIGTERM, lambda signum, frame: _shut_down_master())
    signal.signal(signal.SIGCHLD, _reap)
    _groups = cgroups.SlotGroups(os.getpid()) if level is not None else None
    if level == "namespaces" and os.geteuid() == 0 and isolation.has_cap_sys_admin():
        _own_pid_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY)
    _send(control, {"ready": True, "isolation": level, "refused": refused, "lacks": lacking,
                    "cpu_groups": bool(_groups and _groups.base)})
    if level is None:
        _shut_down_master()
    while True:
        message, fds, _, _ = socket.recv_fds(control, 1 << 16, 1)
        if not message:
            _shut_down_master()
        request = json.loads(message)
        if request["op"] == "slot" and len(fds) == 1:
            identity = next(_identities, None)
            if identity is None:   # every lane has been given: a slot replaced over and over
                os.close(fds[0])
                _send(control, {"pid": None, "error": "no user ids left for another slot in this sandbox"})
                continue
            _send(control, {"pid": _start_slot_zygote(control, shell, request["slot"], identity, fds[0], level,
                                                      mountpoint, homes)})
        else:
            _shut_down_master()


def _start_slot_zygote(control, shell, slot, identity, link_fd, level, mountpoint, homes):
    """Fork the zygote of one grading slot, which forks that slot's workers (see _serve_slot).

    `identity` numbers it among the sandbox's slot zygotes: its lanes (user ids) and folders are its own, so a
    slot's new zygote (after one that could not clean up, see _dirty) shares nothing with the old one."""
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            global _identity
            _identity = identity
            control.close()
            _serve_slot(socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, fileno=link_fd),
                        shell, slot, level, mountpoint, homes)
            code = 0
        finally:
            os._exit(code)
    os.close(link_fd)
    _slot_zygotes[identity] = pid
    return pid


def _serve_slot(link, shell, slot, level, mountpoint, homes):
    """A slot's zygote: forks, sweeps and reaps that slot's workers, on requests over `link`.

    It joins the slot's CPU group once, so every worker is born in it: moving
    a process between cgroups waits for an RCU grace period (about 10 ms here),
    which each hand-in would otherwise pay.  Slots do not share a process, so
    one slot's fork never waits for another's.
    """
    global _alive_read, _spare_wanted
    _exits.clear()
    # Orphans of a worker (a double fork, setsid) come back to us, to be killed
    # (a subreaper's role is not inherited through fork).
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.signal(signal.SIGTERM, lambda signum, frame: _shut_down(level))
    signal.signal(signal.SIGCHLD, _reap)
    if _groups is not None:
        _groups.join(slot)
    if _own_pid_namespace is not None:
        # Held open for our whole life: workers see end-of-file on it once we are gone.
        _alive_read, alive_write = os.pipe()
        _keep.append(alive_write)
    while True:
        _wait_for_request(link, shell, level, mountpoint, homes)
        message, fds, _, _ = socket.recv_fds(link, 1 << 16, 2)
        if not message:
            _shut_down(level)
        request = json.loads(message)
        if request["op"] == "spawn":
            if _dirty is not None:
                # What the last hand-in left could not be cleaned up: no worker of ours may follow it.
                for fd in fds:
                    os.close(fd)
                _send(link, {"pid": None, "error": _dirty, "dirty": True})
                continue
            try:
                pid = _spawn(link, shell, request, fds, level, mountpoint, homes)
            except OSError as error:  # no fork to spare (memory, a process limit): this hand-in's problem
                _send(link, {"pid": None, "error": str(error)[:300]})
                continue
            home = _homes.get(pid)
            _handed.add(pid)
            _send(link, {"pid": pid, "home": os.path.basename(home) if home else None})
            # Not at once: the grader and the new worker are starting the hand-in, and on a small machine the
            # fork would take the CPU they wait for (see _wait_for_request).
            _spare_wanted = (request, time.monotonic() + _SPARE_DELAY) if spares_are_safe(level) else None
        elif request["op"] == "sweep":
            dead = request.get("dead")
            _handed.discard(dead)
            if not request.get("answer", True) and _sweep_waits(level) and dead is not None:
                # Finding what is left of the hand-in means waiting for its worker to die (a few ms,
                # see _sweep): that waits until the next worker has been handed over, or the zygote is idle.
                _pending[dead] = (request["slot"], set(request["keep"]), _pidfd(dead))
                continue
            killed = _sweep(level, request["slot"], _kept(request["keep"]), dead)
            if request.get("answer", True):
                _send(link, {"killed": killed})
        elif request["op"] == "exit-status":
            _send(link, {"status": _exit_status(request["pid"])})
        else:
            _shut_down(level)


# Unanswered sweeps that wait for their worker's death: dead worker pid -> (slot, pids to keep, a pidfd on it).
_pending = {}
_handed = set()  # workers this slot's zygote handed to the grader that it has not been told are dead


def _kept(keep):
    """Processes a sweep must spare: the grader's live workers, those handed since it asked, and the spare
    (made and shut in by us, see _make_spare).  A hand-in's own children stay its worker's descendants
    even when orphaned (a worker is their subreaper, see _fork_worker), so none of them is our child."""
    return set(keep) | _handed | ({_spare[0]} if _spare is not None else set())


def _sweep_waits(level):
    """Whether a sweep may wait, unanswered, for the dead worker to die, and the next worker be handed over
    first: only in the none layer, which promises nothing.  Elsewhere every leftover of a hand-in is gone before
    the next one runs (in the landlock layer as an ordinary user that means waiting for the worker to die, a
    median 2 ms, while the grader scores the hand-in): one still running beside the next could reach it through
    what no layer there shuts, such as a lock on a file both can read."""
    return level == "none"


# Seconds after handing a worker over before the slot's next spare is made.  A hand-in's first
# milliseconds are the grader's and its worker's (sending and starting the cells); making a spare
# takes 3-5 ms of CPU (the fork, the isolation), which on a 2-core machine they would wait for.
_SPARE_DELAY = 0.008
_spare_wanted = None  # (the spawn request the spare is for, when to make it), or None


def _wait_for_request(link, shell, level, mountpoint, homes):
    """Block until a request comes; meanwhile sweep each pending hand-in as soon as its worker has died,
    and make the spare when it is due."""
    global _spare_wanted
    while _pending or _spare_wanted is not None or _doomed:
        handles = [handle for _, _, handle in _pending.values() if handle is not None]
        if len(handles) < len(_pending):  # a worker gone (and reaped) before it could be watched
            ready = []
        else:
            wait = None if _spare_wanted is None else max(0.0, _spare_wanted[1] - time.monotonic())
            ready, _, _ = select.select([link, *handles], [], [], 0 if _doomed else wait)
            if link in ready:
                return
            if _doomed and not ready:   # idle: a hidden folder of an ended worker goes
                _remove_doomed(_doomed.pop())
                continue
        for dead, (slot, keep, handle) in list(_pending.items()):
            if handle is None or handle in ready:
                _finish_sweep(level, dead)
        if _spare_wanted is not None and time.monotonic() >= _spare_wanted[1]:
            request, _spare_wanted = _spare_wanted[0], None
            # The spare gets the folder a swept hand-in had: what is left of that hand-in goes first.
            _sweep_pending(level)
            _make_spare(link, shell, request, level, mountpoint, homes)


def _sweep_pending(level):
    for dead in list(_pending):
        _finish_sweep(level, dead)


def _finish_sweep(level, dead):
    slot, keep, handle = _pending.pop(dead)
    if handle is not None:
        os.close(handle)
    _sweep(level, slot, _kept(keep), dead)


def _pidfd(pid):
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # gone already (and reaped), or a kernel without pidfds
        return None


def _shut_down(level):
    """A slot's zygote, at the end: kill every worker and whatever is left of its hand-in."""
    # Workers forked straight into their PID namespaces: kill each and wait, which
    # lasts until the kernel has ended every process of its namespace.
    for pid in list(_ns_workers):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for pid in list(_ns_workers):
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    for worker_pid, guard in list(_guards.items()):  # namespaces workers still running
        for pid in (worker_pid, guard):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _exit_status(worker_pid)
    _sweep(level, None, set(), None)
    while _doomed:
        _remove_doomed(_doomed.pop())
    os._exit(0)


def _shut_down_master():
    """Wait for the slots' zygotes (told to stop, or seeing the grader gone), then remove the CPU groups."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    deadline = time.monotonic() + _SLOT_SHUTDOWN
    for pid in _slot_zygotes.values():
        while pid not in _exits:
            try:
                ended, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            if ended or time.monotonic() > deadline:
                break
            time.sleep(0.01)
    for pid in _slot_zygotes.values():
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
    if _groups is not None:
        _groups.close()
    os._exit(0)


def _spawn(control, shell, request, fds, level, mountpoint, homes):
    """A worker for a slot, shut in by `level`, serving the pipes `fds`; returns its pid (as we see it).

    In the namespaces layer it is the spare made after the last request when
    there is one (see _make_spare): it only has to be handed its pipes.
    """
    global _spare
    spare, _spare = _spare, None
    if spare is not None:
        pid, channel, limits, home, uid = spare
        handed = False
        try:
            # A spare is handed over only as it was made: its folder empty and private, whatever the hand-in
            # that ran beside it tried (it should have been able to do nothing to it: see isolation.py).
            if limits == request["limits"] and _pristine(home, uid if _has_own_uid(level) else os.geteuid()):
                socket.send_fds(channel, [b"pipes"], fds)
                handed = True
        except OSError:
            pass  # it is gone: a fresh one below
        finally:
            channel.close()
        if handed:
            for fd in fds:
                os.close(fd)
            _homes[pid], _uids[pid] = home, uid
            return pid
        _kill_quietly(pid)
        _uids[pid], _homes[pid] = uid, home   # swept, and its folder removed, as any ended worker's
        _sweep(level, request["slot"], _kept([]), pid)
    _sweep_pending(level)  # a new worker may get the folder of one whose leftovers are not swept yet
    try:
        return _fork_worker(control, shell, request["slot"], request["limits"], fds, level, mountpoint, homes)
    finally:
        for fd in fds:
            os.close(fd)


def _make_spare(control, shell, request, level, mountpoint, homes):
    """Fork and shut in the slot's next worker now, while the grader is busy, where nothing the running
    hand-in does can reach it (spares_are_safe).

    It waits, fully isolated, for its pipes (_spawn), so the next hand-in does not
    wait for a fork and a sandbox to be built: 3 ms as root, 12 ms through a user
    namespace, 3-4 ms in the other layers.  It has a folder of its own, the one
    the hand-in before the running one had.
    """
    global _spare
    if not spares_are_safe(level):
        return
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        pid = _fork_worker(control, shell, request["slot"], request["limits"], theirs, level, mountpoint, homes,
                           drop=ours)
    except OSError:
        ours.close()
        return
    finally:
        theirs.close()
    _spare = (pid, ours, request["limits"], _homes.pop(pid, None), _uids.pop(pid, None))


@functools.lru_cache(maxsize=None)  # what the kernel and the environment say does not change in a zygote's life
def spares_are_safe(level):
    """Whether a worker may exist before its hand-in, beside the one running.

    A spare shares its slot's user id with the hand-in being graded, so only where
    that hand-in cannot signal, trace or write to it:
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


# What a spare runs before its hand-in (see _pipes): a definition, a call, nothing left behind.
_WARM_CELL = "def _autograder_warm_up(x):\n    return [x, {'x': (x,)}]\n_autograder_warm_up(1)\ndel _autograder_warm_up"


def _pipes(pipes, shell):
    """The worker's request and reply pipes: given, or (a spare) awaited from the zygote."""
    if not isinstance(pipes, socket.socket):
        return pipes
    # A spare has time to spare: it runs IPython's path through a cell once now, so the pages that path
    # writes (reference counts, caches: a forked copy's first touch of each costs a page fault and a
    # copy, about 1 ms in all) are its own before its hand-in's first cell, not during it.  It changes
    # nothing a notebook can see: the zygote ran the same cell before any fork.
    shell.run_cell(_WARM_CELL, store_history=False)
    _, fds, _, _ = socket.recv_fds(pipes, 16, 2)
    pipes.close()
    if len(fds) != 2:  # the zygote dropped this spare, or is gone
        os._exit(0)
    return fds


def _kill_quietly(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _fork_worker(control, shell, slot, limits, pipes, level, mountpoint, homes, drop=None):
    """Fork a worker; `pipes`: its two pipe ends, or a socket to await them on (a spare).

    `drop`: a socket the child must not keep (the zygote's end of a spare's).
    """
    global _made
    zygote = os.getpid()
    _made += 1
    # The zygote's two lanes in turn: a spare is made while the hand-in before it still runs under the other.
    uid = isolation.worker_uid(_master, 2 * _identity + _made % 2)
    # A folder of its own, never used before: nothing an earlier hand-in did to its own can reach it.
    private = None if level == "namespaces" else \
        _private_dir(homes, f"slot-{slot}-{_identity}-{_made}", uid if _has_own_uid(level) else None)
    if level == "namespaces" and _own_pid_namespace is not None:
        pid = _spawn_as_root(control, shell, limits, pipes, uid, mountpoint, drop)
        _uids[pid] = uid
        return pid
    report_read, report_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            os.close(report_read)
            _child_start(control, drop)
            if level == "namespaces":
                _namespaces_worker(shell, pipes, uid, limits, mountpoint, report_write, zygote)
            else:
                os.write(report_write, str(os.getpid()).encode())
                os.close(report_write)
                if level == "users":
                    # AUTOGRADER_LANDLOCK=0: permissions alone, as on a kernel without Landlock (for tests).
                    extra = None if os.environ.get("AUTOGRADER_LANDLOCK") == "0" else isolation.landlock_read_paths()
                    isolation.enter_users(uid, limits, private, extra)
                elif level == "landlock":
                    isolation.enter_landlock(limits, private, isolation.landlock_read_paths(),
                                             uid if os.geteuid() == 0 else None)
                else:
                    isolation.enter_none(limits, private)
                # Its hand-in's orphans come to it, as to PID 1 in the namespaces layer, not to us: anything
                # that is our child and no worker is a dead hand-in's leftover, whatever runs meanwhile.
                _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
                _die_with_parent(lambda: os.getppid() == zygote)
                worker.serve(shell, *_pipes(pipes, shell))
            code = 0
        finally:
            os._exit(code)
    os.close(report_write)
    with os.fdopen(report_read, "rb") as report:
        answer = report.read()
    try:
        worker_pid = int(answer)
    except ValueError:
        _homes[pid], _uids[pid] = private, uid
        return pid  # it failed before it could serve: the grader sees it die at once
    _homes[worker_pid], _uids[worker_pid] = private, uid
    if worker_pid != pid:
        _guards[worker_pid] = pid
        _worker_of_guard[pid] = worker_pid
        if pid in _exits:  # the guard ended (and was reaped) before it was filed as one
            _guards.pop(worker_pid)
            _exits[worker_pid] = _from_guard(_exits.pop(pid))
    return worker_pid


def _child_start(control, drop=None):
    """What every worker does first, in the zygote's child, before any isolation."""
    control.close()
    if drop is not None:
        drop.close()
    # The zygote's end of its life pipe (a worker must not keep it open), and
    # its handle on the grader's PID namespace (nothing in a hand-in needs it).
    for fd in _keep + ([_own_pid_namespace] if _own_pid_namespace is not None else []):
        os.close(fd)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)


def _spawn_as_root(control, shell, limits, pipes, uid, mountpoint, drop):
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
            isolation.restore_pid(_own_pid_namespace)
    if pid == 0:
        code = 70
        try:
            _child_start(control, drop)
            state = isolation.enter_namespaces(uid, limits, mountpoint, new_pid=False)
            isolation.finish_namespaces(state, limits, mountpoint)
            # getppid() is 0 in a new PID namespace: the zygote's life pipe tells instead.
            _die_with_parent(lambda: not select.select([_alive_read], [], [], 0)[0])
            worker.serve(shell, *_pipes(pipes, shell))
            code = 0
        finally:
            os._exit(code)
    _ns_workers.add(pid)
    return pid


def _namespaces_worker(shell, pipes, uid, limits, mountpoint, report_write, zygote):
    """In the zygote's child (the guard): new namespaces, then the worker as PID 1 of the new PID namespace.

    The guard stays, waiting for the worker, and exits the way it ended
    (128 + N for signal N).  Each dies with its parent (PR_SET_PDEATHSIG), so
    the chain zygote -> guard -> worker holds even through kill -9; and the
    worker, being PID 1, takes every process of its hand-in with it.
    """
    state = isolation.enter_namespaces(uid, limits, mountpoint)
    _die_with_parent(lambda: os.getppid() == zygote)
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
            isolation.finish_namespaces(state, limits, mountpoint)
            _die_with_parent(lambda: not select.select([alive_read], [], [], 0)[0])
            os.close(alive_read)
            worker.serve(shell, *_pipes(pipes, shell))
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


def _die_with_parent(parent_alive):
    """Be killed when our parent dies.

    Armed only now, after the last change of identity: the kernel forgets a
    parent-death signal whenever a process's credentials change (setuid,
    a new user namespace).  If the parent died before it was armed, go now.
    """
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if not parent_alive():
        os._exit(70)


def _private_dir(homes, name, owner=None):
    """A new folder `name` for a hand-in, private to `owner` (a user id), or to us where the worker is us.

    Never one used before (os.mkdir refuses one that exists): an ended worker's folder is hidden, then
    removed (_sweep), and whatever it was left as cannot reach the next."""
    path = os.path.join(homes, name)
    os.mkdir(path, 0o700)
    if owner is not None:
        os.chown(path, owner, owner)
    return path


def _has_own_uid(level):
    """Does a worker of `level` run under its lane's user id (as root) rather than ours?"""
    return level in ("users", "landlock") and os.geteuid() == 0


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


def _exit_status(pid):
    """How a (killed or ended) worker ended, waiting for it if it is not reaped yet."""
    _ns_workers.discard(pid)
    guard = _guards.pop(pid, None)
    if guard is not None:  # a namespaces worker: its guard exits the way it ended
        _worker_of_guard.pop(guard, None)
        try:
            _, status = os.waitpid(guard, 0)
            return _from_guard(os.waitstatus_to_exitcode(status))
        except ChildProcessError:  # the SIGCHLD handler reaped it meanwhile
            code = _exits.pop(guard, None)
            return _from_guard(code) if code is not None else _exits.pop(pid, None)
    if pid not in _exits:
        try:
            _, status = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            pass  # the SIGCHLD handler got there first
    return _exits.pop(pid, None)


def _from_guard(code):
    """A guard exits 128 + N when its worker died of signal N (see _namespaces_worker)."""
    return code - 128 if code is not None and code > 128 else code


def _reap(signum, frame):
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        code = os.waitstatus_to_exitcode(status)
        _ns_workers.discard(pid)
        worker_pid = _worker_of_guard.pop(pid, None)
        if worker_pid is not None:  # a guard: file its worker's ending under the worker's pid
            _guards.pop(worker_pid, None)
            _exits[worker_pid] = _from_guard(code)
        else:
            _exits[pid] = code
        if len(_exits) > 10000:
            _exits.pop(next(iter(_exits)))


def _sweep(level, slot, keep, dead):
    """Clean up after a slot's hand-in, whose worker `dead` has ended (None: every worker, at the end).

    First its folder is hidden (mode 000: no other worker can even `stat` what is in it), at once; then every
    process it left is killed; then what it left outside its folder is removed (where the layer let it
    write there); its folder goes when the zygote is next idle (_remove_doomed).  What cannot be cleaned up
    makes the zygote _dirty: it hands over no other worker, and the grader replaces it.

    Leftover processes: "namespaces": the worker was PID 1 of its PID namespace, and the kernel killed the
    rest with it.  As root each worker has a user id of its own, which finds them all.  Otherwise the orphans
    come back to us (the subreaper) once their worker is gone, so we wait for it, and for each generation.
    `keep` holds the live workers and the spare.
    """
    workers = [dead] if dead is not None else list(_uids)
    for pid in workers:
        _hide(_homes.pop(pid, None))
    uids = {_uids.pop(pid, None) for pid in workers} - {None}
    if level in ("namespaces", None):
        # Nothing to wait for: the kernel ends the namespace with its PID 1, and the guard is reaped when
        # it exits (tearing the namespaces down takes milliseconds no grading slot should wait through).
        return 0
    by_uid = _sweeps_by_uid(level)
    # The grader has killed the dead worker itself: only what it left is looked for.
    killed, already = set(), {dead}
    if not by_uid and dead:
        _exits[dead] = _exit_status(dead)  # reparents its children to us
    found = []
    for _ in range(100):  # a fork racing the sweep is caught on the next pass
        found = [pid for pid in ([p for uid in uids for p in _pids_of(uid)] if by_uid else _children())
                 if pid not in keep and pid not in killed and pid not in already]
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            killed.add(pid)
        if not by_uid:
            for pid in found:
                _exit_status(pid)  # reaped, so its own children come back to us
    if found:
        _make_dirty(f"{len(found)} process(es) of a hand-in would not die")
    for uid in uids if by_uid else ():
        _remove_leftovers(uid, files=not _writes_confined(level))
    return len(killed)


# A folder of `home/` that only the zygotes' own user may enter: ended workers' folders are moved there.
ENDED = ".ended"


def _hide(folder):
    """Make an ended worker's folder unreachable at once, and queue it for removal: moved into ENDED, which no
    worker's user id may enter (as root, whatever a leftover of the hand-in does to the folder's own mode before
    it is killed), and made mode 000 (as an ordinary user, where every worker is us: no hand-in can change a mode
    there, see isolation.shut_system_calls).  No other hand-in can even `stat` what is in it."""
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
        _make_dirty(f"an ended hand-in's folder could not be hidden ({error.strerror})")
        return
    _doomed.append(hidden)


def _remove_doomed(folder):
    if not isolation.remove_tree(folder):
        try:
            os.chmod(folder, 0)   # hidden again: removing it made its folders ours to list
        except OSError:
            pass
        _make_dirty("an ended hand-in's folder could not be removed")


def _make_dirty(why):
    global _dirty
    _dirty = _dirty or f"this slot could not be cleaned up after a hand-in: {why}"


def _sweeps_by_uid(level):
    """A slot has a user id of its own (the users layer; the landlock layer as root): its leftovers are
    found by that id, at once, without waiting for anything to die."""
    return level == "users" or (level == "landlock" and os.geteuid() == 0)


@functools.lru_cache(maxsize=None)
def _writes_confined(level):
    """Landlock holds a hand-in's writes to its own folder: it can have left nothing in /tmp and the like."""
    if level == "landlock":
        return True
    return level == "users" and os.environ.get("AUTOGRADER_LANDLOCK") != "0" and isolation.landlock_abi() > 0


# Where any user may write, so where one hand-in could leave a file for the next one of its slot (same
# user id) to read, when no Landlock keeps it in its own folder.  Found once, to a few levels deep.
_WORLD_WRITABLE_ROOTS = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run", "/var/lock", "/var/crash")
_world_writable = None
_SYSV_IPC = (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl"))
IPC_RMID = 0


def _remove_leftovers(uid, files=True):
    """Remove what a slot's user id left where every user can write, and its System V IPC objects.

    Only what that user id owns, never following a link (a link is removed, not its target).
    `files`: False where Landlock let it write nowhere but its own folder (only IPC objects are looked for)."""
    global _world_writable
    if files and _world_writable is None:
        _world_writable = [p for root in _WORLD_WRITABLE_ROOTS for p in _writable_folders(root, depth=3)]
    for folder in _world_writable if files else ():
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
                if info.st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass
    for kind, remove in _SYSV_IPC:
        try:
            with open(f"/proc/sysvipc/{kind}") as handle:
                lines = handle.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            # key, id, perms, then (shm) size, cpid, lpid, nattch, uid ... / (msg, sem) ... uid at a known place
            owner = {"shm": 7, "msg": 7, "sem": 4}[kind]
            try:
                if int(fields[owner]) == uid:
                    _libc[remove](int(fields[1]), IPC_RMID, None) if kind != "sem" else \
                        _libc[remove](int(fields[1]), 0, IPC_RMID)
            except (IndexError, ValueError, AttributeError):
                pass


def _writable_folders(root, depth):
    """`root` and the folders under it that every user may write into, `depth` levels deep, no link followed."""
    found = []
    try:
        info = os.lstat(root)
    except OSError:
        return found
    if not stat.S_ISDIR(info.st_mode):
        return found
    if info.st_mode & stat.S_IWOTH:
        found.append(root)
    if depth:
        try:
            children = [e.path for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
        except OSError:
            children = []
        for child in children:
            found += _writable_folders(child, depth - 1)
    return found


def _pids_of(uid):
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    pids.append(int(entry))
            except FileNotFoundError:
                pass
    return pids


def _children():
    pids = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as handle:
            pids += [int(pid) for pid in handle.read().split()]
    return pids


def _send(control, message):
    control.send(json.dumps(message).encode())


if __name__ == "__main__":
    main()
