"""The reference notebook runs in the course's own environment, in a real kernel.

(Every student notebook is run, untouched and solved, in a Colab-like kernel by
tests/test_assignment_classes.py.)
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
