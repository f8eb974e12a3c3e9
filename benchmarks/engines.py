"""Grade one class with all three engines, case by case (agreement test, benchmark).

Each function returns {student: Verdict}, where a Verdict holds the points
of every case by our case name (None when the engine produced no result for
that hand-in at all).  Students are named by file stem, as our grader does.
Real tools, really run: `autograder grade`, `otter run` (or otter's Python
API) with the otter export's autograder.zip, `nbgrader autograde` in the
nbgrader export's course folder.
"""

import contextlib
import json
import os
import queue
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.export import handins, nbgrader as nbgrader_export, otter as otter_export, results, tools
from autograder.export.nbgrader import CASES_FILE


# How long (wall clock) another grader may spend on one notebook before it is stopped and the notebook reported as
# "did not finish": otter runs a notebook with no cell time limit, so a cell that never ends would hold a benchmark
# or a test for ever.  Generous: a notebook whose functions loop (n-queens: ivan) takes nbgrader 22 cases' limits,
# over 120 s on 2 busy cores, and must finish.  Ours needs none here: its own limits end every hand-in.
NOTEBOOK_LIMIT = 600.0
STARTUP_LIMIT = 300.0      # for a tool to get to its first notebook (imports, a course folder's database)
DID_NOT_FINISH = "did-not-finish"

# (engine, assignment, student) -> why that engine cannot grade that example student alike (docs/engines.md says
# the same): the agreement test (tests/export/test_engine_agreement.py) skips them, and grade_throughput.py leaves
# them out of that engine's class.  Were one forgotten, NOTEBOOK_LIMIT still ends it, as "did not finish".
EXCLUDED_STUDENTS = {
    ("otter", "n-queens", "peggy"):
        "her notebook ends with a top-level `while True: pass` cell. Ours stops a cell after the "
        "assignment's cell_timeout and grades on; otter runs notebooks with no cell time limit "
        "(nbclient's timeout is None and `otter run` has no option for it), so it never finishes.",
}


@dataclass
class Verdict:
    cases: dict | None              # case name -> points earned; None: the engine gave no result
    status: str = ""
    note: str = ""

    def score(self, excluded=()):
        if self.cases is None:
            return None
        return round(sum(p for name, p in self.cases.items() if name not in excluded), 4)


@dataclass
class Timing:
    seconds: float = 0.0
    commands: int = 0
    graded: int = 0
    notes: list = field(default_factory=list)
    peak_mb: float = 0.0   # the largest resident size of the command or of a process it waited for
    did_not_finish: list = field(default_factory=list)   # students whose notebook passed NOTEBOOK_LIMIT


def did_not_finish(limit):
    return Verdict(None, DID_NOT_FINISH, f"stopped after {limit:g} s on this notebook (the benchmark's limit)")


@dataclass
class Watched:
    returncode: int | None         # None: stopped at the limit
    output: str                    # stdout and stderr, interleaved
    stuck: str | None = None       # what it was working on when it was stopped


