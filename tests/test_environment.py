"""Who needs which packages: pins in one place, the grader alone for `pip install .`,
and the student environment (what Colab has) running every student notebook."""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib

import nbformat
import pytest

from autograder.core import colab
from conftest import ROOT, STUDENT_PYTHON, outputs

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
TEST_ONLY = {"pytest", "pytest-xdist", "playwright", "requests-mock", "hypothesis", "uv"}


def name(pin):
    return re.match(r"[A-Za-z0-9_.\-]+", pin).group(0).lower()


def version(pin):
    return pin.split("==", 1)[1]


def requirements_file_pins(path):
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def environment_pins():
    text = (ROOT / "environment.yml").read_text()
    return re.findall(r"^\s+- ([A-Za-z0-9_.\-\[\]]+==[^\s#]+)\s*$", text, re.MULTILINE)


def test_every_dependency_is_pinned_and_a_package_has_one_version_everywhere():
    groups = {"runtime": PROJECT["dependencies"], **PROJECT["optional-dependencies"]}
    seen = {}
    for group, pins in groups.items():
        for pin in pins:
            assert "==" in pin, f"{group}: {pin} is not pinned"
            seen.setdefault(name(pin), set()).add(version(pin))
    assert {package: versions for package, versions in seen.items() if len(versions) > 1} == {}


def test_the_grader_needs_no_test_tool():
    assert {name(pin) for pin in PROJECT["dependencies"]}.isdisjoint(TEST_ONLY | {"jupyterlab"})
    assert {name(pin) for pin in PROJECT["optional-dependencies"]["test"]} == TEST_ONLY


# What Colab preinstalls that a notebook of this course plausibly imports (autograder/core/colab.py says why each):
# the student environment has it, and so does the grader's worker (issue 30: `import tqdm` must cost a correct
# notebook nothing; issue 41: nor must scipy, numba or networkx).
COLAB_PACKAGES = set(colab.OFFERED)
SNAPSHOT = ROOT / "tests" / "colab_pip_freeze.txt"


def snapshot_packages():
    """{normalised name: version or None} of the dated copy of Colab's list."""
    found = {}
    for line in SNAPSHOT.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            match = re.match(r"([A-Za-z0-9_.\-]+)(?:==(\S+))?", line)
            found[colab.normalise(match.group(1))] = match.group(2)
    return found


def test_the_package_s_list_of_colab_s_packages_is_the_dated_snapshot():
    """The grader says whether Colab has a module from its own copy of the names: the same as the snapshot, of the
    same date (replace both together when Colab changes, and `git diff` shows what it changed)."""
    assert colab.colab_packages() == set(snapshot_packages())
    assert colab.COLAB_AS_OF in SNAPSHOT.read_text().splitlines()[1]
    assert colab.COLAB_AS_OF in (ROOT / "autograder" / "core" / "colab_packages.txt").read_text().splitlines()[0]


def test_colab_has_everything_the_course_offers_and_everything_it_leaves_out_says_why():
    """A package the course offers is one Colab has (if Colab drops one, this says so); the ones named as left
    out are Colab's too; at least scipy, numba and networkx are offered (issue 41)."""
    colab_list = snapshot_packages()
    assert {"scipy", "numba", "networkx"} <= COLAB_PACKAGES
    assert {package for package in COLAB_PACKAGES if colab.normalise(package) not in colab_list} == set()
    assert {package for package in colab.LEFT_OUT if colab.normalise(package) not in colab_list} == set()
    assert all(colab.OFFERED.values()) and all(colab.LEFT_OUT.values())
    assert set(colab.OFFERED).isdisjoint(colab.LEFT_OUT)


def test_student_files_name_exactly_the_student_group():
    student = sorted(PROJECT["optional-dependencies"]["student"])
    assert {name(pin) for pin in student} == COLAB_PACKAGES | {"ipykernel", "jupyterlab"}
    assert sorted(requirements_file_pins(ROOT / "requirements-student.txt")) == student
    assert sorted(environment_pins()) == student


def test_the_grader_offers_a_notebook_what_the_student_environment_has():
    """The grader's list of Colab's packages is the student environment's, pin for pin."""
    grader = {name(pin): pin for pin in PROJECT["dependencies"]}
    student = {name(pin): pin for pin in PROJECT["optional-dependencies"]["student"]}
    offered = {package for package in student if package not in ("ipykernel", "jupyterlab")}
    assert offered == COLAB_PACKAGES
    assert {package: student[package] for package in offered} == {package: grader.get(package) for package in offered}


