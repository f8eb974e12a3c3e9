"""Make the schema fixtures: a Canvas semester graded by one version of the grader, its databases kept.

    python tests/gradebook/schemas/make_semester.py CHECKOUT DEST

CHECKOUT is a checkout of the version whose databases are wanted, with its `.venv` made (`make install`);
DEST gets its `course.db`, `n-queens-gradebook.db`, and the `canvas_import.csv` and `course_grades.csv` that
version wrote from them.  The semester: a Canvas roster of six (the Test Student among them); n-queens
graded from Canvas's download with Carol's hand-in marked late and given a time, Carol given an
extension, Dave an accommodation, Bob an adjustment; bitwise-queens graded without Erin's hand-in.

Before a change bumps a database's schema version (gradebook/schema.py, roster/schema.py), run this with the
commit before it and add DEST as tests/gradebook/schemas/v<N>/ (N: the version that commit writes), so
tests/gradebook/test_schemas.py opens every version ever released.
"""

import csv
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))      # tests/: the semester's makings
from semesters import CANVAS_ROSTER, canvas_zip, configure  # noqa: E402


def copy_course(checkout, course):
    for name in ("course.toml", "public_rubric.xlsx"):
        shutil.copy(checkout / name, course / name)
    for folder in ("solutions", "assignments", "autograder/assignments"):
        shutil.copytree(checkout / folder, course / folder)
    configure(course)


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
        examples = checkout / "examples"
        nq = canvas_zip(course / "nq.zip", "n-queens", ["alice", "bob", "carol", "dave", "erin", "test"],
                        late=["carol"], examples=examples)
        (course / "times.csv").write_text("student,submitted_at\ncanvas:1003,2026-11-03T10:00:00-05:00\n")
        cli("grade", "--assignment", "n-queens", "--out", "grades/n-queens", "--times", "times.csv", str(nq))
        cli("extend", "--assignment", "n-queens", "--student", "cking", "--until", "2026-11-04T23:59:00-05:00",
            "--reason", "illness")
        cli("accommodate", "--group", "extra-time", "--extra-days", "2", "--reason", "ds", "--student", "dlee")
        cli("adjust", "--assignment", "n-queens", "--student", "Bob Jones", "--points", "1", "--reason", "ambiguous")
        bq = canvas_zip(course / "bq.zip", "bitwise-queens", ["alice", "bob", "carol", "dave", "test"],
                        examples=examples)
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