def run_watched(command, limit, started=None, first=None, startup=STARTUP_LIMIT, **popen):
    """Run `command` with a wall-clock limit per item of work: `started(line)` returns the item a line of its
    output says it begins (else None); `first`, the item it begins with.  A run that spends `limit` seconds on one
    item, or `startup` seconds on getting to its first, is stopped with everything it started (a kernel too, which
    Jupyter puts in a session of its own); the Watched says on what (None: on starting)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               errors="replace", start_new_session=True, **popen)
    lines = queue.Queue()

    def read():
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        return _watch(process, lines, limit, started, first, startup)
    except BaseException:      # a bug here, or Ctrl-C: nothing it started may be left running
        if process.poll() is None:
            _stop_tree(process)
        raise


def _watch(process, lines, limit, started, first, startup):
    output, current, ended = [], first, None
    deadline = time.monotonic() + (limit if first is not None else startup)
    while True:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            now = time.monotonic()
            if process.poll() is not None:
                ended = ended or now
                if now - ended > 5:
                    break       # it ended, and something it started holds its output open: ended all the same
            elif now > deadline:
                _stop_tree(process)
                return Watched(None, "".join(output), current)
            continue
        if line is None:
            break
        output.append(line)
        item = started(line) if started is not None else None
        if item is not None:
            current, deadline = item, time.monotonic() + limit
    process.wait()
    return Watched(process.returncode, "".join(output))


def _stop_tree(process):
    """SIGKILL to `process`, still running, and every process below it, all found from /proc before any is
    killed (the process is not reaped before the end, so its id names nothing else meanwhile).  Whatever goes
    wrong in finding them, the process itself is killed."""
    tree = [process.pid]
    try:
        tree = _below(process.pid)
    finally:
        for pid in tree:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        process.wait()
    deadline = time.monotonic() + 30        # the rest are not ours to reap: wait until each has died
    while any(_alive(pid) for pid in tree[1:]) and time.monotonic() < deadline:
        time.sleep(0.05)


def _below(pid):
    """`pid` and every process below it, from /proc."""
    children = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue        # gone, or unreadable
        children.setdefault(parent, []).append(int(entry))
    tree, todo = [], [pid]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    return tree


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


# --- ours ------------------------------------------------------------------------------


def grade_ours(course, assignment, paths, out_dir, jobs=2, timing=None, isolation="auto", prefix=(), options=()):
    """`autograder grade --jobs N --isolation LAYER --out DIR PATHS...`, read back case by case.

    `prefix`: a command to run it under (e.g. capsh dropping a capability, as Docker does);
    `options`: more options for `grade`.
    """
    out_dir = Path(out_dir)
    command = [*prefix, str(Path(sys.executable).parent / "autograder"), "--course", str(course.root), "grade",
               "--assignment", assignment.id, "--jobs", str(jobs), "--isolation", isolation, *options,
               "--out", str(out_dir), *map(str, paths)]
    started = time.perf_counter()
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)    # (not .wait(): wait4 also says its peak memory)
        process.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        printed = output.read().decode("utf-8", "replace")
    if timing is not None:
        timing.seconds += time.perf_counter() - started
        timing.commands += 1
        timing.peak_mb = max(timing.peak_mb, usage.ru_maxrss / 1024)
    if process.returncode != 0:
        raise RuntimeError(f"autograder grade failed:\n{printed}")
    verdicts = read_ours(assignment, out_dir)
    if timing is not None:
        timing.graded += len(verdicts)
    return verdicts


def read_ours(assignment, out_dir):
    """{student: Verdict} of a class `autograder grade` wrote to `out_dir`, case by case."""
    return {g.student: Verdict({c.name: c.points for c in g.cases}, g.status, g.message)
            for g in results.read(Path(out_dir), assignment)}


# --- otter -----------------------------------------------------------------------------

_OTTER_CASES = textwrap.dedent('''
    import dill, json, sys
    out = {}
    for path in sys.argv[1:]:
        with open(path, "rb") as handle:
            results = dill.load(handle)
        cases = {}
        for test_file in results.results.values():
            for result in test_file.test_case_results:
                cases[result.test_case.name] = result.test_case.points if result.passed else 0.0
        out[path] = cases
    print(json.dumps(out))
''')

_OTTER_API = textwrap.dedent('''
    import json, sys
    from otter.api import grade_submission
    autograder = sys.argv[1]
    for path in sys.argv[2:]:
        print("benchmark: starts " + json.dumps(path), flush=True)
        results = grade_submission(path, autograder, quiet=True)
        cases = {r.test_case.name: (r.test_case.points if r.passed else 0.0)
                 for tf in results.results.values() for r in tf.test_case_results}
        print("benchmark: result " + json.dumps([path, cases]), flush=True)
''')
_STARTS, _RESULT = "benchmark: starts ", "benchmark: result "


def otter_handins(assignment, paths, folder):
    """Write each hand-in as the otter notebook it would be: {student: path or None (not a notebook)}."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for path in paths:
        student = Path(path).stem
        try:
            notebook = handins.for_otter(assignment, handins.read_handin(path))
        except handins.SubmissionError:
            written[student] = None
            continue
        target = folder / student / assignment.notebook
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)
        written[student] = target
    return written


def grade_otter(course, assignment, paths, work_dir, jobs=2, via="run", timing=None, root=None,
                limit=NOTEBOOK_LIMIT):
    """Grade with otter: `otter run` per hand-in (via="run") or otter's Python API (via="api"); a notebook it
    spends `limit` seconds on is stopped, and its verdict says it did not finish."""
    work_dir = Path(work_dir)
    otter = tools.executable("otter", root or course.root)
    env = tools.child_env(Path(otter).parent)
    export_dir = work_dir / "export"
    otter_export.export(course, assignment, export_dir, otter=otter)
    zip_path = export_dir / "autograder" / otter_export.ZIP_NAME
    notebooks = otter_handins(assignment, paths, work_dir / "handins")
    verdicts = {s: Verdict(None, "not-a-notebook", "no notebook to run")
                for s, p in notebooks.items() if p is None}
    todo = {s: p for s, p in notebooks.items() if p is not None}
    started = time.perf_counter()
    if via == "api":
        found, commands = _otter_api(otter, env, zip_path, todo, limit)
    else:
        found, commands = _otter_run(otter, env, zip_path, todo, jobs, limit)
    verdicts.update(found)
    if timing is not None:
        timing.seconds += time.perf_counter() - started
        timing.commands += commands
        stopped = sorted(s for s in todo if verdicts[s].status == DID_NOT_FINISH)
        timing.did_not_finish += stopped
        timing.graded += len(todo) - len(stopped)
    return verdicts


