"""A course that moves: `cp -a course elsewhere/` (a second machine, a laptop) and `make install` there.

The trial: the copy's `.venv/bin/autograder` could not start ("cannot execute: required file not found": its
first line names the first folder's Python), its editable install ran the first folder's code, and `make install`
exited 0 repairing nothing; where make did run, the copy's pip was the first folder's and re-pointed the first
folder's venv at the copy.  Now make sees a venv made in another folder and makes it again (Makefile, VENV_MOVED).
"""

import hashlib
import os
import shutil
import subprocess

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow


def tracked_files(destination):
    """The course as a clone of its repository has it (git's tracked files), without venvs, builds or grades."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


def make(folder, *variables):
    return subprocess.run(["make", "install", *variables], cwd=folder, capture_output=True, text=True, timeout=1200,
                          env={k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "MAKEFLAGS")})


def fingerprint(venv):
    """Every file of the venv's own (scripts, activate, the editable install's finder), with its bytes and time."""
    found = {}
    for path in sorted(venv.rglob("*")):
        if path.is_file() and not path.is_symlink() and (path.parent.name == "bin" or "editable" in path.name
                                                         or path.name in ("pyvenv.cfg", ".installed")):
            found[str(path.relative_to(venv))] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    return found


def where_autograder_runs_from(folder):
    done = subprocess.run([str(folder / ".venv" / "bin" / "python"), "-c",
                           "import autograder; print(autograder.__file__)"], capture_output=True, text=True, timeout=120,
                          cwd="/")
    return done.stdout.strip()


def test_a_copied_course_is_made_its_own_venv_and_grades_there_leaving_the_original_as_it_was(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("needs make")
    original = tracked_files(tmp_path / "original")
    # The original's venv grades nothing here: made without compiling its bytecode (half of make's CPU time).
    # The copy's, made by a plain `make install`, is the one under test.
    built = make(original, "COMPILE_BYTECODE=")          # the Makefile's own install, less its bytecode
    assert built.returncode == 0, built.stdout + built.stderr
    assert where_autograder_runs_from(original) == str(original / "autograder" / "__init__.py")
    before = fingerprint(original / ".venv")

    # Under a folder named `tests`: compileall's -x pattern is matched against the whole path (Makefile).
    elsewhere = tmp_path / "tests" / "elsewhere"
    elsewhere.parent.mkdir()
    subprocess.run(["cp", "-a", str(original), str(elsewhere)], check=True)
    # What the copy's venv does before make: the first folder's code (or nothing at all, on another machine).
    assert where_autograder_runs_from(elsewhere) == str(original / "autograder" / "__init__.py")

    remade = make(elsewhere)
    assert remade.returncode == 0, remade.stdout + remade.stderr
    assert "was made in another folder" in remade.stdout
    assert where_autograder_runs_from(elsewhere) == str(elsewhere / "autograder" / "__init__.py")
    first_line = (elsewhere / ".venv" / "bin" / "autograder").read_text().splitlines()[0]
    assert first_line.startswith(f"#!{elsewhere}/.venv/bin/python"), first_line
    # Its bytecode compiled ahead (the sandbox's kernels cannot write it), but not the packages' own test suites.
    site = next((elsewhere / ".venv" / "lib").glob("python3*/site-packages"))
    assert list((site / "numpy" / "__pycache__").glob("__init__.*.pyc"))
    assert not list((site / "numpy" / "_core" / "tests").rglob("*.pyc"))
    again = make(elsewhere)                      # made once: the next make has nothing to do
    assert again.returncode == 0 and "another folder" not in again.stdout and "venv" not in again.stdout

    hand_ins = tmp_path / "hand-ins"
    hand_ins.mkdir()
    for student in ("alice", "bob"):
        shutil.copy(ROOT / "examples" / "n-queens" / "submissions" / f"{student}.ipynb", hand_ins)
    graded = subprocess.run([str(elsewhere / ".venv" / "bin" / "autograder"), "grade", "--assignment", "n-queens",
                             "--out", str(elsewhere / "grades" / "n-queens"), "--jobs", "1", str(hand_ins)],
                            cwd=elsewhere, capture_output=True, text=True, timeout=600,
                            env={k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"})
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert (elsewhere / "grades" / "n-queens" / "grades.csv").is_file()

    # The original: its venv byte for byte and to the nanosecond as it was, its own code, and no grades.
    assert fingerprint(original / ".venv") == before
    assert where_autograder_runs_from(original) == str(original / "autograder" / "__init__.py")
    assert not (original / "grades").exists()
