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
    points: float          # earned
    max_points: float
    status: str            # passed, failed, error, timeout, crashed
    message: str
    received: str          # readable rendering of what came back
    traceback: str
    seconds: float


def score_case(case, expected, outcome):
    earned, status, message, received = 0.0, outcome.status, outcome.message, ""
    if outcome.status == "ok":
        received = runtime.show(outcome.value)
        if runtime.compare(expected, outcome.value, case.compare, case.options):
            earned, status = case.points, "passed"
        else:
            status, message = "failed", _why(expected, outcome.value)
    return CaseResult(
        name=case.name, function=case.function, hidden=case.hidden, points=earned,
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
