"""Grade one submission: read it, run it in a sandbox, score every case."""

from dataclasses import dataclass, field
from pathlib import Path

from . import baselines, runner, scoring
from .sandbox import Limits
from .submission import SubmissionError, read_cells


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


def grade(assignment, expected, student, path, limits=Limits()):
    path = Path(path)
    base = dict(student=student, assignment=assignment.id, path=str(path), max_score=assignment.max_score)
    try:
        cells = read_cells(path)
    except SubmissionError as error:
        return SubmissionResult(score=0.0, status=error.status, message=str(error), **base)
    sources = [c.source for c in cells if not set(c.tags) & set(assignment.skip_tags)]
    outcome = run_cases(assignment, sources, limits)
    yardsticks = baselines.baseline_seconds(assignment)
    results = [scoring.score_case(case, expected[case.name], result, yardsticks.get(case.name))
               for case, result in zip(assignment.cases, outcome.calls)]
    return SubmissionResult(score=scoring.total(results), status="graded", cases=results,
                            cell_errors=outcome.cell_errors, **base)


def run_cases(assignment, sources, limits=Limits()):
    """Run the code, then every case's call; used for grading and for build."""
    calls = [{**case.call.encoded(), "repeat": case.options.get("repeat", 1)} for case in assignment.cases]
    timeouts = [assignment.timeout_for(case) for case in assignment.cases]
    return runner.run(sources, calls, timeouts, assignment.cell_timeout, limits)
