"""The semester's policies through the real command line: a late joiner, an excuse, slip days.

The trial behind them: Grace joined with the week-8 roster import, after n-queens was graded; `gradebook` left
her cell blank, then an unrelated `grade --student bjones --regrade` marked her `missing` and the next
`gradebook` wrote 0.  Same facts, two numbers.  Now every command that reads a gradebook applies the one rule
first (grade/refresh.py, gradebook/semester.py).
"""

import csv

import pytest

from semesters import CANVAS_ROSTER, PAST, canvas_zip, cli, configure, read_csv, scores

pytestmark = pytest.mark.slow

GRACE = '"Hopper, Grace",1007,S1007,ghopper,Section A,,,,,,\n'


def week8_roster(path):
    """Canvas's export after Grace enrolled: her row before the Test Student's, as Canvas sorts them."""
    lines = CANVAS_ROSTER.splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + GRACE + lines[-1])
    return path


def cell(book, key, assignment):
    row = {r["student"]: r for r in read_csv(book / "course_grades.csv")}[key]
    canvas = {r["ID"]: r for r in read_csv(book / "lms" / "canvas_import.csv") if r["ID"]}
    return row[assignment], row[f"{assignment} mark"], canvas[key.split(":")[1]]["N-Queens (501)"]


def test_a_late_joiner_has_one_value_whatever_command_ran_last(course_copy, tmp_path):
    course = course_copy
    configure(course)
    (tmp_path / "export.csv").write_text(CANVAS_ROSTER)
    cli(course, "roster", "import", str(tmp_path / "export.csv"))
    out = course / "grades" / "n-queens"
    download = canvas_zip(tmp_path / "nq.zip", "n-queens", ["alice", "bob", "carol", "dave"])
    cli(course, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", str(download))
    imported = cli(course, "roster", "import", str(week8_roster(tmp_path / "week8.csv")))
    assert "1 student(s) added" in imported.stdout and "applied to the graded assignment(s): n-queens" in imported.stdout
    # Her row is in grades.csv at once, excused: n-queens was due before she joined.
    assert scores(out)["Grace Hopper"]["status"] == "excused"
    cli(course, "gradebook", "--to", str(tmp_path / "before"))
    before = cell(tmp_path / "before", "canvas:1007", "n-queens")
    assert before == ("", "excused", "EX")
    assert cell(tmp_path / "before", "canvas:1005", "n-queens") == ("0", "missing", "0")    # Erin: from the start
    # An unrelated regrade request changes nothing of hers.
    cli(course, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", "--student", "bjones",
        "--regrade", str(download))
    cli(course, "gradebook", "--to", str(tmp_path / "after"))
    assert cell(tmp_path / "after", "canvas:1007", "n-queens") == before
    released = cli(course, "release", "--out", str(out), "--to", str(tmp_path / "release"))
    canvas = {r["ID"]: r["N-Queens (501)"] for r in read_csv(tmp_path / "release" / "canvas_grades.csv")}
    assert canvas["1007"] == "EX" and canvas["1005"] == "0" and "Grace Hopper (canvas:1007)" in released.stdout
    # A course that counts late joiners missing: 0, before and after the same unrelated command.
    toml = course / "course.toml"
    toml.write_text(toml.read_text().replace("[course]\n", '[course]\nlate_joiners = "missing"\n', 1))
    cli(course, "gradebook", "--to", str(tmp_path / "strict"))
    assert cell(tmp_path / "strict", "canvas:1007", "n-queens") == ("0", "missing", "0")
    cli(course, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", "--student", "bjones",
        "--regrade", str(download))
    cli(course, "gradebook", "--to", str(tmp_path / "strict2"))
    assert cell(tmp_path / "strict2", "canvas:1007", "n-queens") == ("0", "missing", "0")


def test_an_excuse_through_the_command_line_and_every_file(course_copy, tmp_path):
    course = course_copy
    configure(course)
    (tmp_path / "export.csv").write_text(CANVAS_ROSTER)
    cli(course, "roster", "import", str(tmp_path / "export.csv"))
    out = course / "grades" / "n-queens"
    download = canvas_zip(tmp_path / "nq.zip", "n-queens", ["alice", "bob", "carol", "dave"])
    cli(course, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", str(download))
    said = cli(course, "excuse", "--assignment", "n-queens", "--student", "Erin Ng", "--reason", "dean's note")
    assert "Erin Ng (canvas:1005) is excused from n-queens: dean's note" in said.stdout
    cli(course, "excuse", "--assignment", "n-queens", "--student", "bjones", "--reason", "a family emergency")
    refused = cli(course, "excuse", "--assignment", "n-queens", "--student", "cking", check=False)
    assert refused.returncode == 2 and "--reason" in refused.stderr
    assert scores(out)["Erin Ng"]["status"] == "excused" and scores(out)["Bob Jones"]["excused"]
    released = cli(course, "release", "--out", str(out), "--to", str(tmp_path / "release"), "--all-formats")
    assert "excused, EX in canvas_grades.csv" in released.stdout
    canvas = {r["ID"]: r["N-Queens (501)"] for r in read_csv(tmp_path / "release" / "canvas_grades.csv")}
    assert (canvas["1005"], canvas["1002"], canvas["1001"]) == ("EX", "EX", "5")
    gradescope = {r["SID"] or r["Name"]: r for r in read_csv(tmp_path / "release" / "gradescope_grades.csv")}
    erin = next(r for r in gradescope.values() if r["Name"].startswith("Erin"))
    assert (erin["Total Score"], erin["Status"]) == ("", "excused")
    # Bob handed in: his feedback is released, and says he is excused.
    bob_page = next((tmp_path / "release" / "feedback").glob("jonesbob_1002_*"))
    assert "Excused:" in bob_page.read_text() and "a family emergency" in bob_page.read_text()
    cli(course, "gradebook", "--to", str(tmp_path / "book"))
    book = {r["student"]: r for r in read_csv(tmp_path / "book" / "course_grades.csv")}
    assert (book["canvas:1005"]["n-queens"], book["canvas:1005"]["due"], book["canvas:1005"]["excused"]) == \
        ("", "0", "n-queens")
    assert book["canvas:1002"]["due"] == "0" and book["canvas:1001"]["due"] == "5"
    history = read_csv(tmp_path / "book" / "history.csv")
    assert any(h["event"] == "excused" and "dean's note" in h["detail"] for h in history)
    report = (tmp_path / "book" / "semester_report.html").read_text()
    assert "counts in no mean, median or total" in report
    # The audit trail keeps a withdrawn excuse, and the withdrawal puts her back.
    listed = cli(course, "excuse", "--list", "--student", "eng").stdout
    number = listed.split()[0].lstrip("#")
    cli(course, "excuse", "--withdraw", number, "--reason", "the note was for another course")
    assert (scores(out)["Erin Ng"]["status"], scores(out)["Erin Ng"]["score"]) == ("missing", "0")
    cli(course, "gradebook", "--to", str(tmp_path / "book"))
    events = [h["event"] for h in read_csv(tmp_path / "book" / "history.csv") if h["student"] == "canvas:1005"]
    assert "excused" in events and "withdrawn" in events


SLIP_DAYS = "\n[slip_days]\npool = 2\nmax_per_assignment = 2\n"


def test_a_semester_of_slip_days_spends_refunds_and_shows_the_balance(course_copy, tmp_path):
    course = course_copy
    configure(course)
    (course / "course.toml").write_text((course / "course.toml").read_text() + SLIP_DAYS)
    (tmp_path / "export.csv").write_text(CANVAS_ROSTER)
    cli(course, "roster", "import", str(tmp_path / "export.csv"))
    out = course / "grades" / "n-queens"
    download = canvas_zip(tmp_path / "nq.zip", "n-queens", ["alice", "carol"], late=["carol"])
    late = tmp_path / "late.csv"
    late.write_text("student,submitted_at\ncanvas:1003,2026-11-02T10:00:00-05:00\n")       # 10 h late: 1 day
    cli(course, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", "--times", str(late),
        str(download))
    carol = scores(out)["Carol King"]
    assert (carol["slip_days"], carol["late"], carol["score"], carol["penalty"]) == ("1", "no", "4.3", "0")
    cli(course, "feedback", "--out", str(out))
    page = next((out / "feedback").glob("Carol_King_canvas_1003*/feedback.md")).read_text()
    assert "**Slip days:** 1 slip day(s) spent; 1 of 2 slip day(s) left after this assignment" in page
    # A regrade spends nothing twice.
    cli(course, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", "--regrade", str(download))
    assert scores(out)["Carol King"]["slip_days"] == "1"
    listed = cli(course, "slip", "--list", "--student", "cking").stdout
    assert "Carol King (canvas:1003): 1 of 2 left (n-queens 1)" in listed
    # bitwise-queens, 30 h late: 2 days needed, 1 left, a day's penalty for the rest.
    out2 = course / "grades" / "bitwise-queens"
    download2 = canvas_zip(tmp_path / "bq.zip", "bitwise-queens", ["alice", "carol"], late=["carol"])
    later = tmp_path / "later.csv"
    later.write_text("student,submitted_at\ncanvas:1003,2026-11-03T05:59:00-05:00\n")
    cli(course, "grade", "--assignment", "bitwise-queens", "--out", str(out2), "--jobs", "1", "--times", str(later),
        str(download2))
    carol2 = scores(out2)["Carol King"]
    assert (carol2["slip_days"], carol2["late"], carol2["penalty"]) == ("1", "yes", "1")
    # A refund: the LMS's record shows n-queens was on time after all, and a regrade with it gives the day back,
    # which bitwise-queens then spends (read by the next command, whatever it is).
    on_time = tmp_path / "on-time.csv"
    on_time.write_text("student,submitted_at\ncanvas:1003,2026-11-01T22:00:00-05:00\n")
    cli(course, "grade", "--assignment", "n-queens", "--out", str(out), "--jobs", "1", "--regrade", "--times",
        str(on_time), str(download))
    assert scores(out)["Carol King"]["slip_days"] == "0"
    cli(course, "gradebook", "--to", str(tmp_path / "book"))
    book = {r["student"]: r for r in read_csv(tmp_path / "book" / "course_grades.csv")}
    assert (book["canvas:1003"]["slip_days_used"], book["canvas:1003"]["slip_days_left"]) == ("2", "0")
    assert book["canvas:1003"]["bitwise-queens mark"] == "" and book["canvas:1001"]["slip_days_left"] == "2"
    report = (tmp_path / "book" / "semester_report.html").read_text()
    assert "slip days left" in report and "0 of 2" in report
    # The teaching team chooses, once however often it is said, never past the assignment's maximum.
    for _ in range(2):
        cli(course, "slip", "--student", "cking", "--assignment", "n-queens", "--days", "0", "--reason", "asked")
    too_many = cli(course, "slip", "--student", "cking", "--assignment", "n-queens", "--days", "3", "--reason", "x",
                   check=False)
    assert too_many.returncode == 1 and "more than the 2 one assignment may take" in too_many.stderr
    granted = cli(course, "slip", "--student", "cking", "--grant", "1", "--reason", "a hard week")
    assert "Carol King (canvas:1003): 1 of 3 slip day(s) left" in granted.stdout
    cli(course, "feedback", "--out", str(out2))
    page = next((out2 / "feedback").glob("Carol_King_canvas_1003*/feedback.md")).read_text()
    assert "1 of 3 slip day(s) left after this assignment" in page
