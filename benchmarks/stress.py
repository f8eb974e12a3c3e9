"""Run a command (by default the CI command, `bash .ci/run`) beside N processes that keep a CPU busy each.

A test that fails here but passes alone fails on load, not on a defect: it waits for a fixed time or judges wall
time against a constant (CONTRIBUTING.md, "Tests under load").  The hogs are ended whatever happens (the command
fails, Ctrl-C, SIGTERM); then the command's exit status and wall time are printed, one line per run.

    python3 benchmarks/stress.py                      # bash .ci/run beside 2 hogs (standard library only:
    python3 benchmarks/stress.py --hogs 3 --runs 3 -- .venv/bin/python -m pytest tests/engine   # a fresh clone)

Stopped (Ctrl-C, SIGTERM), it ends the command's whole process group too, not only the command: a CI run whose
`bash` alone is killed goes on, as make and pytest, loading the machine with no one to read its output.

After a run that exits 0, the pytest sessions it left (pytest-of-<user>/pytest-N, gigabytes of venvs and graded
classes) are removed, so that each run starts as CI's fresh machine does: pytest removes all but its last three
sessions as it exits, and that took the `alone` tier of each later run from 124 s to 400 s.  A failed run's are
kept, to be read.
"""

import argparse
import ctypes
import getpass
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CI_COMMAND = ["bash", ".ci/run"]
# Pure CPU, no memory, no files: a busy loop in a Python of its own.
HOG = "while True:\n    pass"


def _die_with_this_process():
    # A hog outlives nothing: even `kill -9` of this script ends them (PR_SET_PDEATHSIG, SIGKILL).
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


def start_hogs(count):
    return [subprocess.Popen([sys.executable, "-c", HOG], stdin=subprocess.DEVNULL,
                             preexec_fn=_die_with_this_process) for _ in range(count)]


def stop_hogs(hogs):
    for hog in hogs:
        hog.kill()
    for hog in hogs:
        hog.wait()


def pytest_sessions():
    """The session folders pytest keeps for this user (where pytest puts them: its own rule)."""
    root = Path(os.environ.get("PYTEST_DEBUG_TEMPROOT") or tempfile.gettempdir()) / f"pytest-of-{getpass.getuser()}"
    try:
        return {entry for entry in root.iterdir() if entry.name.startswith("pytest-") and not entry.is_symlink()}
    except OSError:
        return set()


def _terminated(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def machine_seconds():
    """(busy, idle, stolen) CPU-seconds of the whole machine since boot, from /proc/stat's first line."""
    with open("/proc/stat") as handle:
        fields = [int(x) for x in handle.readline().split()[1:9]]
    tick = os.sysconf("SC_CLK_TCK")
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq) / tick, (idle + iowait) / tick, steal / tick


def run_once(command, hogs):
    """(exit status, wall seconds) of `command` run in the checkout beside `hogs` busy processes."""
    started = time.monotonic()
    busy = start_hogs(hogs)
    try:
        # A session of its own: what it starts can be ended with it, and a terminal's Ctrl-C comes here first.
        with subprocess.Popen(command, cwd=ROOT, start_new_session=True) as process:
            try:
                status = process.wait()
            except BaseException:
                end_group(process)
                raise
    finally:
        stop_hogs(busy)
    return status, time.monotonic() - started


def end_group(process, grace=10.0):
    """SIGTERM to the command's process group, then, after `grace` seconds, SIGKILL to what is left of it."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, signum)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                return
            if process.poll() is not None and not _group_alive(process.pid):
                return
            time.sleep(0.05)


def _group_alive(group):
    """Is a process of `group` still running (not a zombie)?"""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] not in (b"Z", b"X"):
            return True
    return False


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hogs", type=int, default=2, help="CPU hogs beside the command (default 2)")
    parser.add_argument("--runs", type=int, default=1, help="times to run the command (default 1)")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="the command, after `--` (default: bash .ci/run)")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    command = command or CI_COMMAND
    if args.hogs < 0 or args.runs < 1:
        parser.error("--hogs must be 0 or more and --runs 1 or more")
    signal.signal(signal.SIGTERM, _terminated)
    # Started as a script's background job (`cmd &`), this process inherits SIGINT ignored and `kill -INT` of it did
    # nothing: only the run's own process group got the signal, and the next run started.  Ctrl-C is a stop here.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    results = []
    for run in range(1, args.runs + 1):
        before = pytest_sessions()
        machine = machine_seconds()
        try:
            status, seconds = run_once(command, args.hogs)
        except KeyboardInterrupt as stop:
            print(f"stress: run {run}/{args.runs} stopped ({stop or 'Ctrl-C'}); the hogs are ended", flush=True)
            return 130
        results.append(status)
        left = sorted(pytest_sessions() - before)
        if status == 0:
            for session in left:
                shutil.rmtree(session, ignore_errors=True)
        # The whole machine's CPU over the run (the hogs' too): on a shared machine a slower wall time with as much
        # busy CPU says that the machine, not the code, was slower; stolen time is what its host took.
        busy, idle, stolen = (after - first for after, first in zip(machine_seconds(), machine))
        print(f"stress: run {run}/{args.runs} of {' '.join(command)} beside {args.hogs} CPU hogs: "
              f"exit status {status}, {seconds:.0f} s wall; the machine's CPU: {busy:.0f} s busy, {idle:.0f} s idle, "
              f"{stolen:.0f} s stolen; its {len(left)} pytest session(s) {'removed' if status == 0 else 'kept'}",
              flush=True)
    return 0 if all(status == 0 for status in results) else 1


if __name__ == "__main__":
    sys.exit(main())
