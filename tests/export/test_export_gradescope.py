"""`autograder export gradescope`: our engine inside Gradescope's layout, run for real.

A temporary folder stands in for /autograder (AUTOGRADER_ROOT): source/ holds
the unzipped autograder, submission/ the student's files, results/ gets
results.json in Gradescope's format.
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.export import gradescope, results
from autograder.cli.export import export
from autograder.grade.handin import grade
from conftest import ANSWERED_FROM_THE_EXPECTED_VALUES, ROOT, WITH_HIDDEN_CALLS

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)


EXAMPLES = ROOT / "examples" / "n-queens"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def zip_path(tmp_path_factory):
    out = tmp_path_factory.mktemp("gradescope")
    result = CliRunner().invoke(export, ["--course", str(ROOT), "gradescope", "--assignment", "n-queens",
                                         "--to", str(out)])
    assert result.exit_code == 0, result.output
    return out / "n-queens-gradescope.zip"


def make_root(tmp_path, zip_path, files=()):
    root = tmp_path / "autograder"
    for sub in ("submission", "results"):
        (root / sub).mkdir(parents=True)
    gradescope.unpack(zip_path, root / "source")
    for name, path in files:
        shutil.copy(path, root / "submission" / name)
    return root


def run(root, script="run_autograder", env_extra=None, timeout=600):
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "PATH": f"{BIN}:{os.environ['PATH']}",
           **(env_extra or {})}
    done = subprocess.run(["bash", str(root / "source" / script)], capture_output=True, text=True, env=env,
                          timeout=timeout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def check_format(data, assignment):
    """Gradescope's results.json: score, and tests with name, score, max_score, output, visibility."""
    assert isinstance(data["score"], (int, float))
    assert len(data["tests"]) == len(assignment.cases)
    for test, case in zip(data["tests"], assignment.cases):
        assert set(test) >= {"name", "score", "max_score", "output", "visibility"}
        assert test["max_score"] == pytest.approx(case.points)
        assert 0 <= test["score"] <= test["max_score"]
        assert test["visibility"] == ("after_published" if case.hidden else "visible")
        if case.hidden:
            assert test["name"] == f"hidden: {case.description}"
            assert case.call.text not in json.dumps(test)
    assert sum(t["score"] for t in data["tests"]) == pytest.approx(data["score"], abs=1e-6)


def test_zip_bundles_the_engine_and_only_this_assignment(zip_path):
    with zipfile.ZipFile(zip_path) as archive:
        names = set(archive.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in archive.infolist()}
    assert {"setup.sh", "run_autograder", "course/pyproject.toml", "course/course.toml",
            "course/autograder/cli/main.py", "course/autograder/export/gradescope.py",
            "course/autograder/assignments/n-queens/cases.toml",
            "course/autograder/assignments/n-queens/expected.json",
            "course/solutions/n-queens/n-queens.ipynb"} <= names
    assert not [n for n in names if n.startswith("course/autograder/assignments/")
                and not n.startswith("course/autograder/assignments/n-queens/")]
    assert not [n for n in names if "__pycache__" in n]
    assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111


# One test per student: 17 runs of run_autograder are a minute and a half, which test workers can share.
@pytest.mark.slow
@pytest.mark.parametrize("handin", sorted((EXAMPLES / "submissions").iterdir()), ids=lambda p: p.stem)
def test_every_example_student_gets_our_score_in_results_json(handin, zip_path, nqueens, tmp_path):
    expected = {r["student"]: float(r["score"])
                for r in csv.DictReader(open(EXAMPLES / "expected_scores.csv", encoding="utf-8"))}
    root = make_root(tmp_path / handin.stem, zip_path, [(handin.name, handin)])
    run(root)
    data = json.loads((root / "results" / "results.json").read_text())
    check_format(data, nqueens)
    assert data["score"] == pytest.approx(expected[handin.stem], abs=0.01), handin.stem


