"""Make the schema fixtures: a Canvas semester graded by one version of the grader, its databases kept.

    python tests/gradebook/schemas/make_semester.py CHECKOUT DEST

CHECKOUT is a checkout of the version whose databases are wanted, with its `.venv` made (`make install`);
DEST gets its `course.db`, `n-queens-gradebook.db`, and the `canvas_import.csv` and `course_grades.csv` that
version wrote from them.  The semester: a Canvas roster of six (the Test Student among them); n-queens
graded from Canvas's download with Carol's hand-in marked late and given a time, Carol given an
extension, Dave an accommodation, Bob an adjustment; bitwise-queens graded without Erin's hand-in.

Before a change bumps a database's schema version (gradebook/store.py, roster/store.py), run this with the
commit before it and add DEST as tests/gradebook/schemas/v<N>/ (N: the version that commit writes), so
tests/gradebook/test_schemas.py opens every version ever released.
"""

import csv
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PAST = "2026-11-01T23:59:00-05:00"
CANVAS_ROSTER = """Student,ID,SIS User ID,SIS Login ID,Section,N-Queens (501),Bitwise Queens (502),Current Score,\
Unposted Current Score,Final Score,Unposted Final Score
    Points Possible,,,,,5.00,5.00,(read only),(read only),(read only),(read only)
"Smith, Alice",1001,S1001,asmith,Section A,,,,,,
"Jones, Bob",1002,S1002,bjones,Section A,,,,,,
"King, Carol",1003,S1003,cking,Section B,,,,,,
"Lee, Dave",1004,S1004,dlee,Section B,,,,,,
"Ng, Erin",1005,S1005,eng,Section A,,,,,,
"Student, Test",1099,,a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3,Section A and Section B,,,,,,
"""
WHO = {"alice": ("Smith, Alice", 1001), "bob": ("Jones, Bob", 1002), "carol": ("King, Carol", 1003),
       "dave": ("Lee, Dave", 1004), "erin": ("Ng, Erin", 1005), "test": ("Student, Test", 1099)}


def copy_course(checkout, course):
    for name in ("course.toml", "public_rubric.xlsx"):
        shutil.copy(checkout / name, course / name)
    for folder in ("solutions", "assignments", "autograder/assignments"):
        shutil.copytree(checkout / folder, course / folder)
    configure(course)


def configure(course):
    """The semester's deadlines: n-queens and bitwise-queens were due at PAST, a point off per day late."""
    text = (course / "course.toml").read_text()
    for assignment in ("n-queens", "bitwise-queens"):
        text = text.replace(f'[assignment.{assignment}]\n# deadline = "2026-12-01T23:59:00-05:00"\n'
                            'late_policy = "none"',
                            f'[assignment.{assignment}]\ndeadline = "{PAST}"\nlate_policy = "per-day"\n'
                            "late_penalty = 1")
    assert text.count("per-day") >= 2, "course.toml's assignment tables are not as this script expects"
    (course / "course.toml").write_text(text)


def canvas_zip(checkout, path, assignment, students, late=()):
    """Canvas's "Download Submissions" names (lib/content_zipper.rb); the Test Student hands in alice's."""
    with zipfile.ZipFile(path, "w") as archive:
        for number, student in enumerate(students):
            sortable, user = WHO[student]
            stem = sortable.lower().replace(",", "").replace(" ", "")
            name = f"{stem}{'_LATE' if student in late else ''}_{user}_{7000 + number}_{assignment}.ipynb"
            own = "alice" if student == "test" else student
            archive.write(checkout / "examples" / assignment / "submissions" / f"{own}.ipynb", name)
    return path


def make(checkout, dest):
    checkout, dest = Path(checkout).resolve(), Path(dest)
    program = checkout / ".venv" / "bin" / "autograder"
    with tempfile.TemporaryDirectory() as scratch:
        course = Path(scratch) / "course"
        course.mkdir()
        copy_course(checkout, course)

        def cli(*args):
            done = subprocess.run([str(program), "--course", str(course), *args], capture_output=True, text=True,
                                  cwd=course)
            print(" ".join(args), "->", done.returncode, done.stdout[-400:], done.stderr[-400:])
            assert done.returncode == 0, done.stderr

        (course / "export.csv").write_text(CANVAS_ROSTER)
        cli("roster", "import", "export.csv")
        nq = canvas_zip(checkout, course / "nq.zip", "n-queens", ["alice", "bob", "carol", "dave", "erin", "test"],
                        late=["carol"])
        (course / "times.csv").write_text("student,submitted_at\ncanvas:1003,2026-11-03T10:00:00-05:00\n")
        cli("grade", "--assignment", "n-queens", "--out", "grades/n-queens", "--times", "times.csv", str(nq))
        cli("extend", "--assignment", "n-queens", "--student", "cking", "--until", "2026-11-04T23:59:00-05:00",
            "--reason", "illness")
        cli("accommodate", "--group", "extra-time", "--extra-days", "2", "--reason", "ds", "--student", "dlee")
        cli("adjust", "--assignment", "n-queens", "--student", "Bob Jones", "--points", "1", "--reason", "ambiguous")
        bq = canvas_zip(checkout, course / "bq.zip", "bitwise-queens", ["alice", "bob", "carol", "dave", "test"])
        cli("grade", "--assignment", "bitwise-queens", "--out", "grades/bitwise-queens", str(bq))
        cli("gradebook", "--to", "book")
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy(course / "grades" / "course.db", dest / "course.db")
        shutil.copy(course / "grades" / "n-queens" / "gradebook.db", dest / "n-queens-gradebook.db")
        for name in ("canvas_import.csv", "course_grades.csv"):
            found = sorted(course.glob(f"book/**/{name}"))
            shutil.copy(found[0], dest / name)
    with open(dest / "course_grades.csv", newline="", encoding="utf-8") as handle:
        print(f"{dest}: {len(list(csv.DictReader(handle)))} students in course_grades.csv")


if __name__ == "__main__":
    make(*sys.argv[1:3])