@pytest.mark.slow
def test_a_worker_imports_colab_s_packages_and_its_own_module(tmp_path):
    """In a real sandbox: each package imports, and google.colab's functions do nothing."""
    from autograder.engine import runner
    from autograder.engine.sandbox import Sandbox
    source = (f"import {', '.join(colab.offered_imports())}\n"
              "from google.colab import drive, files, output\n"
              "result = (drive.mount('/content/drive'), files.upload(), output.clear())\n")
    with Sandbox(workdir=tmp_path) as sandbox:
        outcome = runner.run(sandbox, 0, [source, "assert result == (None, {}, None)\n"], [], [], 60, 120)
    assert outcome.cell_errors == [], outcome.cell_errors


@pytest.mark.slow
def test_pip_install_dot_in_a_fresh_venv_brings_only_the_grader(tmp_path):
    subprocess.run([sys.executable, "-m", "venv", tmp_path / "venv"], check=True)
    report = tmp_path / "report.json"
    # --dry-run resolves exactly what `pip install .` would install, from pip's cache.
    subprocess.run([tmp_path / "venv" / "bin" / "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--dry-run", "--report", report, str(ROOT)], check=True, capture_output=True)
    installed = {item["metadata"]["name"].lower(): item["metadata"]["version"]
                 for item in json.loads(report.read_text())["install"]}
    assert installed.keys().isdisjoint(TEST_ONLY | {"jupyterlab"}), sorted(installed)
    for pin in PROJECT["dependencies"]:
        assert installed.get(name(pin)) == version(pin), pin


# --- the student environment, as `make test` builds it from requirements-student.txt -----------

@pytest.fixture(scope="module")
def student_env():
    if not STUDENT_PYTHON.exists():
        pytest.fail(f"{STUDENT_PYTHON} is missing: run the tests with `make test`, which creates it")
    # Nothing of ours may leak into it: a student's kernel finds only its own venv's kernels.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHON", "VIRTUAL_ENV"))}
    return STUDENT_PYTHON.parent, env


@pytest.mark.kernel
def test_the_student_environment_is_requirements_student_txt_and_no_autograder(student_env):
    bin_dir, env = student_env
    pins = requirements_file_pins(ROOT / "requirements-student.txt")
    script = ("import importlib.metadata as m, importlib.util as u, json, sys; "
              "print(json.dumps([{p: m.version(p) for p in sys.argv[1:]}, u.find_spec('autograder') is None]))")
    found, no_autograder = json.loads(subprocess.run(
        [bin_dir / "python", "-c", script, *(name(p) for p in pins)], env=env, cwd="/",
        check=True, capture_output=True, text=True).stdout)
    assert found == {name(p): version(p) for p in pins}
    assert no_autograder
    lab = subprocess.run([bin_dir / "jupyter", "lab", "--version"], env=env, capture_output=True, text=True)
    assert lab.stdout.strip() == version(next(p for p in pins if name(p) == "jupyterlab"))


@pytest.mark.kernel
@pytest.mark.parametrize("which", ["untouched", "solved"])
def test_every_student_notebook_runs_top_to_bottom_with_the_students_own_jupyter(
        which, student_env, course, tmp_path):
    """What a student does locally: open the notebook in JupyterLab, *Run All*. Here the kernel and
    nbconvert of the student environment run it, nothing of ours involved: the untouched notebook
    must reach its last cell (its checks say FAIL), the solved one pass every public check."""
    from autograder.core.assignment import load_assignment

    bin_dir, env = student_env
    assignments = [load_assignment(course, assignment_id) for assignment_id in course.assignment_ids()]
    # Each notebook alone in a folder of its own, as Colab's /content holds it, and all four in one nbconvert,
    # which runs each in its own folder with a kernel of its own: an nbconvert per notebook cost about 3 CPU-s a
    # start (both variants took 37.1 CPU-s, and take 17.1).
    notebooks = []
    for assignment in assignments:
        source = (assignment.student_path if which == "untouched"
                  else ROOT / "examples" / assignment.id / "submissions" / "alice.ipynb")  # the reference's code
        folder = tmp_path / assignment.id
        folder.mkdir()
        notebooks.append(shutil.copy(source, folder / f"{assignment.id}.ipynb"))
    run = subprocess.run([bin_dir / "jupyter", "nbconvert", "--to", "notebook", "--execute",
                          "--ExecutePreprocessor.timeout=300", *notebooks],
                         env=env, cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    for assignment in assignments:
        assignment_id = assignment.id
        ran = nbformat.read(tmp_path / assignment_id / f"{assignment_id}.nbconvert.ipynb", as_version=4)
        code = [c for c in ran.cells if c.cell_type == "code"]
        assert all(c.execution_count for c in code), f"{assignment_id}: a cell did not run"
        text = "\n".join(outputs(c) for c in code)
        if which == "solved":
            assert "✗" not in text, assignment_id
            assert text.count("✓ pass") == len(assignment.public_cases), assignment_id
        else:
            assert "NotImplementedError" in text and "✓ pass" not in text, assignment_id