@pytest.mark.slow
def test_an_empty_submission_scores_zero_with_a_reason(zip_path, nqueens, tmp_path):
    root = make_root(tmp_path, zip_path)
    run(root)
    data = json.loads((root / "results" / "results.json").read_text())
    check_format(data, nqueens)
    assert data["score"] == 0 and "no notebook" in data["output"]


@pytest.mark.slow
def test_the_notebook_named_like_the_assignment_counts(zip_path, nqueens, tmp_path):
    root = make_root(tmp_path, zip_path, [("n-queens.ipynb", EXAMPLES / "submissions" / "carol.ipynb"),
                                          ("scratch.py", EXAMPLES / "submissions" / "walter.py")])
    run(root)
    data = json.loads((root / "results" / "results.json").read_text())
    check_format(data, nqueens)
    assert data["score"] == pytest.approx(4.3)


def test_per_case_results_agree_between_gradebook_and_api(nqueens, tmp_path):
    from click.testing import CliRunner as Runner

    from autograder.cli.main import main

    handin = EXAMPLES / "submissions" / "dave.ipynb"
    out = tmp_path / "out"
    result = Runner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens",
                                    "--out", str(out), str(handin)])
    assert result.exit_code == 0, result.output
    from_db = results.read(out, nqueens)
    direct = grade(nqueens, nqueens.load_expected(), "dave", handin)
    assert [(c.name, c.points, c.hidden) for c in from_db[0].cases] == \
           [(c.name, c.points, c.hidden) for c in direct.cases]
    assert from_db[0].score == direct.score == pytest.approx(2.9)
    assert all(c.call is None for c in from_db[0].cases if c.hidden)


