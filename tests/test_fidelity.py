"""Our execution agrees with a real Jupyter kernel's (nbclient) on the example class."""

import json

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

from autograder.grade.handin import grade
from autograder.runtime import show
from conftest import ROOT

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
