"""One command at a time changes an assignment's gradebook folder (gradebook/lock.py).

A `grade` left running in the background (`cmd &` ignores Ctrl-C) and a second one, or an `extend` while it
runs, are real processes here: the second is refused in one line naming the first (process, user, since
when, command), exits non-zero and changes nothing; readers share; a killed holder leaves no stale lock.
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from autograder.cli.main import main
from autograder.gradebook import lock
from browser.classes import fake_gradebook
from conftest import ROOT

ALICE = ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb"
HOLD = """
import sys, time
from pathlib import Path
from autograder.gradebook import lock
with lock.{kind}(Path(sys.argv[1]){command}):
    print("held", flush=True)
    sys.stdin.read()
"""
CANVAS_ROSTER = """Student,ID,SIS User ID,SIS Login ID,Section,N-Queens (501)
"Smith, Alice",1001,S1001,asmith,A,
"Jones, Bob",1002,S1002,bjones,A,
"""


def holder(folder, kind="exclusive"):
    """A process holding `folder`'s lock until its stdin closes."""
    code = HOLD.format(kind=kind, command=', "autograder grade --assignment n-queens ..."' if kind == "exclusive"
                       else "")
    process = subprocess.Popen([sys.executable, "-c", code, str(folder)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    return process


def has_open(pid, path):
    """Whether process `pid` has `path` open."""
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:       # an fd closed between the listing and its link, or the process gone
        return False


def release(process):
    process.stdin.close()
    assert process.wait(30) == 0


def cli(course, *args):
    return CliRunner().invoke(main, ["--course", str(course), *map(str, args)], catch_exceptions=False)


@pytest.fixture
def semester(course_copy, tmp_path):
    """The course with a roster, a deadline, and n-queens graded into its own folder (grades/n-queens)."""
    toml = course_copy / "course.toml"
    toml.write_text(toml.read_text().replace('[assignment.n-queens]\n# deadline = "2026-12-01T23:59:00-05:00"',
                                             '[assignment.n-queens]\ndeadline = "2026-11-01T23:59:00-05:00"'))
    (tmp_path / "export.csv").write_text(CANVAS_ROSTER)
    assert cli(course_copy, "roster", "import", tmp_path / "export.csv").exit_code == 0
    fake_gradebook(course_copy / "grades" / "n-queens", [
        dict(student="canvas:1001", source="x.zip:smithalice_1001_5001_n-queens.ipynb"),
        dict(student="canvas:1002", source="x.zip:jonesbob_1002_5002_n-queens.ipynb")])
    return course_copy


@pytest.mark.slow
def test_every_verb_that_changes_a_gradebook_waits_for_none_and_changes_nothing(semester, tmp_path):
    folder = semester / "grades" / "n-queens"
    records = semester / "grades" / "course.db"
    before = records.read_bytes(), (folder / "gradebook.db").read_bytes()
    grading = holder(folder)
    try:
        for verb in (["extend", "--assignment", "n-queens", "--student", "asmith", "--until", "2026-11-05",
                      "--reason", "ill"],
                     ["adjust", "--assignment", "n-queens", "--student", "Bob Jones", "--points", "1", "--reason", "x"],
                     ["accommodate", "--group", "extra", "--extra-days", "1", "--student", "asmith"],
                     ["release", "--out", folder, "--to", tmp_path / "release"],
                     ["gradebook", "--to", tmp_path / "book"]):
            done = cli(semester, *verb)
            assert done.exit_code == 1, (verb, done.output)
            said = done.output.strip().splitlines()[-1]
            assert said.startswith("autograder: error:") and "in use" in said, said
            assert f"process {grading.pid} of" in said and "running `autograder grade --assignment n-queens" in said
            assert "nothing was done" in said
        assert (records.read_bytes(), (folder / "gradebook.db").read_bytes()) == before
        assert not (tmp_path / "release").exists() and not (tmp_path / "book").exists()
    finally:
        release(grading)
    done = cli(semester, "extend", "--assignment", "n-queens", "--student", "asmith", "--until", "2026-11-05",
               "--reason", "ill")
    assert done.exit_code == 0, done.output
    assert json.loads((folder / lock.LOCK_NAME).read_text() or "{}") == {}     # free, and says so


@pytest.mark.slow
def test_readers_share_and_a_writer_waits_for_them(semester, tmp_path, monkeypatch):
    folder = semester / "grades" / "n-queens"
    reading = holder(folder, "shared")
    try:
        assert cli(semester, "release", "--out", folder, "--to", tmp_path / "release").exit_code == 0
        monkeypatch.setattr(lock, "WAIT_SECONDS", 0.5)
        refused = cli(semester, "adjust", "--assignment", "n-queens", "--student", "asmith", "--points", "-1",
                      "--reason", "x")
        assert refused.exit_code == 1 and "another command reads it" in refused.output, refused.output
        monkeypatch.setattr(lock, "WAIT_SECONDS", 30)
        later = subprocess.Popen([sys.executable, "-m", "autograder", "--course", str(semester), "adjust",
                                  "--assignment", "n-queens", "--student", "asmith", "--points", "-1", "--reason", "x"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Waiting for the reader, not refused: seen once it has the lock file open (under load a fixed 1 s wait
        # could end before it had started, and prove nothing), and still waiting a second later, well inside
        # its own WAIT_SECONDS (10 s).
        deadline = time.monotonic() + 120
        while not has_open(later.pid, folder / lock.LOCK_NAME):
            assert later.poll() is None, later.communicate()
            assert time.monotonic() < deadline, "the writer never reached the lock"
            time.sleep(0.05)
        time.sleep(1.0)
        assert later.poll() is None
    finally:
        release(reading)
    out, err = later.communicate(timeout=60)
    assert later.returncode == 0, err
    assert "adjustment #1" in out


@pytest.mark.slow
def test_a_killed_holder_leaves_no_lock_behind(semester):
    folder = semester / "grades" / "n-queens"
    grading = holder(folder)
    grading.send_signal(signal.SIGKILL)
    grading.wait(30)
    done = cli(semester, "adjust", "--assignment", "n-queens", "--student", "asmith", "--points", "-1",
               "--reason", "x")
    assert done.exit_code == 0, done.output


@pytest.mark.slow
def test_a_second_grade_beside_a_background_one_is_refused(tmp_path):
    """Two real `grade` runs: the first started as `cmd &` starts it (SIGINT ignored), the second refused."""
    handins = tmp_path / "in"
    handins.mkdir()
    notebook = json.loads(ALICE.read_text())
    notebook["cells"].insert(0, {"cell_type": "code", "execution_count": None, "id": "slow", "metadata": {},
                                 "outputs": [], "source": "import time\ntime.sleep(4)"})
    (handins / "slow.ipynb").write_text(json.dumps(notebook))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "autograder", "--course", str(ROOT), "grade", "--assignment", "n-queens",
               "--jobs", "1", "--out", str(out), str(handins)]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            info = (out / lock.LOCK_NAME).read_text() if (out / lock.LOCK_NAME).exists() else ""
            if info.strip():
                break
            time.sleep(0.1)
        assert json.loads(info)["pid"] == first.pid
        # Held still while the second starts: the engine stops the sleeping cell after its own limit, and under
        # load a second interpreter took longer than that to reach the lock, found it free, and graded nothing.
        os.kill(first.pid, signal.SIGSTOP)
        try:
            second = subprocess.run(command, capture_output=True, text=True, timeout=120)
        finally:
            os.kill(first.pid, signal.SIGCONT)
        assert second.returncode == 1, second.stdout + second.stderr
        assert f"process {first.pid} of" in second.stderr and "since" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        out_text, err_text = first.communicate(timeout=300)
    assert first.returncode == 0, err_text
    with sqlite3.connect(out / "gradebook.db") as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1      # the second started none
    third = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert third.returncode == 0 and "graded 0 hand-in(s)" in third.stdout + third.stderr, third.stderr


def test_the_lock_is_private_to_the_course_and_never_reaches_the_sandbox(tmp_path):
    """Made with the course's umask (0600 here; 0660 in a shared course, tests/publish/test_shared_course.py), and
    close-on-exec: a process the grader starts cannot hold it after the grader is gone."""
    mask = os.umask(0o077)
    try:
        with lock.exclusive(tmp_path, "autograder grade"):
            assert (tmp_path / lock.LOCK_NAME).stat().st_mode & 0o777 == 0o600
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            with lock.exclusive(tmp_path, "autograder grade again"):
                pass
        finally:
            child.kill()
            child.wait()
    finally:
        os.umask(mask)
