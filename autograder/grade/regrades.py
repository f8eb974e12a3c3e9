"""Why `grade` grades a hand-in again that it graded before: said to the person who runs it, never silent.

A plain `grade` regrades every hand-in graded under a rubric that is no longer the assignment's (its cases,
points, expected values or limits changed since: Assignment.rubric_key) or with other options; `release` and
`gradebook` refuse such scores until it has (cli/release.py, publish/course/write.py).
"""

from ..core.listing import names


def say_why_regraded(gradebook, assignment_id, todo, key, regrade, events):
    """One note per reason for the hand-ins of `todo` graded before (none with --regrade: it was asked for)."""
    if regrade:
        return
    for why, handins in gradebook.regrade_reasons(assignment_id, todo, key).items():
        who = names([h.name if h.name == h.student or not h.name else f"{h.name} ({h.student})" for h in handins])
        events.note(f"grading {len(handins)} hand-in(s) again, {why}: {who}")
