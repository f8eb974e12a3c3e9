"""The public corpus of hostile and broken hand-ins grades as expected, and leaves nothing behind."""

import csv
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner

from autograder.engine import isolation
from autograder.cli.main import main
from autograder.grade.handin import shared_sandbox
from conftest import ROOT

pytestmark = [pytest.mark.slow]

CORPUS = ROOT / "tests" / "hostile" / "n-queens"


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def sandbox_processes():
    """Processes a sandbox started (they carry AUTOGRADER_SANDBOX, its folder) that outlived it: their sandbox's
    folder is gone, which Sandbox.close removes only once its zygotes and every worker have ended.

    Other sandboxes may be running at the same time (other tests, other graders, other versions of this one):
    their processes are theirs, not leftovers, and their folders still exist.
    """
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = dict(item.split(b"=", 1) for item in handle.read().split(b"\0") if b"=" in item)
            with open(f"/proc/{pid}/stat", "rb") as handle:
                state = handle.read().rsplit(b") ", 1)[1][:1]
        except OSError:
            continue
        folder = environ.get(b"AUTOGRADER_SANDBOX")
        if folder and state != b"Z" and not os.path.exists(folder):
            found.append(pid)
    return found


# Limits tighter than the defaults (a 0.1 s floor, 10x the reference): the loopers here cost a sixth of
# their default limits, and every row is what the defaults give (tests/hostile/n-queens/expected.csv).
TIGHT = ("--limit-floor", "0.1", "--limit-factor", "10")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if shared_sandbox().isolation != "namespaces":
        pytest.skip("the hostile corpus needs the namespaces layer here: a fork bomb is in it")
    out = tmp_path_factory.mktemp("hostile")
    result = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens",
                                       "--out", str(out), *TIGHT, "--submission-timeout", "20",
                                       str(CORPUS)])
    assert result.exit_code == 0, result.output
    return out


def test_every_hostile_or_broken_hand_in_gets_its_expected_row(graded):
    rows = read_csv(graded / "grades.csv")
    expected = read_csv(CORPUS / "expected.csv")
    assert sorted(rows) == sorted(expected)
    for student, want in expected.items():
        got = rows[student]
        assert (float(got["score"]), got["status"]) == (float(want["score"]), want["status"]), student


def test_no_process_outlives_grading(graded):
    assert sandbox_processes() == []


def test_nothing_is_written_outside_the_output_folder(graded, tmp_path):
    # The disk filler and the fork bomb wrote only into their private, throwaway file system.
    assert not (CORPUS / "big.bin").exists()
    assert not list(ROOT.rglob("big.bin"))


def _python_dirs_under_tmp():
    return {Path(p).relative_to("/tmp").parts[0] for p in isolation.python_paths()
            if Path(p).is_relative_to("/tmp") and Path(p) != Path("/tmp")}


def test_the_sandbox_hides_the_course_and_the_network():
    sandbox = shared_sandbox()
    if sandbox.isolation != "namespaces":
        pytest.skip("needs the namespaces layer")
    worker = sandbox.worker(0)
    try:
        probe = (
            "import os, socket\n"
            # Only the Python environment is visible inside the course folder (when it lives there).
            f"assert not os.path.exists({str(ROOT / 'solutions')!r})\n"
            f"assert not os.path.exists({str(ROOT / 'autograder')!r})\n"
            # /tmp is private; only the way to a Python environment kept under /tmp may show.
            f"assert set(os.listdir('/tmp')) <= {_python_dirs_under_tmp()!r}, os.listdir('/tmp')\n"
            "assert os.getuid() != 0\n"
            # Its own PID namespace: it is PID 1, and /proc shows no other process.
            "assert os.getpid() == 1, os.getpid()\n"
            "assert [p for p in os.listdir('/proc') if p.isdigit()] == ['1'], os.listdir('/proc')\n"
            "try:\n    open('/usr/x', 'w')\n    raise SystemError('wrote to /usr')\nexcept OSError:\n    pass\n"
            "try:\n    socket.create_connection(('127.0.0.1', 22), timeout=1)\n"
            "    raise SystemError('network')\nexcept OSError:\n    pass\n")
        reply = worker.run_cell(probe, 10)
        assert reply["ok"], reply
    finally:
        worker.close()


# --- a class in which poisoned hand-ins sit beside honest ones, through the real command ---

EXAMPLES = ROOT / "examples" / "n-queens" / "submissions"
POISONED = ("deep-nested-reply", "wrong-typed-reply", "unknown-to-plain-tag", "is-solved-exits",
            "forges-replies", "patches-the-worker")
HONEST = ("alice", "grace", "niaj")


def grade_command(folder, out, *options, ignore_sigint=False):
    """`autograder grade` in a process of its own, optionally started the way `nohup` or `cmd &` start it."""
    command = [sys.executable, "-m", "autograder", "--course", str(ROOT), "grade", "--assignment", "n-queens",
               "--out", str(out), *options, str(folder)]

    def inherit_an_ignored_interrupt():
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    return subprocess.run(command, capture_output=True, text=True, timeout=1200,
                          preexec_fn=inherit_an_ignored_interrupt if ignore_sigint else None)


