"""Every benchmark runs, on a tiny class, and ends; and it leaves the checkout as it found it.

A benchmark nobody runs stops working unseen (grade_throughput.py once lost its list of the hand-ins otter cannot
finish to a moved test module, and then waited for ever on one), so each runs here in the slow tier.  What they
print is not judged: only that they end, print their table, and say what they left out or stopped.
"""

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from conftest import ROOT, engines
from minicourse import cell, make_course
from autograder.core.assignment import load_assignment
from autograder.core.course import load_course

pytestmark = [pytest.mark.slow]


def _benchmark(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.alone      # it makes the checkout's own hidden folders private while it runs
def test_grading_in_the_users_layer_inside_the_benchmark_leaves_the_course_readable(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the users layer needs root")
    course = load_course(ROOT)
    hidden = [course.root / "solutions", course.cases_dir, course.root / ".git", course.root / "README.md"]
    before = {path: path.stat().st_mode & 0o7777 for path in hidden}
    out = Path(tempfile.mkdtemp(prefix="autograder-benchmark-"))   # a worker's user id must reach its folder
    out.chmod(0o755)
    with _benchmark("grade_throughput").course_modes_kept(course):
        done = subprocess.run([sys.executable, "-m", "autograder", "--course", str(ROOT), "grade", "--assignment",
                               "n-queens", "--out", str(out / "out"), "--isolation", "users",
                               str(ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb")],
                              capture_output=True, text=True, timeout=300)
        shutil.rmtree(out)
        assert done.returncode == 0, done.stderr[-2000:]
        during = {path: path.stat().st_mode & 0o7777 for path in hidden}
    assert all(mode & 0o077 == 0 for mode in during.values()), during   # the layer really hid them
    assert {path: path.stat().st_mode & 0o7777 for path in hidden} == before


def run_benchmark(script, *args, timeout=900):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return done.stdout


def only(*students):
    """--without everyone of the n-queens example class but `students`."""
    others = sorted({p.stem for p in (ROOT / "examples" / "n-queens" / "submissions").iterdir()} - set(students))
    return ["--without", ",".join(others)]


def test_grade_throughput_grades_a_tiny_class_with_ours():
    out = run_benchmark("grade_throughput.py", "--n", "2", "--tools", "ours", *only("alice", "trent"))
    [row] = [line.split() for line in out.splitlines() if line.startswith("ours ")]
    assert row[1:3] == ["2", "0"], out        # graded 2 (trent's broken notebook too), did not finish 0


def test_grade_throughput_refuses_a_student_it_does_not_know(tmp_path):
    # Its work folder is made in TMPDIR: a refused run must not leave it behind (it did, in /tmp, every run).
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "grade_throughput.py"), "--n", "2", "--tools",
                           "ours", "--without", "nobody"], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode != 0 and "--without: nobody: no such example student" in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.peers
def test_grade_throughput_leaves_out_what_otter_cannot_finish_and_its_table_ends():
    out = run_benchmark("grade_throughput.py", "--n", "2", "--tools", "otter", "--subset", "2", "--otter-via", "api",
                        *only("alice", "peggy"))
    assert "otter: leaving peggy's copies out of its class" in out     # the list is read, not quietly empty
    [row] = [line.split() for line in out.splitlines() if line.startswith("otter ")]
    assert row[1:3] == ["1", "0"], out         # graded 1 (alice), did not finish 0


@pytest.mark.peers
def test_a_peer_that_spends_too_long_on_a_notebook_is_stopped_and_its_table_says_so():
    """nbgrader stops a cell after 30 s of its own; the benchmark's limit, lower here, stops peggy's first."""
    out = run_benchmark("grade_throughput.py", "--n", "1", "--tools", "nbgrader", "--notebook-limit", "5",
                        *only("peggy"))
    assert "did not finish within the limit: s001-peggy" in out
    [row] = [line.split() for line in out.splitlines() if line.startswith("nbgrader ")]
    assert row[1:3] == ["0", "1"], out         # graded 0, did not finish 1


@pytest.mark.peers
@pytest.mark.parametrize("via", ["api", "run"])
def test_otter_on_a_cell_that_never_ends_is_stopped_with_its_kernel(via, course, tmp_path, monkeypatch):
    mark = f"AUTOGRADER_BENCHMARK_TEST={tmp_path}"
    monkeypatch.setenv("AUTOGRADER_BENCHMARK_TEST", str(tmp_path))     # every process otter starts inherits it
    assignment = load_assignment(course, "n-queens")
    verdicts = engines.grade_otter(course, assignment, [_peggy_waiting_forever(tmp_path)], tmp_path / "otter",
                                   via=via, limit=10)
    assert verdicts["peggy"].status == engines.DID_NOT_FINISH and verdicts["peggy"].cases is None
    # grade_otter returns once all it stopped have died; a kernel left to notice its parent's end would be here
    assert not _marked(mark), "a process otter started (its kernel?) is still running"


def _peggy_waiting_forever(folder):
    """peggy's notebook, whose last cell never ends, with that cell waiting instead of spinning: otter's limit is
    wall-clock, so the stop is the same, and the 10 s it takes no longer cost 10 CPU-s of a busy test run."""
    notebook = nbformat.read(ROOT / "examples" / "n-queens" / "submissions" / "peggy.ipynb", as_version=4)
    [forever] = [c for c in notebook.cells if c.cell_type == "code" and "while True:\n    pass" in c.source]
    forever.source = forever.source.replace("while True:\n    pass", "import time\nwhile True:\n    time.sleep(1)")
    nbformat.write(notebook, folder / "peggy.ipynb")
    return folder / "peggy.ipynb"


def _marked(mark):
    """Processes whose environment holds `mark` (a zombie's reads empty)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                if mark.encode() in handle.read().split(b"\0"):
                    found.append(pid)
        except OSError:
            continue
    return found


def test_audit_speed_runs_on_a_tiny_course(tmp_path):
    (tmp_path / "course").mkdir()
    course = make_course(tmp_path / "course", [cell(new_code_cell, "square", SQUARE)], SQUARE_CASES)
    built = subprocess.run([sys.executable, "-m", "autograder", "--course", str(course), "build"],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    (course / "examples" / "squares" / "submissions").mkdir(parents=True)
    shutil.copy(course / "solutions" / "squares" / "squares.ipynb", course / "examples" / "squares" / "submissions")
    out = run_benchmark("audit_speed.py", "--course", str(course), "--jobs", "1")
    assert "squares" in out and "all audits:" in out


SQUARE = '''
def square(x):
    """x times x."""
    ### BEGIN SOLUTION
    return x * x
    ### END SOLUTION
'''
SQUARE_CASES = '''
title = "Squares"
[[case]]
call = "square(3)"
points = 2.5
[[case]]
call = "square(-2)"
points = 2.5
'''


def test_intake_similarity_and_solvers_benchmarks_run_on_a_tiny_input():
    assert "students: intake" in run_benchmark("intake.py", "--n", "20")
    assert "pairs/s" in run_benchmark("similarity_speed.py", "--sizes", "10", "--runs", "1")
    out = run_benchmark("solvers.py", "--sizes", "6", "8", "--budget", "1")
    assert "Median wall time" in out and "sympy multiset_permutations" in out


def test_canvas_requests_counts_a_tiny_class():
    out = run_benchmark("canvas_requests.py", "--n", "5")
    assert "release --to canvas" in out and "requests per student sent" in out


def test_class_reports_times_each_command_on_a_tiny_class(example_class_grades, tmp_path):
    # Its seeds (--seeds <folder>/<id>/gradebook.db, only read) are the example classes graded once for this run.
    for assignment_id in load_course(ROOT).assignment_ids():
        (tmp_path / assignment_id).symlink_to(example_class_grades(assignment_id)[0], target_is_directory=True)
    out = run_benchmark("class_reports.py", "--sizes", "5", "10", "--runs", "1", "--seeds", tmp_path)
    assert all(f"{size} {command}" in " ".join(out.split()) for size in (5, 10)
               for command in ("report", "gradebook", "release")), out


def test_stress_runs_a_command_beside_its_hogs_and_ends_them():
    """The command runs beside the hogs stress.py started (its siblings); once it ends, none of them is left."""
    probe = ("import os, sys\nhogs = []\nfor p in filter(str.isdigit, os.listdir('/proc')):\n"
             "    try:\n        status = open(f'/proc/{p}/status').read()\n"
             "        line = open(f'/proc/{p}/cmdline', 'rb').read()\n    except OSError:\n        continue\n"
             "    if f'PPid:\\t{os.getppid()}\\n' in status and line.rstrip(b'\\0').endswith(b'pass'):\n"
             "        hogs.append(p)\nprint('hogs:', ' '.join(hogs))\nsys.exit(3)")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "stress.py"), "--hogs", "2", "--",
                           sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert "exit status 3" in done.stdout and done.returncode == 1, done.stdout + done.stderr   # a run failed
    assert re.search(r"the machine's CPU: \d+ s busy, \d+ s idle, \d+ s stolen", done.stdout), done.stdout
    hogs = next(line for line in done.stdout.splitlines() if line.startswith("hogs:")).split()[1:]
    assert len(hogs) == 2, done.stdout
    assert not [pid for pid in hogs if _cmdline(pid).endswith(b"pass")]      # ended (and reaped) with the run


@pytest.mark.parametrize("status", [0, 3])
def test_stress_removes_the_pytest_sessions_of_a_run_that_passed_and_keeps_a_failed_one_s(tmp_path, status):
    """Each run starts as CI's fresh machine does: pytest's clean-up of earlier runs' sessions as it exits took the
    `alone` tier of every later run from 124 s to 400 s.  What was there before, and a failed run's, stay."""
    import getpass
    sessions = tmp_path / f"pytest-of-{getpass.getuser()}"
    (sessions / "pytest-1").mkdir(parents=True)
    make = (f"import pathlib, sys\nnew = pathlib.Path({str(sessions)!r}) / 'pytest-2' / 'venv'\n"
            f"new.mkdir(parents=True)\n(new / 'python').write_text('x')\nsys.exit({status})")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "stress.py"), "--hogs", "0", "--",
                           sys.executable, "-c", make], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTEST_DEBUG_TEMPROOT": str(tmp_path)})
    assert f"exit status {status}" in done.stdout, done.stdout + done.stderr
    assert sorted(p.name for p in sessions.iterdir()) == (["pytest-1"] if status == 0 else ["pytest-1", "pytest-2"])
    assert ("its 1 pytest session(s) removed" if status == 0 else "its 1 pytest session(s) kept") in done.stdout


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("signum, preexec", [(signal.SIGTERM, None), (signal.SIGINT, _ignore_sigint)],
                         ids=["sigterm", "sigint-to-a-background-job"])
