"""A Canvas (or Moodle) semester's makings, for the tests that run one: the LMS's class lists and download zips
rebuilt from its own source, the course's deadlines, and the real command line.

Also what tests/gradebook/schemas/make_semester.py runs with an earlier version of the grader.
"""

import csv
import io
import zipfile
from pathlib import Path

import forked_cli

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PAST = "2026-11-01T23:59:00-05:00"
# Canvas's gradebook export (lib/gradebook_exporter.rb): the points row first, the Test Student last with a
# digest for a login and every section, names as sortable names.
CANVAS_ROSTER = f"""Student,ID,SIS User ID,SIS Login ID,Section,N-Queens (501),Bitwise Queens (502),Current Score,\
Unposted Current Score,Final Score,Unposted Final Score
    Points Possible,,,,,5.00,5.00,(read only),(read only),(read only),(read only)
"Smith, Alice",1001,S1001,asmith,Section A,,,,,,
"Jones, Bob",1002,S1002,bjones,Section A,,,,,,
"King, Carol",1003,S1003,cking,Section B,,,,,,
"Lee, Dave",1004,S1004,dlee,Section B,,,,,,
"Ng, Erin",1005,S1005,eng,Section A,,,,,,
"Student, Test",1099,,{"a3" * 20},Section A and Section B,,,,,,
"""
ROSTER_ROWS = [row[:5] for row in list(csv.reader(io.StringIO(CANVAS_ROSTER)))[2:7]]   # the five real students
MOODLE_ROSTER = """First name,Last name,Email address,ID number
Alice,Smith,alice@uni.example,S1001
Bob,Jones,bob@uni.example,S1002
Carol,King,carol@uni.example,S1003
Dave,Lee,dave@uni.example,S1004
Erin,Ng,erin@uni.example,S1005
Frank,Moss,frank@uni.example,S1006
"""
WHO = {"alice": ("Smith, Alice", 1001), "bob": ("Jones, Bob", 1002), "carol": ("King, Carol", 1003),
       "dave": ("Lee, Dave", 1004), "erin": ("Ng, Erin", 1005)}


def cli(course, *args, check=True):
    """`python -m autograder --course COURSE ARGS`: a process of its own, forked from one that imported the grader
    once (forked_cli)."""
    done = forked_cli.run("--course", course, *args)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


def configure(course):
    """The semester's deadlines: n-queens and bitwise-queens were due at PAST, a point off per day late."""
    text = (course / "course.toml").read_text()
    for assignment in ("n-queens", "bitwise-queens"):
        text = text.replace(f'[assignment.{assignment}]\n# deadline = "2026-12-01T23:59:00-05:00"\n'
                            'late_policy = "none"',
                            f'[assignment.{assignment}]\ndeadline = "{PAST}"\nlate_policy = "per-day"\n'
                            "late_penalty = 1")
    assert text.count("per-day") >= 2
    (course / "course.toml").write_text(text)


def canvas_zip(path, assignment, students, late=(), files=None, examples=EXAMPLES):
    """Canvas's "Download Submissions": `lastfirst[_LATE]_userid_attachmentid_file` (lib/content_zipper.rb).

    `files`: {student: the example student whose notebook they hand in} (default: their own; the Test
    Student hands in alice's); `examples`: the examples/ folder of the checkout whose notebooks they are."""
    files = {"test": "alice", **(files or {})}
    with zipfile.ZipFile(path, "w") as archive:
        for number, student in enumerate(students):
            sortable, user = WHO.get(student, ("Student, Test", 1099))
            stem = sortable.lower().replace(",", "").replace(" ", "")
            name = f"{stem}{'_LATE' if student in late else ''}_{user}_{7000 + number}_{assignment}.ipynb"
            archive.write(examples / assignment / "submissions" / f"{files.get(student, student)}.ipynb", name)
    return path


def moodle_zip(path, assignment, students):
    """Moodle's "Download all submissions": `Full Name_<participant>_assignsubmission_file/` folders."""
    with zipfile.ZipFile(path, "w") as archive:
        for student in students:
            last, first = WHO[student][0].split(", ")
            participant = 4700 + WHO[student][1] % 100 + (100 if assignment == "bitwise-queens" else 0)
            archive.write(EXAMPLES / assignment / "submissions" / f"{student}.ipynb",
                          f"{first} {last}_{participant}_assignsubmission_file/{assignment}.ipynb")
    return path


def read_csv(path):
    return list(csv.DictReader(path.open(encoding="utf-8")))


def scores(out):
    return {row["name"]: row for row in read_csv(out / "grades.csv")}
