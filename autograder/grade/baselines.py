"""Time the baselines of speed cases ("faster_than") in a clean worker.

The baseline runs in a worker that has executed the reference notebook and
nothing else, so a submission cannot slow its own yardstick down (by patching
builtins, say).  Times are taken by the grader around each request, once per
grading process, on the same machine as the submissions' calls.
"""

import threading

from ..engine import Call, run
from ..core.assignment import AssignmentError
from ..core.calls import parse_call
from ..notebook.student_notebook import executable_reference, read_reference

_measured = {}
_lock = threading.Lock()


def speed_cases(assignment):
    return [c for c in assignment.cases if c.compare == "faster_than"]


def baseline_seconds(assignment, sandbox, slot=0):
    """{case name: fastest baseline time in seconds} for the assignment's speed cases."""
    cases = speed_cases(assignment)
    if not cases:
        return {}
    # Keyed by the files, not the id: two courses may both have an assignment "squares".
    key = (str(assignment.solution_path.resolve()), assignment.grader_key(assignment.settings()))
    with _lock:
        if key not in _measured:
            _measured[key] = _measure(assignment, cases, sandbox, slot)
        return _measured[key]


def _measure(assignment, cases, sandbox, slot):
    notebook = executable_reference(read_reference(assignment), assignment)
    cells = [c.source for c in notebook.cells
             if c.cell_type == "code" and not set(c.metadata.get("tags", [])) & set(assignment.skip_tags)]
    calls = [Call.of(parse_call(c.options["baseline"]).encoded(), repeat=c.options.get("repeat", 1), timed=True)
             for c in cases]
    timeouts = [10 * (c.timeout or assignment.case_timeout) for c in cases]
    outcome = run(sandbox, slot, cells, calls, timeouts, assignment.cell_timeout, assignment.budget)
    times = {}
    for case, result in zip(cases, outcome.calls):
        if result.status != "ok":
            raise AssignmentError(f"{assignment.id}: the baseline {case.options['baseline']!r} of "
                                  f"{case.name!r} fails in the reference: {result.message}")
        times[case.name] = result.seconds
    return times
