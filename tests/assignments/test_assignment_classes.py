"""Every assignment, the same promises: checked for each id in autograder/assignments/.

For each assignment: its example class gets the scores worked out by hand in
examples/<id>/expected_scores.csv; the reference earns 5/5 and the untouched
student notebook 0; that notebook is built to the rules (nothing beyond
numpy and sympy, no solution code, a check cell after each tested function)
and runs to its last cell in a Colab-like kernel; and its rubric sheet lists
exactly its public cases, one hidden row and the total.
"""

import ast
import copy
import csv
import re
import sys

import nbformat
import pytest
from openpyxl import load_workbook

from autograder.core import limits
from autograder import runtime
from autograder.core.assignment import load_assignment
from autograder.core.course import load_course
from autograder.grade.handin import grade
from conftest import ROOT, outputs, run_all, without_colab_badge

ASSIGNMENT_IDS = load_course(ROOT).assignment_ids()
STUDENT_MODULES = {"numpy", "sympy"}  # what Colab-like kernels have besides the standard library


@pytest.fixture(scope="module", params=ASSIGNMENT_IDS)
def assignment(request, course):
    return load_assignment(course, request.param)


@pytest.fixture(scope="module")
def expected(assignment):
    return assignment.load_expected()


@pytest.fixture(scope="module")
def student(assignment):
    return nbformat.read(assignment.student_path, as_version=4)


def examples(assignment):
    return ROOT / "examples" / assignment.id


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def code_cells(notebook):
    return [c for c in notebook.cells if c.cell_type == "code"]


def tags(cell):
    return cell.metadata.get("tags", [])


# --- the example class --------------------------------------------------------

def _judges_speed(assignment_id):
    return any(c.compare == "faster_than" for c in load_assignment(load_course(ROOT), assignment_id).cases)


# An example class with a speed case (faster_than: a student's time against a baseline's, both measured in the
# run) is graded with the machine to itself, as every test that judges time is: with 3 workers on 2 cores, CI
# once measured erin's fast bitwise counter too slow.
@pytest.mark.slow
@pytest.mark.parametrize("assignment_id", [a for a in ASSIGNMENT_IDS if not _judges_speed(a)])
def test_example_class_gets_its_expected_scores(assignment_id, example_class_grades):
    _example_class_gets_its_expected_scores(load_assignment(load_course(ROOT), assignment_id), example_class_grades)


@pytest.mark.alone
@pytest.mark.parametrize("assignment_id", [a for a in ASSIGNMENT_IDS if _judges_speed(a)])
def test_example_class_with_a_speed_case_gets_its_expected_scores(assignment_id, example_class_grades):
    _example_class_gets_its_expected_scores(load_assignment(load_course(ROOT), assignment_id), example_class_grades)


def _example_class_gets_its_expected_scores(assignment, example_class_grades):
    """Read from the run that grades the class once for every test that reads it (conftest.py)."""
    out, _ = example_class_grades(assignment.id)
    rows = {r["student"]: r for r in read_csv(out / "grades.csv")}
    wanted = read_csv(examples(assignment) / "expected_scores.csv")
    assert len(wanted) >= 8
    assert sorted(rows) == sorted(w["student"] for w in wanted)
    for w in wanted:
        row = rows[w["student"]]
        assert (float(row["score"]), row["status"]) == (float(w["score"]), w["status"]), w["student"]
        assert row["assignment"] == assignment.id and float(row["max_score"]) == 5
    scores = [float(w["score"]) for w in wanted]
    assert 5 in scores and 0 in scores and any(0 < s < 5 for s in scores)


def test_the_untouched_example_is_the_current_student_notebook(assignment):
    # judy hands in what she was given; if the student notebook changes, regenerate
    # the examples with examples/<id>/make_submissions.py (`make examples`).
    judy = examples(assignment) / "submissions" / "judy.ipynb"
    assert without_colab_badge(judy) == without_colab_badge(assignment.student_path)


def test_example_submissions_are_what_make_submissions_writes(assignment):
    script = examples(assignment) / "make_submissions.py"
    assert script.is_file()
    listed = {p.stem for p in (examples(assignment) / "submissions").iterdir()}
    assert listed == {w["student"] for w in read_csv(examples(assignment) / "expected_scores.csv")}


