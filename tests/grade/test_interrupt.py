"""Ctrl-C in the middle of `grade`, on a real process: it stops at once, keeps what was graded, says how to resume."""

import csv
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import ROOT
from test_resume import processes_mentioning

pytestmark = [pytest.mark.slow, pytest.mark.alone]

AUTOGRADER = [sys.executable, "-m", "autograder"]   # the grader of the interpreter running the tests
SUBMISSIONS = ROOT / "examples" / "n-queens" / "submissions"
# peggy's notebook has a cell that loops until its 10 s limit, ivan's cases time out: Ctrl-C lands in them.
CLASS = ("alice", "bob", "peggy", "ivan", "carol", "judy")


def counted(db_path):
    try:
        with sqlite3.connect(db_path) as db:
            return db.execute("SELECT COUNT(*) FROM submissions WHERE counted = 1").fetchone()[0]
    except sqlite3.Error:
        return 0


def command(out, handins):
    return [*AUTOGRADER, "--course", str(ROOT), "grade", "--assignment", "n-queens", "--jobs", "1",
            "--out", str(out), str(handins)]


def test_ctrl_c_stops_within_2_s_writes_grades_and_a_rerun_resumes(tmp_path):
    handins = tmp_path / "handins"
    handins.mkdir()
    for student in CLASS:
        shutil.copy2(SUBMISSIONS / f"{student}.ipynb", handins)
    out = tmp_path / "out"
    # Started as from a terminal, where Ctrl-C reaches it: with the default SIGINT action, even when the tests
    # themselves run with SIGINT ignored (a background job, nohup), which the grader would inherit and keep.
    process = subprocess.Popen(command(out, handins), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while counted(out / "gradebook.db") < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)                                   # into peggy's 10 s loop
    pressed = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)             # what a terminal's Ctrl-C does: the whole process group
    time.sleep(0.05)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)         # an impatient second Ctrl-C changes nothing
    stdout, stderr = process.communicate(timeout=30)
    stopped = time.monotonic() - pressed
    assert stopped < 2.0, f"took {stopped:.1f} s to stop"
    print(f"stopped {stopped:.2f} s after Ctrl-C")
    # The grader has ended; its sandbox's processes end with it, a chain the kernel schedules (slower under
    # load than the fixed second once waited here).  One that outlived it (a looper) is still there after 15 s.
    deadline = time.monotonic() + 15
    while processes_mentioning(str(out)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_mentioning(str(out)) == [], "the sandbox outlived the grader"
    assert not list(out.glob("autograder-sandbox-*")), "the sandbox folder was left behind"
    assert process.returncode == 130, stderr
    assert "Run the same command again to finish" in stderr
    # Hand-ins still running when the sandbox closed are not grader errors: no traceback, one closing line.
    assert "Traceback" not in stderr and "SandboxError" not in stderr and "failed" not in stderr, stderr
    assert "[0/6] running alice" in stderr and "[1/6] alice: 5 / 5 graded" in stderr   # plain lines, not a bar
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        everyone = list(csv.DictReader(handle))
    # Every hand-in has its row; those the run did not get to are not-graded, with no score (never 0).
    assert sorted(r["student"] for r in everyone) == sorted(CLASS)
    rows = [r for r in everyone if r["status"] != "not-graded"]
    assert all(r["score"] == "" for r in everyone if r["status"] == "not-graded")
    assert 2 <= len(rows) < len(CLASS) and len(rows) == counted(out / "gradebook.db")
    assert {"alice", "bob"} <= {r["student"] for r in rows}

    resumed = subprocess.run(command(out, handins), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(rows)} unchanged since an earlier run" in resumed.stdout
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        assert sorted(r["student"] for r in csv.DictReader(handle)) == sorted(CLASS)
