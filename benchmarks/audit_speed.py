"""How fast the audit grades mutants, next to how fast the grader grades hand-ins.

    .venv/bin/python benchmarks/audit_speed.py              # all four assignments, 2 slots
    .venv/bin/python benchmarks/audit_speed.py --jobs 2 --assignment n-queens
    .venv/bin/python benchmarks/audit_speed.py --course DIR   # another course (its examples/<id>/submissions)

For each assignment: the whole audit's time (reference runs, stubs, mutants),
mutants graded per second, and, with the same sandbox and slots, the example
class (examples/<id>/submissions) graded hand-in by hand-in as `grade` does,
in hand-ins per second.  A mutant usually stops at its first failing case, so
it costs less than a hand-in; a survivor costs a whole hand-in.  The target:
all four audits together in under 2 minutes on 2 cores (CI runs them).
"""

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.core.assignment import load_assignment  # noqa: E402
from autograder.audit import measure  # noqa: E402
from autograder.audit.trials import Trials  # noqa: E402
from autograder.core.course import load_course  # noqa: E402
from autograder.engine.sandbox import Sandbox  # noqa: E402

TARGET_SECONDS = 120


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assignment", action="append", help="repeatable; default: all")
    parser.add_argument("--jobs", type=int, default=2, help="grading slots (default 2, as on CI)")
    parser.add_argument("--course", type=Path, default=ROOT, help="the course folder (default: this checkout)")
    args = parser.parse_args(argv)
    course = load_course(args.course)
    ids = args.assignment or course.assignment_ids()
    classes = {assignment_id: course.root / "examples" / assignment_id / "submissions" for assignment_id in ids}
    missing = [str(folder) for folder in classes.values() if not folder.is_dir()]
    if missing:
        raise SystemExit(f"no example class to grade beside the audit: {', '.join(missing)}")
    print(f"{'assignment':<18} {'mutants':>7} {'audit s':>8} {'mutants/s':>10} {'hand-ins':>8} {'hand-ins/s':>11}",
          flush=True)
    total = 0.0
    with Sandbox() as sandbox:
        for assignment_id in ids:
            assignment = load_assignment(course, assignment_id)
            result = measure(assignment, sandbox, args.jobs)
            total += result.seconds
            handins = sorted(classes[assignment_id].iterdir())
            trials = Trials(assignment, assignment.load_expected(), sandbox, args.jobs)
            started = time.monotonic()
            trials.map(trials.grade_file, handins)
            grading = time.monotonic() - started
            print(f"{assignment_id:<18} {len(result.mutants):>7} {result.seconds:>8.1f} "
                  f"{len(result.mutants) / result.mutant_seconds:>10.1f} {len(handins):>8} "
                  f"{len(handins) / grading:>11.1f}", flush=True)
    verdict = "within" if total < TARGET_SECONDS else "OVER"
    print(f"all audits: {total:.1f} s with {args.jobs} slots ({verdict} the {TARGET_SECONDS} s target)")
    return 0 if total < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
