import shutil
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.course import load_course

ROOT = Path(__file__).resolve().parents[1]
STUDENT_PYTHON = ROOT / ".venv-student" / "bin" / "python"


@pytest.fixture(scope="session")
def course():
    return load_course(ROOT)


@pytest.fixture(scope="session")
def nqueens(course):
    return load_assignment(course, "n-queens")


@pytest.fixture(scope="session")
def nqueens_expected(nqueens):
    return nqueens.load_expected()


@pytest.fixture
def course_copy(tmp_path):
    """A private copy of the course's sources and generated files, safe to edit."""
    for name in ("course.toml", "public_rubric.xlsx"):
        shutil.copy(ROOT / name, tmp_path / name)
    for folder in ("solutions", "assignments"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    shutil.copytree(ROOT / "autograder" / "assignments", tmp_path / "autograder" / "assignments")
    return tmp_path
