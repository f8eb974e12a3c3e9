"""Our execution agrees with a real Jupyter kernel's (nbclient) on the example class."""

import json

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

from autograder.grade.handin import grade
from autograder.runtime import show
from conftest import ROOT

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

SUBMISSIONS = ROOT / "examples" / "n-queens" / "submissions"
# ivan's and peggy's notebooks loop forever at top level or in a demo cell, which
# a plain kernel would run until its timeout; the runner tests cover those.
NOT_IN_A_KERNEL = {"ivan", "peggy"}
STUDENTS = sorted(p.stem for p in SUBMISSIONS.glob("*.ipynb")
                  if p.stem not in NOT_IN_A_KERNEL and p.stem not in {"trent", "victor"})


def kernel_results(path, calls, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.append(new_code_cell(
        "import json as _json\nfrom autograder.runtime import to_plain as _to_plain\n_results = []\n"
        f"for _call in {calls!r}:\n"
        "    try:\n        _results.append(['ok', _to_plain(eval(_call))])\n"
        "    except Exception as _error:\n        _results.append(['error', type(_error).__name__])\n"
        "print(_json.dumps(_results))"))
    NotebookClient(notebook, kernel_name="python3", timeout=60, allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "".join(o.get("text", "") for o in notebook.cells[-1].outputs if o.get("name") == "stdout")
    return json.loads(text.strip().splitlines()[-1])


@pytest.mark.kernel
@pytest.mark.parametrize("student", STUDENTS)
def test_same_values_and_errors_as_a_jupyter_kernel(student, nqueens, nqueens_expected, tmp_path):
    path = SUBMISSIONS / f"{student}.ipynb"
    ours = grade(nqueens, nqueens_expected, student, path)
    theirs = kernel_results(path, [c.call.text for c in nqueens.cases], tmp_path)
    for case, mine, (kind, value) in zip(nqueens.cases, ours.cases, theirs):
        if kind == "ok":
            assert mine.status in ("passed", "failed"), (case.name, mine.message)
            assert mine.received == show(value), case.name
        else:
            assert mine.status == "error" and mine.message.startswith(value), (case.name, mine.message)


# What real notebooks hold around a correct solution (32 of 44 public notebooks tried had %matplotlib):
# each line must cost nothing, as it costs nothing in Jupyter or Colab.
FRONTEND_LINES = [
    "%matplotlib inline\nimport matplotlib.pyplot as plt\n%config InlineBackend.figure_format = 'retina'",
    "%matplotlib notebook",
    "%matplotlib widget",
    "%matplotlib",
    "%gui qt",
    "%pylab inline\nx = linspace(0, 1, 5)",
    "plt.figure(figsize=(3, 3)); plt.plot([1, 2, 3]); plt.title('boards'); plt.show()",
    "from IPython.display import display, HTML, Markdown\ndisplay(HTML('<b>done</b>'), Markdown('*done*'))",
    "ip = get_ipython()\nassert ip.kernel is None and ip.user_ns is not None\n"
    "ip.run_line_magic('load_ext', 'autoreload')",
    "%load_ext autoreload\n%autoreload 2",
    "%%writefile board_helpers.py\ndef empty(n):\n    return [-1] * n",
    "import board_helpers\nassert board_helpers.empty(2) == [-1, -1]",
]


@pytest.mark.slow
def test_frontend_magics_and_display_cost_a_correct_notebook_nothing(nqueens, nqueens_expected, tmp_path):
    notebook = nbformat.read(SUBMISSIONS / "alice.ipynb", as_version=4)
    for line in reversed(FRONTEND_LINES):
        notebook.cells.insert(1, new_code_cell(line))
    path = tmp_path / "frontend.ipynb"
    nbformat.write(notebook, path)
    result = grade(nqueens, nqueens_expected, "frontend", path)
    assert result.cell_errors == [] and result.score == 5.0, result.cell_errors


def test_input_fails_at_once_and_says_why(nqueens, nqueens_expected, tmp_path):
    notebook = nbformat.read(SUBMISSIONS / "alice.ipynb", as_version=4)
    notebook.cells.insert(1, new_code_cell("name = input('Your name? ')"))
    path = tmp_path / "asks.ipynb"
    nbformat.write(notebook, path)
    result = grade(nqueens, nqueens_expected, "asks", path)
    (error,) = result.cell_errors
    assert error["error"].startswith("StdinNotImplementedError: input() was called") and result.score == 5.0
    assert result.seconds < 5        # not a wait for an answer that never comes
