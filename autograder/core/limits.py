"""Time limits that follow the reference's own timing.

`autograder build` runs the reference notebook and records, in timing.json
beside expected.json, each case's CPU time (the median of REFERENCE_RUNS
runs), the time of the reference's cells, and a calibration of the machine
that built it.  At grading time the machine is calibrated again, and

    a case's limit = max(limit_floor, limit_factor x reference time x machine ratio)

with `limit_floor` and `limit_factor` from cases.toml (0.25 s and 20 when not
given).  A case's `timeout` in cases.toml, or `grade --timeout`, overrides the
rule; a case with no recorded time, or judged against a baseline (`faster_than`),
gets the assignment's `case_timeout`.  The
hand-in's budget follows too: its cells get max(`cell_timeout`, factor x the
reference's cells' time), and each case its own limit, all within
`submission_timeout` (or `--submission-timeout`).  Limits count CPU time (see
engine/sandbox.py), so a loaded machine does not fail slow-but-correct code;
the ratio is never below 1, so a fast machine never tightens them.
"""

import json
import threading

from .calibration import calibrate

REFERENCE_RUNS = 3
DEFAULT_FLOOR = 0.25
DEFAULT_FACTOR = 20.0
_STALE_RATIO = 4.0  # a recorded time this far from a new measurement is out of date


_ratio = {}
_ratio_lock = threading.Lock()


def machine_ratio(timing):
    """How much slower this machine is than the one that recorded `timing` (at least 1)."""
    recorded = (timing or {}).get("calibration")
    if not recorded:
        return 1.0
    with _ratio_lock:
        if "now" not in _ratio:
            _ratio["now"] = calibrate()
        return max(1.0, _ratio["now"] / recorded)


def load_timing(assignment):
    """timing.json of `assignment`, or None when it has none (or it cannot be read)."""
    try:
        data = json.loads(assignment.timing_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if type(data) is dict and type(data.get("cases")) is dict else None


def case_rule(assignment, timing, case, override=None):
    """(floor, scaled) of one case: its limit on a machine `ratio` times slower than the one that built the
    assignment is max(floor, scaled x ratio).  `scaled` is 0 for a fixed limit (`--timeout`, the case's own
    `timeout`, a speed case's or an untimed case's `case_timeout`).  Other engines' exports carry the rule
    itself, so their checks scale it on the machine they run on, as ours does."""
    reference = (timing or {}).get("cases", {}).get(case.name)
    if override:
        return float(override), 0.0
    if case.timeout:
        return float(case.timeout), 0.0
    if case.compare == "faster_than" or type(reference) not in (int, float):
        # A speed case is judged against a baseline, which may be far slower than the reference:
        # a hand-in as slow as the baseline must fail that rule, not time out.
        return float(assignment.case_timeout), 0.0
    return float(assignment.limit_floor), assignment.limit_factor * reference


def case_limits(assignment, timing, ratio, override=None):
    """CPU seconds each case of `assignment` may use, in order."""
    limits = []
    for case in assignment.cases:
        floor, scaled = case_rule(assignment, timing, case, override)
        limits.append(round(max(floor, scaled * ratio), 3) if scaled else floor)
    return limits


def reference_seconds(assignment, timing, ratio):
    """The reference's CPU seconds for each case on this machine, in order; None where not recorded."""
    recorded = (timing or {}).get("cases", {})
    return [round(recorded[c.name] * ratio, 4) if type(recorded.get(c.name)) in (int, float) else None
            for c in assignment.cases]


# Seconds: a cell's limit on a hand-in's first run, when the reference's cells need less.  A cell of what Colab
# has must run to its end on the first run: `%matplotlib inline` with `import matplotlib.pyplot` takes about 1 s
# of CPU from a cold font cache (every worker's is new), pandas 0.25 s more; a looping cell costs this much.
FIRST_CELL_FLOOR = 2.0


def first_cell_limit(assignment, timing, ratio):
    """A cell's CPU limit on a hand-in's first run: what the reference's cells call for, at least FIRST_CELL_FLOOR,
    never more than the generous `cell_timeout`; None when the reference's cells were never timed.

    A hand-in runs again with `cell_timeout` only when a cell was stopped at this limit and it lost points
    (grade/handin.py), so no score depends on it; it only bounds what a cell that never ends costs."""
    cells = (timing or {}).get("cells")
    if type(cells) not in (int, float):
        return None
    return round(min(assignment.cell_timeout, max(FIRST_CELL_FLOOR, assignment.limit_factor * cells * ratio)), 3)


def hand_in_budget(assignment, timing, ratio, limits, cap):
    """Seconds a whole hand-in may take: its cells' allowance plus every case's limit, at most `cap`."""
    cells = (timing or {}).get("cells")
    allowance = assignment.cell_timeout
    if type(cells) in (int, float):
        allowance = max(allowance, assignment.limit_factor * cells * ratio)
    repeats = [case.options.get("repeat", 1) for case in assignment.cases]
    return round(min(cap, allowance + sum(limit * repeat for limit, repeat in zip(limits, repeats))), 3)


def timing_text(assignment, case_seconds, cells_seconds, calibration):
    data = {"assignment": assignment.id,
            "note": "Generated by `autograder build`: the reference's CPU time per case (median of "
                    f"{REFERENCE_RUNS} runs) and a calibration of the machine that built it, in seconds. "
                    "Time limits follow from these (see docs/engines.md).",
            "calibration": round(calibration, 6), "cells": round(cells_seconds, 6),
            "cases": {name: round(seconds, 6) for name, seconds in case_seconds.items()}}
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def timing_is_current(recorded, measured, floor=0.0, factor=1.0):
    """Timings vary run to run: a recorded file stays while it names the same cases and each case's
    time limit from it, max(`floor`, `factor` x its time), is within a factor of the new one's (or both
    times are tiny), so a build does not rewrite it for noise.  A case so fast that the floor sets its
    limit either way (2 ms measured as 12 ms on a loaded machine) changes no limit, no rubric cell and no
    student notebook.  A new measurement is judged by its fastest run where it has one (`measured["fastest"]`):
    other work only ever slows a run, and CI with 3 test workers on 2 cores measured a case's median at 3.9 x
    its recorded time (calibrate keeps the fastest run for the same reason)."""
    if recorded is None or set(recorded["cases"]) != set(measured["cases"]):
        return False
    scale = measured["calibration"] / recorded["calibration"] if recorded.get("calibration") else 1.0
    for name, seconds in measured.get("fastest", measured["cases"]).items():
        old = recorded["cases"][name] * scale
        if max(seconds, old) <= 0.01:
            continue
        old_limit, new_limit = max(floor, factor * old), max(floor, factor * seconds)
        if not (old_limit / _STALE_RATIO <= new_limit <= old_limit * _STALE_RATIO):
            return False
    return True