def test_stress_stopped_ends_what_its_command_started_not_only_the_command(signum, preexec):
    """SIGTERM to stress.py (or Ctrl-C) ends the command's process group: a CI run whose `bash` alone was killed went
    on as make and pytest, loading the machine with no one to read it.  SIGINT stops it even when it was started
    as a script's background job, which inherits SIGINT ignored: `kill -INT` of it did nothing, and the next run
    started."""
    starter = ("import subprocess, sys, time\n"
               "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)  # stress-grandchild'])\n"
               "print('child', child.pid, flush=True)\ntime.sleep(600)")
    stress = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "stress.py"), "--hogs", "1", "--runs", "2",
                               "--", sys.executable, "-c", starter], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                              preexec_fn=preexec)
    child = None
    try:
        line = stress.stdout.readline()          # the event: the grandchild has started
        assert line.startswith("child "), line
        child = line.split()[1]
        stress.send_signal(signum)
        out, _ = stress.communicate(timeout=120)
        assert stress.returncode == 130 and "run 1/2 stopped" in out and "run 2/2" not in out, out
        deadline = time.monotonic() + 60
        while b"stress-grandchild" in _cmdline(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert b"stress-grandchild" not in _cmdline(child), "the command's child outlived stress.py"
    finally:
        stress.kill()
        stress.wait()
        if child is not None and b"stress-grandchild" in _cmdline(child):   # only when the test failed
            os.kill(int(child), signal.SIGKILL)


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().rstrip(b"\0")
    except OSError:
        return b""


def test_every_benchmark_has_its_smoke_test():
    here = (ROOT / "tests" / "test_benchmarks.py").read_text(encoding="utf-8")
    scripts = {p.name for p in (ROOT / "benchmarks").glob("*.py")} - {"engines.py"}     # (the harness: a library)
    assert not {name for name in scripts if f'"{name}"' not in here}


def test_solvers_refuses_numba_it_cannot_import():
    try:
        import numba  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("numba is installed here")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "solvers.py"), "--numba", "--sizes", "6"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode != 0 and "--numba: the compiled counter cannot be imported" in done.stderr


