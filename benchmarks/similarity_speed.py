"""How long `autograder similarity` takes for a class of 200 and of 1,000 hand-ins, each part and the whole.

    .venv/bin/python benchmarks/similarity_speed.py                 # 200 and 1,000, 3 runs each
    .venv/bin/python benchmarks/similarity_speed.py --sizes 200 --runs 5

Each class is tests/similarity_class.py's: converging variants of every stub,
personal names, comments and cells, three planted copies.  Its gradebook is
written directly, with each hand-in's code exactly as grading keeps it
(gradebook/code.py) and made-up scores: grading 1,000 hand-ins takes minutes
and is not what is measured.

Timed, the median of `--runs` runs each:
  compare   the comparison as the command runs it (compare_class: the code read from the gradebook, the
            template left out, fingerprints, weights, every pair ranked);
  page      similarity.html written from that comparison (write_page);
  json      the page's data as `--json` prints it (SimilarityResult.data, json.dumps);
  command   `autograder similarity` itself, in a fresh process: comparison and page;
  --json    `autograder similarity --json`, in a fresh process: comparison and JSON.
Then, for each part, the ratio between the two class sizes beside the ratio of their pairs: a part that grows
faster than the pairs shows at once.  The targets: the comparison of 200 hand-ins under 30 s, the page of
1,003 under 5 s, and `--json` within 10% of the comparison's own time, on 2 cores.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from autograder.core.assignment import load_assignment  # noqa: E402
from autograder.core.course import load_course  # noqa: E402
from autograder.similarity import compare_class, write_page  # noqa: E402
from similarity_class import gradebook_of, make_class  # noqa: E402

COMPARE_TARGET = 30         # seconds, 200 hand-ins
PAGE_TARGET = 5             # seconds, 1,003 hand-ins
JSON_MARGIN = 0.10          # `--json` over the comparison's own time
PARTS = ("compare", "page", "json", "command", "--json")


def timed(function):
    started = time.monotonic()
    function()
    return time.monotonic() - started


def command(out, *extra):
    done = subprocess.run([sys.executable, "-m", "autograder", "--course", str(ROOT), "similarity",
                           "--assignment", "n-queens", "--out", str(out), *extra],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"autograder similarity {' '.join(extra)} failed: {done.stderr[-2000:]}")


def measure(out, assignment, runs):
    """{part: [seconds of each run]}, and the number of pairs."""
    times = {part: [] for part in PARTS}
    for _ in range(runs):
        holder = {}
        times["compare"].append(timed(lambda: holder.setdefault("result", compare_class(assignment, out))))
        result = holder["result"]
        times["page"].append(timed(lambda: write_page(result, out / "similarity.html", "benchmark")))
        times["json"].append(timed(lambda: json.dumps(result.data(), indent=1)))
        times["command"].append(timed(lambda: command(out)))
        times["--json"].append(timed(lambda: command(out, "--json")))
    return {part: statistics.median(values) for part, values in times.items()}, len(result.pairs)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    assignment = load_assignment(load_course(ROOT), "n-queens")
    print(f"{'hand-ins':>8} {'pairs':>9} {'runs':>5} " + " ".join(f"{p + ' s':>10}" for p in PARTS)
          + f" {'pairs/s':>9}", flush=True)
    medians, pairs = {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        for size in args.sizes:
            folder = Path(scratch) / str(size)
            make_class(folder / "in", size)
            gradebook_of(folder / "in", folder / "out", assignment)
            medians[size], pairs[size] = measure(folder / "out", assignment, args.runs)
            m = medians[size]
            print(f"{size + 3:>8} {pairs[size]:>9} {args.runs:>5} " + " ".join(f"{m[p]:>10.2f}" for p in PARTS)
                  + f" {pairs[size] / m['compare']:>9.0f}", flush=True)
    if len(medians) > 1:
        small, large = min(medians), max(medians)
        print(f"{large + 3} hand-ins against {small + 3}: {pairs[large] / pairs[small]:.1f} times as many pairs; "
              "each part takes " + ", ".join(f"{p} {medians[large][p] / medians[small][p]:.1f}" for p in PARTS)
              + " times as long")
    for size, m in sorted(medians.items()):
        over = m["--json"] / m["compare"] - 1
        print(f"{size + 3} hand-ins: comparison {m['compare']:.2f} s, page {m['page']:.2f} s, `similarity --json` "
              f"{m['--json']:.2f} s ({over:+.0%} over the comparison, target within {JSON_MARGIN:.0%}: "
              f"{'met' if over <= JSON_MARGIN else 'MISSED'})")
    if 200 in medians:
        verdict = "under" if medians[200]["compare"] < COMPARE_TARGET else "OVER"
        print(f"203 hand-ins: comparison {medians[200]['compare']:.1f} s, {verdict} the {COMPARE_TARGET} s target")
    if 1000 in medians:
        verdict = "under" if medians[1000]["page"] < PAGE_TARGET else "OVER"
        print(f"1003 hand-ins: page {medians[1000]['page']:.2f} s, {verdict} the {PAGE_TARGET} s target")


if __name__ == "__main__":
    main()
