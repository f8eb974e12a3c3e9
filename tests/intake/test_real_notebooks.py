"""Real notebooks, saved by six clients, graded as their clients mean them (tests/intake/real_notebooks/PROVENANCE.md).

Each real file keeps its own format, metadata, cells and outputs; a correct solution (alice's code cells)
is added at its end in that format (nbformat 3 cells for the nbformat 3 file, cell ids where the client
writes them).  The real cells run too: `%matplotlib inline`, `%config InlineBackend...`, plots, display
and a `%load` of a URL (which the sandbox's lack of network turns into a cell error, costing nothing).
"""

import json
import uuid
from pathlib import Path

import pytest

from autograder.grade.handin import grade
from conftest import ROOT

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

REAL = Path(__file__).parent / "real_notebooks"
ALICE = ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb"
CLIENTS = sorted(path.stem for path in REAL.glob("*.ipynb"))


def _solution_sources():
    cells = json.loads(ALICE.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code" and not c["metadata"].get("tags")]


def transplant(real_path, target):
    """The real notebook with the solution's cells appended, as its own client would save them."""
    notebook = json.loads(real_path.read_text(encoding="utf-8"))
    if notebook["nbformat"] == 3:
        cells = notebook["worksheets"][0]["cells"]
        cells += [{"cell_type": "code", "collapsed": False, "input": source.splitlines(keepends=True),
                   "language": "python", "metadata": {}, "outputs": []} for source in _solution_sources()]
    else:
        with_ids = notebook.get("nbformat_minor", 0) >= 5
        for source in _solution_sources():
            cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                    "source": source if isinstance(notebook["cells"][0].get("source"), str)
                    else source.splitlines(keepends=True)}
            if with_ids:
                cell["id"] = uuid.uuid4().hex[:8]
            notebook["cells"].append(cell)
    target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False), encoding="utf-8")
    return target


def test_six_clients_are_here_with_their_provenance():
    assert {"colab", "vscode", "jupyterlab4", "classic", "kaggle", "nbformat3"} <= set(CLIENTS)
    provenance = (REAL / "PROVENANCE.md").read_text()
    for client in CLIENTS:
        assert f"| {client}.ipynb |" in provenance, client


@pytest.mark.slow
@pytest.mark.parametrize("client", CLIENTS)
def test_a_correct_solution_in_a_real_client_s_notebook_scores_5(client, nqueens, nqueens_expected, tmp_path):
    path = transplant(REAL / f"{client}.ipynb", tmp_path / f"{client}.ipynb")
    result = grade(nqueens, nqueens_expected, client, path)
    assert (result.score, result.status) == (5.0, "graded"), (result.message, result.cell_errors)
    # The client's own cells cost nothing; the only error allowed is what needs the network or a package
    # the grading environment lacks, as it would in any sandbox.  Or a stop at the short limit of the first run
    # (grade/handin.py: a hand-in that lost no points is not run again, so no score depends on that limit): beside
    # two CPU hogs, classic's and kaggle's first cells (matplotlib's and kaggle's imports) were stopped at their 2 s
    # once; time a cell spends blocked, reading files from a busy disk say, counts as time without progress
    # (engine/watch.py).  A stop at the full cell limit is still an error here.
    settings = nqueens.settings()
    first = settings.first_cell_timeout
    short_stop = (f"stopped after {first:.3g} s (time limit)"
                  if first is not None and first < settings.cell_timeout else None)
    for error in result.cell_errors:
        assert any(word in error["error"] for word in ("URLError", "ModuleNotFoundError", "IndexError",
                                                        "gaierror", "OSError")) or \
            (short_stop is not None and error["error"].startswith(short_stop)), error
