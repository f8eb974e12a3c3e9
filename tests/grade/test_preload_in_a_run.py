"""A module a hand-in imports inside a function costs none of a case's time limit, graded alone or in a class.

The zygote imports the trusted modules a run's hand-ins name (engine/sandbox.py, preload_for). When it preloaded
sympy only for two hand-ins that named it, one hand-in graded alone (as Gradescope grades it, or a single late
hand-in) paid sympy's import inside its first case: 0.22 CPU-s of that case's 0.25 s floor."""

import json

from click.testing import CliRunner

from autograder.cli.main import main
from conftest import ROOT

ALICE = ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb"
# alice's notebook with sympy imported only when count_solutions is first called, never at the top level.
IMPORTS_WHEN_CALLED = ("_count = count_solutions\n"
                       "def count_solutions(n):\n"
                       "    from sympy.utilities.iterables import multiset_permutations as found\n"
                       "    globals()['multiset_permutations'] = found\n"
                       "    return _count(n)\n")


def _imports_sympy_when_called(path):
    notebook = json.loads(ALICE.read_text())
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = "\n".join(line for line in source.split("\n") if "sympy" not in line)
    notebook["cells"].append({"cell_type": "code", "execution_count": None, "id": "imports-when-called",
                              "metadata": {}, "outputs": [], "source": IMPORTS_WHEN_CALLED})
    path.write_text(json.dumps(notebook))
    return path


def test_one_hand_in_graded_alone_is_not_charged_for_importing_sympy_in_a_case(tmp_path):
    handin = _imports_sympy_when_called(tmp_path / "late.ipynb")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens", "--out", str(out),
                                       str(handin)])
    assert result.exit_code == 0, result.output
    import sqlite3
    with sqlite3.connect(out / "gradebook.db") as db:
        first = db.execute("SELECT status, seconds FROM case_results WHERE name = 'count_solutions(1)'").fetchone()
        failed = db.execute("SELECT name, message FROM case_results WHERE status != 'passed'").fetchall()
    assert failed == []
    # CPU seconds, not wall: a loaded machine does not raise them. Imported in the case, they were 0.22.
    assert first[0] == "passed" and first[1] < 0.1, first