@pytest.fixture(scope="module")
def mixed_class(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mixed-class")
    for name in POISONED:
        shutil.copy(CORPUS / f"{name}.ipynb", folder)
    for name in (*HONEST, "ivan"):  # ivan's is_solved loops forever
        shutil.copy(EXAMPLES / f"{name}.ipynb", folder)
    return folder


@pytest.fixture(scope="module")
def mixed_rows(mixed_class, tmp_path_factory):
    out = tmp_path_factory.mktemp("mixed-out")
    # The product's own limits: this class is about honest hand-ins beside poisoned ones, and under load (CI,
    # 3 test workers on 2 cores) an honest case of a few ms once passed TIGHT's 0.1 s floor of CPU time.
    result = grade_command(mixed_class, out)
    assert result.returncode == 0, result.stderr[-3000:]
    return read_csv(out / "grades.csv")


def test_poisoned_replies_cost_only_their_own_cases_and_every_hand_in_gets_its_row(mixed_rows):
    expected = read_csv(CORPUS / "expected.csv")
    assert sorted(mixed_rows) == sorted((*POISONED, *HONEST, "ivan"))
    for name in HONEST:
        assert (float(mixed_rows[name]["score"]), mixed_rows[name]["status"]) == (5.0, "graded"), name
    for name in POISONED:
        got = mixed_rows[name]
        assert (float(got["score"]), got["status"]) == (float(expected[name]["score"]), expected[name]["status"])
    assert (float(mixed_rows["ivan"]["score"]), mixed_rows["ivan"]["status"]) == (0.95, "timeout")


def test_a_grader_started_with_sigint_ignored_gives_the_same_grades(mixed_class, mixed_rows, tmp_path):
    result = grade_command(mixed_class, tmp_path, ignore_sigint=True)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = read_csv(tmp_path / "grades.csv")
    assert {s: (r["score"], r["status"]) for s, r in rows.items()} == \
        {s: (r["score"], r["status"]) for s, r in mixed_rows.items()}


def _grade_alice_and_grace(tmp_path):
    """Grade alice's and grace's notebooks through the real command, in this process: (their folder, rows)."""
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("alice", "grace"):
        shutil.copy(EXAMPLES / f"{name}.ipynb", folder)
    result = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens",
                                       "--out", str(tmp_path / "out"), str(folder)])
    assert result.exit_code == 0, result.output
    return folder, read_csv(tmp_path / "out" / "grades.csv")


def test_a_grader_failure_on_one_hand_in_is_that_hand_ins_row(mixed_class, tmp_path, monkeypatch):
    from autograder.grade import pool as scheduler

    real_grade = scheduler.grade

    def flaky(assignment, expected, student, *rest, **options):
        if student == "alice":
            raise RuntimeError("a bug in the grader")
        return real_grade(assignment, expected, student, *rest, **options)

    monkeypatch.setattr(scheduler, "grade", flaky)
    folder, rows = _grade_alice_and_grace(tmp_path)
    assert rows["alice"]["status"] == "grader-error" and "a bug in the grader" in rows["alice"]["message"]
    assert (rows["grace"]["score"], rows["grace"]["status"]) == ("5", "graded")
    # The next run grades the failed hand-in again (and only it).
    monkeypatch.setattr(scheduler, "grade", real_grade)
    result = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens",
                                       "--out", str(tmp_path / "out"), str(folder)])
    assert "graded 1 hand-in(s)" in result.output
    assert read_csv(tmp_path / "out" / "grades.csv")["alice"]["status"] == "graded"


HOG = """
import os

for _ in range(40):
    if os.fork() == 0:
        os.setsid()
        while True:
            pass
"""


def test_a_classmates_hog_costs_honest_hand_ins_nothing(tmp_path):
    if shared_sandbox().isolation not in ("namespaces", "users"):
        pytest.skip("40 busy processes are only contained with full isolation")
    folder = tmp_path / "in"
    folder.mkdir()
    hog = nbformat.read(ROOT / "assignments" / "n-queens" / "n-queens.ipynb", as_version=4)
    hog.cells += [nbformat.v4.new_code_cell(HOG), nbformat.v4.new_code_cell("import time\ntime.sleep(60)")]
    nbformat.write(hog, folder / "aaa-hog.ipynb")  # first in line, so it runs beside the others
    for name in ("alice", "grace", "niaj", "alice-again", "grace-again"):
        shutil.copy(EXAMPLES / f"{name.removesuffix('-again')}.ipynb", folder / f"{name}.ipynb")
    result = grade_command(folder, tmp_path / "out", "--jobs", "2", "--submission-timeout", "40")
    assert result.returncode == 0, result.stderr[-3000:]
    rows = read_csv(tmp_path / "out" / "grades.csv")
    assert {s: (r["score"], r["status"]) for s, r in rows.items() if s != "aaa-hog"} == \
        {s: ("5", "graded") for s in ("alice", "grace", "niaj", "alice-again", "grace-again")}
    assert sandbox_processes() == []


def test_a_hand_in_the_grader_failed_on_is_graded_again_once_in_a_fresh_slot(tmp_path, monkeypatch):
    """Issue 32, items 3-5: the hand-in after one that left its slot unclean was charged for it (0 as `graded`,
    or a `grader-error` a plain rerun kept).  Whatever the grader fails on is graded again at once, in a slot
    with a new zygote, user ids and folders; only a second failure is a `grader-error` row."""
    from autograder.engine import Sandbox, SandboxError
    from autograder.grade import pool as scheduler

    real_grade, failures, renewed = scheduler.grade, [], []

    def fails_once(assignment, expected, student, path, sandbox, slot, *rest, **options):
        if student == "alice" and not failures:
            failures.append(slot)
            raise SandboxError("slot 0's zygote could not start a worker (this slot could not be cleaned up)")
        return real_grade(assignment, expected, student, path, sandbox, slot, *rest, **options)

    real_renew = Sandbox.renew
    monkeypatch.setattr(scheduler, "grade", fails_once)
    monkeypatch.setattr(Sandbox, "renew", lambda self, slot: (renewed.append(slot), real_renew(self, slot))[1])
    _, rows = _grade_alice_and_grace(tmp_path)
    assert {s: (r["score"], r["status"]) for s, r in rows.items()} == {"alice": ("5", "graded"),
                                                                        "grace": ("5", "graded")}
    assert renewed == failures
