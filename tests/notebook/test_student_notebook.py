"""The generated student notebook, read as a file."""

import re

import nbformat
import pytest

from autograder.notebook.preprocessors.stub_solutions import BEGIN


@pytest.fixture(scope="module")
def student(nqueens):
    return nbformat.read(nqueens.student_path, as_version=4)


@pytest.fixture(scope="module")
def reference(nqueens):
    return nbformat.read(nqueens.solution_path, as_version=4)


def test_valid_nbformat_45_with_cell_ids(student, nqueens):
    raw = nbformat.read(nqueens.student_path, as_version=nbformat.NO_CONVERT)
    nbformat.validate(raw)
    assert (raw.nbformat, raw.nbformat_minor) == (4, 5)
    ids = [c.id for c in raw.cells]
    assert all(ids) and len(set(ids)) == len(ids)


def test_outputs_are_cleared(student):
    for cell in student.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


def test_no_solution_code_reaches_students(student, reference):
    assert "BEGIN SOLUTION" not in nbformat.writes(student) and "END SOLUTION" not in nbformat.writes(student)
    # The pasted-in helpers are generic code; solution lines are looked for everywhere else.
    text = "\n".join(c.source for c in student.cells if "autograder-runtime" not in c.metadata.get("tags", []))
    for cell in reference.cells:
        inside = False
        for line in cell.source.splitlines():
            if BEGIN.match(line):
                inside = True
            elif "### END SOLUTION" in line:
                inside = False
            elif inside and line.strip():
                assert line.strip() not in text, f"solution line leaked: {line.strip()!r}"


def test_every_region_is_a_your_code_stub(student, reference):
    regions = sum(c.source.count("### BEGIN SOLUTION") for c in reference.cells)
    text = "\n".join(c.source for c in student.cells if c.cell_type == "code")
    assert regions == text.count("### BEGIN YOUR CODE") == text.count("### END YOUR CODE") == 6
    assert text.count("raise NotImplementedError") == regions


def test_colab_badge_points_at_this_notebook(student, course, nqueens):
    badge = student.cells[0]
    url = ("https://colab.research.google.com/github/"
           f"{course.repository.removeprefix('https://github.com/')}/blob/{course.branch}/"
           "assignments/n-queens/n-queens.ipynb")
    assert badge.cell_type == "markdown" and url in badge.source


def test_a_check_cell_follows_each_tested_function(student, nqueens):
    for function in {c.function for c in nqueens.public_cases}:
        index = next(i for i, c in enumerate(student.cells)
                     if c.cell_type == "code" and re.search(rf"^def {function}\(", c.source, re.M))
        check = student.cells[index + 1]
        assert "public-check" in check.metadata.tags
        calls = re.findall(r'"call": \'([^\']*)\'', check.source)
        assert calls == [c.call.text for c in nqueens.public_cases if c.function == function]


def test_hidden_cases_are_not_in_the_student_notebook(student, nqueens):
    text = nbformat.writes(student)
    for case in nqueens.hidden_cases:
        assert case.call.text not in text


def test_the_helpers_are_pasted_in_not_imported(student):
    code = "\n".join(c.source for c in student.cells if c.cell_type == "code")
    assert "autograder" not in code.replace("`autograder build`", "")
    assert "def run_checks(" in code and "def report_errors(" in code
    assert "row2st(" not in code  # the original notebook's typo