def _otter_api(otter, env, zip_path, todo, limit):
    """Every notebook through otter's Python API in one process; where one passes `limit`, that process is
    stopped and a new one grades the rest.  Returns ({student: Verdict}, processes started)."""
    python = str(Path(otter).parent / "python")
    student_of = {str(p): s for s, p in todo.items()}
    verdicts, left, commands = {}, [str(p) for p in todo.values()], 0
    while left:
        run = run_watched([python, "-c", _OTTER_API, str(zip_path), *left], limit, env=env,
                          started=lambda line: json.loads(line[len(_STARTS):]) if line.startswith(_STARTS) else None)
        commands += 1
        for line in run.output.splitlines():
            if line.startswith(_RESULT):
                path, cases = json.loads(line[len(_RESULT):])
                verdicts[student_of[path]] = Verdict(cases, "graded")
        if run.returncode is None and run.stuck is None:
            raise RuntimeError(f"otter's grading API did not start within {STARTUP_LIMIT:g} s:\n"
                               f"{run.output[-3000:]}")
        if run.returncode is None:
            verdicts[student_of[run.stuck]] = did_not_finish(limit)
        elif run.returncode != 0:
            raise RuntimeError(f"otter's grading API failed:\n{run.output[-3000:]}")
        left = [p for p in left if student_of[p] not in verdicts]
    return verdicts, commands


def _otter_run(otter, env, zip_path, todo, jobs, limit):
    """`otter run` per notebook, `jobs` at a time, each stopped at `limit`.  Returns ({student: Verdict}, commands)."""
    def run_one(item):
        student, notebook = item
        cwd = notebook.parent
        run = run_watched([otter, "run", "-a", str(zip_path), "-o", str(cwd), "--no-logo", "-p", str(notebook)],
                          limit, first=student, cwd=cwd, env=env)
        pickle = cwd / "results.pkl"
        return student, (pickle if run.returncode == 0 and pickle.is_file() else None), run

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        ran = list(pool.map(run_one, todo.items()))
    pickles = [str(p) for _, p, _ in ran if p is not None]
    cases_by_path = {}
    if pickles:
        done = subprocess.run([str(Path(otter).parent / "python"), "-c", _OTTER_CASES, *pickles],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"reading otter's results failed:\n{done.stderr[-3000:]}")
        cases_by_path = json.loads(done.stdout)
    verdicts = {}
    for student, pickle, run in ran:
        if run.returncode is None:
            verdicts[student] = did_not_finish(limit)
        elif pickle is None:
            verdicts[student] = Verdict(None, "otter-failed", run.output[-1000:])
        else:
            verdicts[student] = Verdict(cases_by_path[str(pickle)], "graded")
    return verdicts, len(todo)


# --- nbgrader ----------------------------------------------------------------------------

# Each grade cell's score, as nbgrader's own `Grade.score` computes it (nbgrader/api.py: the manual score if one was
# given, else the automatic one, plus any extra credit; 0 when neither), for every submission of an assignment, a
# submission without grades included.  Read with sqlite3 instead of through nbgrader.api: importing that (all of
# nbgrader, its server extensions included) cost 2.4 CPU-s a read, in every benchmark and test run.
# tests/export/test_engine_agreement.py checks this against nbgrader.api on a gradebook nbgrader wrote.
_NBGRADER_SUBMISSIONS = """
    SELECT sa.student_id FROM submitted_assignment sa JOIN assignment a ON sa.assignment_id = a.id
    WHERE a.name = ?"""
_NBGRADER_GRADES = """
    SELECT sa.student_id, cell.name,
           CASE WHEN g.manual_score IS NOT NULL THEN g.manual_score + COALESCE(g.extra_credit, 0.0)
                WHEN g.auto_score IS NOT NULL THEN g.auto_score + COALESCE(g.extra_credit, 0.0)
                ELSE 0.0 END
    FROM grade g
    JOIN submitted_notebook sn ON g.notebook_id = sn.id
    JOIN submitted_assignment sa ON sn.assignment_id = sa.id
    JOIN assignment a ON sa.assignment_id = a.id
    JOIN base_cell cell ON g.cell_id = cell.id
    WHERE a.name = ?"""


