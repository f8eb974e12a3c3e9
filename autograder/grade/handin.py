"""Grade one hand-in: read it, run it in a sandbox, score every case."""

import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import baselines, scoring
from ..engine import Call, Sandbox, run
from ..gradebook.code import code_pieces
from ..intake.cells import SubmissionError, read_cells

# A hand-in's status says why it did not run to a verdict on every case; the
# first that applies wins.  Cell problems alone (a demo that loops) leave it "graded".
_STATUS_ORDER = ("memory", "timeout", "crashed")


@dataclass
class SubmissionResult:
    student: str
    assignment: str
    path: str
    score: float
    max_score: float
    status: str                 # graded, or a short reason
    message: str = ""
    cases: list = field(default_factory=list)
    cell_errors: list = field(default_factory=list)
    seconds: float = 0.0            # wall time in the sandbox
    student_seconds: float = 0.0    # of which the student's own code ran
    rerun: str = ""                 # why it ran a second time with the generous cell limit ("" if it did not)
    code: tuple = ()                # its code cells and helper files, for the gradebook (gradebook/code.py)


def grade(assignment, expected, student, path, sandbox=None, slot=0, settings=None, cells=None, files=None):
    """Grade the file at `path` for `student`; never raises for anything the file does.

    `cells`: the hand-in's code cells when intake has read them already (it reads each file once).
    `files`: {name: bytes} put beside the notebook as it runs (the hand-in's helper modules).
    """
    settings = settings or assignment.settings()
    path = Path(path)
    base = dict(student=student, assignment=assignment.id, path=str(path), max_score=assignment.max_score)
    try:
        cells = read_cells(path) if cells is None else cells
    except SubmissionError as error:
        return SubmissionResult(score=0.0, status=error.status, message=str(error), **base)
    kept = [(number, c) for number, c in enumerate(cells, 1) if not set(c.tags) & set(assignment.skip_tags)]
    sources = [c.source for _, c in kept]
    sandbox = sandbox or shared_sandbox()
    yardsticks = baselines.baseline_seconds(assignment, sandbox, slot)
    # First with the short cell limit the reference's own cells call for: a trailing cell that never
    # ends costs about a second, not the generous limit.  Only when a cell was stopped there AND the
    # hand-in lost points could the generous limit change the score: then it runs again with it, and
    # that run counts, so every score is what the generous limit alone would give.
    first = settings.first_cell_timeout or settings.cell_timeout
    outcome = run_cases(assignment, sources, sandbox, slot, settings, cell_timeout=first, files=files)
    results = _scored(assignment, expected, outcome, yardsticks, settings)
    rerun, seconds = "", outcome.seconds
    if outcome.cells_stopped and first < settings.cell_timeout and scoring.total(results) < assignment.max_score:
        stopped = ", ".join(str(kept[i][0]) for i in outcome.cells_stopped)
        rerun = (f"run again with the full cell limit of {settings.cell_timeout:g} s: cell {stopped} was stopped "
                 f"at {first:g} s and points were lost")
        outcome = run_cases(assignment, sources, sandbox, slot, settings, files=files)
        results = _scored(assignment, expected, outcome, yardsticks, settings)
        seconds += outcome.seconds
    status, message = _status(results, outcome)
    return SubmissionResult(score=scoring.total(results), status=status, message=message, cases=results,
                            cell_errors=cell_errors(kept, outcome.cell_errors), seconds=round(seconds, 4),
                            student_seconds=round(outcome.student_seconds, 4), rerun=rerun,
                            code=code_pieces(cells, files), **base)


def _scored(assignment, expected, outcome, yardsticks, settings):
    results = [scoring.score_case(case, expected[case.name], result, yardsticks.get(case.name))
               for case, result in zip(assignment.cases, outcome.calls)]
    return _with_reference_times(scoring.apply_requirements(assignment.cases, results), settings.reference_seconds)


def _with_reference_times(results, reference):
    """A time-out says how long the reference solution takes, so a student knows how far off they are."""
    out = []
    for result, seconds in zip(results, reference or [None] * len(results)):
        if result.status == "timeout" and seconds is not None and result.message.startswith("no result within"):
            result = replace(result, message=f"{result.message}; the reference solution takes "
                                             f"{'' if seconds < 0.001 else 'about '}{_seconds(seconds)}")
        out.append(result)
    return out + results[len(out):]


def _seconds(value):
    if value < 0.001:
        return "under 1 ms"                  # not "about 0 ms": the reference is fast, not instant
    return f"{value * 1000:.2g} ms" if value < 0.1 else f"{value:.2g} s"


def cell_errors(kept, errors, lines=3):
    """The runner's (index among the cells run, message) pairs as the gradebook keeps them:
    {"cell": number among the notebook's code cells (1-based), "source": its first lines, "error": message}."""
    result = []
    for index, message in errors:
        number, cell = kept[index]
        head = cell.source.strip("\n").splitlines()[:lines]
        result.append({"cell": number, "source": "\n".join(head), "error": message})
    return result


def run_cases(assignment, sources, sandbox, slot=0, settings=None, cases=None, until=None, cell_timeout=None,
              files=None):
    """Run the code, then every case's call (or those of `cases`); used for grading, build and audit.

    `until`, `files`: see runner.run.  `cell_timeout`: each cell's limit (default: the settings' generous one).
    """
    settings = settings or assignment.settings()
    cases = assignment.cases if cases is None else cases
    # Every public case runs before the first hidden one: a hand-in that keeps the inputs it is called
    # with could otherwise return or raise them in a later public case, whose value and message its
    # feedback shows.  (The audit, which stops at a mutant's first failure, keeps the table's order.)
    order = list(range(len(cases))) if until is not None else sorted(range(len(cases)), key=lambda i: cases[i].hidden)
    ordered = [cases[i] for i in order]
    # A speed case's time is judged: it runs on its own, whatever its repeat (Call.alone).  A hidden case's input
    # is sealed: never in the worker before its turn (engine/requests.py).  The audit grades the course's own
    # mutants, which have nothing to learn.
    calls = [Call.of(case.call.encoded(), repeat=case.options.get("repeat", 1), timed=case.compare == "faster_than",
                     sealed=case.hidden and until is None) for case in ordered]
    limit_of = dict(zip((c.name for c in assignment.cases), settings.case_limits))
    timeouts = [limit_of.get(case.name) or case.timeout or settings.case_timeout or assignment.case_timeout
                for case in ordered]
    outcome = run(sandbox, slot, sources, calls, timeouts, cell_timeout or settings.cell_timeout,
                  settings.hand_in_budget, until, files)
    if until is None:                        # back in the cases' own order
        outcome.calls = [outcome.calls[order.index(i)] for i in range(len(cases))]
    return outcome


def _status(results, outcome):
    counts = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    notes = []
    if outcome.cell_errors:
        notes.append(f"{len(outcome.cell_errors)} notebook cell(s) raised an error or were stopped")
    for status in _STATUS_ORDER:
        if counts.get(status):
            label = {"memory": "ran out of memory", "timeout": "ran out of time",
                     "crashed": "crashed the Python process"}[status]
            return status, "; ".join([f"{counts[status]} case(s) {label}", *notes])
    return "graded", "; ".join(notes)


_shared = None
_shared_lock = threading.Lock()


def shared_sandbox():
    """One sandbox per process for callers that grade one thing at a time (build, tests)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared.zygote.poll() is not None:
            _shared = Sandbox()
        return _shared
