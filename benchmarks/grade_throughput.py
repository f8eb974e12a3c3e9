"""Hand-ins graded per second: ours vs nbgrader vs otter-grader, on one synthetic class.

    .venv/bin/python benchmarks/grade_throughput.py                     # 200 hand-ins, all three
    .venv/bin/python benchmarks/grade_throughput.py --n 200 --tools ours,nbgrader,otter \
        --subset 20 --otter-via api --repeat 3
    .venv/bin/python benchmarks/grade_throughput.py --tools ours --layers all   # every isolation layer
    .venv/bin/python benchmarks/grade_throughput.py --tools ours --tuned 0.1,10  # cheaper loopers, same scores?

The class: --n copies of the example class's notebooks (examples/<id>/submissions),
each made distinct (a comment with its number in its first code cell), named
s001-alice, s002-bob, ...  Ours and nbgrader grade the class as it is; only
otter is given the class without the hand-ins it cannot finish (it has no cell
time limit, so a top-level `while True` never ends: see EXCLUDED_STUDENTS in
benchmarks/engines.py), and the output says which.  Whatever else a peer spends
more than --notebook-limit seconds on (wall clock) is stopped there, and its
table counts it under "did not finish".

ours:      `autograder grade --jobs J --out DIR CLASS`
nbgrader:  `nbgrader autograde` in the nbgrader export's course folder (one command)
otter:     `otter run` per notebook (J at a time), or otter's Python API in one process
           (`--otter-via api`); `otter grade` needs Docker.

The class includes the example students whose code never ends, as real classes do:
functions that loop (n-queens: ivan, status `timeout`) and a top-level cell that
never ends after correct functions (peggy: a cell stopped at its limit).  Ours is
timed on the class as it is, without any looper, and with each kind alone, from
which it prints what each kind does to the class (a ratio) and what one looper of
each kind costs, in honest hand-ins' time; and the physical limit: the student
code's own time plus the limits the loopers must be given, over the cores.

`--layers` grades the class (its loopers left out) once more per isolation
layer, and prints each one's speed and grader overhead side by side; as root
that includes root without CAP_SYS_ADMIN (setpriv), where the namespaces come
from an unprivileged user namespace as they do for an ordinary user.

nbgrader and otter cost seconds per notebook, so by default they grade only
--subset hand-ins (the first ones of the class) and the time for all --n is
extrapolated from that (the output says so).  Each timing is repeated --repeat
times and the median reported.  Scores are checked against ours, student by student.
The tools are installed into their throwaway venvs (.venv-otter, .venv-nbgrader)
if they are not there yet, without rfc3987-syntax (autograder/export/tools.py, LEFT_OUT):
each nbgrader command starts about 1.6 CPU-s sooner than in an instructor's own
install, which has it, so nbgrader's figures here are that much lower.
"""

import argparse
import atexit
import contextlib
import copy
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.core.assignment import load_assignment  # noqa: E402
from autograder.core.course import load_course  # noqa: E402
from autograder.export import handins, tools  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
import engines  # noqa: E402  (the harness beside this script)
from engines import EXCLUDED_STUDENTS  # noqa: E402


def build_class(assignment, n, folder, without=()):
    """n distinct hand-ins cycling through the example class; returns their paths."""
    examples = sorted((ROOT / "examples" / assignment.id / "submissions").iterdir())
    unknown = set(without) - {path.stem for path in examples}
    if unknown:     # a misspelt name would measure the class with that student in it
        raise SystemExit(f"--without: {', '.join(sorted(unknown))}: no such example student of {assignment.id}")
    usable = [path for path in examples if path.stem not in without]
    if not usable:
        raise SystemExit(f"{assignment.id} has no example class to copy")
    folder.mkdir(parents=True)
    paths = []
    for number in range(1, n + 1):
        source = usable[(number - 1) % len(usable)]
        target = folder / f"s{number:03d}-{source.stem}{source.suffix}"
        if source.suffix == ".ipynb":
            try:
                notebook = handins.read_handin(source)
            except handins.SubmissionError:
                shutil.copy(source, target)      # broken on purpose (bad JSON, empty): keep it so
            else:
                notebook = copy.deepcopy(notebook)
                first = next((c for c in notebook.cells if c.cell_type == "code"), None)
                if first is not None:
                    first.source = f"# hand-in {number}\n" + first.source
                nbformat.write(notebook, target)
        else:
            target.write_text(f"# hand-in {number}\n" + source.read_text(encoding="utf-8"), encoding="utf-8")
        paths.append(target)
    return paths


