"""Grade one class with all three engines, case by case (agreement test, benchmark).

Each function returns {student: Verdict}, where a Verdict holds the points
of every case by our case name (None when the engine produced no result for
that hand-in at all).  Students are named by file stem, as our grader does.
Real tools, really run: `autograder grade`, `otter run` (or otter's Python
API) with the otter export's autograder.zip, `nbgrader autograde` in the
nbgrader export's course folder.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.export import handins, nbgrader as nbgrader_export, otter as otter_export, results, tools
from autograder.export.nbgrader import CASES_FILE


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


def _env_with(venv_bin):
    env = dict(os.environ)
    env["PATH"] = f"{venv_bin}{os.pathsep}{env.get('PATH', '')}"   # nbgrader runs `alembic` from PATH
    env.pop("PYTHONPATH", None)
    return env


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
    graded = results.read(out_dir, assignment)
    verdicts = {g.student: Verdict({c.name: c.points for c in g.cases}, g.status, g.message) for g in graded}
    if timing is not None:
        timing.graded += len(verdicts)
    return verdicts


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
    autograder, out = sys.argv[1], {}
    for path in sys.argv[2:]:
        results = grade_submission(path, autograder, quiet=True)
        out[path] = {r.test_case.name: (r.test_case.points if r.passed else 0.0)
                     for tf in results.results.values() for r in tf.test_case_results}
    print(json.dumps(out))
''')


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


def grade_otter(course, assignment, paths, work_dir, jobs=2, via="run", timing=None, root=None):
    """Grade with otter: `otter run` per hand-in (via="run") or otter's Python API (via="api")."""
    work_dir = Path(work_dir)
    otter = tools.executable("otter", root or course.root)
    python = str(Path(otter).parent / "python")
    env = _env_with(Path(otter).parent)
    export_dir = work_dir / "export"
    otter_export.export(course, assignment, export_dir, otter=otter)
    zip_path = export_dir / "autograder" / otter_export.ZIP_NAME
    notebooks = otter_handins(assignment, paths, work_dir / "handins")
    verdicts = {s: Verdict(None, "not-a-notebook", "no notebook to run")
                for s, p in notebooks.items() if p is None}
    todo = {s: p for s, p in notebooks.items() if p is not None}
    started = time.perf_counter()
    if via == "api":
        done = subprocess.run([python, "-c", _OTTER_API, str(zip_path), *map(str, todo.values())],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"otter's grading API failed:\n{done.stderr[-3000:]}")
        cases_by_path = json.loads(done.stdout.strip().splitlines()[-1])
        commands = 1
    else:
        def run_one(item):
            student, notebook = item
            cwd = notebook.parent
            result = subprocess.run([otter, "run", "-a", str(zip_path), "-o", str(cwd), "--no-logo", "-p",
                                     str(notebook)], cwd=cwd, capture_output=True, text=True, env=env)
            pickle = cwd / "results.pkl"
            return student, (pickle if result.returncode == 0 and pickle.is_file() else None), result

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            ran = list(pool.map(run_one, todo.items()))
        pickles = [str(p) for _, p, _ in ran if p is not None]
        cases_by_path = {}
        if pickles:
            done = subprocess.run([python, "-c", _OTTER_CASES, *pickles], capture_output=True, text=True, env=env)
            if done.returncode != 0:
                raise RuntimeError(f"reading otter's results failed:\n{done.stderr[-3000:]}")
            cases_by_path = json.loads(done.stdout)
        for student, pickle, result in ran:
            if pickle is None:
                verdicts[student] = Verdict(None, "otter-failed", (result.stdout + result.stderr)[-1000:])
        cases_by_path = {str(Path(p).parent / assignment.notebook): c for p, c in cases_by_path.items()}
        commands = len(todo)
    for student, notebook in todo.items():
        if str(notebook) in cases_by_path:
            verdicts[student] = Verdict(cases_by_path[str(notebook)], "graded")
    if timing is not None:
        timing.seconds += time.perf_counter() - started
        timing.commands += commands
        timing.graded += len(todo)
    return verdicts


# --- nbgrader ----------------------------------------------------------------------------

_NBGRADER_CASES = textwrap.dedent('''
    import json, sys
    from nbgrader.api import Gradebook
    out = {}
    with Gradebook(sys.argv[1]) as gb:
        for submission in gb.assignment_submissions(sys.argv[2]):
            out[submission.student_id] = {grade.name: grade.score for notebook in submission.notebooks
                                          for grade in notebook.grades}
    print(json.dumps(out))
''')


def nbgrader_course(course, assignment, course_dir, root=None):
    """Export and `nbgrader generate_assignment`; return (nbgrader command, env, release notebook)."""
    course_dir = Path(course_dir)
    nbgrader = tools.executable("nbgrader", root or course.root)
    env = _env_with(Path(nbgrader).parent)
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


def grade_nbgrader(course, assignment, paths, course_dir, timing=None, root=None):
    """`nbgrader autograde <id>` for the whole class, read back grade cell by grade cell."""
    course_dir = Path(course_dir)
    nbgrader, env, release = nbgrader_course(course, assignment, course_dir, root)
    students = nbgrader_handins(assignment, release, paths, course_dir)
    started = time.perf_counter()
    done = subprocess.run([nbgrader, "autograde", assignment.id, "--force"], cwd=course_dir,
                          capture_output=True, text=True, env=env)
    if timing is not None:
        timing.seconds += time.perf_counter() - started
        timing.commands += 1
        timing.graded += len(students)
    (course_dir / "autograde.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    mapping = json.loads((course_dir / CASES_FILE).read_text(encoding="utf-8"))[assignment.id]["cells"]
    read = subprocess.run([str(Path(nbgrader).parent / "python"), "-c", _NBGRADER_CASES,
                           f"sqlite:///{course_dir / 'gradebook.db'}", assignment.id],
                          capture_output=True, text=True, env=env)
    if read.returncode != 0:
        raise RuntimeError(f"reading nbgrader's gradebook failed:\n{read.stderr[-3000:]}")
    by_student = json.loads(read.stdout)
    verdicts = {}
    for student in students:
        grades = by_student.get(student)
        if grades is None:
            verdicts[student] = Verdict(None, "no-submission", "nbgrader recorded nothing")
        else:
            verdicts[student] = Verdict({mapping[g]: (s or 0.0) for g, s in grades.items() if g in mapping},
                                        "graded")
    return verdicts
