"""Intake of a large class: seconds and peak memory to turn LMS downloads into hand-ins, before any grading.

    .venv/bin/python benchmarks/intake.py              # 1000 students in a Canvas zip and a Moodle zip
    .venv/bin/python benchmarks/intake.py --n 3000

Builds a Canvas "Download Submissions" zip and a Moodle "Download all
submissions" zip of --n students each (copies of the example notebooks, a
__MACOSX resource fork beside every Moodle file), then times collect() on
each (unpacking, naming, reading and hashing every file, the metadata check)
and the gradebook's per-hand-in checks (is it graded already?) against a
gradebook that holds the class.  Target: well under a second per 100 hand-ins,
and memory that does not grow with the class (files are read one at a time).
"""

import argparse
import resource
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.gradebook import Gradebook  # noqa: E402
from autograder.grade.handin import SubmissionResult  # noqa: E402
from autograder.intake import IntakeOptions, collect  # noqa: E402

EXAMPLES = sorted((ROOT / "examples" / "n-queens" / "submissions").glob("*.ipynb"))


def canvas_zip(path, n):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle:
        for i in range(n):
            late = "_LATE" if i % 7 == 0 else ""
            bundle.writestr(f"student{i:05d}{late}_{10000 + i}_{90000 + i}_n-queens.ipynb",
                            EXAMPLES[i % len(EXAMPLES)].read_bytes())
    return path


def moodle_zip(path, n):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle:
        for i in range(n):
            folder = f"Student {i:05d}_{50000 + i}_assignsubmission_file_"
            bundle.writestr(f"{folder}/n-queens.ipynb", EXAMPLES[i % len(EXAMPLES)].read_bytes())
            bundle.writestr(f"__MACOSX/{folder}/._n-queens.ipynb", b"\0\5\26\7 resource fork")
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="students per zip")
    args = parser.parse_args(argv)
    if not EXAMPLES:
        raise SystemExit(f"no example notebooks in {ROOT / 'examples' / 'n-queens' / 'submissions'} to copy")
    options = IntakeOptions("n-queens", "n-queens.ipynb")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        for label, make in (("Canvas", canvas_zip), ("Moodle", moodle_zip)):
            archive = make(scratch / f"{label}.zip", args.n)
            start = time.perf_counter()
            intake = collect([archive], scratch / f"{label}-out" / "handins", options)
            collected = time.perf_counter() - start
            assert len({h.student for h in intake.handins}) == args.n, "a student was lost or merged"
            gradebook = Gradebook(scratch / f"{label}-out" / "gradebook.db")
            run = gradebook.start_run("n-queens", "benchmark", 1, "none")
            for handin in intake.handins:
                gradebook.record(run, handin, SubmissionResult(handin.student, "n-queens", handin.source, 5.0, 5.0,
                                                               "graded"), "key")
            start = time.perf_counter()
            for handin in intake.handins:
                gradebook.adopt("n-queens", handin)
                assert gradebook.is_graded("n-queens", handin, "key")
            checked = time.perf_counter() - start
            gradebook.close()
            print(f"{label}: {args.n} students: intake {collected:.2f} s ({100 * collected / args.n:.3f} s per 100), "
                  f"gradebook checks {checked:.2f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of this process: {peak:.0f} MB")


if __name__ == "__main__":
    main()
