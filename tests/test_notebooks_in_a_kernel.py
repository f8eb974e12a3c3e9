"""Real notebooks executed top to bottom by a real Jupyter kernel (nbclient).

The student notebook runs in a Colab-like kernel whose environment has only
numpy, sympy and ipykernel (.venv-student, made by `make test`): no autograder,
no file beside the notebook.
"""

import json
import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT, STUDENT_PYTHON


@pytest.fixture(scope="module")
def colab_like_kernel(tmp_path_factory):
    if not STUDENT_PYTHON.exists():
        pytest.fail(f"{STUDENT_PYTHON} is missing: run the tests with `make test`, which creates it")
    spec_dir = tmp_path_factory.mktemp("jupyter") / "kernels" / "colab-like"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [str(STUDENT_PYTHON), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Colab-like (numpy, sympy)", "language": "python"}))
    return spec_dir.parents[1]


def execute(notebook, jupyter_path, kernel, monkeypatch, cwd):
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))
    client = NotebookClient(notebook, kernel_name=kernel, timeout=120,
                            resources={"metadata": {"path": str(cwd)}})
    client.execute()  # raises CellExecutionError on the first cell that fails
    return notebook


def outputs(cell):
    return "".join(o.get("text", "") for o in cell.outputs)


def test_untouched_student_notebook_runs_to_the_end(nqueens, colab_like_kernel, monkeypatch, tmp_path):
    notebook = nbformat.read(nqueens.student_path, as_version=4)
    execute(notebook, colab_like_kernel, "colab-like", monkeypatch, tmp_path)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "every code cell ran, the last one included"
    text = "\n".join(outputs(c) for c in code)
    assert "NameError" not in text and "ImportError" not in text and "ModuleNotFoundError" not in text
    checks = [c for c in code if "public-check" in c.metadata.get("tags", [])]
    assert len(checks) == 4
    for cell in checks:
        assert "✗ FAIL" in outputs(cell) and "✓ pass" not in outputs(cell)
        assert "NotImplementedError" in outputs(cell)
    assert "0 / 2 points from these public checks" in text  # count_solutions
    assert "hint:" in text and "expected:" in text and "received:" in text


def test_solved_student_notebook_passes_every_public_check(colab_like_kernel, monkeypatch, tmp_path):
    alice = nbformat.read(ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb", as_version=4)
    execute(alice, colab_like_kernel, "colab-like", monkeypatch, tmp_path)
    text = "\n".join(outputs(c) for c in alice.cells if c.cell_type == "code")
    assert "✗" not in text
    assert text.count("✓ pass") == 13
    assert "92 solutions for n = 8 (expected 92)" in text
    assert "7|-|-|*|-|-|-|-|-|" in text


def test_reference_notebook_runs_in_the_course_environment(nqueens, tmp_path):
    if not shutil.which("python3"):
        pytest.skip("no python3")
    notebook = nbformat.read(nqueens.solution_path, as_version=4)
    NotebookClient(notebook, kernel_name="python3", timeout=120,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "\n".join(outputs(c) for c in notebook.cells if c.cell_type == "code")
    assert "92 solutions for n = 8 (expected 92)" in text
    assert "✗" not in text