def nbgrader_grades(gradebook, assignment_id):
    """{student: {grade cell name: score}} of every submission of `assignment_id` in nbgrader's gradebook.db."""
    try:
        with contextlib.closing(sqlite3.connect(f"{Path(gradebook).resolve().as_uri()}?mode=ro", uri=True)) as db:
            out = {student: {} for (student,) in db.execute(_NBGRADER_SUBMISSIONS, (assignment_id,))}
            for student, cell, score in db.execute(_NBGRADER_GRADES, (assignment_id,)):
                out[student][cell] = score
    except sqlite3.Error as error:
        raise RuntimeError(f"reading nbgrader's gradebook {gradebook} failed: {error}") from None
    return out


def nbgrader_course(course, assignment, course_dir, root=None):
    """Export and `nbgrader generate_assignment`; return (nbgrader command, env, release notebook)."""
    course_dir = Path(course_dir)
    nbgrader = tools.executable("nbgrader", root or course.root)
    env = tools.child_env(Path(nbgrader).parent)
    nbgrader_export.export(course, assignment, course_dir)
    done = subprocess.run([nbgrader, "generate_assignment", assignment.id, "--force"], cwd=course_dir,
                          capture_output=True, text=True, env=env)
    release = course_dir / "release" / assignment.id / assignment.notebook
    if done.returncode != 0 or not release.is_file():
        raise RuntimeError(f"nbgrader generate_assignment failed:\n{done.stdout}{done.stderr}")
    return nbgrader, env, nbformat.read(release, as_version=4)


def nbgrader_handins(assignment, release, paths, course_dir):
    """Put each hand-in into submitted/<student>/<id>/ as it would be under nbgrader."""
    written = {}
    for path in paths:
        student = Path(path).stem
        target = Path(course_dir) / "submitted" / student / assignment.id / assignment.notebook
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            nbformat.write(nbgrader_export.as_submission(release, handins.read_handin(path)), target)
        except handins.SubmissionError:
            shutil.copy(path, target)      # as handed in: nbgrader makes of it what it can
        written[student] = target
    return written


def grade_nbgrader(course, assignment, paths, course_dir, timing=None, root=None, limit=NOTEBOOK_LIMIT):
    """`nbgrader autograde <id>` for the whole class, read back grade cell by grade cell; a notebook it spends
    `limit` seconds on is stopped, and its verdict says it did not finish."""
    course_dir = Path(course_dir)
    nbgrader, env, release = nbgrader_course(course, assignment, course_dir, root)
    students = nbgrader_handins(assignment, release, paths, course_dir)
    started = time.perf_counter()
    stopped, commands = _autograde(nbgrader, env, assignment, course_dir, limit)
    if timing is not None:
        timing.seconds += time.perf_counter() - started
        timing.commands += commands
        timing.did_not_finish += sorted(stopped)
        timing.graded += len(students) - len(stopped)
    mapping = json.loads((course_dir / CASES_FILE).read_text(encoding="utf-8"))[assignment.id]["cells"]
    by_student = nbgrader_grades(course_dir / "gradebook.db", assignment.id)
    verdicts = {}
    for student in students:
        grades = by_student.get(student)
        if student in stopped:
            verdicts[student] = did_not_finish(limit)
        elif grades is None:
            verdicts[student] = Verdict(None, "no-submission", "nbgrader recorded nothing")
        else:
            verdicts[student] = Verdict({mapping[g]: (s or 0.0) for g, s in grades.items() if g in mapping},
                                        "graded")
    return verdicts


def _autograde(nbgrader, env, assignment, course_dir, limit):
    """`nbgrader autograde`, watched: it logs "Converting notebook <path>" as it starts each one.  One it spends
    `limit` seconds on is stopped and moved out of submitted/, and autograde goes on without --force (it skips the
    hand-ins graded already).  Returns (students stopped, commands run)."""
    def starts(line):            # .../submitted/<student>/<assignment>/<notebook>
        _, found, path = line.partition("Converting notebook ")
        parts = Path(path.strip()).parts
        return parts[len(parts) - 1 - parts[::-1].index("submitted") + 1] if found and "submitted" in parts else None

    stopped, logs = set(), []
    while True:
        run = run_watched([nbgrader, "autograde", assignment.id, *(() if stopped else ("--force",))], limit,
                          started=starts, cwd=course_dir, env=env)
        logs.append(run.output)
        if run.returncode is not None:
            break
        if run.stuck is None:
            raise RuntimeError(f"nbgrader autograde did not start within {STARTUP_LIMIT:g} s:\n"
                               f"{run.output[-3000:]}")
        stopped.add(run.stuck)
        (course_dir / "did-not-finish").mkdir(exist_ok=True)
        shutil.move(course_dir / "submitted" / run.stuck, course_dir / "did-not-finish" / run.stuck)
        shutil.rmtree(course_dir / "autograded" / run.stuck, ignore_errors=True)
    (course_dir / "autograde.log").write_text("".join(logs), encoding="utf-8")
    return stopped, len(logs)
