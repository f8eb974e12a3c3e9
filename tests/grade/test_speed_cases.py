"""faster_than cases: right answer AND faster than a baseline timed by the grader."""

import nbformat
import pytest
from click.testing import CliRunner
from nbformat.v4 import new_code_cell

from autograder.core.assignment import load_assignment
from autograder.cli.main import main
from autograder.core.course import load_course
from autograder.grade.handin import grade
from minicourse import cell, make_course

SLOW = """
def slow_sum(n):
    total = 0
    for i in range(n):
        for _ in range(30):
            total += 0
        total += i
    return total
"""

FAST = """
def fast_sum(n):
    ### BEGIN SOLUTION
    return n * (n - 1) // 2
    ### END SOLUTION
"""

CASES = """
[[case]]
call = "fast_sum(10)"
points = 2
hint = "Gauss"

[[case]]
call = "fast_sum(200000)"
points = 3
compare = "faster_than"
options = { baseline = "slow_sum(200000)", speedup = 5, repeat = 3 }
hint = "No loop needed."
"""


@pytest.fixture(scope="module")
def speed_course(tmp_path_factory):
    root = make_course(tmp_path_factory.mktemp("course"),
                       [cell(new_code_cell, "slow", SLOW), cell(new_code_cell, "fast", FAST)], CASES)
    result = CliRunner().invoke(main, ["--course", str(root), "build"])
    assert result.exit_code == 0, result.output
    course = load_course(root)
    assignment = load_assignment(course, "squares")
    return root, assignment, assignment.load_expected()


def submit(tmp_path, root, fast_source, extra=""):
    notebook = nbformat.read(root / "assignments" / "squares" / "squares.ipynb", as_version=4)
    next(c for c in notebook.cells if c.id == "fast").source = fast_source
    if extra:
        notebook.cells.insert(1, new_code_cell(extra))
    path = tmp_path / "student.ipynb"
    nbformat.write(notebook, path)
    return path


@pytest.mark.slow
def test_fast_and_right_earns_everything(speed_course, tmp_path):
    root, assignment, expected = speed_course
    result = grade(assignment, expected, "s", submit(tmp_path, root, FAST.replace("SOLUTION", "YOUR CODE")))
    assert result.score == 5


@pytest.mark.slow
def test_right_but_as_slow_as_the_baseline_loses_the_speed_case(speed_course, tmp_path):
    root, assignment, expected = speed_course
    slow = "def fast_sum(n):\n    return slow_sum(n)"
    result = grade(assignment, expected, "s", submit(tmp_path, root, slow))
    assert result.score == 2
    speed = result.cases[1]
    assert speed.status == "failed" and "times faster than slow_sum(200000)" in speed.message


@pytest.mark.slow
def test_patching_the_clock_or_the_baseline_earns_nothing(speed_course, tmp_path):
    root, assignment, expected = speed_course
    cheat = ("import time\n"
             "time.perf_counter = lambda: 0.0\n"
             "time.monotonic = lambda: 0.0\n"
             "def slow_sum(n):\n    import time as t\n    t.sleep(5)\n    return 0\n")
    slow = "def fast_sum(n):\n    total = 0\n    for i in range(n):\n        for _ in range(30):\n" \
           "            total += 0\n        total += i\n    return total"
    result = grade(assignment, expected, "s", submit(tmp_path, root, slow, extra=cheat))
    assert result.cases[0].status == "passed"
    assert result.cases[1].status == "failed"


@pytest.mark.slow
def test_the_notebook_checks_time_the_same_rule(speed_course, capsys):
    root, _, _ = speed_course
    notebook = nbformat.read(root / "assignments" / "squares" / "squares.ipynb", as_version=4)
    next(c for c in notebook.cells if c.id == "fast").source = "def fast_sum(n):\n    return slow_sum(n)"
    namespace = {}
    for code in (c.source for c in notebook.cells if c.cell_type == "code"):
        exec(compile(code, "<cell>", "exec"), namespace)  # noqa: S102 - our own generated notebook
    out = capsys.readouterr().out
    assert "✓ pass  fast_sum(10)" in out
    assert "✗ TOO SLOW  fast_sum(200000)" in out and "too slow: right answer in" in out
