"""What was sent to an LMS through its API, student by student, and what it answered (schema.py, versions 4, 6).

`release --to canvas` writes a row before each send (`unknown`: sent, no answer yet) and completes it with
Canvas's answer (`sent` or `failed`), so after a failure half way, or a Ctrl-C, a re-run knows exactly who
got what: it sends what changed since the last send that arrived, and for a send whose answer never came, it
first asks Canvas whether the comment is there (publish/canvas_push.py).  Rows are never changed once
answered: the table is the history of every grade, excuse and comment the course's students were sent.

A row's grade is its score, or, with `excused`, Canvas's Excused (no score): the student's standing in the
LMS is the last of these that arrived, so an excuse withdrawn here is followed by the grade, and a grade
changed into an excuse by the excuse.
"""

from dataclasses import dataclass
from datetime import datetime, timezone

from ..core import database
from .store import GradebookError, text

SENT, FAILED, UNKNOWN = "sent", "failed", "unknown"
_one_line_errors = database.one_line_errors(GradebookError, where=lambda gradebook, *_: gradebook.path)


@dataclass(frozen=True)
class Sent:
    id: int
    student: str
    lms_user: str
    lms_submission: str
    attempt: int | None
    score: float | None
    comment_sha256: str | None
    sent_at: str
    outcome: str
    answer: str
    excused: bool = False             # the LMS's excuse was sent (no score)

    @property
    def graded(self):
        """Did this send set the student's standing: a score, or an excuse?"""
        return self.score is not None or self.excused


@dataclass(frozen=True)
class History:
    """One student's sends: the last that arrived with a grade (a score or an excuse), with a comment, and the
    very last."""
    grade: Sent | None = None
    comment: Sent | None = None
    last: Sent | None = None


def now():
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


@_one_line_errors
def histories(gradebook, assignment, lms):
    """{student: History} of every student sent anything of `assignment` through `lms`."""
    found = {}
    for row in gradebook.db.execute(
            "SELECT id, student, lms_user, lms_submission, attempt, score, comment_sha256, sent_at, outcome, answer, "
            "excused FROM lms_sent WHERE assignment = ? AND lms = ? ORDER BY id", (assignment, lms)):
        sent = Sent(*row[:-1], excused=row[-1] == 1)
        history = found.get(sent.student, History())
        grade, comment = history.grade, history.comment
        if sent.outcome == SENT and sent.graded:
            grade = sent
        if sent.outcome == SENT and sent.comment_sha256 is not None:
            comment = sent
        found[sent.student] = History(grade, comment, sent)
    return found


@_one_line_errors
def sending(gradebook, assignment, lms, student, lms_user, lms_submission, attempt, score, comment_sha256,
            excused=False):
    """A row for a send about to go, `unknown` until `answered`; returns its id (committed first: a crash
    before the answer leaves it saying so).  `excused`: the LMS's excuse is sent, and `score` must be None."""
    if excused and score is not None:
        raise ValueError("an excuse is sent with no score")
    with gradebook.db:
        cursor = gradebook.db.execute(
            "INSERT INTO lms_sent (assignment, student, lms, lms_user, lms_submission, attempt, score, "
            "comment_sha256, sent_at, outcome, answer, excused) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?)",
            (*map(text, (assignment, student, lms, lms_user, lms_submission, attempt, score, comment_sha256, now(),
                         UNKNOWN)), 1 if excused else None))
    return cursor.lastrowid


@_one_line_errors
def answered(gradebook, row_id, outcome, answer, lms_submission=None):
    with gradebook.db:
        gradebook.db.execute("UPDATE lms_sent SET outcome = ?, answer = ?, lms_submission = COALESCE(?, lms_submission) "
                             "WHERE id = ?", (outcome, text(str(answer)[:1000]), lms_submission, row_id))