FAKE_TOOL = """
import subprocess, sys, time
print("starts one", flush=True)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)   # a 'kernel'
print("starts two", flush=True)
time.sleep(600)
"""


def test_a_watched_tool_stuck_on_one_item_is_stopped_with_what_it_started(tmp_path, monkeypatch):
    mark = f"AUTOGRADER_BENCHMARK_TEST={tmp_path}"
    monkeypatch.setenv("AUTOGRADER_BENCHMARK_TEST", str(tmp_path))
    run = engines.run_watched([sys.executable, "-c", FAKE_TOOL], 3,
                              started=lambda line: line.split()[1] if line.startswith("starts ") else None)
    assert (run.returncode, run.stuck) == (None, "two")
    assert run.output.splitlines() == ["starts one", "starts two"]
    assert not _marked(mark), "the tool or the process it started is still running"


def test_a_watched_tool_that_ends_gives_its_exit_status_and_output():
    run = engines.run_watched([sys.executable, "-c", "print('starts one'); raise SystemExit(3)"], 60,
                              started=lambda line: "one" if line.startswith("starts") else None)
    assert (run.returncode, run.stuck, run.output) == (3, None, "starts one\n")


def test_a_watched_tool_is_stopped_with_what_it_started_when_the_watching_fails(tmp_path, monkeypatch):
    """A bug in the watching (once: a /proc entry that is not a number) must not leave the tool and its kernel
    running for hours on a shared machine."""
    mark = f"AUTOGRADER_BENCHMARK_TEST={tmp_path}"
    monkeypatch.setenv("AUTOGRADER_BENCHMARK_TEST", str(tmp_path))

    def started(line):
        if line.startswith("starts two"):
            raise LookupError("a bug in the watcher")
        return None

    with pytest.raises(LookupError):
        engines.run_watched([sys.executable, "-c", FAKE_TOOL], 60, started=started)
    assert not _marked(mark), "the tool or the process it started is still running"
