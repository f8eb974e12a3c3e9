"""kill -9 in the middle of `grade`, then `grade` again: nothing lost, nothing left running."""

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import ROOT

pytestmark = [pytest.mark.slow]

AUTOGRADER = [sys.executable, "-m", "autograder"]   # the grader of the interpreter running the tests
SUBMISSIONS = ROOT / "examples" / "n-queens" / "submissions"
# peggy's notebook has a cell that loops until its 10 s limit: a kill lands during it.
CLASS = ("alice", "bob", "carol", "peggy", "niaj", "judy")


def grade(out, handins):
    return subprocess.run([*AUTOGRADER, "--course", str(ROOT), "grade", "--assignment", "n-queens",
                           "--jobs", "1", "--out", str(out), str(handins)],
                          capture_output=True, text=True, timeout=300)


def rows(db_path):
    try:
        with sqlite3.connect(db_path) as db:
            return db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
    except sqlite3.Error:
        return 0


def processes_mentioning(text):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if text.encode() in handle.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def test_a_killed_run_resumes_to_the_same_grades(tmp_path):
    handins = tmp_path / "handins"
    handins.mkdir()
    for student in CLASS:
        shutil.copy2(SUBMISSIONS / f"{student}.ipynb", handins)

    clean = grade(tmp_path / "clean", handins)
    assert clean.returncode == 0, clean.stderr

    out = tmp_path / "killed"
    process = subprocess.Popen([*AUTOGRADER, "--course", str(ROOT), "grade", "--assignment", "n-queens",
                                "--jobs", "1", "--out", str(out), str(handins)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while rows(out / "gradebook.db") < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert 3 <= rows(out / "gradebook.db") < len(CLASS), "the kill should land mid-run"
    # The sandbox ends itself once the grader is gone (its zygotes see end-of-file; each slot's waits up to its
    # shutdown bound for its workers): a chain of processes to be scheduled, slower under load.
    deadline = time.monotonic() + 60
    while processes_mentioning(str(out)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_mentioning(str(out)) == [], "the sandbox outlived the grader"

    resumed = grade(out, handins)
    assert resumed.returncode == 0, resumed.stderr
    assert "unchanged since an earlier run" in resumed.stdout
    assert (out / "grades.csv").read_text() == (tmp_path / "clean" / "grades.csv").read_text()

    again = grade(out, handins)
    assert "graded 0 hand-in(s)" in again.stdout
    assert (out / "grades.csv").read_text() == (tmp_path / "clean" / "grades.csv").read_text()
