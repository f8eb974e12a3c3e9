"""Turn call outcomes into points, outside the student's process.

Only plain values cross from the sandbox; they are judged here with the
case's named comparison against the expected values from expected.json.
"""

from dataclasses import dataclass

from . import runtime


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
            status, message = "failed", _why(expected, outcome.value)
        elif baseline_seconds is not None and not runtime.timed_well(
                outcome.seconds, baseline_seconds, case.options):
            status = "failed"
            message = (f"right answer, but it took {outcome.seconds:.3g} s; it must be at least "
                       f"{case.options.get('speedup', 1):g} times faster than "
                       f"{case.options['baseline']} ({baseline_seconds:.3g} s)")
        else:
            earned, status = case.points, "passed"
    return CaseResult(
        name=case.name, function=case.function, hidden=case.hidden, description=case.description,
        call=case.call.text, points=earned,
        max_points=case.points, status=status, message=message, received=received,
        traceback=outcome.traceback, seconds=round(outcome.seconds, 4),
    )


def _why(expected, received):
    if type(received) is dict and runtime.OPAQUE in received:
        return f"returned an object of type {received[runtime.OPAQUE]}, not a plain value"
    if type(expected) is not type(received) and not (
            type(expected) in (int, float) and type(received) in (int, float)):
        return f"expected a {_kind(expected)}, got a {_kind(received)}"
    return "wrong value"


def _kind(plain):
    names = {bool: "bool", int: "number", float: "number", str: "string", list: "list", type(None): "None"}
    return names.get(type(plain), "other value")


def total(results):
    return round(sum(r.points for r in results), 4)
