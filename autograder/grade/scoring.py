"""Turn call outcomes into points, outside the student's process.

Only plain values cross from the sandbox; they are judged here with the
case's named comparison against the expected values from expected.json.
"""

from dataclasses import dataclass

from .. import runtime


@dataclass(frozen=True)
class CaseResult:
    name: str
    function: str
    hidden: bool
    description: str
    call: str              # the call text (never shown for hidden cases)
    points: float          # earned
    max_points: float
    status: str            # passed, failed, error, timeout, crashed
    message: str
    received: str          # readable rendering of what came back
    traceback: str
    seconds: float


def score_case(case, expected, outcome, baseline_seconds=None):
    """`baseline_seconds` is the yardstick of a faster_than case (see baselines.py)."""
    earned, status, message, received = 0.0, outcome.status, outcome.message, ""
    if outcome.status == "ok":
        received = runtime.show(outcome.value)
        if not runtime.compare(expected, outcome.value, case.compare, case.options):
            status, message = "failed", runtime.explain_difference(expected, outcome.value)
        elif baseline_seconds is not None and not runtime.timed_well(
                outcome.seconds, baseline_seconds, case.options):
            # Still "failed" (exports and statuses know no other), but the message
            # starts "too slow:", which every page labels as such.
            status = "failed"
            message = runtime.too_slow_message(outcome.seconds, baseline_seconds, case.options)
        else:
            earned, status = case.points, "passed"
    return CaseResult(
        name=case.name, function=case.function, hidden=case.hidden, description=case.description,
        call=case.call.text, points=earned,
        max_points=case.points, status=status, message=message, received=received,
        traceback=outcome.traceback, seconds=round(outcome.seconds, 4),
    )


def total(results):
    return round(sum(r.points for r in results), 4)
