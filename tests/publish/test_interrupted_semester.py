"""Ctrl-C half way through grading a roster's class: nobody who handed in becomes a 0, and nothing is released.

A real SIGINT to a real `grade` (as tests/grade/test_interrupt.py sends it): the hand-ins not graded yet are
`not-graded` (no score), never `missing`; `release` and `gradebook` refuse and say how to finish;
`release --force` writes blanks, never 0; the same command again grades exactly what is left and gives the
whole class.  Then a `--regrade` stopped half way: its advice (run it again without --regrade) is true.
"""

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile

import pytest

from conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.alone]

SUBMISSIONS = ROOT / "examples" / "n-queens" / "submissions"
# None of them scores 0 (bob's stub does since constant answers earn nothing, issue 33, so dave hands in
# instead): a 0 anywhere is a 0 they did not earn.  peggy's cell loops to its limit and ivan's
# cases time out, so the Ctrl-C lands in the middle of grading.
CLASS = {"alice": 2001, "dave": 2002, "peggy": 2003, "ivan": 2004, "carol": 2005, "mallory": 2006}
ROSTER = ("Student,ID,SIS User ID,SIS Login ID,Section,N-Queens (501)\n    Points Possible,,,,,5\n"
          + "".join(f'"{name.title()}, Student",{uid},S{uid},{name},A,\n' for name, uid in CLASS.items()))


def cli(course, *args):
    return subprocess.run([sys.executable, "-m", "autograder", "--course", str(course), *args],
                          capture_output=True, text=True, timeout=600)


def gradings(db_path):
    """How many gradings the gradebook has logged (0 before it exists)."""
    try:
        with sqlite3.connect(db_path) as db:
            return db.execute("SELECT COUNT(*) FROM grading_log").fetchone()[0]
    except sqlite3.Error:
        return 0


def interrupt(command, db_path, after):
    """Run `command` as from a terminal and press Ctrl-C once it has graded `after` hand-ins."""
    before = gradings(db_path)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 180
    while gradings(db_path) < before + after and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stdout + stderr
    return stdout, stderr


def table(path):
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def no_zero_for_anyone(path, score_column, who_column):
    for row in table(path):
        assert row[score_column] != "0", f"{row[who_column]} handed in and got 0 in {path.name}"


def test_ctrl_c_leaves_not_graded_rows_that_release_refuses_and_a_rerun_finishes(course_copy, tmp_path):
    course = course_copy
    (tmp_path / "export.csv").write_text(ROSTER)
    assert cli(course, "roster", "import", str(tmp_path / "export.csv")).returncode == 0
    download = tmp_path / "submissions.zip"
    with zipfile.ZipFile(download, "w") as archive:
        for number, (name, uid) in enumerate(CLASS.items()):
            archive.write(SUBMISSIONS / f"{name}.ipynb", f"{name}student_{uid}_{9000 + number}_n-queens.ipynb")
    out = course / "grades" / "n-queens"
    command = [sys.executable, "-m", "autograder", "--course", str(course), "grade", "--assignment", "n-queens",
               "--jobs", "1", "--out", str(out), str(download)]
    _, stderr = interrupt(command, out / "gradebook.db", 2)
    assert "Run the same command again to finish" in stderr
    rows = table(out / "grades.csv")
    assert len(rows) == len(CLASS) and "missing" not in {r["status"] for r in rows}
    waiting = [r for r in rows if r["status"] == "not-graded"]
    assert waiting and all(r["score"] == "" for r in waiting)
    no_zero_for_anyone(out / "grades.csv", "score", "name")

    refused = cli(course, "release", "--out", str(out), "--to", str(tmp_path / "release"))
    assert refused.returncode == 1 and "not graded yet" in refused.stderr, refused.stderr
    assert "run the same `autograder grade" in refused.stderr and not (tmp_path / "release").exists()
    book = cli(course, "gradebook", "--to", str(tmp_path / "book"))
    assert book.returncode == 1 and "not graded yet" in book.stderr and not (tmp_path / "book").exists()
    forced = cli(course, "release", "--out", str(out), "--to", str(tmp_path / "forced"), "--force")
    assert forced.returncode == 0, forced.stderr
    grades = {r["ID"]: r["N-Queens (501)"] for r in table(tmp_path / "forced" / "canvas_grades.csv")}
    assert set(grades) == {str(uid) for uid in CLASS.values()}
    assert sorted(k for k, v in grades.items() if v == "") == sorted(r["student"].split(":")[1] for r in waiting)
    no_zero_for_anyone(tmp_path / "forced" / "canvas_grades.csv", "N-Queens (501)", "Student")
    forced_book = cli(course, "gradebook", "--to", str(tmp_path / "forced-book"), "--force")
    assert forced_book.returncode == 0, forced_book.stderr
    no_zero_for_anyone(tmp_path / "forced-book" / "lms" / "canvas_import.csv", "N-Queens (501)", "Student")
    no_zero_for_anyone(tmp_path / "forced-book" / "course_grades.csv", "n-queens", "name")
    assert "not graded yet" in (tmp_path / "forced-book" / "semester_report.html").read_text()
    as_json = cli(course, "gradebook", "--to", str(tmp_path / "forced-book"), "--force", "--json")
    scores = [row["scores"]["n-queens"] for row in json.loads(as_json.stdout)["rows"]]
    assert None in scores and 0 not in scores

    finished = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr
    assert f"graded {len(waiting)} hand-in(s)" in finished.stdout
    rows = table(out / "grades.csv")
    assert len(rows) == len(CLASS) and {r["status"] for r in rows} <= {"graded", "timeout"}
    released = cli(course, "release", "--out", str(out), "--to", str(tmp_path / "release"))
    assert released.returncode == 0, released.stderr
    no_zero_for_anyone(tmp_path / "release" / "canvas_grades.csv", "N-Queens (501)", "Student")

    # A --regrade stopped half way: the advice says to run it again WITHOUT --regrade, and that is true.
    _, stderr = interrupt([*command, "--regrade"], out / "gradebook.db", 1)
    assert "run the same command WITHOUT --regrade" in stderr, stderr
    with sqlite3.connect(out / "gradebook.db") as db:
        left = db.execute("SELECT COUNT(*) FROM pending").fetchone()[0]
    assert 0 < left <= len(CLASS)
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert f"graded {left} hand-in(s)" in resumed.stdout
    assert f"{len(CLASS) - left} unchanged since an earlier run" in resumed.stdout or left == len(CLASS)
    assert {r["status"] for r in table(out / "grades.csv")} <= {"graded", "timeout"}


