"""Who a student is to each LMS's grade and feedback files, read from what was stored, never parsed again.

Two records say it: the course's roster (roster/store.py: the ids its class list gave) and, for a hand-in,
what the LMS's download said of it, kept on the gradebook's row (gradebook/schema.py, version 2: `lms`,
`lms_id`, `lms_prefix`, `repository`, which intake/identity.py made).  A student on the roster is named by
the roster's ids, as the LMS's importer matches them; one who is not, by their hand-in's.  No id is ever
sliced out of a key, and no printable source is parsed: a row that holds no id for an LMS gets no row in
that LMS's file (each writer says who it left out).
"""

from dataclasses import dataclass

from ..gradebook.read import FeedbackError


@dataclass(frozen=True)
class Who:
    key: str
    name: str                   # for people, and the files' name columns
    sortable_name: str = ""     # "Doe, Jane", when the roster has it
    email: str = ""
    canvas_id: str = ""         # Canvas's user id
    moodle_participant: str = ""   # this assignment's Moodle participant id: only its download says it
    gradescope_sid: str = ""
    blackboard_username: str = ""
    d2l_org_id: str = ""        # D2L's OrgDefinedId
    d2l_username: str = ""
    feedback_prefix: str = ""   # what the LMS pairs a feedback file by (Canvas's, Moodle's), "" for none
    repository: str = ""        # a GitHub Classroom clone's folder
    test_account: bool = False  # the roster flags it as the LMS's test account (Canvas's Test Student)
    github_username: str = ""   # a Classroom roster's GitHub login (Classroom 50's `username`)
    section: str = ""           # the roster's section


def who(key, name, roster, lms="", lms_id="", email="", prefix="", repository=""):
    """The Who of student `key`: the roster's Student when `roster` ({key: Student}) has them, else the
    identity their hand-in carried (`lms`, `lms_id`, ...: what the gradebook kept)."""
    student = roster.get(key)
    own = {"canvas": {"canvas_id": lms_id}, "moodle": {"moodle_participant": lms_id},
           "gradescope": {"gradescope_sid": lms_id}, "blackboard": {"blackboard_username": lms_id}}.get(lms, {})
    found = Who(key, name or key, email=email or "", feedback_prefix=prefix or "", repository=repository or "",
                **{field: value or "" for field, value in own.items()})
    if student is None:
        return found
    ids = {"canvas": {"canvas_id": student.lms_id},
           "gradescope": {"gradescope_sid": student.lms_id},
           "blackboard": {"blackboard_username": student.login or student.lms_id},
           "d2l": {"d2l_org_id": student.sis_id, "d2l_username": student.login},
           "classroom": {"github_username": student.login}}.get(student.lms, {})
    return Who(key, student.name or found.name, student.sortable_name, student.email or found.email,
               **{**{f: getattr(found, f) for f in ("canvas_id", "moodle_participant", "gradescope_sid",
                                                    "blackboard_username")},
                  **{field: value for field, value in ids.items() if value}},
               feedback_prefix=found.feedback_prefix, repository=found.repository,
               test_account=student.test_student, section=student.section)


def of_submission(submission, roster):
    """The Who of a graded hand-in (gradebook.read.SubmissionRow); FeedbackError when its gradebook is of an
    older version that this user could not bring up to date, so nothing says who the LMS said it was."""
    if submission.lms is None:
        raise FeedbackError("the gradebook is of an earlier version of the grader and could not be upgraded "
                            "here (this user may not write it), so it does not say which LMS id each hand-in "
                            "came with: run any command that reads it (`autograder feedback --out ...`) as a "
                            "user who may write it, then release again")
    return who(submission.student, submission.display_name, roster, submission.lms, submission.lms_id,
               submission.email, submission.lms_prefix, submission.repository)


def of_pending(row, roster):
    """The Who of a hand-in not graded yet (gradebook.read.PendingRow)."""
    return who(row.student, row.name, roster, row.lms or "", row.lms_id or "")


def of_absent(row, roster):
    """The Who of a roster student with no hand-in (gradebook.read.AbsentRow): the roster names them."""
    return who(row.student, row.name, roster)
