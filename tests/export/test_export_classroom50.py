"""`autograder export classroom50`: the public checks as Classroom 50's per-assignment autograder.py.

Classroom 50 serves an autograder's bundle from public GitHub Pages and runs it in the student's own workflow
job (foundation50/classroom50 wiki/Autograders.md, wiki/gh-teacher.md), so the bundle must hold nothing hidden;
what it writes must meet Classroom 50's result.json contract, which its collector enforces (integer scores).
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from autograder.core.assignment import load_assignment
from autograder.core.course import load_course
from autograder.export.classroom50 import export, hidden_texts
from conftest import ROOT

ASSIGNMENTS = ("n-queens", "uninformed-search", "bitwise-queens", "no-three-in-line")
ENVIRONMENT = {"CLASSROOM": "cs-principles", "ASSIGNMENT": "n-queens", "SUBMISSION_TAG": "submit/2026-11-01T10-00-00Z-a1b2c3d",
               "COMMIT_URL": "https://github.com/org/cs-principles-n-queens-alice/commit/a1b2c3d",
               "RELEASE_URL": "https://github.com/org/cs-principles-n-queens-alice/releases/tag/submit%2Fx"}


@pytest.mark.parametrize("assignment_id", ASSIGNMENTS)
def test_the_bundle_holds_no_hidden_case(tmp_path, assignment_id):
    course = load_course(ROOT)
    assignment = load_assignment(course, assignment_id)
    written = export(course, assignment, tmp_path)
    assert sorted(p.name for p in written) == ["autograder.py", "autograder_checks.py"]
    bundle = "".join(p.read_text(encoding="utf-8") for p in written)
    hidden = [text for text in hidden_texts(assignment) if len(text) > 12 or "(" in text]
    assert hidden and not [text for text in hidden if text in bundle]
    assert bundle.count("'call': ") == len(assignment.public_cases)


def run(folder, bundle):
    done = subprocess.run([sys.executable, str(bundle / "autograder.py")], cwd=folder, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **ENVIRONMENT})
    return done, json.loads((folder / "result.json").read_text()), (folder / "release-body.md").read_text()


def contract_problems(result):
    """What Classroom 50's collector (collect_scores.py validate_result) refuses: its schema, non-negative
    integer scores, and a test list."""
    problems = []
    if result.get("schema") != "classroom50/result/v1":
        problems.append("schema")
    for key in ("score", "max-score"):
        if type(result.get(key)) is not int or result[key] < 0:
            problems.append(key)
    for test in result.get("tests", []):
        if set(test) != {"test-name", "passed", "score", "max-score"} or type(test["score"]) is not int:
            problems.append(f"test {test}")
    if result["score"] != sum(t["score"] for t in result["tests"]):
        problems.append("sum")
    for key in ("classroom", "assignment", "submission", "commit", "release", "review", "datetime"):
        if not result.get(key):
            problems.append(key)
    return problems


@pytest.mark.slow
def test_every_push_gets_the_public_checks_and_a_result_classroom_50_takes(tmp_path):
    course = load_course(ROOT)
    assignment = load_assignment(course, "n-queens")
    export(course, assignment, tmp_path / "bundle")
    bundle = tmp_path / "bundle" / "n-queens"
    public = len(assignment.public_cases)
    for student, passed in (("alice", public), ("template", 0)):
        repo = tmp_path / student
        repo.mkdir()
        source = (ROOT / "assignments" / "n-queens" / "n-queens.ipynb" if student == "template"
                  else ROOT / "examples" / "n-queens" / "submissions" / f"{student}.ipynb")
        shutil.copy(source, repo / "n-queens.ipynb")
        done, result, body = run(repo, bundle)
        assert done.returncode == 0, done.stderr
        assert contract_problems(result) == [], result
        assert (result["score"], result["max-score"]) == (passed, public)
        assert f"Public checks: {passed} of {public} passed" in body and "graded by your teaching team" in body
    # A check cell the student edited changes nothing: the bundle's own checks judge.
    repo = tmp_path / "edited"
    repo.mkdir()
    notebook = json.loads((ROOT / "assignments" / "n-queens" / "n-queens.ipynb").read_text())
    for cell in notebook["cells"]:
        if "public-check" in cell.get("metadata", {}).get("tags", []):
            cell["source"] = "print('all checks passed')\n"
    (repo / "n-queens.ipynb").write_text(json.dumps(notebook))
    assert run(repo, bundle)[1]["score"] == 0
    # No notebook at all: a result all the same, saying what to push.
    empty = tmp_path / "empty"
    empty.mkdir()
    done, result, body = run(empty, bundle)
    assert done.returncode == 0 and result["score"] == 0 and "No n-queens.ipynb in the repository" in body
