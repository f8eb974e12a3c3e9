"""`autograder export otter`: OK tests, the student notebook, and otter's Gradescope zip, really run."""

import json
import os
import subprocess
import zipfile

import nbformat
import pytest
from click.testing import CliRunner

from autograder.core import colab
from autograder.export import checks, handins, tools
from autograder.export import otter as otter_export
from autograder.cli.export import export
from autograder.grade.handin import grade
from conftest import ROOT, engines

EXAMPLES = ROOT / "examples" / "n-queens" / "submissions"


@pytest.fixture(scope="module")
def otter_command():
    try:
        return tools.executable("otter", ROOT)
    except tools.ToolError as error:
        pytest.fail(str(error))


@pytest.fixture(scope="module")
def exported(tmp_path_factory, otter_command):
    out = tmp_path_factory.mktemp("otter")
    result = CliRunner().invoke(export, ["--course", str(ROOT), "otter", "--assignment", "n-queens",
                                         "--to", str(out), "--otter", otter_command])
    assert result.exit_code == 0, result.output
    return out


def load_test(path):
    scope = {}
    exec(path.read_text(encoding="utf-8"), scope)  # noqa: S102 - our own generated file
    assert scope["OK_FORMAT"] is True
    return scope["test"]


@pytest.mark.peers
def test_one_ok_test_file_per_function_with_points_and_hidden_per_case(exported, nqueens):
    for function in nqueens.functions():
        spec = load_test(exported / "autograder" / "tests" / f"{function}.py")
        cases = [c for c in nqueens.cases if c.function == function]
        assert spec["name"] == function and len(spec["suites"]) == 1
        got = [(t["name"], t["points"], t["hidden"]) for t in spec["suites"][0]["cases"]]
        assert got == [(c.name, c.points, c.hidden) for c in cases]
    total = sum(t["points"] for f in nqueens.functions()
                for t in load_test(exported / "autograder" / "tests" / f"{f}.py")["suites"][0]["cases"])
    assert total == pytest.approx(nqueens.max_score)


@pytest.mark.peers
def test_student_tests_hold_only_public_cases(exported, nqueens):
    student_tests = sorted((exported / "student" / "tests").glob("*.py"))
    assert student_tests
    names = [t["name"] for path in student_tests for t in load_test(path)["suites"][0]["cases"]]
    assert sorted(names) == sorted(c.name for c in nqueens.public_cases)
    text = "".join(p.read_text() for p in student_tests)
    for case in nqueens.hidden_cases:
        assert case.call.text not in text


@pytest.mark.peers
def test_student_notebook_uses_grader_check(exported, nqueens):
    notebook = nbformat.read(exported / "student" / nqueens.notebook, as_version=4)
    sources = [c.source for c in notebook.cells if c.cell_type == "code"]
    assert "otter.Notebook(" in sources[0]
    for function in {c.function for c in nqueens.public_cases}:
        assert any(f"grader.check({function!r})" in s for s in sources), function
    assert not any("run_checks([" in s for s in sources)
    for cell in notebook.cells:
        if "demo" in cell.metadata.get("tags", []):
            assert "otter_ignore" in cell.metadata["tags"]
    # the setup cell carries no hidden case
    for case in nqueens.hidden_cases:
        assert case.call.text not in sources[0]


@pytest.mark.peers
def test_zip_is_what_otter_generate_makes(exported, nqueens):
    with zipfile.ZipFile(exported / "autograder" / "autograder.zip") as archive:
        names = set(archive.namelist())
        config = json.loads(archive.read("otter_config.json"))
    assert {"run_autograder", "run_otter.py", "setup.sh", "environment.yml",
            f"files/{checks.FILENAME}"} <= names
    assert {f"tests/{f}.py" for f in nqueens.functions()} <= names
    assert config["autograder_dir"] == "/autograder" and config["show_hidden"] is True


def test_otter_s_image_has_what_colab_has_at_our_pins():
    """The trial: a correct notebook that imports tqdm (Colab has it) scored 3 of 5 under otter: its import cell
    failed and every line after it went unrun.  Our own grader offers Colab's packages; so does the export."""
    from importlib.metadata import version
    from autograder.export.otter import student_requirements
    wanted = student_requirements()
    for package in colab.OFFERED:
        assert f"{package}=={version(package)}" in wanted, package
    pins = {line.split("==")[0]: line for line in tools.requirements("student", ROOT)}
    assert all(pins[line.split("==")[0]] == line for line in wanted)     # the one place's pins


