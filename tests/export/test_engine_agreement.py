"""Every assignment's example class gets the same scores from ours, otter-grader and nbgrader.

Real tools, really run (from the throwaway venvs of `make .venv-otter/.installed`
and `make .venv-nbgrader/.installed`): `autograder grade`, `otter run` with the
otter export's autograder.zip, `nbgrader autograde` in the nbgrader export.
A student's score must agree within 0.01 point.

Where an engine cannot express one of our rules, the student or case is
excluded BY NAME, with the reason (docs/engines.md says the same): students in
benchmarks/engines.py (the benchmark leaves them out too), cases below.
"""

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from autograder.core.assignment import load_assignment
from autograder.export import tools
from conftest import ROOT, engines, example_class

TOLERANCE = 0.01

# (engine, assignment, student) -> why that student cannot be graded alike by that engine: kept beside the harness
# (benchmarks/engines.py), since benchmarks/grade_throughput.py leaves them out of that engine's class too.
EXCLUDED_STUDENTS = engines.EXCLUDED_STUDENTS

# (engine, assignment, case name) -> why that case cannot be judged alike by that engine.
EXCLUDED_CASES = {}

# Cases excluded by rule, whatever their name: faster_than cases are timed by ours in a
# clean worker against a baseline the submission cannot touch; otter and nbgrader can only
# time them inside the student's own kernel (autograder_checks does, for feedback), which
# is noisy under load and which the student's code can slow down or patch.
EXCLUDED_COMPARISONS = {"faster_than"}

# Hand-ins that are not notebooks at all (invalid JSON, empty): ours gives 0 with status
# invalid-notebook/empty and nbgrader gives 0; otter's run stops with a traceback and writes
# no results.json (Gradescope then shows that the autograder failed, and no points).  Such a
# hand-in agrees when ours gives 0 and otter gives no result.
UNGRADABLE = {"invalid-notebook", "empty", "unreadable", "not-a-notebook"}

ENGINES = ("otter", "nbgrader")


def assignment_ids():
    """(assignment, engine) for each assignment and each other engine: two tests, so the slowest assignment's two
    runs can go to two workers.  One with a speed case (faster_than) has the machine to itself (`alone`), as its
    example class's own test does: its class is built around speed, and the other graders' limits are wall-clock
    ones.  CI with 3 test workers on 2 cores once saw nbgrader stop mallory's count_fast(11), which ours passed."""
    from autograder.core.course import load_course

    course = load_course(ROOT)
    params = []
    for a in course.assignment_ids():
        alone = any(c.compare == "faster_than" for c in load_assignment(course, a).cases)
        params += [pytest.param(a, engine, id=f"{a}-{engine}", marks=[pytest.mark.alone] if alone else [])
                   for engine in ENGINES]
    return params


@pytest.fixture(scope="module")
def tool_venvs():
    missing = []
    for tool in ("otter", "nbgrader"):
        try:
            tools.executable(tool, ROOT)
        except tools.ToolError as error:
            missing.append(str(error))
    if missing:
        pytest.fail("; ".join(missing))


def excluded_cases(engine, assignment):
    return {c.name for c in assignment.cases
            if c.compare in EXCLUDED_COMPARISONS or (engine, assignment.id, c.name) in EXCLUDED_CASES}


def disagreements(engine, assignment, ours, theirs):
    skip = excluded_cases(engine, assignment)
    problems = []
    for student, mine in sorted(ours.items()):
        if (engine, assignment.id, student) in EXCLUDED_STUDENTS:
            continue
        other = theirs.get(student)
        if other is None:
            problems.append(f"{student}: {engine} has no row")
            continue
        if other.cases is None:
            if mine.score(skip) == 0 and mine.status in UNGRADABLE:
                continue
            problems.append(f"{student}: {engine} gave no result ({other.status}: {other.note[-300:]}); "
                            f"ours {mine.score(skip)} ({mine.status})")
            continue
        if abs(mine.score(skip) - other.score(skip)) > TOLERANCE:
            cases = [f"{name}: ours {mine.cases[name]} vs {other.cases.get(name)}"
                     for name in mine.cases if name not in skip
                     and abs(mine.cases[name] - (other.cases.get(name) or 0.0)) > 1e-9]
            problems.append(f"{student}: ours {mine.score(skip)}, {engine} {other.score(skip)}; "
                            + "; ".join(cases))
    return problems


