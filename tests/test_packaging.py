"""The course's answers never ship with the grader: `pip install .` puts no case, expected value or solution
where a hand-in could find it.

The README offers instructors `pip install .`.  When the cases and expected
values were package data, they sat in site-packages, which every isolation
layer shows the worker (it must run Python from there): a stub that looked its
answers up there scored 5/5.  Course data is read from the course folder only.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from conftest import ANSWERED_FROM_THE_EXPECTED_VALUES, ROOT

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wheel")
    source = folder / "source"          # a copy: setuptools builds in the source tree, and tests run in parallel
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source)
    for name in ("autograder", "nqueens"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--disable-pip-version-check",
                           "--wheel-dir", str(folder), str(source)], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        pytest.fail(f"pip wheel failed: {done.stderr[-2000:]}")
    (path,) = folder.glob("nqueens_course-*.whl")
    return path


def test_the_wheel_holds_the_grader_and_its_templates_and_nothing_of_the_course(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "autograder/core/templates/feedback.html.j2" in names
    assert "autograder/core/colab_packages.txt" in names     # a missing module's feedback says if Colab has it
    assert "autograder/grade/class_run.py" in names
    course_data = [n for n in names if "/assignments/" in n or n.startswith(("solutions/", "assignments/"))
                   or n.endswith(("expected.json", "cases.toml", "timing.json", "audit.json", ".ipynb"))]
    assert course_data == []


CHEATER = r'''
import json, os, sys
ANSWERS = {}
def _look(folder, depth=0):
    if depth > 12 or len(ANSWERS) > 0:
        return
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.name == "expected.json" and entry.is_file():
                ANSWERS.update(json.load(open(entry.path))["expected"])
            elif entry.is_dir(follow_symlinks=False) and entry.name not in ("proc", "sys", "dev"):
                _look(entry.path, depth + 1)
        except (OSError, ValueError, KeyError, TypeError):
            pass
for start in [*sys.path, os.path.expanduser("~"), "/tmp", "/"]:
    _look(start)
''' + ANSWERED_FROM_THE_EXPECTED_VALUES


def _course_copy(folder):
    """What grading needs of the course (no package, no venv), copied into `folder`/course."""
    course = folder / "course"
    course.mkdir()
    shutil.copy(ROOT / "course.toml", course)
    for name in ("solutions", "assignments", "autograder/assignments"):
        shutil.copytree(ROOT / name, course / name)
    return course


@pytest.mark.parametrize("layer", ["namespaces", "users", "landlock"])
def test_a_hand_in_finds_no_answers_after_pip_install_dot(wheel, tmp_path, layer, request):
    if layer in ("users", "landlock") and os.geteuid() != 0:
        pytest.skip("the users layer needs root (landlock is tested as root here, with a user id per slot)")
    # The test venv, hard-linked (fast, and its files stay untouched), with the wheel instead of the checkout; where
    # a worker's own user id can read it, as an instructor's venv is (pytest's tmp_path is root's alone).
    reachable = Path(tempfile.mkdtemp(prefix="autograder-packaging-venv-"))
    reachable.chmod(0o755)
    request.addfinalizer(lambda: shutil.rmtree(reachable, ignore_errors=True))
    venv = reachable / "venv"
    subprocess.run(["cp", "-al", str(Path(sys.prefix)), str(venv)], check=True)
    python = venv / "bin" / "python"
    for step in (["uninstall", "--yes", "nqueens-course"], ["install", "--no-deps", str(wheel)]):
        subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", "-q", *step], check=True,
                       capture_output=True, timeout=300)
    site = subprocess.run([str(python), "-c", "import autograder, os; print(os.path.dirname(autograder.__file__))"],
                          capture_output=True, text=True, check=True, cwd=tmp_path).stdout.strip()
    assert site.startswith(str(venv)) and not (Path(site) / "assignments").exists()
    course = _course_copy(tmp_path)
    handins = tmp_path / "handins"
    handins.mkdir()
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "id": "x", "metadata": {}, "outputs": [],
                           "source": CHEATER}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (handins / "cheater.ipynb").write_text(json.dumps(notebook))
    shutil.copy(ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb", handins)
    out = Path(tempfile.mkdtemp(prefix="autograder-packaging-"))   # a worker's user id must reach its folder
    out.chmod(0o755)
    done = subprocess.run([str(python), "-m", "autograder", "--course", str(course), "grade", "--assignment",
                           "n-queens", "--out", str(out / "out"), "--isolation", layer, str(handins)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    rows = (out / "out" / "grades.csv").read_text().splitlines() if done.returncode == 0 else []
    shutil.rmtree(out)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"isolation: {layer}" in done.stderr
    scores = {line.split(",")[0]: line.split(",")[2] for line in rows[1:]}
    assert scores == {"alice": "5", "cheater": "0"}


@pytest.mark.parametrize("layer", ["users", "landlock"])
def test_a_venv_the_workers_cannot_read_is_refused_by_name(tmp_path, layer):
    """As root, these layers' workers have user ids of their own.  A venv under a private folder let them import
    what the zygote had preloaded and nothing else: alice's sympy, when it was not preloaded, failed every cell that
    needed it (2.9 of 5), as scipy and numba (never preloaded) always did.  The grader now refuses to grade there,
    naming the folder."""
    if os.geteuid() != 0:
        pytest.skip("workers have user ids of their own only when the grader is root")
    venv = tmp_path / "venv"              # pytest's tmp_path: root's alone (mode 700 above it)
    subprocess.run(["cp", "-al", str(Path(sys.prefix)), str(venv)], check=True)
    course = _course_copy(tmp_path)       # a copy: a layer that did start would make the course private
    handins = tmp_path / "handins"
    handins.mkdir()
    shutil.copy(ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb", handins)
    out = Path(tempfile.mkdtemp(prefix="autograder-packaging-"))
    out.chmod(0o755)
    try:
        done = subprocess.run([str(venv / "bin" / "python"), "-m", "autograder", "--course", str(course), "grade",
                               "--assignment", "n-queens", "--out", str(out / "out"), "--isolation", layer,
                               str(handins)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert done.returncode == 1, done.stderr[-3000:]
        assert "a worker's user id cannot read Python's own files" in done.stderr
        assert str(venv / "lib") in done.stderr and "Traceback" not in done.stderr
        assert not (out / "out" / "grades.csv").exists()           # no row, rather than one scored short
    finally:
        shutil.rmtree(out, ignore_errors=True)

