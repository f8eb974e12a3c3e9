"""How long `autograder similarity` takes for a class of 200 and of 1,000 hand-ins.

    .venv/bin/python benchmarks/similarity_speed.py                 # 200 and 1,000, 3 runs each
    .venv/bin/python benchmarks/similarity_speed.py --sizes 200 --runs 5

Each class is tests/similarity_class.py's: converging variants of every stub,
personal names, comments and cells, three planted copies.  Its gradebook is
written directly, with each hand-in's code exactly as grading keeps it
(gradebook/code.py) and made-up scores: grading 1,000 hand-ins takes minutes
and is not what is measured.  What is timed is the whole comparison as the
command runs it (compare_class: the code read from the gradebook, the
template left out, fingerprints, weights, every pair ranked), the median of
`--runs` runs, and the page written from it.  The target: under 30 s for
200 hand-ins on 2 cores.
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from autograder.core.assignment import load_assignment  # noqa: E402
from autograder.core.course import load_course  # noqa: E402
from autograder.gradebook import Gradebook  # noqa: E402
from autograder.gradebook.code import code_pieces  # noqa: E402
from autograder.grade.handin import SubmissionResult  # noqa: E402
from autograder.intake import Handin  # noqa: E402
from autograder.intake.cells import read_cells  # noqa: E402
from autograder.similarity import compare_class, write_page  # noqa: E402
from similarity_class import make_class  # noqa: E402

TARGET_SECONDS = 30


def gradebook_of(folder, out, assignment):
    """A gradebook holding every notebook of `folder` with its code, as `grade` would have kept it."""
    out.mkdir(parents=True, exist_ok=True)
    book = Gradebook(out / "gradebook.db")
    run = book.start_run(assignment.id, "benchmark", 1, "none")
    for path in sorted(folder.glob("*.ipynb")):
        handin = Handin(path.stem, path.name, path, None)
        result = SubmissionResult(handin.student, assignment.id, str(path), 5.0, 5.0, "graded",
                                  code=code_pieces(read_cells(path)))
        book.record(run, handin, result, "benchmark")
    book.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    assignment = load_assignment(load_course(ROOT), "n-queens")
    print(f"{'hand-ins':>8} {'pairs':>9} {'median s':>9} {'runs':>5} {'page s':>7} {'pairs/s':>10}", flush=True)
    medians = {}
    with tempfile.TemporaryDirectory() as scratch:
        for size in args.sizes:
            folder = Path(scratch) / str(size)
            make_class(folder / "in", size)
            gradebook_of(folder / "in", folder / "out", assignment)
            times = []
            for _ in range(args.runs):
                started = time.monotonic()
                result = compare_class(assignment, folder / "out")
                times.append(time.monotonic() - started)
            started = time.monotonic()
            write_page(result, folder / "out" / "similarity.html", "benchmark")
            page = time.monotonic() - started
            medians[size] = statistics.median(times)
            print(f"{size + 3:>8} {len(result.pairs):>9} {medians[size]:>9.2f} {args.runs:>5} {page:>7.2f} "
                  f"{len(result.pairs) / medians[size]:>10.0f}", flush=True)
    if len(medians) > 1:
        small, large = min(medians), max(medians)
        print(f"{large + 3} hand-ins take {medians[large] / medians[small]:.1f} times as long as {small + 3} "
              f"({(large + 3) * (large + 2) / ((small + 3) * (small + 2)):.0f} times as many pairs)")
    if 200 in medians:
        verdict = "under" if medians[200] < TARGET_SECONDS else "OVER"
        print(f"200 hand-ins: {medians[200]:.1f} s, {verdict} the {TARGET_SECONDS} s target")


if __name__ == "__main__":
    main()
