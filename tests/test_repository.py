"""The repository's own promises: README commands, CI (pins: test_environment.py)."""

import re
import subprocess

import pytest

from conftest import ROOT


def test_readme_opens_with_the_demo_and_test_commands():
    readme = (ROOT / "README.md").read_text()
    first_block = re.search(r"```(?:console|sh|bash)?\n(.*?)```", readme, re.S).group(1)
    assert [line.strip().removeprefix("$ ") for line in first_block.strip().splitlines()] == ["make demo", "make test"]


def test_ci_runs_the_readme_test_command_and_the_staleness_check():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci
    assert "autograder build --check" in ci


def test_no_tracked_file_holds_student_data():
    """Rosters, extensions, adjustments and grades live in grades/ (course.db, each gradebook.db), which git
    ignores; no tracked file is such a database, a grade export or an LMS's class list."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "grades/course.db", "grades/n-queens/grades.csv",
                              "release/n-queens/canvas_grades.csv"], capture_output=True, text=True)
    assert ignored.stdout.split() == ["grades/course.db", "grades/n-queens/grades.csv",
                                      "release/n-queens/canvas_grades.csv"]
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True,
                             check=True).stdout.split("\n")
    # Made-up students only: the databases an earlier version wrote for the schema tests (PROVENANCE.md there).
    fixtures = "tests/gradebook/schemas/"
    private = [path for path in tracked if (path.endswith((".db", "course_grades.csv", "course_grades.xlsx",
                                                           "canvas_import.csv", "moodle_import.csv"))
                                            or path.startswith(("grades/", "release/")))
               and not path.startswith(fixtures)]
    assert private == []


def test_no_source_file_is_ignored_by_git():
    """Every module, template and test on disk is one git would commit: `release/` (students' grades) once
    matched the release stage's folder too (now autograder/publish/), and three of its modules never reached a
    commit."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    sources = [str(path.relative_to(ROOT)) for folder in ("autograder", "tests", "benchmarks", "nqueens")
               for path in (ROOT / folder).rglob("*") if path.suffix in (".py", ".j2", ".toml", ".json")
               and "__pycache__" not in path.parts]
    ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "--no-index", "--stdin"],
                             input="\n".join(sources), capture_output=True, text=True).stdout.split()
    assert ignored == []
