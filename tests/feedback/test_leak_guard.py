"""The leak guard: no solution code or hidden case reaches a student-facing file."""

import json
import subprocess

import nbformat
import openpyxl
import pytest

from autograder import runtime
from autograder.core.assignment import load_assignment
from autograder.core.course import load_course
from autograder.feedback import leak_guard
from autograder.cli.feedback import feedback_command
from autograder.cli.release import release_command
from autograder.cli.report import report_command
from browser.classes import EXAMPLE_SUBMISSIONS, ROOT, grade, graded_example_class, run

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

MARKER_LINE = "planted_marker = sorted(rows)[::-1]  # LEAK-MARKER-7731"
MARKER_CALL = "is_solved([7, 1, 7, 1, 7, 0, 2])"


def add_markdown(notebook_path, text):
    notebook = nbformat.read(notebook_path, as_version=4)
    notebook.cells.append(nbformat.v4.new_markdown_cell(text))
    nbformat.write(notebook, notebook_path)


def test_the_course_bundle_passes_and_has_a_student_readme(tmp_path):
    target = tmp_path / "students"
    result = run(release_command, "--students", "--to", target)
    assert result.exit_code == 0, result.output
    written = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    course = load_course(ROOT)
    assert written == sorted(["README.md", "public_rubric.xlsx", "requirements-student.txt", "environment.yml",
                              *(f"assignments/{a}/{a}.ipynb" for a in course.assignment_ids())])
    readme = (target / "README.md").read_text(encoding="utf-8")
    for assignment_id in course.assignment_ids():
        assert course.colab_url(f"assignments/{assignment_id}/{assignment_id}.ipynb") in readme
    assert "Open in Colab" in readme and "### BEGIN YOUR CODE" in readme and "Download .ipynb" in readme
    assert not any("solutions" in name for name in written)
    again = run(release_command, "--students", "--to", target)
    assert "nothing changed" in again.output


def test_a_bundle_missing_a_file_its_readme_names_is_refused_and_a_missing_environment_is_said(course_copy,
                                                                                                  tmp_path):
    """Nothing is left out silently: the course copy has no student environment files, which the bundle says it
    leaves out; without its rubric or a student notebook, which its README points to, nothing is written."""
    result = run(release_command, "--students", "--to", tmp_path / "ok", obj=course_copy)
    assert result.exit_code == 0, result.output
    assert "not in the bundle, as the course has none: requirements-student.txt, environment.yml" in result.output
    (course_copy / "public_rubric.xlsx").unlink()
    (course_copy / "assignments" / "bitwise-queens" / "bitwise-queens.ipynb").unlink()
    result = run(release_command, "--students", "--to", tmp_path / "fresh", obj=course_copy)
    assert result.exit_code == 1
    assert ("the student bundle would lack assignments/bitwise-queens/bitwise-queens.ipynb, public_rubric.xlsx"
            in result.output) and "autograder build" in result.output
    assert not (tmp_path / "fresh").exists()


def test_a_solution_line_planted_in_the_student_notebook_is_caught(course_copy, tmp_path):
    solution = course_copy / "solutions" / "n-queens" / "n-queens.ipynb"
    notebook = nbformat.read(solution, as_version=4)
    cell = next(c for c in notebook.cells if "### BEGIN SOLUTION" in c.source and "def get_n" in c.source)
    cell.source = cell.source.replace("### BEGIN SOLUTION\n", f"### BEGIN SOLUTION\n    {MARKER_LINE}\n", 1)
    nbformat.write(notebook, solution)
    course = load_course(course_copy)
    assert MARKER_LINE in [n.text for n in leak_guard.solution_needles(course)]
    target = tmp_path / "students"
    assert run(release_command, "--students", "--to", target, obj=course_copy).exit_code == 0   # not leaked yet

    student = course_copy / "assignments" / "n-queens" / "n-queens.ipynb"
    leaked = nbformat.read(student, as_version=4)
    leaked.cells.append(nbformat.v4.new_code_cell(f"def helper(rows):\n    {MARKER_LINE}\n    return planted_marker"))
    nbformat.write(leaked, student)
    fresh = tmp_path / "fresh"
    result = run(release_command, "--students", "--to", fresh, obj=course_copy)
    assert result.exit_code == 1
    assert "assignments/n-queens/n-queens.ipynb: solution code (solutions/n-queens/n-queens.ipynb)" in result.output
    assert "LEAK-MARKER-7731" in result.output
    assert not fresh.exists()                                                  # nothing written at all


def test_a_hidden_case_planted_in_the_rubric_and_notebook_is_caught(course_copy, tmp_path):
    cases = course_copy / "autograder" / "assignments" / "n-queens" / "cases.toml"
    cases.write_text(cases.read_text().replace('call = "is_solved([0, 2, 0])"', f'call = "{MARKER_CALL}"'))
    course = load_course(course_copy)
    assert MARKER_CALL in [n.text for n in leak_guard.hidden_needles(course, ["n-queens"])]
    assert run(release_command, "--students", "--to", tmp_path / "ok", obj=course_copy).exit_code == 0

    rubric = course_copy / "public_rubric.xlsx"
    book = openpyxl.load_workbook(rubric)
    book.worksheets[0].append(["extra", MARKER_CALL, 0.1])
    book.save(rubric)
    student = course_copy / "assignments" / "n-queens" / "n-queens.ipynb"
    add_markdown(student, "Also try `[7, 1, 7, 1, 7, 0, 2]` yourself.")         # the argument alone
    hidden_board = load_assignment(course, "n-queens").load_expected()[
        "hidden: board2str draws a board of another size"]
    add_markdown(student, "```\n" + hidden_board + "\n```")                      # a hidden expected value
    result = run(release_command, "--students", "--to", tmp_path / "fresh", obj=course_copy)
    assert result.exit_code == 1
    output = result.output
    assert "public_rubric.xlsx: hidden case input (n-queens: hidden case 'is_solved rejects two queens" in output
    assert f"'{MARKER_CALL}'" in output
    assert "assignments/n-queens/n-queens.ipynb: hidden case input" in output and "'[7, 1, 7, 1, 7, 0, 2]'" in output
    assert "assignments/n-queens/n-queens.ipynb: hidden expected value" in output
    assert not (tmp_path / "fresh").exists()


