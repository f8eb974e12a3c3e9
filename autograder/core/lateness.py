"""Was a hand-in late, by how much, and what did that cost (course.LateRules)?

Two sources of truth, in this order:
  * the LMS's own mark (Canvas names a late file `_LATE_`; it knows each
    student's extensions), which decides WHETHER a hand-in is late (a LATE
    mark gives way to a later deadline granted here; an on-time one never);
  * the deadline compared with the time it was handed in, which decides BY
    HOW MUCH (and whether, when the LMS gives no mark).
A time without a UTC offset (a zip entry's) is read in the deadline's zone.
The raw score is never changed in the gradebook; the score after the
penalty is computed from it again whenever the rules change.
"""

import math
from dataclasses import dataclass
from datetime import datetime, timezone

DAY = 86400.0


@dataclass(frozen=True)
class Lateness:
    late: bool | None            # None: nothing says (no deadline and no LMS mark)
    seconds: float | None        # how late, when known
    score: float                 # after the policy
    penalty: float               # points taken off
    note: str                    # what was decided and applied, in plain words


def _moment(text, zone):
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None and zone is not None:
        moment = moment.replace(tzinfo=zone)
    return moment


def duration(seconds):
    if seconds < 3600:
        return f"{max(1, round(seconds / 60))} min"
    if seconds < 2 * DAY:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / DAY:.1f} days"


def assess(handed_in_at, late_mark, raw_score, rules, extended=""):
    """`extended`: why this student's deadline (rules.deadline) is not the course's, "" when it is.

    The LMS judged its late mark against the course's deadline, which knows nothing of an extension
    granted here: for such a student a LATE mark gives way to the hand-in time against their own deadline
    (the mark only stands when no time is known).  An on-time mark always stands: a deadline of the student's
    own is never earlier than the course's, so more time never makes a hand-in the LMS took as on time late
    (the LMS may know of an extension, or have a clock, this grader does not)."""
    deadline = rules.deadline if rules is not None else None
    seconds = None
    if deadline is not None:
        moment = _moment(handed_in_at, deadline.tzinfo)
        if moment is not None and moment.tzinfo is not None:
            # As instants: two times of one named zone subtract as wall-clock times, blind to summer time.
            seconds = (moment.astimezone(timezone.utc) - deadline.astimezone(timezone.utc)).total_seconds()
    late, source = _late_and_why(seconds, late_mark, extended)
    if late is None:     # nothing to say: no deadline (the run's summary says so), or no time to compare
        return Lateness(None, None, raw_score, 0.0, "" if deadline is None else "hand-in time unknown")
    if not late:
        note = "on time" + (f" ({source})" if source else "")
        if seconds is not None and seconds > 0 and not extended:
            note += f", {duration(seconds)} after the deadline (an extension?)"
        return Lateness(False, 0.0, raw_score, 0.0, note)
    how_late = duration(seconds) if seconds is not None and seconds > 0 else None
    note = f"late by {how_late}" if how_late else "late"
    if source:
        note += f" ({source})"
    score, penalty, policy_note = _late_penalty(raw_score, seconds if how_late else None, rules)
    return Lateness(True, max(seconds, 0.0) if seconds is not None else None, round(score, 4),
                    round(penalty, 4), note + policy_note)


def _late_and_why(seconds, late_mark, extended):
    """(late: True, False or None when it cannot be told; the source of that answer, "" when it is the time)."""
    if late_mark is False:
        return False, "the LMS marked it on time"
    if extended and seconds is not None:
        return seconds > 0, f"own deadline: {extended}"
    if late_mark:
        if not extended:
            return True, "the LMS marked it late"
        # Said to the student, who can do nothing about it: no command here (the instructor is told
        # by `extend` and `accommodate` at once, with what would make the deadline count).
        return True, (f"the LMS marked it late, against the course deadline; own deadline: {extended}, but the LMS "
                      "recorded no hand-in time to compare with it, so its mark stands for now")
    if seconds is not None:
        return seconds > 0, ""
    return None, ""


def _late_penalty(raw_score, seconds_late, rules):
    """(score, points off, what the policy did) for a late hand-in; `seconds_late` None: how late is unknown."""
    policy = rules.policy if rules is not None else "none"
    if policy == "per-day":
        days = math.ceil(seconds_late / DAY) if seconds_late is not None else 1
        penalty = min(raw_score, days * rules.penalty)
        return raw_score - penalty, penalty, (
            f"; per-day policy: {days} started day(s) x {rules.penalty:g} = {penalty:g} point(s) off"
            + ("" if seconds_late is not None else " (time after the deadline unknown: counted as 1 day)"))
    if policy == "cap":
        score = min(raw_score, rules.cap)
        penalty = raw_score - score
        return score, penalty, f"; cap policy: at most {rules.cap:g} point(s)" + (
            f", {penalty:g} off" if penalty else ", none off")
    return raw_score, 0.0, "; no points off (late_policy none)"
