"""Which of a student's hand-ins are run: the one that counts, and older ones only when asked.

D2L accepts any number of resubmissions and Blackboard keeps every attempt; a
download holds them all.  The gradebook counts a student's newest hand-in
that could be graded (gradebook/store.py), never an older one whatever its
score, so running the older ones buys nothing but time: each may take its
whole budget.  They are recorded, not run: status `superseded`, no score,
never counted, their row naming the one that counts.  `grade
--all-submissions` runs every one.

The newest is decided as the gradebook decides it (`order_keys`): by the
LMS's hand-in times, its order of uploads, then the files' times.  Hand-ins
that tie on all of these (the notebooks of one submission, downloads that
only the order given to `grade` tells apart) are all run, and the gradebook
says which counts and why.  Several D2L submissions
under one name with no student to tell them apart (kept apart by
roster/match.py) are one student's resubmissions or namesakes' work: the
newest is run, the others wait until the class list places them.
"""

from collections import defaultdict

from ..gradebook.store import order_keys

SUPERSEDED = "superseded"
D2L_APART = "d2l:submission:"        # roster/match.py's key for a D2L submission it could not place


def set_aside_older(todo, considered, zone=None):
    """Mark each hand-in of `todo` that an newer one of the same student in `considered` makes moot:
    its status becomes `superseded`, with a message naming the one that counts.  Returns how many."""
    mine = defaultdict(list)
    for handin in considered:
        if handin.status is None:
            mine[_whose(handin)].append(handin)
    waiting = {id(h) for h in todo}
    count = 0
    for handins in mine.values():
        if len(handins) < 2:
            continue
        # What the LMS or the files say, never the rule of last resort (the download given later): when only
        # that orders them, each is run, and the row says the order is unknown, as it did.
        keys = [key[:3] for key in order_keys([(h.submitted_at, h.lms_order, h.file_time, "") for h in handins],
                                              zone)]
        newest = max(keys)
        counted = [h for h, key in zip(handins, keys) if key == newest]
        for handin, key in zip(handins, keys):
            if key != newest and id(handin) in waiting:
                _supersede(handin, counted[0])
                count += 1
    return count


def _whose(handin):
    if handin.student.startswith(D2L_APART):
        return ("d2l-name", handin.name)
    return handin.student


def _supersede(handin, counted):
    handin.path = None
    handin.status = SUPERSEDED
    if counted.student != handin.student:
        handin.message = (f"not run: a later D2L submission under the name {handin.name!r} ({counted.source}) "
                          "counts if both are one student's; once the class list places each "
                          "(`autograder roster place`), grade again, or run every one with --all-submissions")
    else:
        handin.message = (f"not run: a later hand-in of this student counts ({counted.source}), and an older one "
                          "never does; `grade --all-submissions` runs every one")