PEAKS = {}  # label -> the largest peak memory of its runs, in MB (ours only)


def measure(label, repeat, run):
    """Run `run(attempt)` `repeat` times; return (median seconds, graded count, verdicts, did not finish)."""
    timings, verdicts = [], None
    for attempt in range(repeat):
        timing = engines.Timing()
        verdicts = run(attempt, timing)
        timings.append(timing)
        memory = f", peak memory {timing.peak_mb:.0f} MB" if timing.peak_mb else ""
        stopped = (f"; did not finish within the limit: {', '.join(timing.did_not_finish)}"
                   if timing.did_not_finish else "")
        print(f"  {label} run {attempt + 1}/{repeat}: {timing.graded} graded in {timing.seconds:.1f} s "
              f"({timing.commands} command(s){memory}){stopped}", flush=True)
    PEAKS[label] = max(t.peak_mb for t in timings)
    return (statistics.median(t.seconds for t in timings), timings[-1].graded, verdicts,
            len(timings[-1].did_not_finish))


def overhead(gradebook):
    """The grader's own time per hand-in: wall time in the sandbox minus the student's code time.

    (median ms, 90th percentile ms, hand-ins, student code median ms), or None.
    """
    with sqlite3.connect(gradebook) as db:
        rows = db.execute("SELECT seconds, student_seconds FROM submissions WHERE status != 'invalid-notebook' "
                          "AND status != 'empty' AND student_seconds IS NOT NULL").fetchall()
    if not rows:
        return None
    spent = sorted((wall - student) * 1000 for wall, student in rows)
    return (statistics.median(spent), spent[int(0.9 * (len(spent) - 1))], len(rows),
            statistics.median(s for _, s in rows) * 1000)


def print_overhead(gradebook):
    figures = overhead(gradebook)
    if figures:
        median, p90, count, student = figures
        print(f"  ours: grader overhead per hand-in beyond the student's code: median {median:.1f} ms, "
              f"90th percentile {p90:.1f} ms ({count} hand-ins; student code median {student:.0f} ms)", flush=True)


def sandbox_start(work, isolation, repeat):
    """The sandbox's start, from asking for it to its first zygote's word that it is ready (the preloads, the
    layers' probe): (median ms, the layer).  A class run pays it once."""
    from autograder.engine.sandbox import Sandbox
    import time

    timings, layer = [], None
    for attempt in range(max(3, repeat)):
        started = time.perf_counter()
        sandbox = Sandbox(workdir=work, isolation=isolation)
        timings.append((time.perf_counter() - started) * 1000)
        layer = sandbox.isolation
        sandbox.close()
    return statistics.median(timings), layer


