"""How long `report`, `gradebook` (with the semester report) and `release` take for a class of 250 and of 1,000.

    .venv/bin/python benchmarks/class_reports.py                    # 250 and 1,000 students, 3 runs each
    .venv/bin/python benchmarks/class_reports.py --sizes 1000 --runs 5

What is run is the command line itself (`python -m autograder`, a fresh process each time, as an instructor
runs it), on a copy of the course with a Canvas roster of the class size, deadlines with a per-day penalty,
and a gradebook per assignment.  The gradebooks hold real results: each assignment's example class
(examples/<id>/submissions) is graded once, and its rows (every case, message, cell error) are copied
for each roster student under the student's Canvas id, some late and some missing, then lateness is applied
as `grade` applies it.  Grading 4,000 hand-ins would take most of an hour and is not what is measured.

It prints the median of each command at each size, and beside the ratio of the two sizes' times the ratio
of their students: a command whose time grows faster than the class shows at once.  The target: every
command grows about as the class does (no pass over every student per student).
"""

import argparse
import csv
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.core.assignment import load_assignment  # noqa: E402
from autograder.core.course import late_rules, load_course  # noqa: E402
from autograder.gradebook import Gradebook  # noqa: E402
from autograder.roster.store import CourseRecords  # noqa: E402

COURSE_FILES = ("course.toml", "autograder/assignments", "solutions", "assignments", "public_rubric.xlsx")
DEADLINE = "2026-11-01T23:59:00-05:00"
COLUMNS = {"n-queens": "N-Queens (501)", "uninformed-search": "Uninformed Search (502)",
           "bitwise-queens": "Bitwise Queens (503)", "no-three-in-line": "No Three in Line (504)"}
MISSING = 0.03          # share of roster students with no hand-in
LATE = 0.1              # share of hand-ins a day or two late


