"""A regrade keeps what an earlier run learnt of a hand-in's time (the trial of this stop: it forgot it).

`grade --times FILE` gave carol a hand-in time and a late penalty; `grade --student carol --regrade`, the
documented answer to a regrade request, ran without --times and dropped both: release then wrote her score
without the penalty into the LMS file.  A change to cases.toml, which regrades everyone, did the same to the class.
"""

import csv
import shutil

import pytest

from conftest import ROOT, set_assignment_table
from semesters import cli

pytestmark = pytest.mark.slow

SUBMISSIONS = ROOT / "examples" / "n-queens" / "submissions"


def rows(folder):
    with open(folder / "grades.csv", newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def test_a_regrade_without_times_keeps_the_time_an_earlier_run_was_given(course_copy, tmp_path):
    set_assignment_table(course_copy, 'deadline = "2026-03-01T23:59:00-05:00"\nlate_policy = "per-day"\n'
                                      "late_penalty = 0.5\n")
    handins = tmp_path / "class"
    handins.mkdir()
    for student in ("alice", "carol"):
        shutil.copy(SUBMISSIONS / f"{student}.ipynb", handins)
    times = tmp_path / "times.csv"
    times.write_text("student,submitted_at\nalice,2026-03-01T20:00:00-05:00\ncarol,2026-03-03T10:00:00-05:00\n")
    out = course_copy / "grades" / "n-queens"
    cli(course_copy, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", "--times", str(times),
        str(handins))
    first = rows(out)["carol"]
    assert (first["late"], first["penalty"], first["score"]) == ("yes", "1", "3.3")
    cli(course_copy, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", "--student", "carol",
        "--regrade", str(handins))
    again = rows(out)["carol"]
    assert {k: again[k] for k in ("score", "late", "penalty", "handed_in_at", "time_source")} == \
        {k: first[k] for k in ("score", "late", "penalty", "handed_in_at", "time_source")}
    cli(course_copy, "release", "--out", str(out), "--to", str(tmp_path / "release"))
    assert "carol,,,,,3.3" in (tmp_path / "release" / "canvas_grades.csv").read_text().replace("\r\n", "\n")
