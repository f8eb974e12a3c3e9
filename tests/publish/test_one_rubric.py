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
    # The two left under the former weights are named (the rubric they were graded under is no longer the
    # assignment's), carol, graded under today's, is not.
    said = " ".join(refused.stderr.split())
    assert refused.returncode != 0 and "no longer the assignment's" in said
    assert "Alice Smith" in said and "Bob Jones" in said and "Carol King" not in said
    assert not (tmp_path / "release" / "canvas_grades.csv").exists()
    book = cli(course_copy, "gradebook", "--to", str(tmp_path / "book"), check=False)
    assert book.returncode != 0 and "no longer the assignment's" in " ".join(book.stderr.split())
    forced = cli(course_copy, "release", "--out", str(out), "--to", str(tmp_path / "release"), "--force")
    assert "scores from different cases or limits (--force)" in " ".join(forced.stderr.split())
    assert "former cases, points, expected values or limits (--force)" in " ".join(forced.stderr.split())
    # A plain grade regrades the others: one rubric again, and release goes ahead.
    cli(course_copy, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", str(download))
    cli(course_copy, "release", "--out", str(out), "--to", str(tmp_path / "release2"))
    cli(course_copy, "gradebook", "--to", str(tmp_path / "book"))


def test_a_class_graded_wholly_under_a_former_rubric_is_not_released_until_regraded(course_copy, tmp_path):
    """The issue's trial: points moved between two cases after grading, and `release` wrote the former scores
    with no word.  Now release and gradebook refuse, naming the students and the `grade` that regrades them;
    that `grade` says why it grades them again, and the release after it has the new scores."""
    configure(course_copy)
    (tmp_path / "export.csv").write_text(CANVAS_ROSTER)
    cli(course_copy, "roster", "import", str(tmp_path / "export.csv"))
    out = course_copy / "grades" / "n-queens"
    download = canvas_zip(tmp_path / "nq.zip", "n-queens", ["alice", "bob", "carol"])
    cli(course_copy, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", str(download))
    cli(course_copy, "release", "--out", str(out), "--to", str(tmp_path / "before"))
    before = {r["ID"]: r["N-Queens (501)"] for r in csv.DictReader((tmp_path / "before" / "canvas_grades.csv")
                                                                   .open(encoding="utf-8"))}
    assert before["1003"] == "4.3"
    cases = course_copy / "autograder" / "assignments" / "n-queens" / "cases.toml"
    text = cases.read_text()
    board = 'call = "board2str([0, 1, 2, 3, 4, 5])"\npoints = 0.25\n'
    count = 'call = "count_solutions(8)"\npoints = 0.25\n'
    cases.write_text(text.replace(board, board.replace("0.25", "0.35")).replace(count, count.replace("0.25", "0.15")))

    refused = cli(course_copy, "release", "--out", str(out), "--to", str(tmp_path / "release"), check=False)
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 1 and "no longer the assignment's" in said, refused.stderr
    assert all(who in said for who in ("Alice Smith (canvas:1001)", "Bob Jones (canvas:1002)",
                                       "Carol King (canvas:1003)"))
    assert f"autograder grade --assignment n-queens --out {out}" in said and "--force" in said
    assert not (tmp_path / "release").exists() or not (tmp_path / "release" / "canvas_grades.csv").exists()
    book = cli(course_copy, "gradebook", "--to", str(tmp_path / "book"), check=False)
    assert book.returncode == 1 and "no longer the assignment's" in " ".join(book.stderr.split())
    assert "Carol King" in book.stderr and "autograder grade --assignment n-queens" in " ".join(book.stderr.split())
    assert not (tmp_path / "book" / "course_grades.csv").exists()
    forced = cli(course_copy, "release", "--out", str(out), "--to", str(tmp_path / "forced"), "--force")
    assert "former cases, points, expected values or limits (--force)" in " ".join(forced.stderr.split())

    regraded = cli(course_copy, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1",
                   str(download))
    told = " ".join((regraded.stdout + regraded.stderr).split())
    assert "grading 3 hand-in(s) again, graded under cases, points, expected values or limits that are no " \
           "longer the assignment's" in told, told
    assert "graded 3 hand-in(s)" in told
    cli(course_copy, "release", "--out", str(out), "--to", str(tmp_path / "after"))
    after = {r["ID"]: r["N-Queens (501)"] for r in csv.DictReader((tmp_path / "after" / "canvas_grades.csv")
                                                                  .open(encoding="utf-8"))}
    assert after["1003"] == "4.2" and after["1001"] == "5"
    cli(course_copy, "gradebook", "--to", str(tmp_path / "book"))
    # Nothing changed since: a plain grade grades nothing again, and says no reason.
    again = cli(course_copy, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", str(download))
    assert "hand-in(s) again" not in again.stdout + again.stderr and "graded 0 hand-in(s)" in again.stdout
