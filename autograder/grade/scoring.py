"""Turn call outcomes into points, outside the student's process.

Only plain values cross from the sandbox; they are judged here with the
case's named comparison against the expected values from expected.json.
"""

from dataclasses import dataclass, replace

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


def apply_requirements(cases, results):
    """`results` (in the order of `cases`) with the points of each passed case withheld when a case it
    requires (core/assignment.py: Case.requires) did not pass.

    A withheld case keeps its received value; its status is "failed" (what exports and statuses
    know) and its message starts "withheld:", which every page labels as such.  A required case
    missing from `results` did not pass: points are never given for what was not checked.
    """
    passed = {r.name for r in results if r.status == "passed"}
    by_name = {c.name: c for c in cases}
    out = []
    for case, result in zip(cases, results):
        missing = [name for name in case.requires if name not in passed]
        if result.status == "passed" and missing:
            result = replace(result, points=0.0, status="failed", message=_withheld(by_name, missing))
        out.append(result)
    return out + list(results[len(out):])


def withheld_messages(cases):
    """Every message apply_requirements can write for `cases`: one for each case that requires others and
    each non-empty part of what it requires (in its order).  Pages check a hidden case's words against these."""
    by_name = {c.name: c for c in cases}
    messages = set()
    for case in cases:
        for chosen in range(1, 1 << len(case.requires)):
            missing = [n for bit, n in enumerate(case.requires) if chosen >> bit & 1]
            messages.add(_withheld(by_name, missing))
    return frozenset(messages)


def _withheld(by_name, missing):
    twin = all(n in by_name and by_name[n].hidden for n in missing)
    return runtime.withheld_message([requirement_label(by_name.get(n), n) for n in missing], twin=twin)


def requirement_label(case, name):
    """How a required case is named to a student: its call when public, its description when hidden."""
    if case is None:
        return name
    return f"the hidden check \u201c{case.description}\u201d" if case.hidden else case.call.text


def total(results):
    return round(sum(r.points for r in results), 4)
