"""Requests, not seconds: how many HTTP requests `canvas pull` and `release --to canvas` send for a class.

    .venv/bin/python benchmarks/canvas_requests.py            # a class of 200
    .venv/bin/python benchmarks/canvas_requests.py --n 500

A Canvas course of --n students (tests/canvas_course.py: Canvas's answers replayed offline, 100 to a page,
as Canvas pages) is pulled, graded (each hand-in given a made-up score: grading is not what is counted), then
pushed twice from the same gradebook: grades alone (one bulk update), and grades with one comment and the
feedback page each.  Every request the grader sends is counted, by kind.  Targets (issue 40): grades alone,
a few requests plus the pages; with feedback files, at most 3 per student.
"""

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import pytest  # noqa: E402
import requests_mock  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from autograder.cli.main import main as autograder  # noqa: E402
from canvas_course import TOKEN, configure, course_of, grade_by_scores, made_up_score  # noqa: E402
from conftest import copy_course  # noqa: E402


def run(root, *args):
    result = CliRunner().invoke(autograder, ["--course", str(root), *args])
    assert result.exit_code == 0, result.output
    return result.output


def kinds(course):
    """The requests sent, by kind: reads of lists (pages), other reads, uploads, edits, bulk updates."""
    counted = Counter()
    for method, path, params in course.requests():
        if method == "GET" and path.endswith(("/submissions", "/enrollments", "/sections", "/overrides")):
            counted["pages"] += 1
        elif method == "GET" and path.startswith("/files/"):
            counted["file downloads"] += 1
        elif method == "GET":
            counted["other reads"] += 1
        elif path.endswith("/comments/files") or path == "/files":
            counted["uploads"] += 1
        else:
            counted[f"{method} {'bulk update' if path.endswith('update_grades') else 'edit'}"] += 1
    return counted


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="students in the class")
    args = parser.parse_args()
    os.environ["CANVAS_API_TOKEN"] = TOKEN
    with tempfile.TemporaryDirectory() as scratch, pytest.MonkeyPatch.context() as patch:
        patch.setattr("autograder.intake.canvas_api.time.sleep", lambda seconds: None)
        grade_by_scores(patch, made_up_score)
        root = copy_course(Path(scratch) / "course")
        configure(root)
        course = course_of(args.n)
        out = root / "grades" / "n-queens"
        rows = []
        with requests_mock.Mocker() as mocker:
            course.serve(mocker)
            run(root, "canvas", "pull", "--assignment", "n-queens")
            rows.append(("canvas pull", kinds(course)))
            run(root, "grade", "--assignment", "n-queens", "--out", str(out), str(root / "grades/canvas/n-queens"))
            kept = Path(scratch) / "gradebook.db"
            shutil.copy(out / "gradebook.db", kept)
            for label, flags in (("release --to canvas --grades-only", ["--grades-only"]),
                                 ("release --to canvas", [])):
                shutil.copy(kept, out / "gradebook.db")          # nothing sent before: every student is sent
                mocker.reset_mock()
                run(root, "release", "--assignment", "n-queens", "--out", str(out), "--to", "canvas", *flags)
                rows.append((label, kinds(course)))
        with sqlite3.connect(out / "gradebook.db") as db:
            sent = db.execute("SELECT COUNT(DISTINCT student) FROM lms_sent WHERE outcome = 'sent'").fetchone()[0]
    print(f"a class of {args.n} students ({sent} sent a grade, or Canvas's excuse, and a comment; the Test Student "
          "and the ungraded are sent nothing), Canvas's pages of 100:")
    for label, counted in rows:
        total = sum(counted.values())
        detail = ", ".join(f"{kind} {count}" for kind, count in sorted(counted.items()))
        print(f"  {label:<36} {total:>5} requests ({detail})")
    per_student = (sum(rows[2][1].values()) - rows[2][1]["pages"] - rows[2][1]["other reads"]) / sent
    print(f"with feedback files: {per_student:.2f} requests per student sent (target: at most 3); "
          f"grades alone: {sum(rows[1][1].values()) - rows[1][1]['pages']} besides the pages (target: a few)")


if __name__ == "__main__":
    main()
