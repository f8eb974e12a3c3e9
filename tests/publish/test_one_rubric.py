"""No release of a class scored under two rubrics (the trial of this stop).

After a case's points changed in cases.toml, `grade --student carol --regrade` scored carol by the new weights
and left the others by the old; `release` then wrote both into the LMS file (mallory, failing the same cases as
carol, 4.3 against her 4.2).  A plain `grade` regrades the rest by itself, so the mixed state is known: release
and gradebook refuse it (--force writes it as it is), and `grade --student` says so at once.
"""

import csv
import shutil

import pytest

from conftest import ROOT
from semesters import CANVAS_ROSTER, canvas_zip, cli, configure

pytestmark = pytest.mark.slow


def test_a_class_scored_under_two_rubrics_is_not_released(course_copy, tmp_path):
    configure(course_copy)
    (tmp_path / "export.csv").write_text(CANVAS_ROSTER)
    cli(course_copy, "roster", "import", str(tmp_path / "export.csv"))
    out = course_copy / "grades" / "n-queens"
    download = canvas_zip(tmp_path / "nq.zip", "n-queens", ["alice", "bob", "carol"])
    cli(course_copy, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", str(download))
    cases = course_copy / "autograder" / "assignments" / "n-queens" / "cases.toml"
    text = cases.read_text()
    board = 'call = "board2str([0, 1, 2, 3, 4, 5])"\npoints = 0.25\n'
    count = 'call = "count_solutions(8)"\npoints = 0.25\n'
    assert board in text and count in text
    cases.write_text(text.replace(board, board.replace("0.25", "0.35")).replace(count, count.replace("0.25", "0.15")))
    said = cli(course_copy, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", "--student",
               "cking", "--regrade", str(download))
    assert "the class is now scored with different cases" in " ".join(said.stdout.split())
    refused = cli(course_copy, "release", "--out", str(out), "--to", str(tmp_path / "release"), check=False)
    assert refused.returncode != 0 and "were not all graded with the same cases" in " ".join(refused.stderr.split())
    assert not (tmp_path / "release" / "canvas_grades.csv").exists()
    book = cli(course_copy, "gradebook", "--to", str(tmp_path / "book"), check=False)
    assert book.returncode != 0 and "not all graded with the same cases" in " ".join(book.stderr.split())
    forced = cli(course_copy, "release", "--out", str(out), "--to", str(tmp_path / "release"), "--force")
    assert "scores from different cases or limits (--force)" in " ".join(forced.stderr.split())
    # A plain grade regrades the others: one rubric again, and release goes ahead.
    cli(course_copy, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", str(download))
    cli(course_copy, "release", "--out", str(out), "--to", str(tmp_path / "release2"))
    cli(course_copy, "gradebook", "--to", str(tmp_path / "book"))
