"""The reference notebook runs in the course's own environment, in a real kernel.

(Every student notebook is run, untouched and solved, in a Colab-like kernel by
tests/assignments/test_assignment_classes.py.)
"""

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import outputs


@pytest.mark.kernel
def test_reference_notebooks_run_in_the_course_environment(course, tmp_path):
    from autograder.core.assignment import load_assignment

    for assignment_id in course.assignment_ids():
        assignment = load_assignment(course, assignment_id)
        notebook = nbformat.read(assignment.solution_path, as_version=4)
        NotebookClient(notebook, kernel_name="python3", timeout=300,
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
        text = "\n".join(outputs(c) for c in notebook.cells if c.cell_type == "code")
        assert "✗" not in text, assignment_id


@pytest.mark.kernel
def test_a_check_cell_names_the_function_its_error_came_from(course, tmp_path):
    """`is_solved` right, `get_n` still the stub it calls: is_solved's check cell must send the student to get_n,
    as the feedback page does, not show get_n's NotImplementedError as if it were is_solved's."""
    import re

    from conftest import ROOT

    notebook = nbformat.read(ROOT / "assignments" / "n-queens" / "n-queens.ipynb", as_version=4)
    alice = nbformat.read(ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb", as_version=4)
    solved = {re.search(r"^def (\w+)\(", c.source, re.M).group(1): c.source for c in alice.cells
              if c.cell_type == "code" and re.search(r"^def (\w+)\(", c.source, re.M)}
    for cell in notebook.cells:
        defined = re.search(r"^def (\w+)\(", cell.source, re.M) if cell.cell_type == "code" else None
        if defined and not cell.metadata.get("tags") and defined.group(1) in set(solved) - {"get_n"}:
            cell.source = solved[defined.group(1)]
    NotebookClient(notebook, kernel_name="python3", timeout=300, allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    checks = {c.source.split("run_checks(", 1)[0]: outputs(c) for c in notebook.cells
              if c.cell_type == "code" and "Public checks for is_solved()" in c.source}
    (text,) = checks.values()
    assert "NotImplementedError" in text and "(raised in `get_n`, which this check calls)" in text, text
    assert "hint: This check calls `get_n`, which fails its own checks: fix `get_n` first." in text, text