# --- reference and untouched notebook -----------------------------------------

@pytest.mark.slow
def test_reference_scores_full_marks(assignment, expected):
    result = grade(assignment, expected, "reference", assignment.solution_path)
    assert (result.score, result.status) == (5.0, "graded")
    assert [c.name for c in result.cases if c.status != "passed"] == []


def test_untouched_student_notebook_scores_zero(assignment, expected):
    result = grade(assignment, expected, "nobody", assignment.student_path)
    assert result.score == 0
    # Not merely 0: every case stops at a stub, so none can pass by accident.
    assert [c.name for c in result.cases if c.status != "error" or "NotImplementedError" not in c.message] == []


def test_points_add_up(assignment):
    public = round(sum(c.points for c in assignment.public_cases), 6)
    hidden = round(sum(c.points for c in assignment.hidden_cases), 6)
    assert public + hidden == pytest.approx(5) and hidden > 0
    assert all(c.hint for c in assignment.public_cases)
    assert all(c.description for c in assignment.hidden_cases)


# --- the student notebook as a file ---------------------------------------------

def test_student_notebook_is_valid_nbformat_45_with_cleared_outputs(assignment):
    raw = nbformat.read(assignment.student_path, as_version=nbformat.NO_CONVERT)
    nbformat.validate(raw)
    assert (raw.nbformat, raw.nbformat_minor) == (4, 5)
    ids = [c.id for c in raw.cells]
    assert all(ids) and len(set(ids)) == len(ids)
    for cell in code_cells(raw):
        assert cell.outputs == [] and cell.execution_count is None


def test_student_notebook_holds_stubs_not_solutions(assignment, student):
    reference = nbformat.read(assignment.solution_path, as_version=4)
    text = nbformat.writes(student)
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    regions = sum(c.source.count("### BEGIN SOLUTION") for c in reference.cells)
    code = "\n".join(c.source for c in code_cells(student))
    assert regions > 0
    assert code.count("### BEGIN YOUR CODE") == code.count("### END YOUR CODE") == regions
    assert code.count('raise NotImplementedError("replace this line with your code")') == regions
    for case in assignment.hidden_cases:
        assert case.call.text not in text
    dropped = {c.id for c in reference.cells if "reference-only" in tags(c)}
    assert dropped.isdisjoint(c.id for c in student.cells)


def test_student_notebook_needs_only_numpy_and_sympy(student):
    allowed = set(sys.stdlib_module_names) | STUDENT_MODULES
    for cell in code_cells(student):
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            else:
                continue
            for module in modules:
                assert module.split(".")[0] in allowed, f"{cell.id} imports {module}"
    code = "\n".join(c.source for c in code_cells(student))
    assert "autograder" not in code.replace("`autograder build`", "")


def test_a_check_cell_follows_each_tested_function(assignment, student):
    functions = list(dict.fromkeys(c.function for c in assignment.public_cases))
    checks = [c for c in student.cells if "public-check" in tags(c) and c.id != "check-total"]
    assert len(checks) == len(functions)
    for function in functions:
        index = next(i for i, c in enumerate(student.cells)
                     if c.cell_type == "code" and re.search(rf"^def {function}\(", c.source, re.M))
        check = student.cells[index + 1]
        assert "public-check" in tags(check)
        # The cases' own calls (a check it requires is written inline, {"call": ...}, after "requires")
        calls = re.findall(r'^        "call": \'([^\']*)\'', check.source, re.M)
        assert calls == [c.call.text for c in assignment.public_cases if c.function == function]


def test_every_demo_cell_reports_its_errors(assignment):
    reference = nbformat.read(assignment.solution_path, as_version=4)
    for cell in code_cells(reference):
        if "demo" in tags(cell) and "reference-only" not in tags(cell):
            assert cell.source.lstrip().startswith("with report_errors():"), cell.id


# --- Run all, in a Colab-like kernel ---------------------------------------------