def test_the_test_student_s_hand_in_left_waiting_is_in_no_file_after_force(course_copy, tmp_path):
    # The trial (finding 14): Canvas's Test Student, whose hand-in a Ctrl-C left not graded, was in
    # canvas_grades.csv after `release --force` (`Test Student,1099,,,,`) and named in its warning.
    course = course_copy
    roster = ("Student,ID,SIS User ID,SIS Login ID,Section,N-Queens (501)\n    Points Possible,,,,,5\n"
              '"Alice, Student",2001,S2001,alice,A,\n"Peggy, Student",2003,S2003,peggy,A,\n'
              '"Student, Test",9999,,4f3a9c0e1b2d,A,\n')
    (tmp_path / "export.csv").write_text(roster)
    assert cli(course, "roster", "import", str(tmp_path / "export.csv")).returncode == 0
    download = tmp_path / "submissions.zip"
    with zipfile.ZipFile(download, "w") as archive:     # canvas:9999 is graded last: peggy's loop holds it back
        archive.write(SUBMISSIONS / "alice.ipynb", "alicestudent_2001_9001_n-queens.ipynb")
        archive.write(SUBMISSIONS / "peggy.ipynb", "peggystudent_2003_9003_n-queens.ipynb")
        archive.write(SUBMISSIONS / "alice.ipynb", "studenttest_9999_9009_n-queens.ipynb")
    out = course / "grades" / "n-queens"
    command = [sys.executable, "-m", "autograder", "--course", str(course), "grade", "--assignment", "n-queens",
               "--jobs", "1", "--out", str(out), str(download)]
    interrupt(command, out / "gradebook.db", 1)
    assert any(r["status"] == "not-graded" and r["student"] == "canvas:9999" for r in table(out / "grades.csv"))
    forced = cli(course, "release", "--out", str(out), "--to", str(tmp_path / "forced"), "--force")
    assert forced.returncode == 0, forced.stderr
    assert "9999" not in {r["ID"] for r in table(tmp_path / "forced" / "canvas_grades.csv")}
    assert "Test Student" not in forced.stderr
    book = cli(course, "gradebook", "--to", str(tmp_path / "book"), "--force")
    assert book.returncode == 0, book.stderr
    assert "9999" not in {r["ID"] for r in table(tmp_path / "book" / "lms" / "canvas_import.csv")}
