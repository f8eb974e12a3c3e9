"""Gradebooks for the feedback, report and release tests.

* `graded_class(id)`: an assignment's bundled example class, really graded
  once per test run (15-30 s each) into a folder every test worker shares;
  `graded_example_class(destination, id)`: a copy of one (n-queens' by default) to write next to.
* `fake_gradebook(out, students)`: a real SQLite gradebook written through
  autograder.gradebook, with results made up case by case (fast; any status,
  any name, any source).
"""

import atexit
import fcntl
import functools
import os
import shutil
import tempfile
from pathlib import Path

from click.testing import CliRunner

from autograder import runtime
from autograder.core.assignment import load_assignment
from autograder.cli.main import main
from autograder.core.course import load_course
from autograder.engine.runner import CallOutcome
from autograder.gradebook import Gradebook
from autograder.gradebook.schema import legacy_identity
from autograder.grade.handin import SubmissionResult
from autograder.intake import Handin
from autograder.grade.scoring import CaseResult, score_case

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_SUBMISSIONS = ROOT / "examples" / "n-queens" / "submissions"


def run(command, *args, obj=ROOT):
    """Invoke one of our verbs as `autograder --course OBJ <verb> ARGS` would."""
    return CliRunner().invoke(main, ["--course", str(obj), command.name, *[str(a) for a in args]],
                              catch_exceptions=False)


def grade(out, *paths, extra=(), assignment="n-queens"):
    result = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", assignment,
                                       "--out", str(out), *extra, *map(str, paths)])
    assert result.exit_code == 0, result.output
    return result


@functools.cache
def graded_class(assignment_id="n-queens"):
    """The output folder of examples/<id>/submissions graded by `autograder grade`, once per test run and shared by
    pytest-xdist's workers: the first to get here grades, the rest wait.  Read it; copy it before writing to it."""
    submissions = ROOT / "examples" / assignment_id / "submissions"
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run_id is None:                      # a plain pytest run: one process
        folder = Path(tempfile.mkdtemp(prefix=f"graded-{assignment_id}-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        grade(folder / "out", submissions, assignment=assignment_id)
        return folder / "out"
    # pytest's own folder for this run (conftest.py names it), which pytest removes with old runs.
    folder = Path(os.environ.get("AUTOGRADER_TESTS_SHARED", tempfile.gettempdir())) / f"graded-{assignment_id}-{run_id}"
    folder.mkdir(exist_ok=True)
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)    # released when the file closes
        if not (folder / "done").exists():
            shutil.rmtree(folder / "out", ignore_errors=True)      # a worker that failed half-way left it
            grade(folder / "out", submissions, assignment=assignment_id)
            (folder / "done").touch()
    return folder / "out"


def graded_example_class(destination, assignment_id="n-queens"):
    """A private copy of the graded example class's output folder (gradebook.db, grades.csv)."""
    destination = Path(destination)
    destination.mkdir(parents=True, exist_ok=True)
    for name in ("gradebook.db", "grades.csv"):
        shutil.copy(graded_class(assignment_id) / name, destination / name)
    return destination


def nqueens():
    course = load_course(ROOT)
    return course, load_assignment(course, "n-queens")


def case_results(assignment, expected, overrides=None):
    """Every case passed, except `overrides`: {case name: dict(status=..., message=..., received=..., traceback=...)}.

    An override dict(value=<plain value>, seconds=..., baseline_seconds=...) is scored by
    autograder.scoring as the grader would score that returned value.
    """
    overrides = overrides or {}
    results = []
    for case in assignment.cases:
        change = overrides.get(case.name, {})
        if "value" in change:
            outcome = CallOutcome("ok", value=change["value"], seconds=change.get("seconds", 0.01))
            results.append(score_case(case, expected[case.name], outcome, change.get("baseline_seconds")))
            continue
        status = change.get("status", "passed")
        received = change.get("received", runtime.show(expected[case.name]) if status in ("passed", "failed") else "")
        results.append(CaseResult(
            name=case.name, function=case.function, hidden=case.hidden, description=case.description,
            call=case.call.text, points=case.points if status == "passed" else 0.0, max_points=case.points,
            status=status, message=change.get("message", "wrong value" if status == "failed" else ""),
            received=received, traceback=change.get("traceback", ""), seconds=0.01))
    return results


def _identity(spec, source, assignment):
    """What intake says of a hand-in that came with this source: the LMS's own name at its top (a Canvas or
    flat Moodle file, a Moodle folder), a Classroom clone's folder; `lms`, `lms_id`... in `spec` win."""
    given = {k: spec[k] for k in ("lms", "lms_id", "lms_prefix", "repository") if k in spec}
    if given:
        return given
    lms, lms_id, prefix, repository = legacy_identity(spec["student"], assignment.id, source)
    return dict(lms=lms, lms_id=lms_id, lms_prefix=prefix, repository=repository)


def fake_gradebook(out, students, assignment=None, expected=None):
    """`students`: [dict(student=..., source=..., status="graded", message="", cases=overrides or None,
    no_cases=False, seconds=1.0, cell_errors=[{"cell": 2, "source": ..., "error": ...}])]."""
    if assignment is None:
        _, assignment = nqueens()
    expected = expected or assignment.load_expected()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    gradebook = Gradebook(out / "gradebook.db")
    run_id = gradebook.start_run(assignment.id, "test", 1, "basic")
    for spec in students:
        cases = [] if spec.get("no_cases") else case_results(assignment, expected, spec.get("cases"))
        source = spec.get("source", f"{spec['student']}.ipynb")
        handin = Handin(spec["student"], source, None, spec.get("submitted_at", "2026-03-01T10:00:00"),
                        sha256=spec.get("sha256", ""), **_identity(spec, source, assignment))
        result = SubmissionResult(
            student=spec["student"], assignment=assignment.id, path=source,
            score=round(sum(c.points for c in cases), 4), max_score=assignment.max_score,
            status=spec.get("status", "graded"), message=spec.get("message", ""), cases=cases,
            cell_errors=spec.get("cell_errors", []),
            seconds=spec.get("seconds", 1.0), student_seconds=spec.get("seconds", 1.0) / 2)
        gradebook.record(run_id, handin, result, "test-key")
    gradebook.finish_run(run_id)
    gradebook.close()
    return out
