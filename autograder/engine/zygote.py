"""The zygote: a warm process that forks one sandboxed worker per hand-in.

It imports the heavy modules (IPython, numpy, ...) once, then for each
request forks a child that enters its sandbox (isolation.py) and serves the
grader's requests (worker.py).  A fork costs a few milliseconds where a fresh
interpreter with those imports costs hundreds.  It never runs student code
itself and holds nothing secret.  Started by sandbox.py as

    python -I -B zygote.py CONTROL_FD PRELOAD_JSON auto|basic

from a private folder holding only zygote.py, isolation.py, worker.py and
runtime.py.  Requests come over a Unix socket, with pipe ends attached.
"""

import ctypes
import json
import os
import signal
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves our folder off sys.path
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # no thread pools: threads do not survive fork

import isolation  # noqa: E402
import worker  # noqa: E402

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
_exits = {}
_slots_used = set()
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
    mountpoint = os.path.join(os.path.dirname(os.path.abspath(__file__)), "root")
    os.makedirs(mountpoint, exist_ok=True)
    level = isolation.probe(mountpoint) if sys.argv[3] == "auto" else "basic"
    # Orphans of a worker (a double fork, setsid) come back to us, to be killed.
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # If the grader dies (even by kill -9) our socket reads end-of-file and we
    # clean up and go (see the loop); SIGTERM does the same.
    signal.signal(signal.SIGTERM, lambda signum, frame: _shut_down(level))
    signal.signal(signal.SIGCHLD, _reap)
    _send(control, {"ready": True, "isolation": level})
    while True:
        message, fds, _, _ = socket.recv_fds(control, 1 << 16, 2)
        if not message:
            _shut_down(level)
        request = json.loads(message)
        if request["op"] == "spawn":
            _send(control, {"pid": _spawn(control, shell, request, fds, level, mountpoint)})
        elif request["op"] == "sweep":
            _send(control, {"killed": _sweep(level, request["slot"], set(request["keep"]), request.get("dead"))})
        elif request["op"] == "exit-status":
            _send(control, {"status": _exit_status(request["pid"])})
        else:
            _shut_down(level)


def _shut_down(level):
    for slot in _slots_used:
        _sweep(level, slot, set(), None)
    os._exit(0)


def _spawn(control, shell, request, fds, level, mountpoint):
    _slots_used.add(request["slot"])
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            control.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            isolation.enter(level, isolation.slot_uid(os.getppid(), request["slot"]), request["limits"],
                            mountpoint)
            worker.serve(shell, fds[0], fds[1])
            code = 0
        finally:
            os._exit(code)
    for fd in fds:
        os.close(fd)
    return pid


def _exit_status(pid):
    """How a (killed or ended) worker ended, waiting for it if it is not reaped yet."""
    if pid not in _exits:
        try:
            _, status = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            pass  # the SIGCHLD handler got there first
    return _exits.pop(pid, None)


def _reap(signum, frame):
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _exits[pid] = os.waitstatus_to_exitcode(status)
        if len(_exits) > 10000:
            _exits.pop(next(iter(_exits)))


def _sweep(level, slot, keep, dead):
    """Kill every process left over from a slot's hand-in; `dead` is its worker.

    With full isolation a slot has a user id of its own, so that finds them
    all.  Otherwise the orphans come back to us (the subreaper) once their
    parents are gone, so we wait for each generation and sweep again.
    `keep` holds the live workers of other slots.
    """
    killed = set()
    if level != "full" and dead:
        _exits[dead] = _exit_status(dead)  # reparents its children to us
    for _ in range(100):  # a fork racing the sweep is caught on the next pass
        found = [pid for pid in (_pids_of(isolation.slot_uid(os.getpid(), slot)) if level == "full" else _children())
                 if pid not in keep and pid not in killed]
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            killed.add(pid)
        if level != "full":
            for pid in found:
                _exit_status(pid)  # reaped, so its own children come back to us
    return len(killed)


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