@pytest.mark.kernel
def test_untouched_student_notebook_runs_to_the_end(assignment, student, colab_like_kernel, monkeypatch, tmp_path):
    notebook = run_all(copy.deepcopy(student), colab_like_kernel, monkeypatch, tmp_path)
    code = code_cells(notebook)
    assert all(c.execution_count for c in code), "every code cell ran, the last one included"
    text = "\n".join(outputs(c) for c in code)
    for problem in ("NameError", "ImportError", "ModuleNotFoundError", "SyntaxError"):
        assert problem not in text
    checks = [c for c in code if "public-check" in tags(c) and c.id != "check-total"]
    for cell in checks:
        assert "✗ FAIL" in outputs(cell) and "✓ pass" not in outputs(cell)
        assert "NotImplementedError" in outputs(cell)
    public = round(sum(c.points for c in assignment.public_cases), 6)
    total = sum(float(m) for m in re.findall(r"0 / ([\d.]+) points from these public checks", text))
    assert total == pytest.approx(public)
    assert code[-1].id == "check-total"                 # the last cell adds every check cell up
    hidden = round(sum(c.points for c in assignment.hidden_cases), 6)
    assert f"Total: 0 / {public:g} points from the public checks; the grader adds hidden checks worth " \
           f"{hidden:g} more" in outputs(code[-1])
    helpers = next(c for c in code if "autograder-runtime" in tags(c))
    assert helpers.metadata["jupyter"]["source_hidden"] and helpers.metadata["cellView"] == "form"


@pytest.mark.kernel
def test_solved_student_notebook_passes_every_public_check(assignment, colab_like_kernel, monkeypatch, tmp_path):
    alice = nbformat.read(examples(assignment) / "submissions" / "alice.ipynb", as_version=4)
    run_all(alice, colab_like_kernel, monkeypatch, tmp_path)
    text = "\n".join(outputs(c) for c in code_cells(alice))
    assert "✗" not in text
    assert text.count("✓ pass") == len(assignment.public_cases)
    public = round(sum(c.points for c in assignment.public_cases), 6)
    assert f"Total: {public:g} / {public:g} points from the public checks" in outputs(code_cells(alice)[-1])


# --- public_rubric.xlsx ------------------------------------------------------------

@pytest.fixture(scope="module")
def rubric(course):
    return load_workbook(course.root / "public_rubric.xlsx")


def test_rubric_has_one_sheet_per_assignment(rubric, course):
    assert rubric.sheetnames == course.assignment_ids()


def test_rubric_sheet_lists_public_cases_hidden_row_and_total(rubric, assignment, expected):
    rows = list(rubric[assignment.id[:31]].iter_rows(values_only=True))
    end = [r[0] for r in rows].index("Total")        # a deadline adds rows after the total
    header, body, hidden, total = rows[0], rows[1:end - 1], rows[end - 1], rows[end]
    assert header == ("Function", "Arguments", "Expected value", "Points", "Time limit (s)",
                      "Counts only when these pass")
    public = assignment.public_cases
    # Each public case's limit on the building machine (limits.py), from the recorded timing.
    limit_of = dict(zip((c.name for c in assignment.cases),
                        limits.case_limits(assignment, limits.load_timing(assignment), 1.0)))
    assert [r[4] for r in body] == [limit_of[c.name] for c in public]
    assert [(r[0], r[0] + r[1]) for r in body] == [(c.function, c.call.text) for c in public]
    assert [r[3] for r in body] == [c.points for c in public]
    for row, case in zip(body, public):
        value = expected[case.name]
        shown = value if type(value) in (bool, int, float) else runtime.show(value, limit=30000)
        assert row[2] == shown, case.name
    assert hidden[0] == "hidden cases"
    assert hidden[1] == f"{len(assignment.hidden_cases)} cases, not shown"
    assert hidden[2] in (None, "")
    assert hidden[3] == pytest.approx(sum(c.points for c in assignment.hidden_cases))
    assert total[0] == "Total" and total[3] == 5
    assert round(sum(r[3] for r in body) + hidden[3], 6) == 5


def test_rubric_never_shows_hidden_inputs(rubric, assignment):
    text = "\n".join(str(v) for row in rubric[assignment.id[:31]].iter_rows(values_only=True)
                     for v in row if v is not None)
    for case in assignment.hidden_cases:
        assert case.call.text not in text