@pytest.mark.peers
@pytest.mark.parametrize(("assignment_id", "engine"), assignment_ids())
def test_ours_and_another_engine_agree(assignment_id, engine, course, tool_venvs, example_class_grades,
                                      peer_class_grades):
    paths = example_class(assignment_id)
    if not paths:
        pytest.skip(f"{assignment_id} has no example class (examples/{assignment_id}/submissions)")
    assignment = load_assignment(course, assignment_id)
    # Theirs first: the speed class's two runs go side by side (Makefile), and whichever ends first grades ours.
    theirs = peer_class_grades(engine, assignment_id)
    _, ours = example_class_grades(assignment_id)
    assert sorted(ours) == sorted(Path(p).stem for p in paths)
    assert sorted(theirs) == sorted(Path(p).stem for p in paths
                                    if (engine, assignment_id, Path(p).stem) not in EXCLUDED_STUDENTS)
    problems = disagreements(engine, assignment, ours, theirs)
    assert not problems, "\n".join(f"{engine}: {p}" for p in problems)


def test_exclusions_name_real_students_and_cases(course):
    ids = set(course.assignment_ids())
    for engine, assignment_id, student in EXCLUDED_STUDENTS:
        assert engine in ("otter", "nbgrader") and assignment_id in ids
        assert student in {p.stem for p in example_class(assignment_id)}, (assignment_id, student)
    for engine, assignment_id, name in EXCLUDED_CASES:
        assert name in {c.name for c in load_assignment(course, assignment_id).cases}, (assignment_id, name)


# nbgrader's own reading of its gradebook, through its API (what benchmarks/engines.py read before it used sqlite3).
_NBGRADER_API_READ = '''
import json, sys
from nbgrader.api import Gradebook
out = {}
with Gradebook(sys.argv[1]) as gb:
    for submission in gb.assignment_submissions(sys.argv[2]):
        out[submission.student_id] = {grade.name: grade.score for notebook in submission.notebooks
                                      for grade in notebook.grades}
print(json.dumps(out))
'''


@pytest.mark.peers
def test_our_reading_of_nbgrader_s_gradebook_is_nbgrader_s_own(tmp_path, tool_venvs, peer_class_grades,
                                                                shared_folder):
    """engines.nbgrader_grades reads nbgrader's SQLite tables directly; on a gradebook nbgrader wrote (the example
    class's, graded for the agreement test: ivan and peggy ran into its cell timeout, two hand-ins are not JSON), it
    gives what nbgrader.api gives, and a manual score and extra credit count as nbgrader counts them."""
    assignment_id = "n-queens"
    peer_class_grades("nbgrader", assignment_id)
    gradebook = tmp_path / "gradebook.db"
    shutil.copy(shared_folder / f"peer-class-nbgrader-{assignment_id}" / "gradebook.db", gradebook)
    with sqlite3.connect(gradebook) as db:   # a TA's hand-graded score and extra credit on one cell each
        first, second = db.execute("SELECT id FROM grade ORDER BY id LIMIT 2").fetchall()
        db.execute("UPDATE grade SET manual_score = 0.05, extra_credit = 0.5 WHERE id = ?", first)
        db.execute("UPDATE grade SET auto_score = NULL, extra_credit = 0.25 WHERE id = ?", second)
    python = Path(tools.executable("nbgrader", ROOT)).parent / "python"
    theirs = subprocess.run([str(python), "-c", _NBGRADER_API_READ, f"sqlite:///{gradebook}", assignment_id],
                            capture_output=True, text=True, check=True, timeout=600)
    ours = engines.nbgrader_grades(gradebook, assignment_id)
    assert ours == json.loads(theirs.stdout)
    assert sum(1 for grades in ours.values() if grades) >= 10   # it read the class's grades, not an empty table
    with pytest.raises(RuntimeError, match="reading nbgrader's gradebook"):
        engines.nbgrader_grades(tmp_path / "missing.db", assignment_id)
