"""A semester end to end through the real command line, once with a Canvas roster and once with a Moodle one.

Six on the roster (Canvas: one is the Test Student), two assignments graded
from the LMS's own download zips, one student who hands in nothing for the
second, one extension that turns a late hand-in on time, one adjustment that
survives `grade --regrade`, then `gradebook`, whose LMS import file must list
exactly the roster's students with exactly the roster's values.
"""

import csv
import json

import pytest

from semesters import (CANVAS_ROSTER, MOODLE_ROSTER, ROSTER_ROWS, WHO, canvas_zip, cli, configure, moodle_zip,
                       read_csv, scores)

pytestmark = pytest.mark.slow


def test_a_canvas_semester(course_copy, tmp_path):
    course = course_copy
    configure(course)
    roster = tmp_path / "export.csv"
    roster.write_text(CANVAS_ROSTER)
    imported = cli(course, "roster", "import", str(roster))
    assert "5 student(s) added" not in imported.stdout and "6 student(s) added" in imported.stdout
    assert "Test Student" in imported.stdout
    listed = json.loads(cli(course, "roster", "--json").stdout)
    assert [s["key"] for s in listed if not s["test_student"]] == [f"canvas:{u}" for _, u in
                                                                    sorted(WHO.values())]
    # Assignment 1: carol's file is marked late by Canvas; times from the LMS say when.
    grades1 = course / "grades" / "n-queens"
    zip1 = canvas_zip(tmp_path / "nq.zip", "n-queens", ["alice", "bob", "carol", "dave", "erin", "test"],
                      late=["carol"])
    times = tmp_path / "times.csv"
    times.write_text("student,submitted_at\ncanvas:1003,2026-11-03T10:00:00-05:00\n")
    first = cli(course, "grade", "--assignment", "n-queens", "--out", str(grades1), "--times", str(times), str(zip1))
    assert "missing" not in first.stdout.split("lateness")[0]
    carol = scores(grades1)["Carol King"]
    assert carol["late"] == "yes" and carol["score"] == "2.3" and carol["penalty"] == "2"
    # The extension: her own deadline, the late mark no longer decides, no penalty.
    extended = cli(course, "extend", "--assignment", "n-queens", "--student", "cking", "--until",
                   "2026-11-04T23:59:00-05:00", "--reason", "illness, note from the dean")
    assert "King" in extended.stdout
    carol = scores(grades1)["Carol King"]
    assert (carol["late"], carol["score"], carol["penalty"]) == ("no", "4.3", "0")
    assert carol["deadline"].startswith("2026-11-04T23:59")
    # A course-wide accommodation: a rule and its members, not a command per assignment.
    cli(course, "accommodate", "--group", "extra-time", "--extra-days", "2", "--reason", "disability services",
        "--student", "dlee", "--student", "S1005")
    assert scores(grades1)["Dave Lee"]["deadline"].startswith("2026-11-03T23:59")
    assert "2 days extra" in cli(course, "accommodate", "--list").stdout
    # An adjustment to bob, which a regrade of bob leaves standing.
    adjusted = cli(course, "adjust", "--assignment", "n-queens", "--student", "Bob Jones", "--points", "1",
                   "--reason", "regrade request: case 3's statement was ambiguous")
    assert "score now 1 / 5" in adjusted.stdout and "score before: 0" in adjusted.stdout
    regraded = cli(course, "grade", "--assignment", "n-queens", "--out", str(grades1), "--times", str(times),
                   "--student", "1002", "--regrade", str(zip1))
    assert "graded 1 hand-in(s)" in regraded.stdout
    bob = scores(grades1)["Bob Jones"]
    assert (bob["score"], bob["adjustment"]) == ("1", "1") and "ambiguous" in bob["adjust_reason"]
    history = json.loads(cli(course, "adjust", "--list", "--json").stdout)
    assert [(a["student"], a["points"], a["score_before"], a["active"]) for a in history] == \
        [("canvas:1002", 1.0, 0.0, True)]
    # Assignment 2: erin hands in nothing; the deadline has passed, so she is missing.
    grades2 = course / "grades" / "bitwise-queens"
    zip2 = canvas_zip(tmp_path / "bq.zip", "bitwise-queens", ["alice", "bob", "carol", "dave", "test"],
                      files={"dave": "heidi"})
    second = cli(course, "grade", "--assignment", "bitwise-queens", "--out", str(grades2), str(zip2))
    assert "1 on the roster handed in nothing by their deadline (missing, 0 points): Erin Ng (canvas:1005)" \
        in second.stdout
    erin = scores(grades2)["Erin Ng"]
    assert (erin["status"], erin["score"]) == ("missing", "0")
    # The feedback page shows the extension and the adjustment with their reasons.
    cli(course, "feedback", "--out", str(grades1))
    pages = {p.parent.name: p.read_text() for p in (grades1 / "feedback").glob("*/feedback.md")}
    carol_page = next(text for folder, text in pages.items() if folder.startswith("Carol_King_canvas_1003"))
    assert "Your deadline:" in carol_page and "illness" in carol_page
    bob_page = next(text for folder, text in pages.items() if folder.startswith("Bob_Jones_canvas_1002"))
    assert "Adjusted by the teaching team:" in bob_page and "ambiguous" in bob_page
    # The course gradebook and Canvas's import file.
    book = tmp_path / "book"
    done = cli(course, "gradebook", "--to", str(book), "--json")
    summary = json.loads(done.stdout)
    assert "warning" not in done.stderr, done.stderr
    assert summary["test_students"] == ["canvas:1099"] and summary["graded"] == ["n-queens", "bitwise-queens"]
    rows = read_csv(book / "course_grades.csv")
    assert [r["student"] for r in rows] == [f"canvas:{u}" for _, u in sorted(WHO.values(), key=lambda v: v[0])]
    by_key = {r["student"]: r for r in rows}
    assert by_key["canvas:1005"]["bitwise-queens"] == "0" and by_key["canvas:1005"]["missing"] == "1"
    assert by_key["canvas:1002"]["n-queens"] == "1"
    with (book / "lms" / "canvas_import.csv").open(encoding="utf-8") as handle:
        canvas = list(csv.reader(handle))
    # Each column is the Canvas assignment the roster's export named (matched by title), in course order.
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "N-Queens (501)",
                         "Bitwise Queens (502)"]
    assert canvas[1] == ["    Points Possible", "", "", "", "", "5", "5"]
    assert sorted(row[:5] for row in canvas[2:]) == sorted(ROSTER_ROWS)
    assert {row[1]: row[5:] for row in canvas[2:]} == {"1001": ["5", "5"], "1002": ["1", "3.3"],
                                                       "1003": ["4.3", "1.9"], "1004": ["2.9", "5"],
                                                       "1005": ["4.9", "0"]}
    assert (book / "course_grades.xlsx").is_file() and (book / "semester_report.html").is_file()
    assert "Erin Ng" in (book / "semester_report.html").read_text()