def autograder(course, *args):
    """Run the command line in a fresh process; its wall time in seconds."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "autograder", "--course", str(course), *map(str, args)],
                          capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"autograder {' '.join(map(str, args))} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return seconds


def make_course(folder):
    """A copy of the course: Canvas, a deadline and a per-day penalty for every assignment."""
    for name in COURSE_FILES:
        source, target = ROOT / name, folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
    text = (folder / "course.toml").read_text(encoding="utf-8")
    text = text.replace('lms = "other"', 'lms = "canvas"')
    for number, assignment_id in enumerate(COLUMNS):
        text = text.replace(f'[assignment.{assignment_id}]\n# deadline = "2026-12-01T23:59:00-05:00"\n'
                            'late_policy = "none"',
                            f'[assignment.{assignment_id}]\ndeadline = "{DEADLINE}"\nlate_policy = "per-day"\n'
                            f'late_penalty = 0.5\nlms_column = "{COLUMNS[assignment_id]}"')
    (folder / "course.toml").write_text(text, encoding="utf-8")
    return folder


def seed_gradebooks(course, folder):
    """{assignment id: its example class's gradebook, graded for real (kept in `folder` from an earlier run)}."""
    seeds = {}
    for assignment_id in load_course(course).assignment_ids():
        out = folder / assignment_id
        if not (out / "gradebook.db").is_file():
            autograder(course, "--quiet", "grade", "--assignment", assignment_id, "--out", out, "--no-roster",
                       ROOT / "examples" / assignment_id / "submissions")
        seeds[assignment_id] = out / "gradebook.db"
    return seeds


def canvas_roster(path, size):
    """Canvas's gradebook export: the points row, then every student, the Test Student last."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        blank = [""] * len(COLUMNS)
        out.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *COLUMNS.values()])
        out.writerow(["    Points Possible", "", "", "", "", *["5.00"] * len(COLUMNS)])
        for number in range(size):
            out.writerow([f"Student{number:04d}, Pat", 10000 + number, f"S{10000 + number}", f"login{number}",
                          f"Section {'AB'[number % 2]}", *blank])
        out.writerow(["Student, Test", 99999, "", "a3" * 20, "Section A", *blank])


def columns(db, table):
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def clone_gradebook(seed, target, assignment_id, size, rng):
    """Copy the seed's counted hand-ins, one for each roster student (some late, some missing)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(seed, target)
    db = sqlite3.connect(target)
    sub_columns = columns(db, "submissions")
    seeds = db.execute("SELECT * FROM submissions WHERE assignment = ? AND counted = 1 ORDER BY id",
                       (assignment_id,)).fetchall()
    cases = {sid: db.execute("SELECT * FROM case_results WHERE submission_id = ?", (sid,)).fetchall()
             for sid in (row[sub_columns.index("id")] for row in seeds)}
    errors = {sid: db.execute("SELECT * FROM cell_errors WHERE submission_id = ?", (sid,)).fetchall()
              for sid in cases}
    for table in ("case_results", "cell_errors", "grading_log", "submissions", "pending", "absent"):
        db.execute(f"DELETE FROM {table}")
    log_columns, case_columns, error_columns = (columns(db, t) for t in ("grading_log", "case_results",
                                                                          "cell_errors"))
    at = {name: i for i, name in enumerate(sub_columns)}
    next_id = 1
    for number in range(size):
        if rng.random() < MISSING:
            continue
        row = list(seeds[number % len(seeds)])
        old_id = row[at["id"]]
        lms_id = str(10000 + number)
        late_days = rng.choice((1, 2)) if rng.random() < LATE else 0
        submitted = f"2026-11-0{1 + late_days}T20:00:00-05:00"
        values = {"id": next_id, "student": f"canvas:{lms_id}", "source": f"pat_{lms_id}_{assignment_id}.ipynb",
                  "sha256": f"{rng.getrandbits(128):032x}", "name": f"Student{number:04d}, Pat",
                  "submitted_at": submitted, "time_source": "Canvas's submission time", "lms": "canvas",
                  "lms_id": lms_id, "lms_prefix": f"pat_{lms_id}_", "counted": 1}
        for name, value in values.items():
            if name in at:
                row[at[name]] = value
        db.execute(f"INSERT INTO submissions VALUES ({', '.join('?' * len(row))})", row)
        db.executemany(f"INSERT INTO case_results VALUES ({', '.join('?' * len(case_columns))})",
                       [(next_id, *case[1:]) for case in cases[old_id]])
        db.executemany(f"INSERT INTO cell_errors VALUES ({', '.join('?' * len(error_columns))})",
                       [(next_id, *error[1:]) for error in errors[old_id]])
        log = {"assignment": assignment_id, "student": values["student"], "source": values["source"],
               "sha256": values["sha256"], "submitted_at": submitted, "time_source": values["time_source"],
               "graded_at": row[at["graded_at"]], "run_id": row[at["run_id"]], "score": row[at["score"]],
               "max_score": row[at["max_score"]], "status": row[at["status"]]}
        db.execute(f"INSERT INTO grading_log VALUES ({', '.join('?' * len(log_columns))})",
                   [log.get(name) for name in log_columns])
        next_id += 1
    db.commit()
    db.close()


def make_class(course, seeds, size, rng):
    """The roster and every assignment's gradebook of a class of `size`, lateness applied as `grade` does."""
    canvas_roster(course / "roster.csv", size)
    autograder(course, "--quiet", "roster", "import", course / "roster.csv")
    loaded = load_course(course)
    records = CourseRecords(loaded.grades_root / "course.db")
    for assignment_id, seed in seeds.items():
        assignment = load_assignment(loaded, assignment_id)
        out = loaded.grades_dir(assignment_id)
        clone_gradebook(seed, out / "gradebook.db", assignment_id, size, rng)
        book = Gradebook(out / "gradebook.db")
        book.apply_lateness(assignment_id, late_rules(loaded, assignment_id), records, assignment.max_score)
        book.export_csv(assignment_id, out / "grades.csv")
        book.close()
    records.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 1000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--assignment", default="n-queens", help="The assignment `report` and `release` run on.")
    parser.add_argument("--seeds", type=Path, default=None,
                        help="Keep the example classes' gradebooks here, to grade them once over several runs.")
    args = parser.parse_args(argv)
    commands = {
        "report": lambda course, out, n: ("report", "--out", course / "grades" / args.assignment),
        "gradebook": lambda course, out, n: ("gradebook", "--to", out / f"course-{n}"),
        "release": lambda course, out, n: ("release", "--out", course / "grades" / args.assignment,
                                           "--to", out / f"release-{n}"),
    }
    medians = {}
    with tempfile.TemporaryDirectory(prefix="class-reports-") as scratch:
        scratch = Path(scratch)
        seed_course = make_course(scratch / "seed-course")
        print("grading each assignment's example class once (the rows every student's are copied from) ...",
              flush=True)
        seeds = seed_gradebooks(seed_course, args.seeds or scratch / "seed")
        print(f"{'students':>8} {'command':<10} {'median s':>9} {'runs':>5}", flush=True)
        for size in args.sizes:
            course = make_course(scratch / f"course-{size}")
            make_class(course, seeds, size, random.Random(size))
            for name, command in commands.items():
                times = [autograder(course, *command(course, scratch / f"out-{size}", run))
                         for run in range(args.runs)]
                medians[(size, name)] = statistics.median(times)
                print(f"{size:>8} {name:<10} {medians[(size, name)]:>9.2f} {args.runs:>5}", flush=True)
    if len(args.sizes) > 1:
        small, large = min(args.sizes), max(args.sizes)
        for name in commands:
            ratio = medians[(large, name)] / medians[(small, name)]
            print(f"{name}: {large} students take {ratio:.1f} times as long as {small} "
                  f"({large / small:.0f} times as many students)")


if __name__ == "__main__":
    main()