@pytest.mark.peers
def test_public_checks_work_in_a_colab_like_folder(exported, nqueens, tmp_path, otter_command):
    # Colab: only the notebook, no tests folder.  The setup cell writes the public tests and the
    # check module (otter is already installed there, so nothing is downloaded); grader.check runs.
    notebook = nbformat.read(exported / "student" / nqueens.notebook, as_version=4)
    solved = handins.read_handin(EXAMPLES / "alice.ipynb")
    answers = {c.id: c.source for c in solved.cells if c.cell_type == "code"}
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.id in answers and "BEGIN YOUR CODE" in cell.source:
            cell.source = answers[cell.id]
    nbformat.write(notebook, tmp_path / nqueens.notebook)
    script = ("import nbformat, nbclient, sys\n"
              "nb = nbformat.read(sys.argv[1], as_version=4)\n"
              "nbclient.NotebookClient(nb, timeout=120, kernel_name='python3', allow_errors=False,"
              " resources={'metadata': {'path': sys.argv[2]}}).execute()\n"
              "nbformat.write(nb, sys.argv[1])\n")
    python = str(tools.venv_dir("otter", ROOT) / "bin" / "python")
    done = subprocess.run([python, "-c", script, str(tmp_path / nqueens.notebook), str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**os.environ, "PATH": f"{os.path.dirname(python)}:{os.environ['PATH']}"})
    assert done.returncode == 0, done.stderr[-3000:]
    written = sorted(p.name for p in (tmp_path / "tests").glob("*.py"))
    assert written == sorted(p.name for p in (exported / "student" / "tests").glob("*.py"))
    ran = nbformat.read(tmp_path / nqueens.notebook, as_version=4)
    outputs = "".join(json.dumps(o) for c in ran.cells if "grader.check(" in c.get("source", "")
                      for o in c.outputs)
    assert "passed" in outputs and "failed" not in outputs.lower()


def grade_in_gradescope_layout(exported_zip, root, handin):
    """Run otter's own run_autograder in a temporary root standing in for /autograder."""
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    with zipfile.ZipFile(exported_zip) as archive:
        archive.extractall(root / "source")
    (root / "submission_metadata.json").write_text("{}")
    nbformat.write(handin, root / "submission" / "submission.ipynb")
    fake = root / "fakebin"
    fake.mkdir()
    # run_autograder activates otter's conda env with mamba; here the otter venv is that env.
    (fake / "mamba").write_text('#!/bin/sh\necho "mamba() { :; }"\n')
    (fake / "mamba").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{tools.venv_dir('otter', ROOT) / 'bin'}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(root / "source" / "run_autograder")], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads((root / "results" / "results.json").read_text())


@pytest.mark.peers
@pytest.mark.parametrize("student", ["carol", "frank", "niaj"])
def test_run_autograder_in_a_gradescope_layout_scores_as_ours(student, nqueens, nqueens_expected, course,
                                                               tmp_path, otter_command):
    root = tmp_path / "autograder"
    out = tmp_path / "export"
    otter_export.export(course, nqueens, out, autograder_dir=str(root), otter=otter_command)
    handin = handins.for_otter(nqueens, handins.read_handin(EXAMPLES / f"{student}.ipynb"))
    results = grade_in_gradescope_layout(out / "autograder" / "autograder.zip", root, handin)
    ours = grade(nqueens, nqueens_expected, student, EXAMPLES / f"{student}.ipynb")
    assert results["score"] == pytest.approx(ours.score, abs=0.01)
    scored = [t for t in results["tests"] if "max_score" in t]
    assert sum(t["max_score"] for t in scored) == pytest.approx(nqueens.max_score)
    assert all(t["visibility"] in ("visible", "after_published", "hidden") for t in results["tests"])


@pytest.mark.peers
def test_otter_api_and_otter_run_agree(course, nqueens, tmp_path, otter_command, peer_class_grades):
    paths = [EXAMPLES / "dave.ipynb", EXAMPLES / "olivia.ipynb"]
    by_run = engines.grade_otter(course, nqueens, paths, tmp_path / "run", via="run")
    # Through the API: the example class as the engines' agreement test has otter grade it, once per test run.
    by_api = peer_class_grades("otter", "n-queens")
    for student in ("dave", "olivia"):
        assert by_run[student].cases == by_api[student].cases
    assert by_run["dave"].score() == pytest.approx(2.9) and by_run["olivia"].score() == pytest.approx(4.8)


def test_no_zip_needs_no_otter_and_errors_are_one_line(tmp_path):
    runner = CliRunner()
    result = runner.invoke(export, ["--course", str(ROOT), "otter", "--assignment", "n-queens",
                                    "--to", str(tmp_path / "a"), "--no-zip"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "a" / "autograder" / "otter_config.json").is_file()
    assert not (tmp_path / "a" / "autograder" / "autograder.zip").exists()
    result = runner.invoke(export, ["--course", str(ROOT), "otter", "--assignment", "n-queens",
                                    "--to", str(tmp_path / "b"), "--otter", str(tmp_path / "no-such-otter")])
    assert result.exit_code == 1 and result.output.startswith("autograder: error: cannot run")
    result = runner.invoke(export, ["--course", str(ROOT), "nbgrader", "--assignment", "nope",
                                    "--to", str(tmp_path / "c")])
    assert result.exit_code == 1 and "no assignment 'nope'" in result.output
