"""The public corpus of hostile and broken hand-ins grades as expected, and leaves nothing behind."""

import csv
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.engine import isolation
from autograder.cli import main
from autograder.engine.sandbox import shared_sandbox
from conftest import ROOT

CORPUS = ROOT / "tests" / "hostile" / "n-queens"


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def sandbox_processes():
    """Processes under a grading slot's user id whose zygote is gone (see isolation.slot_uid).

    Other sandboxes may be running at the same time (other tests, other graders):
    their slots' processes are theirs, not leftovers.
    """
    live = set()
    uids = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if b"zygote.py" in handle.read():
                    live.add(int(pid))
            uids[pid] = os.stat(f"/proc/{pid}").st_uid
        except OSError:
            pass
    return [pid for pid, uid in uids.items()
            if uid >= isolation.slot_uid(0, 0) and (uid - isolation.slot_uid(0, 0)) // isolation.MAX_SLOTS not in live]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if shared_sandbox().isolation != "namespaces":
        pytest.skip("the hostile corpus needs the namespaces layer here: a fork bomb is in it")
    out = tmp_path_factory.mktemp("hostile")
    result = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens",
                                       "--out", str(out), "--timeout", "1", "--submission-timeout", "20",
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