def test_public_values_never_look_like_hidden_ones():
    """Feedback shows every public call and expected value: none may trip the guard."""
    course = load_course(ROOT)
    for assignment_id in course.assignment_ids():
        assignment = load_assignment(course, assignment_id)
        expected = assignment.load_expected()
        shown = "\n".join(f"{c.call.text}\n{runtime.show(expected[c.name])}\n{c.hint}"
                          for c in assignment.public_cases)
        assert leak_guard.scan({"page.html": shown}, leak_guard.hidden_needles(course, [assignment_id])) == []


def test_the_guard_sees_through_notebook_json_html_and_whitespace():
    needles = [leak_guard.Needle("hidden case input", "x", "f([1, 2, 3, 4])", leak_guard.normalize("f([1, 2, 3, 4])"))]
    notebook = json.dumps({"cells": [{"source": ["f([1,\n", " 2, 3, 4])"]}]})
    assert leak_guard.scan({"a.ipynb": notebook}, needles)
    assert leak_guard.scan({"a.html": "<code>f([1, 2,&#32;3, 4])</code>"}, needles)
    assert not leak_guard.scan({"a.html": "f([1, 2, 3, 5])"}, needles)


# --- every file the commands write, searched for every hidden input -----------------------------

def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


@pytest.fixture(scope="module")
def everything_written(tmp_path_factory):
    """Run feedback, report, both releases and the student release; return {file: bytes} of all they wrote."""
    base = tmp_path_factory.mktemp("written")
    out = graded_example_class(base / "out")
    before = {p for p in out.rglob("*")}
    for command, args in ((feedback_command, ["--out", out]), (report_command, ["--out", out]),
                          (release_command, ["--out", out, "--to", base / "lms"]),
                          (release_command, ["--students", "--to", base / "students"])):
        result = run(command, *args)
        assert result.exit_code == 0, result.output
    # a GitHub Classroom class too: the files committed on each feedback branch
    clones = base / "clones"
    for student in ("bob", "judy", "heidi"):
        repo = clones / f"n-queens-{student}"
        repo.mkdir(parents=True)
        git(repo, "init", "-q", "-b", "main")
        (repo / "n-queens.ipynb").write_bytes((EXAMPLE_SUBMISSIONS / f"{student}.ipynb").read_bytes())
        git(repo, "add", ".")
        git(repo, "-c", "user.name=s", "-c", "user.email=s@x", "commit", "-q", "-m", "hand-in")
    grade(base / "classroom-out", clones)
    assert run(release_command, "--out", base / "classroom-out", "--to", clones, "--format", "classroom").exit_code == 0
    files = {p.relative_to(base).as_posix(): p.read_bytes()
             for p in base.rglob("*") if p.is_file() and p not in before and ".git" not in p.parts
             and p.suffix != ".db"}
    for repo in sorted(clones.iterdir()):
        for name in ("feedback.md", "feedback.html"):
            files[f"{repo.name}@feedback/{name}"] = git(repo, "show", f"feedback:feedback/{name}")
    return files


@pytest.mark.slow
def test_every_written_file_was_searched(everything_written):
    names = set(everything_written)
    assert {"out/report.html", "out/feedback/bob/feedback.html", "out/feedback/bob/feedback.md",
            "lms/n-queens-feedback.zip", "lms/canvas_grades.csv", "students/public_rubric.xlsx",
            "students/README.md", "n-queens-bob@feedback/feedback.html"} <= names
    assert len([n for n in names if n.startswith("out/feedback/")]) == 2 * 17


@pytest.mark.slow
def test_no_hidden_case_input_appears_in_any_written_file(everything_written):
    course = load_course(ROOT)
    needles = leak_guard.hidden_needles(course, inputs_only=True)
    assert len(needles) >= len([c for a in course.assignment_ids() for c in load_assignment(course, a).hidden_cases])
    assert leak_guard.scan(everything_written, needles) == []
    calls = [c.call.text for a in course.assignment_ids() for c in load_assignment(course, a).hidden_cases]
    for name, data in everything_written.items():
        text = data.decode("utf-8", errors="replace")
        assert not [call for call in calls if call in text], name               # plainly, too


def test_no_hidden_expected_value_or_solution_code_appears_either(everything_written):
    course = load_course(ROOT)
    hidden = [n for n in leak_guard.hidden_needles(course) if n.kind == "hidden expected value"]
    assert leak_guard.scan(everything_written, hidden) == []
    students = {k: v for k, v in everything_written.items() if k.startswith("students/")}
    assert leak_guard.scan(students, leak_guard.solution_needles(course)) == []