def test_a_moodle_semester(course_copy, tmp_path):
    course = course_copy
    configure(course)
    roster = tmp_path / "courseid_7_participants.csv"
    roster.write_text(MOODLE_ROSTER)
    assert "6 student(s) added" in cli(course, "roster", "import", str(roster)).stdout
    grades1 = course / "grades" / "n-queens"
    zip1 = moodle_zip(tmp_path / "CS101-N-Queens-42.zip", "n-queens", ["alice", "bob", "carol", "dave", "erin"])
    # Moodle's grading worksheet gives each participant's email and the time they handed in.
    worksheet = tmp_path / "Grades-CS101-N-Queens-42.csv"
    worksheet.write_text(
        "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
        "Last modified (submission),Last modified (grade),Feedback comments\n"
        + "".join(f"Participant {4700 + u % 100},{s.split(', ')[1]} {s.split(', ')[0]},"
                  f"{s.split(', ')[1].lower()}@uni.example,Submitted for grading,,5.00,Yes,"
                  f"\"{'Tuesday, 3 November 2026, 10:00 AM' if u == 1003 else 'Sunday, 1 November 2026, 9:00 AM'}\","
                  "-,\n" for s, u in WHO.values()))
    cli(course, "grade", "--assignment", "n-queens", "--out", str(grades1), "--times", str(worksheet), str(zip1))
    rows = scores(grades1)
    assert set(rows) == {"Alice Smith", "Bob Jones", "Carol King", "Dave Lee", "Erin Ng", "Frank Moss"}
    assert rows["Carol King"]["student"] == "email:carol@uni.example" and rows["Carol King"]["late"] == "yes"
    assert rows["Frank Moss"]["status"] == "missing"
    cli(course, "extend", "--assignment", "n-queens", "--student", "carol@uni.example", "--until",
        "2026-11-04T23:59:00-05:00", "--reason", "family emergency")
    assert scores(grades1)["Carol King"]["late"] == "no"
    cli(course, "adjust", "--assignment", "n-queens", "--student", "S1002", "--score", "4", "--reason",
        "oral exam showed full understanding")
    cli(course, "grade", "--assignment", "n-queens", "--out", str(grades1), "--times", str(worksheet),
        "--regrade", str(zip1))
    assert scores(grades1)["Bob Jones"]["score"] == "4"
    grades2 = course / "grades" / "bitwise-queens"
    zip2 = moodle_zip(tmp_path / "CS101-Bitwise-43.zip", "bitwise-queens", ["alice", "bob", "carol"])
    cli(course, "grade", "--assignment", "bitwise-queens", "--out", str(grades2), str(zip2))
    book = tmp_path / "book"
    written = cli(course, "gradebook", "--to", str(book))
    # A Moodle roster has no Canvas ids: Canvas's file is its header alone, said once, with no warning.
    assert "canvas_import.csv has no rows" in written.stdout and "warning" not in written.stderr, written.stderr
    moodle = read_csv(book / "lms" / "moodle_import.csv")
    assert [r["Email address"] for r in moodle] == sorted(
        [line.split(",")[2] for line in MOODLE_ROSTER.splitlines()[1:]],
        key=lambda email: [r for r in MOODLE_ROSTER.splitlines()[1:] if email in r][0].split(",")[1])
    assert [r["ID number"] for r in moodle] == [next(line.split(",")[3] for line in MOODLE_ROSTER.splitlines()
                                                     if r["Email address"] in line) for r in moodle]
    frank = next(r for r in moodle if r["Email address"] == "frank@uni.example")
    titles = [c for c in moodle[0] if c not in ("Email address", "ID number") and not c.endswith("feedback")]
    assert all(frank[t] == "0" for t in titles)
    bob = next(r for r in moodle if r["Email address"] == "bob@uni.example")
    assert any("oral exam" in bob[c] for c in moodle[0] if c.endswith("feedback"))