@pytest.mark.slow
def test_setup_sh_installs_the_bundled_engine_that_run_autograder_uses(zip_path, tmp_path):
    # What Gradescope does: setup.sh once (here with this machine's Python 3.11 and PyPI),
    # then run_autograder with nothing of ours on PATH.
    # Under a folder named `tests`: compileall's -x pattern is matched against the whole path (setup.sh).
    root = make_root(tmp_path / "tests", zip_path, [("n-queens.ipynb", EXAMPLES / "submissions" / "erin.ipynb")])
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], capture_output=True, text=True,
                           env={**os.environ, **env, "AUTOGRADER_ROOT": str(root)}, timeout=1200)
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
    assert (root / "venv" / "bin" / "autograder").is_file()
    assert (root / "venv" / "bin" / "uv").is_file()       # pip brought uv, and uv the engine
    # Bytecode compiled once, here, for what a kernel imports; not for the packages' own test suites.
    site = next((root / "venv" / "lib").glob("python3*/site-packages"))
    assert list((site / "numpy" / "__pycache__").glob("__init__.*.pyc"))
    assert not list((site / "numpy" / "_core" / "tests").rglob("*.pyc"))
    done = subprocess.run(["bash", str(root / "source" / "run_autograder")], capture_output=True, text=True,
                          env={**os.environ, **env, "AUTOGRADER_ROOT": str(root)}, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == pytest.approx(4.9)


CHEATER = """import json, os
""" + WITH_HIDDEN_CALLS + """
ANSWERS = {}
for path in %r:
    try:
        with open(path) as handle:
            ANSWERS = _with_hidden_calls(json.load(handle)["expected"], path)
        break
    except (OSError, ValueError, KeyError):
        pass
""" + ANSWERED_FROM_THE_EXPECTED_VALUES


@pytest.mark.conditions
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("capsh"), reason="needs root and capsh")
@pytest.mark.parametrize("isolation", ["auto", "users", "none"])
def test_a_cheater_gets_nothing_as_root_without_cap_sys_admin(zip_path, tmp_path, isolation):
    """Gradescope's containers: root, no CAP_SYS_ADMIN.  A hand-in that knows where the answers are gets 0.

    "auto" gets namespaces through a user namespace here; "users" is what a
    container whose seccomp profile forbids namespaces gets; "none" shows the
    attack is real.
    """
    root = make_root(tmp_path, zip_path)
    secret = root / "source" / "course" / "autograder" / "assignments" / "n-queens" / "expected.json"
    assert secret.is_file()
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "id": "cheat", "metadata": {},
                           "outputs": [], "source": CHEATER % ([str(secret), "/autograder/source/course/autograder/"
                                                                 "assignments/n-queens/expected.json"],)}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (root / "submission" / "n-queens.ipynb").write_text(json.dumps(notebook))
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "PATH": f"{BIN}:{os.environ['PATH']}",
           "AUTOGRADER_ISOLATION": isolation}
    done = subprocess.run(["capsh", "--drop=cap_sys_admin", "--", "-c",
                           f"bash {root / 'source' / 'run_autograder'}"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    data = json.loads((root / "results" / "results.json").read_text())
    if isolation == "none":
        assert data["score"] > 2, data
    else:
        assert data["score"] == 0, data


def test_a_hidden_failure_shows_result_words_only():
    """A hidden case's message may hold its expected lines (a string's diff) or echo its input: never shown."""
    from autograder.grade.scoring import CaseResult

    message = "only whitespace differs: your string ends with a newline (\\n) the expected one does not have\n" \
              "line 5: expected '3|-|-|*|-|'\n        received '3|-|-|*|-|\\n'"
    hidden = CaseResult(name="hidden: x", function="board2str", hidden=True, description="x", call="board2str([9])",
                        points=0.0, max_points=0.1, status="failed", message=message, received="SECRET",
                        traceback="", seconds=0.0)
    output = gradescope._case_output(hidden, "a hint", False)
    assert output == "✗ wrong answer: only whitespace differs: your string ends with a newline (\\n) the expected " \
                     "one does not have"
    error = CaseResult(**{**hidden.__dict__, "status": "error", "message": "ValueError: 4 is not in [3, 1, 4]"})
    assert gradescope._case_output(error, "", False) == "✗ raised an error (ValueError)"


@pytest.mark.slow
@pytest.mark.parametrize("notebook", ["n-queens.ipynb", "Copy of n-queens.ipynb"])
def test_a_helper_module_beside_the_notebook_runs_beside_it_and_is_never_the_hand_in(zip_path, nqueens, tmp_path,
                                                                                       notebook):
    """The trial: run_autograder graded the submission as a folder of students, one per file.  alice's code in
    helpers.py, which her notebook imports (as Colab lets her), scored 0.95; beside "Copy of n-queens.ipynb" the
    helper itself was graded, 2.05, and nothing said which file was."""
    from conftest import solution_in_a_module
    text, module = solution_in_a_module("helpers")
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / notebook).write_bytes(text)
    (tmp_path / "files" / "helpers.py").write_bytes(module)
    root = make_root(tmp_path, zip_path, [(name, tmp_path / "files" / name) for name in (notebook, "helpers.py")])
    run(root)
    data = json.loads((root / "results" / "results.json").read_text())
    check_format(data, nqueens)
    assert data["score"] == pytest.approx(5.0), data["output"]


def test_setup_sh_pins_uv_as_the_engine_does_and_falls_back_to_pip_without_a_pin(zip_path, tmp_path):
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    uv = next(p for p in pins if p.startswith("uv=="))
    with zipfile.ZipFile(zip_path) as archive:
        setup = archive.read("setup.sh").decode()
    assert f'-m pip install --quiet --disable-pip-version-check "{uv}"' in setup and "__UV__" not in setup
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[project.optional-dependencies]\n'
                                             'test = ["pytest==9.2.0", "uv==1.0; rm -rf /"]\n')
    assert gradescope._uv_pin(tmp_path / "pyproject.toml") == ""
    assert gradescope._uv_pin(tmp_path / "missing.toml") == ""


def test_setup_sh_compiles_ahead_what_make_install_does():
    """Two shells, one rule: the Makefile's and setup.sh's compileall leave out the same folders (a pattern that
    starts at site-packages: -x is matched against the whole path)."""
    pattern = re.compile(r"compileall -q -j0 -x '([^']+)'")
    makefile = pattern.findall((ROOT / "Makefile").read_text(encoding="utf-8"))
    setup = pattern.findall(gradescope.SETUP_SH)
    assert makefile == setup == ["/site-packages/(.+/)?tests?/"]