def layer_of(gradebook):
    with sqlite3.connect(gradebook) as db:
        return db.execute("SELECT isolation FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0]


# --layers: each isolation layer, and how it is reached (a command to run the grader under).
# "namespaces-userns" is root without CAP_SYS_ADMIN, as Docker and Gradescope run containers:
# the namespaces then come from an unprivileged user namespace, the path an ordinary user takes.
LAYER_RUNS = {
    "namespaces": ("namespaces", ()),
    "namespaces-userns": ("namespaces", ("setpriv", "--bounding-set", "-sys_admin", "--")),
    "users": ("users", ()),
    "landlock": ("landlock", ()),
    "none": ("none", ()),
}


def compare_layers(names, course, assignment, paths, work, jobs, repeat):
    """Grade the class once per layer (median of `repeat`); print speed and overhead side by side."""
    rows = []
    for name in names:
        layer, prefix = LAYER_RUNS[name]
        if (prefix or layer == "users") and os.geteuid() != 0:
            print(f"  layer {name}: skipped (needs root)", flush=True)
            continue
        try:
            seconds, graded, _, _ = measure(
                f"ours, layer {name}", repeat, lambda attempt, timing: engines.grade_ours(
                    course, assignment, paths, work / f"layer-{name}-{attempt}", jobs=jobs, timing=timing,
                    isolation=layer, prefix=prefix))
        except RuntimeError as error:
            print(f"  layer {name}: not available here ({str(error).strip().splitlines()[-1][:200]})", flush=True)
            continue
        gradebook = work / f"layer-{name}-{repeat - 1}" / "gradebook.db"
        start = sandbox_start(work, layer, repeat)[0] if not prefix else float("nan")
        rows.append((name, layer_of(gradebook), graded / seconds, overhead(gradebook), start))
    print()
    print(f"{'layer':<18} {'recorded as':<12} {'per second':>10} {'overhead median':>16} {'90th pct':>9} "
          f"{'start':>8}")
    for name, recorded, rate, figures, start in rows:
        median, p90, _, _ = figures or (float("nan"),) * 4
        print(f"{name:<18} {recorded:<12} {rate:>10.2f} {median:>13.1f} ms {p90:>6.1f} ms {start:>5.0f} ms")
    print()


def growth(course, assignment, paths, seconds, work, args):
    """A tenth of the class graded too: the time per hand-in and the memory should not grow with the class."""
    part = paths[:len(paths) // 10]
    part_seconds, _, _, _ = measure(f"ours, the first {len(part)} of the class", args.repeat,
                                 lambda attempt, timing: engines.grade_ours(
                                     course, assignment, part, work / f"ours-tenth-{attempt}", jobs=args.jobs,
                                     timing=timing, isolation=args.isolation))
    whole, tenth = PEAKS["ours"], PEAKS[f"ours, the first {len(part)} of the class"]
    small, large = part_seconds / len(part), seconds / len(paths)
    print(f"  as the class grows from {len(part)} to {len(paths)}: {small * 1000:.0f} ms -> "
          f"{large * 1000:.0f} ms per hand-in ({large / small:.2f}x), "
          f"peak memory {tenth:.0f} MB -> {whole:.0f} MB ({whole / tenth:.2f}x)", flush=True)


def physical_limit(gradebook, jobs):
    """(hand-ins per second no grader could beat, seconds of student code, seconds of looper limits).

    Every hand-in needs its own code's time; a case that times out needs its whole
    limit (the message says it: "no result within N s").  All of it over `jobs` cores.
    """
    with sqlite3.connect(gradebook) as db:
        handins = db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
        code = db.execute("SELECT COALESCE(SUM(student_seconds), 0) FROM submissions "
                          "WHERE status != 'timeout'").fetchone()[0]
        looper_code = db.execute("SELECT COALESCE(SUM(c.seconds), 0) FROM case_results c JOIN submissions s "
                                 "ON s.id = c.submission_id WHERE s.status = 'timeout' AND c.status != 'timeout'"
                                 ).fetchone()[0]
        messages = db.execute("SELECT message FROM case_results WHERE status = 'timeout' "
                              "AND message LIKE 'no result within %'").fetchall()
    limits = sum(float(m.removeprefix("no result within ").split(" s", 1)[0]) for (m,) in messages)
    seconds = (code + looper_code + limits) / jobs
    return (handins / seconds if seconds else float("inf")), code + looper_code, limits


def example_of(path_or_student):
    """The example student a hand-in of the class was copied from (s014-peggy -> peggy)."""
    return Path(str(path_or_student)).stem.split("-", 1)[-1]


def for_tool(tool, assignment, paths):
    """The class a peer grades: all of it, but what it cannot finish (printed, with why)."""
    left_out = {example_of(p) for p in paths if (tool, assignment.id, example_of(p)) in EXCLUDED_STUDENTS}
    for student in sorted(left_out):
        print(f"  {tool}: leaving {student}'s copies out of its class: "
              f"{EXCLUDED_STUDENTS[(tool, assignment.id, student)]}", flush=True)
    return [p for p in paths if example_of(p) not in left_out]


def looper_kinds(gradebook):
    """{kind: example students} of the hand-ins that loop: functions that never return (a case timed
    out), and a cell that never ends (stopped at its limit) after functions that do."""
    with sqlite3.connect(gradebook) as db:
        timed_out = {s for (s,) in db.execute("SELECT student FROM submissions WHERE status = 'timeout'")}
        stopped = {s for (s,) in db.execute(
            "SELECT DISTINCT s.student FROM submissions s JOIN cell_errors e ON e.submission_id = s.id "
            "WHERE e.error LIKE '%time limit%' OR e.error LIKE 'stopped after%'")}
    kinds = {"functions that loop": {example_of(s) for s in timed_out},
             "a cell that never ends": {example_of(s) for s in stopped - timed_out}}
    return {kind: students for kind, students in kinds.items() if students}


def cost_of_loopers(seconds_of, paths, kinds):
    """Print each kind of looper's cost, from the class's timings: `seconds_of(paths)` grades a class."""
    loopers = set().union(*kinds.values())
    calm = [p for p in paths if example_of(p) not in loopers]
    base = seconds_of("no loopers", calm)
    honest = base / len(calm)
    lines = []
    for kind, students in kinds.items():
        part = [p for p in paths if example_of(p) not in loopers or example_of(p) in students]
        extra = seconds_of(kind, part) - base
        count = len(part) - len(calm)
        lines.append(f"  one hand-in with {kind} ({', '.join(sorted(students))}; {count} in the class) costs "
                     f"{extra / count:.2f} s, {extra / count / honest:.1f} honest hand-ins' time")
    every = seconds_of("every looper", paths)
    print(f"\n  the class with every looper ({len(paths) - len(calm)} of {len(paths)}) costs "
          f"{every / base:.2f}x the class without them ({every:.1f} s against {base:.1f} s; "
          f"an honest hand-in {honest * 1000:.0f} ms)")
    print("\n".join(lines), flush=True)
    return every / base


def agreement(ours, theirs):
    """(students who agree, disagreements, students the peer did not finish), of those both graded."""
    same, differ, stopped = 0, [], []
    for student, verdict in sorted(theirs.items()):
        mine = ours.get(student)
        if mine is None:
            continue
        if verdict.status == engines.DID_NOT_FINISH:
            stopped.append(student)
            continue
        a, b = mine.score(), verdict.score()
        if b is None and a == 0:
            same += 1
        elif b is not None and abs(a - b) <= 0.01:
            same += 1
        else:
            differ.append(f"{student}: ours {a}, theirs {b}")
    return same, differ, stopped


@contextlib.contextmanager
def course_modes_kept(course):
    """The users layer makes the course folder private to its owner, for good (see README, Security):
    a benchmark must leave the checkout as it found it."""
    modes = {}
    for folder, subfolders, files in os.walk(course.root):
        # What is not walked into (.git, the venvs) is still recorded itself: the layer makes it private too.
        skipped = [d for d in subfolders if d in (".git", "__pycache__") or d.startswith(".venv")]
        subfolders[:] = [d for d in subfolders if d not in skipped]
        for path in [folder, *(os.path.join(folder, f) for f in (*files, *skipped))]:
            try:
                modes[path] = os.lstat(path).st_mode & 0o7777
            except OSError:
                pass
    try:
        yield
    finally:
        for path, mode in modes.items():
            try:
                if not os.path.islink(path):
                    os.chmod(path, mode)
            except OSError:
                pass


def _figure(value, width, places):
    return "-".rjust(width) if value != value else f"{value:>{width}.{places}f}"     # NaN: nothing was graded


def main(argv=None):
    course = load_course(ROOT)
    with course_modes_kept(course):
        return _main(course, argv)


def _main(course, argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assignment", default="n-queens")
    parser.add_argument("--n", type=int, default=200, help="hand-ins in the class (default 200)")
    parser.add_argument("--tools", default="ours,nbgrader,otter", help="comma-separated: ours,nbgrader,otter")
    parser.add_argument("--subset", type=int, default=20,
                        help="hand-ins nbgrader and otter really grade; the rest is extrapolated "
                             "(0: grade all --n with them too)")
    parser.add_argument("--otter-via", choices=("run", "api"), default="run",
                        help="`otter run` per notebook (default) or otter's Python API")
    parser.add_argument("--jobs", type=int, default=2, help="hand-ins at once, for ours and `otter run`")
    parser.add_argument("--repeat", type=int, default=1, help="repeat each timing; medians are reported")
    parser.add_argument("--isolation", default="auto",
                        help="the isolation layer ours grades with (auto: the strongest that works here)")
    parser.add_argument("--layers", default="", metavar="LAYERS",
                        help="also grade the class (without its loopers) once per isolation layer and print "
                             f"speed and overhead side by side: comma-separated of {', '.join(LAYER_RUNS)}, or all")
    parser.add_argument("--tuned", default="", metavar="FLOOR,FACTOR",
                        help="also grade the class with these limit terms (grade --limit-floor, --limit-factor) "
                             "and print what the loopers then cost, beside the defaults")
    parser.add_argument("--notebook-limit", type=float, default=engines.NOTEBOOK_LIMIT, metavar="SECONDS",
                        help="wall-clock seconds nbgrader or otter may spend on one notebook; one that takes "
                             f"longer is stopped and counted as 'did not finish' (default {engines.NOTEBOOK_LIMIT:g})")
    parser.add_argument("--keep", type=Path, default=None, help="keep the class and the outputs here")
    parser.add_argument("--without", default="", metavar="STUDENTS",
                        help="comma-separated example students to leave out of the class (by default the "
                             "class is graded as it is, looping students included)")
    args = parser.parse_args(argv)
    wanted = [t.strip() for t in args.tools.split(",") if t.strip()]
    layers = list(LAYER_RUNS) if args.layers == "all" else [t.strip() for t in args.layers.split(",") if t.strip()]
    if set(layers) - set(LAYER_RUNS):
        parser.error(f"unknown layer(s): {', '.join(sorted(set(layers) - set(LAYER_RUNS)))}")
    unknown = set(wanted) - {"ours", "nbgrader", "otter"}
    if unknown:
        parser.error(f"unknown tool(s): {', '.join(sorted(unknown))}")

    assignment = load_assignment(course, args.assignment)
    for tool in ("otter", "nbgrader"):
        if tool in wanted:
            try:
                tools.executable(tool, ROOT)
            except tools.ToolError:
                print(f"installing {tool} into {tools.venv_dir(tool, ROOT)} ...", flush=True)
                tools.install(tool, ROOT)

    work = args.keep or Path(tempfile.mkdtemp(prefix="grade-throughput-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.keep is None:
        # At exit, however the run ends (an unknown --without student, a tool that failed): the folder holds the
        # class and every tool's output, and a failed run used to leave it in /tmp.
        atexit.register(shutil.rmtree, work, ignore_errors=True)
    # mkdtemp's folder is its owner's alone; as root without CAP_SYS_ADMIN the worker is a slot's own user id
    # before it makes its namespaces, and must reach the sandbox folder under --out (o+x: nothing becomes listable).
    work.chmod(work.stat().st_mode | 0o011)
    paths = build_class(assignment, args.n, work / "class", {w.strip() for w in args.without.split(",") if w.strip()})
    subset = paths if args.subset <= 0 else paths[:min(args.subset, len(paths))]
    print(f"class: {len(paths)} hand-ins of {assignment.id} in {work / 'class'} "
          f"(copies of {len({p.stem.split('-', 1)[1] for p in paths})} example hand-ins)", flush=True)

    rows, verdicts, looping, calm = {}, {}, set(), paths
    if "ours" in wanted:
        seconds, graded, verdicts["ours"], _ = measure(
            "ours", args.repeat, lambda attempt, timing: engines.grade_ours(
                course, assignment, paths, work / f"ours-{attempt}", jobs=args.jobs, timing=timing,
                isolation=args.isolation))
        rows["ours"] = (seconds, graded, len(paths), 0)
        gradebook = work / f"ours-{args.repeat - 1}" / "gradebook.db"
        print(f"  ours ran with the '{layer_of(gradebook)}' isolation layer", flush=True)
        start, layer = sandbox_start(work, args.isolation, args.repeat)
        print(f"  ours: the sandbox ({layer}) starts in a median {start:.0f} ms", flush=True)
        print_overhead(gradebook)
        ideal, code, limits = physical_limit(gradebook, args.jobs)
        kinds = looper_kinds(gradebook)
        looping = set().union(*kinds.values()) if kinds else set()
        calm = [p for p in paths if example_of(p) not in looping]
        if kinds:
            timed = {"every looper": seconds}

            def seconds_of(label, part):
                if label not in timed:
                    timed[label], _, found, _ = measure(
                        f"ours, the class with {label}", args.repeat, lambda attempt, timing: engines.grade_ours(
                            course, assignment, part, work / f"ours-{len(timed)}-{attempt}", jobs=args.jobs,
                            timing=timing, isolation=args.isolation))
                    if label == "no loopers":
                        verdicts["ours (no loopers)"] = found
                        rows["ours (no loopers)"] = (timed[label], len(found), len(part), 0)
                return timed[label]

            cost_of_loopers(seconds_of, paths, kinds)
        print(f"  physical limit with --jobs {args.jobs}: {ideal:.2f} hand-ins/s (student code {code:.1f} s + the "
              f"limits the loopers must be given {limits:.1f} s, over {args.jobs} cores); ours reaches "
              f"{(graded / seconds) / ideal:.0%} of it", flush=True)
        if args.tuned:
            floor, factor = (float(x) for x in args.tuned.split(","))
            tuned_seconds, tuned_graded, tuned, _ = measure(
                f"ours, limit floor {floor:g} s and factor {factor:g}", args.repeat,
                lambda attempt, timing: engines.grade_ours(
                    course, assignment, paths, work / f"ours-tuned-{attempt}", jobs=args.jobs, timing=timing,
                    isolation=args.isolation, options=("--limit-floor", str(floor), "--limit-factor", str(factor))))
            tuned_ideal, _, tuned_limits = physical_limit(work / f"ours-tuned-{args.repeat - 1}" / "gradebook.db",
                                                          args.jobs)
            changed = [s for s, v in tuned.items() if s.split("-", 1)[1] not in looping
                       and abs(v.score() - verdicts["ours"][s].score()) > 0.01]
            print(f"  ours with limit floor {floor:g} s and factor {factor:g}: {tuned_graded / tuned_seconds:.2f} "
                  f"hand-ins/s ({tuned_graded} in {tuned_seconds:.1f} s); the loopers' limits {tuned_limits:.1f} s "
                  f"(physical limit {tuned_ideal:.2f} hand-ins/s); students who do not loop whose score changed: "
                  f"{len(changed)}" + (f" ({', '.join(changed[:5])})" if changed else ""), flush=True)
        if len(paths) >= 1000:
            growth(course, assignment, paths, seconds, work, args)
        if layers:
            compare_layers(layers, course, assignment, calm, work, args.jobs, args.repeat)
    # nbgrader and otter grade the same subset, and (when the class has loopers) that subset
    # without them too, so each ratio compares like with like.
    subsets = [("", subset)]
    if looping:
        subsets.append((" (no loopers)", [p for p in subset if example_of(p) not in looping]))
    for suffix, class_part in subsets:
        share = len(paths) if not suffix else len(calm)
        if "nbgrader" in wanted:
            nbgrader_part = for_tool("nbgrader", assignment, class_part)
            seconds, graded, verdicts["nbgrader" + suffix], stopped = measure(
                "nbgrader" + suffix, args.repeat, lambda attempt, timing: engines.grade_nbgrader(
                    course, assignment, nbgrader_part, work / f"nbgrader{suffix.strip()}-{attempt}", timing=timing,
                    limit=args.notebook_limit))
            rows["nbgrader" + suffix] = (seconds, graded, share, stopped)
        if "otter" in wanted:
            otter_part = for_tool("otter", assignment, class_part)
            left_out = "" if len(otter_part) == len(class_part) else ", without what it cannot finish"
            label = f"otter{suffix} ({'otter run' if args.otter_via == 'run' else 'Python API'}{left_out})"
            seconds, graded, verdicts["otter" + suffix], stopped = measure(
                label, args.repeat, lambda attempt, timing: engines.grade_otter(
                    course, assignment, otter_part, work / f"otter{suffix.strip()}-{attempt}", jobs=args.jobs,
                    via=args.otter_via, timing=timing, limit=args.notebook_limit))
            rows["otter" + suffix] = (seconds, graded, share, stopped)

    print()
    print(f"{'tool':<22} {'graded':>7} {'did not finish':>15} {'seconds':>9} {'per second':>11}   "
          "time for the class")
    rates = {}
    for tool, (seconds, graded, total, stopped) in rows.items():
        rate = graded / seconds if seconds and graded else float("nan")
        rates[tool] = rate
        note = "measured" if graded + stopped == total else f"extrapolated from {graded + stopped}"
        if stopped:
            note += f"; each notebook that did not finish counts its {args.notebook_limit:g} s"
        whole = total * seconds / (graded + stopped) if graded + stopped else float("nan")
        print(f"{tool:<22} {graded:>7} {stopped:>15} {seconds:>9.1f} {_figure(rate, 11, 2)}   "
              f"{_figure(whole, 8, 1)} s for {total} ({note})")
    for suffix, _ in subsets:
        if "ours" + suffix in rates:
            for tool in ("nbgrader", "otter"):
                if tool + suffix in rates and rates[tool + suffix] == rates[tool + suffix]:    # (not NaN)
                    print(f"ours is {rates['ours' + suffix] / rates[tool + suffix]:.1f}x faster than {tool}"
                          f"{suffix or (' (loopers included)' if looping else '')} (hand-ins per second; "
                          f"ours with --jobs {args.jobs})")
    exit_code = 0
    for suffix, _ in subsets:
        if "ours" + suffix in verdicts:
            for tool in ("nbgrader", "otter"):
                if tool + suffix in verdicts:
                    same, differ, stopped = agreement(verdicts["ours" + suffix], verdicts[tool + suffix])
                    print(f"scores{suffix}: {tool} agrees with ours on {same}/{same + len(differ)} hand-ins"
                          + (f" ({len(stopped)} did not finish, not compared: {', '.join(stopped[:5])})"
                             if stopped else "") + ("" if not differ else ": " + "; ".join(differ[:5])))
                    exit_code = exit_code or (1 if differ else 0)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
