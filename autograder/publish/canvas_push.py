"""`release --to canvas`: each student's grade, and one comment with their feedback page, sent through Canvas's API.

What is sent, per student, as Canvas's API takes it:

* **With feedback** (the default), three requests: the page is uploaded as a submission comment's file
  (`POST .../submissions/:user_id/comments/files`, then the file itself to the `upload_url` Canvas answers,
  without the token), then ONE edit of the submission (`PUT .../submissions/:user_id`) carries the grade
  (`submission[posted_grade]`), the comment's text (`comment[text_comment]`, a summary), the file
  (`comment[file_ids][]`) and the attempt it is about (`comment[attempt]`).  canvasapi's
  `Submission.upload_comment` would make a second, empty comment for the file: it is not used.
* **Grades alone** (`--grades-only`): one `POST .../submissions/update_grades` for the whole class, which
  Canvas runs as a job; its progress is asked for until it ends.
* **An excused student** (`autograder excuse`, or Canvas's own excuse brought in by `canvas pull`) is sent
  Canvas's Excused instead of a grade: `submission[excuse]=true` in the same edit (`grade_data[:id][excuse]`
  in the bulk update), never with a grade, which Canvas refuses ("Cannot simultaneously grade and excuse",
  Assignment#grade_student).  A hand-in of theirs was graded all the same, so its comment and page go with
  it; an excused student who handed in nothing is sent the excuse alone.  Sending a grade ends Canvas's
  excuse (save_grade_to_submission keeps `excused` only with no score), which is how a withdrawn excuse is
  undone.

Before anything is sent, what Canvas says now is read (the course, the assignment, its late policy, the
Test Student's enrollment, every submission: a few requests and the pages of submissions), and the push is
refused, nothing sent, with one line saying what to do, when:

* the course is not published (Canvas refuses grades), or is concluded;
* the assignment is worth other points in Canvas, is graded pass/fail, by moderation or anonymously;
* Canvas's late policy deducts from late submissions while the grader's own late policy deducts too (the
  grade would lose points twice), or while Canvas counts late a hand-in that the course counts on time or
  settled with slip days (an extension granted here, slip days spent: Canvas would take off what the course
  forgave);
* a grade was graded from an older attempt than Canvas's latest, or Canvas holds a submission that was never
  graded (a student `missing` here who handed in since): `--force` sends what was graded all the same.

The Test Student is never sent anything; nor is one whose grade is unknown (not graded yet, not yet due,
unresolved: never 0).  A student Canvas excuses who is not excused here is sent nothing (`canvas pull`
brings Canvas's excuse in), unless the excuse here was withdrawn by a person, or was the one this push sent:
then the grade goes, and ends it.  Under manual posting the grades stay hidden from students until they are
posted: `--post` posts them (Canvas's GraphQL `postAssignmentGrades`, the only API that does), else the
output says how.

Idempotent: the gradebook records every send (gradebook/lms_sent.py) — the student, their Canvas submission
and attempt, the score or the excuse, a hash of the comment, the time and Canvas's answer.  A re-run sends
only grades, excuses and comments that changed since the last send that arrived.  A comment whose send got
no answer (Canvas failed, the connection dropped) is looked for first: each comment ends with a tag holding
its hash, so a comment that did arrive is found and not sent twice.  After a server error the push stops,
saying who got what; the same command sends the rest.
"""

import hashlib
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from canvasapi.submission import Submission
from canvasapi.upload import Uploader

from ..core.course import late_rules
from ..feedback.explain import is_test_account
from ..gradebook import Gradebook
from ..gradebook import lms_sent
from ..gradebook.read import FeedbackError
from ..intake import identity
from ..intake.canvas_api import CanvasError, no_canvas_assignment
from ..roster.canvas_roster import GRANTED_BY
from .who import of_absent, of_submission

LMS = "canvas"
TAG = re.compile(r"\[autograder (?P<assignment>[^\]\s]+) #(?P<hash>[0-9a-f]{12})\]")
PROGRESS_POLLS = 120            # a bulk update's job asked after, a second apart at least, before giving up
POST_GRADES = """mutation PostGrades($assignmentId: ID!) {
  postAssignmentGrades(input: {assignmentId: $assignmentId, gradedOnly: true}) {
    progress { _id state }
    errors { attribute message }
  }
}"""


@dataclass(frozen=True)
class PushOptions:
    dry_run: bool = False
    post: bool = False            # post the grades (manual posting)
    force: bool = False           # send grades graded from an older attempt than Canvas's latest
    grades_only: bool = False     # no comment, no file: one bulk update


@dataclass
class Line:
    """One student: what would be sent, and what was decided."""
    key: str
    name: str
    canvas_user: str
    kind: str                     # graded | missing | excused (no score is sent: Canvas's Excused)
    score: float | None
    page: object = None           # feedback.pages.Page (graded) or None
    graded_upload: str = ""       # the Canvas attachment id of the file graded ("" when not from Canvas)
    attempt: int | None = None    # the attempt graded, as Canvas numbers them (None: not known)
    latest: int | None = None     # Canvas's latest attempt
    submission_id: str = ""
    comment: str = ""
    comment_hash: str | None = None
    action: str = "send"          # send | unchanged | refused | skipped
    why: str = ""
    excuse: str = ""              # why they are excused here (kind excused)
    canvas_excused: bool = False  # Canvas holds them excused now

    @property
    def who(self):
        return self.name if self.name == self.key else f"{self.name} ({self.key})"


@dataclass
class Push:
    lines: list = field(default_factory=list)
    sent: list = field(default_factory=list)          # Line
    failed: list = field(default_factory=list)        # (Line, why)
    checked: list = field(default_factory=list)       # Line: an earlier send with no answer, found on Canvas
    stopped: str = ""                                 # why the push stopped before the end
    notes: list = field(default_factory=list)
    posting: str = ""                                 # what happens to the grades' visibility
    requests: int = 0

    def of(self, action):
        return [line for line in self.lines if line.action == action]


@dataclass
class CanvasState:
    """What Canvas says now, read before anything is sent."""
    course: object
    assignment: object
    late_policy: object
    test_users: set
    submissions: dict             # {user id: canvasapi Submission}


def push_to_canvas(course, assignment, out_dir, pages, absent, roster, connection, options=PushOptions(),
                   events=None, excuses=()):
    """Send each student's grade or excuse (and comment with their feedback page) to Canvas; returns Push.
    `excuses`: the assignment's excuses in the course's records (roster.store.Excuse, withdrawn ones too).
    Raises CanvasError or FeedbackError, nothing sent, for what must be fixed first."""
    state = read_canvas(connection, course, assignment)
    push = Push()
    gradebook = Gradebook(Path(out_dir) / "gradebook.db")
    try:
        rules = gradebook.saved_rules(assignment.id) or late_rules(course, assignment.id)
        _check(state, assignment, rules, push)
        ended = _excuses_ended_here(excuses, lms_sent.histories(gradebook, assignment.id, LMS))
        push.lines = _plan(assignment, pages, absent, roster, state, options, push, ended)
        _check_lateness(push.lines, state, assignment)
        _check_attempts(push.lines, assignment, options)
        _compare(gradebook, assignment, push.lines, options, connection, state, push)
        push.posting = _posting(state, options)
        if options.dry_run:
            push.requests = connection.pacing.requests
            return push
        todo = push.of("send")
        if todo and options.grades_only:
            _send_grades(connection, state, gradebook, assignment, todo, push)
        elif todo:
            _send_each(connection, state, gradebook, assignment, out_dir, todo, push, events)
        if options.post and state.assignment.post_manually and not push.stopped:
            _post(connection, state, push)
    finally:
        gradebook.close()
    push.requests = connection.pacing.requests
    return push


# --- what Canvas says now ---------------------------------------------------------------------------

def read_canvas(connection, course, assignment):
    canvas_id = course.canvas_assignment(assignment.id)
    if canvas_id is None:
        raise CanvasError(no_canvas_assignment(assignment.id))
    canvas_course = connection.call(f"reading course {connection.course_id}", connection.canvas.get_course,
                                    connection.course_id)
    canvas_assignment = connection.call(f"reading assignment {canvas_id} of course {connection.course_id}",
                                        canvas_course.get_assignment, canvas_id)
    try:
        policy = connection.call("reading the course's late policy", canvas_course.get_late_policy)
    except CanvasError as error:
        if error.status != 404:          # Canvas answers 404 for a course that has no late policy
            raise
        policy = None
    tests = connection.pages("looking for the Test Student",
                             canvas_course.get_enrollments(type=["StudentViewEnrollment"]))
    submissions = connection.pages("listing the assignment's submissions",
                                   canvas_assignment.get_submissions())
    return CanvasState(canvas_course, canvas_assignment, policy, {str(e.user_id) for e in tests},
                       {str(s.user_id): s for s in submissions if str(getattr(s, "user_id", "")).isdigit()})


def _check(state, assignment, rules, push):
    """Refusals (one line each, nothing sent) and warnings, from what Canvas says of the course and assignment."""
    workflow = getattr(state.course, "workflow_state", "available")
    if workflow == "unpublished":
        raise CanvasError("the Canvas course is not published, and Canvas refuses grades until it is: publish it "
                          "(the course's home page → Publish), then release again")
    if workflow in ("completed", "deleted"):
        raise CanvasError(f"the Canvas course is {workflow} (concluded): Canvas takes no more grades in it")
    canvas = state.assignment
    points = getattr(canvas, "points_possible", None)
    if points is None or abs(float(points) - assignment.max_score) > 1e-9:
        raise CanvasError(f"Canvas's {canvas.name!r} is worth {'no' if points is None else f'{float(points):g}'} "
                          f"points, but {assignment.id} is graded out of {assignment.max_score:g}: set it to "
                          f"{assignment.max_score:g} points in Canvas (the assignment's Edit page), then release again")
    kind = getattr(canvas, "grading_type", "points")
    if kind in ("pass_fail", "not_graded"):
        raise CanvasError(f"Canvas's {canvas.name!r} is graded {kind.replace('_', '/')}: a score cannot be entered; "
                          "make it graded in points in Canvas")
    if getattr(canvas, "moderated_grading", False):
        raise CanvasError(f"Canvas's {canvas.name!r} uses moderated grading: scores would go in as provisional "
                          "grades; turn moderation off, or upload canvas_grades.csv (`release --to DIR`)")
    if getattr(canvas, "anonymize_students", False) or getattr(canvas, "anonymous_grading", False):
        raise CanvasError(f"Canvas's {canvas.name!r} is graded anonymously: its API hides whose each submission is "
                          "until grades are posted; upload canvas_grades.csv instead (`release --to DIR`)")
    policy = state.late_policy
    if policy is not None and getattr(policy, "late_submission_deduction_enabled", False):
        deduction = (f"{float(getattr(policy, 'late_submission_deduction', 0) or 0):g}% per "
                     f"{getattr(policy, 'late_submission_interval', 'day')}")
        if rules.policy in ("per-day", "cap"):
            raise CanvasError(
                f"the Canvas course's late policy deducts {deduction} from late submissions, and {assignment.id}'s "
                f"own late policy ({rules.policy}) already took its points off: Canvas would deduct again. Turn "
                "Canvas's off (Grades → ⚙ Settings → Late Policies), or set late_policy = \"none\" for "
                f"{assignment.id} in course.toml and grade again")
        push.notes.append(f"Canvas's late policy deducts {deduction} from late submissions' grades (the grader's "
                          "late_policy is none): students see Canvas's deduction")


def _posting(state, options):
    if not getattr(state.assignment, "post_manually", False):
        return "Canvas posts grades as they are entered (automatic posting): students see them at once"
    if options.post:
        return "manual posting: the grades are posted after sending (--post)"
    return ("manual posting: the grades stay hidden from students until they are posted: post them in Canvas "
            "(Grades → the assignment's ⋮ → Post grades), or release again with --post")


# --- the plan ---------------------------------------------------------------------------------------

def _plan(assignment, pages, absent, roster, state, options, push, ended=frozenset()):
    lines, said = [], []
    for page in pages.pages:
        who = of_submission(page.submission, roster)
        line = Line(page.student, who.name, who.canvas_id, "graded", page.submission.score, page,
                    graded_upload=_upload(page.submission.lms_prefix))
        if who.test_account or is_test_account(page.submission) or who.canvas_id in state.test_users:
            continue                       # the Test Student: in no plan, said by the caller's count
        if page.submission.on_roster == 0 or not getattr(roster.get(page.student), "on_roster", True):
            line.action, line.why = "skipped", "matches nobody on the roster (or has left it)"
        elif getattr(page.submission, "excused", ""):      # their hand-in is graded; its score counts nowhere
            line.kind, line.score, line.excuse = "excused", None, _reason(page.submission.excused)
        lines.append(line)
    for row in absent:
        who = of_absent(row, roster)
        if who.test_account or who.canvas_id in state.test_users or not getattr(roster.get(row.student),
                                                                                "on_roster", True):
            continue
        if row.status == "excused":
            lines.append(Line(row.student, who.name, who.canvas_id, "excused", None, excuse=_reason(row.note)))
            continue
        if row.status != "missing":
            said.append(who.name)          # not yet due, or unresolved: no grade is known, none is sent
            continue
        lines.append(Line(row.student, who.name, who.canvas_id, "missing", row.score))
    if said:
        push.notes.append(f"sent nothing to {len(said)} student(s) whose grade is not known yet (not yet due, or "
                          "a hand-in the roster cannot place may be theirs)")
    lines.sort(key=lambda line: line.key)
    for line in lines:
        _fill(line, assignment, state, options, line.key in ended)
    return lines


def _reason(text):
    """An excuse's reason as the gradebook words it (`excused: a dean's note (by tsmith)`), for the comment."""
    text = " ".join(str(text or "").split()).removeprefix("excused: ")
    return re.sub(r" \(by [^()]*\)$", "", text)


def _excuses_ended_here(excuses, histories):
    """The students whose excuse is ended here, so that the grade sent ends Canvas's: the last excuse of theirs
    here was withdrawn by a person (not by a pull that found Canvas's gone), or the last grade sent them was
    an excuse this push sent."""
    last = {}
    for excuse in excuses:                   # oldest first: the last one counts
        last[excuse.student] = excuse
    ended = {key for key, excuse in last.items() if not excuse.active and excuse.withdrawn_by != GRANTED_BY}
    ended |= {key for key, history in histories.items() if history.grade is not None and history.grade.excused
              and not (key in last and last[key].active)}
    return frozenset(ended)


def _upload(prefix):
    """The Canvas attachment id in a hand-in's file name prefix (`smithalice_1001_5001_`), or ""."""
    found = identity.canvas_file(f"{prefix}x") if prefix else None
    return found.upload if found is not None and found.lms == "canvas" else ""


def _fill(line, assignment, state, options, excuse_ended=False):
    """The line's Canvas submission, attempt, comment; refused or skipped with why.  `excuse_ended`: the
    student's excuse here was withdrawn (or was ours), so a grade may end Canvas's excuse."""
    if line.action != "send":
        return
    if not line.canvas_user:
        line.action, line.why = "skipped", "no Canvas user id (the hand-in did not come from Canvas, and the roster has none)"
        return
    canvas = state.submissions.get(line.canvas_user)
    if canvas is None:
        line.action, line.why = "skipped", "Canvas has no submission for them (not a student of the course, or not assigned)"
        return
    line.submission_id = str(getattr(canvas, "id", ""))
    attempt = getattr(canvas, "attempt", None)
    line.latest = attempt if isinstance(attempt, int) else None
    current = {str(a.get("id") if isinstance(a, dict) else getattr(a, "id", "")) for a in getattr(canvas, "attachments", None) or []}
    line.canvas_excused = bool(getattr(canvas, "excused", False))
    if line.canvas_excused and line.kind != "excused" and not excuse_ended:
        line.action = "skipped"
        line.why = (f"excused in Canvas, not here: `autograder canvas pull --assignment {assignment.id}` brings "
                    "Canvas's excuse in (or end the excuse in Canvas, and their grade goes)")
        return
    if line.kind == "excused":
        # No grade is sent, so no attempt can be older than Canvas's; the comment says which one was graded.
        line.attempt = line.latest if line.graded_upload and line.graded_upload in current else None
        if line.page is not None:
            line.comment = _excused_comment(assignment, line)
    elif line.kind == "missing":
        if getattr(canvas, "submitted_at", None):
            line.action = "refused"
            line.why = (f"Canvas has a submission from them (attempt {line.latest or '?'}, submitted "
                        f"{canvas.submitted_at}) that was never graded")
        line.comment = _missing_comment(assignment, line)
    elif line.graded_upload and line.graded_upload in current:
        line.attempt = line.latest
    elif line.graded_upload:
        line.action = "refused"
        line.why = f"graded from an older attempt than Canvas's latest (attempt {line.latest or '?'})"
    elif current:
        line.action = "refused"
        line.why = ("graded from a file that is not one of Canvas's latest attempt "
                    f"(attempt {line.latest or '?'}): which attempt it is cannot be told")
    elif getattr(canvas, "submitted_at", None):
        line.attempt = line.latest          # a text or URL entry: no file, nothing another attempt could hold
    if line.kind == "graded":
        line.comment = _graded_comment(assignment, line)
    if line.canvas_excused and line.kind != "excused":
        line.why = "excused in Canvas, but no longer here: the grade ends Canvas's excuse"
    if options.grades_only:
        line.comment = ""
    if line.comment:
        data = line.comment + "\0" + (line.page.html if line.page is not None else "")
        line.comment_hash = hashlib.sha256(data.encode("utf-8", "replace")).hexdigest()
        line.comment = f"{line.comment}\n[autograder {assignment.id} #{line.comment_hash[:12]}]"


def _graded_comment(assignment, line):
    s = line.page.submission
    parts = [f"{assignment.title}: {_points(line.score)} / {_points(s.max_score)} points"
             + (f" (graded from attempt {line.attempt})" if line.attempt else "") + "."]
    cases = [c for c in s.cases if not c.hidden]
    if s.status != "graded":
        parts.append(f"Status: {s.status}.")
    elif cases:
        passed = sum(1 for c in cases if c.status == "passed")
        parts.append(f"{passed} of {len(cases)} public checks passed.")
    if s.late:
        parts.append(f"Late: {s.late_note}." if s.late_note else "Late.")
    if s.slip_days:          # on time (or less late) by the course's rule: said beside Canvas's own late mark
        parts.append(f"Slip days: {s.slip_note}.")
    if s.adjust_note:
        parts.append(f"Adjusted: {s.adjust_note}.")
    parts.append(f"Your feedback page is attached ({feedback_name(assignment)}): open it in a browser.")
    return " ".join(parts)


def _excused_comment(assignment, line):
    s = line.page.submission
    return (f"{assignment.title}: excused ({line.excuse}): no grade counts for it. Your hand-in was graded all "
            f"the same: {_points(s.score)} / {_points(s.max_score)} points"
            + (f" (graded from attempt {line.attempt})" if line.attempt else "") + ". "
            f"Your feedback page is attached ({feedback_name(assignment)}): open it in a browser.")


def _missing_comment(assignment, line):
    return (f"{assignment.title}: {_points(line.score or 0)} / {_points(assignment.max_score)} points: nothing was "
            "handed in by the deadline.")


def feedback_name(assignment):
    return f"{assignment.id}-feedback.html"


def _points(value):
    return ("%.4f" % float(value)).rstrip("0").rstrip(".")


def _check_lateness(lines, state, assignment):
    """Refused, nothing sent, when Canvas's late policy would take points off a hand-in the course counts on
    time or settled with slip days: Canvas deducts by its own `late` (its due date, its overrides), which
    knows nothing of an extension granted here or of a slip day spent."""
    policy = state.late_policy
    if policy is None or not getattr(policy, "late_submission_deduction_enabled", False):
        return
    forgiven = []
    for line in lines:
        if line.action != "send" or line.kind != "graded" or line.page is None:
            continue
        canvas = state.submissions.get(line.canvas_user)
        if canvas is None or not getattr(canvas, "late", False) or \
                getattr(canvas, "late_policy_status", None) == "none":     # a grader set it to "none" in Canvas
            continue
        s = line.page.submission
        if s.slip_days:
            forgiven.append(f"{line.who} ({s.slip_days} slip day(s) spent)")
        elif s.late is False or s.late == 0:
            forgiven.append(f"{line.who} (on time here: {s.late_note or s.deadline_note or 'by their own deadline'})")
    if forgiven:
        deduction = (f"{float(getattr(policy, 'late_submission_deduction', 0) or 0):g}% per "
                     f"{getattr(policy, 'late_submission_interval', 'day')}")
        raise CanvasError(
            f"the Canvas course's late policy deducts {deduction} from late submissions, and Canvas counts late "
            f"{len(forgiven)} hand-in(s) of {assignment.id} that the course does not (slip days, or an extension "
            f"granted here): Canvas would deduct again from {', '.join(forgiven[:4])}"
            + (" ..." if len(forgiven) > 4 else "")
            + ". Turn Canvas's off (Grades → ⚙ Settings → Late Policies), then release again")


def _check_attempts(lines, assignment, options):
    refused = [line for line in lines if line.action == "refused"]
    if not refused:
        return
    if options.force:
        for line in refused:
            line.action, line.why = "send", f"{line.why} (--force)"
        return
    error = FeedbackError(f"{len(refused)} grade(s) of {assignment.id} are not of Canvas's latest attempt, so "
                          "nothing is sent: " + ", ".join(f"{line.who}: {line.why}" for line in refused[:6])
                          + (" ..." if len(refused) > 6 else ""))
    error.details = (f"pull and grade again: `autograder canvas pull --assignment {assignment.id}`, then "
                     f"`autograder grade` on the folder it names",
                     "or give --force to send the grades as they were graded")
    raise error


# --- what changed -----------------------------------------------------------------------------------

def _compare(gradebook, assignment, lines, options, connection, state, push):
    """Each line to send marked unchanged when its grade (and comment) arrived before; a send that got no
    answer is looked for on Canvas first (unless a dry run)."""
    histories = lms_sent.histories(gradebook, assignment.id, LMS)
    for line in lines:
        if line.action != "send":
            continue
        history = histories.get(line.key, lms_sent.History())
        last = history.last
        if (not options.dry_run and last is not None and last.outcome == lms_sent.UNKNOWN
                and last.comment_sha256 is not None):
            if _arrived(connection, state, assignment, line, last):
                lms_sent.answered(gradebook, last.id, lms_sent.SENT, "found on Canvas afterwards (its comment's tag)")
                push.checked.append(line)
                history = lms_sent.histories(gradebook, assignment.id, LMS).get(line.key, history)
        if line.kind == "excused":      # Canvas holds the excuse now, whoever sent it: nothing to change
            same_grade = line.canvas_excused or (history.grade is not None and history.grade.excused)
        else:
            same_grade = history.grade is not None and not history.grade.excused and \
                _same(history.grade.score, line.score) and not line.canvas_excused
        same_comment = line.comment_hash is None or (history.comment is not None
                                                     and history.comment.comment_sha256 == line.comment_hash)
        if same_grade and same_comment:
            line.action = "unchanged"
            line.why = f"sent {history.grade.sent_at}" if history.grade is not None else "excused in Canvas already"


def _same(a, b):
    return a is not None and b is not None and abs(a - b) < 1e-9


def _arrived(connection, state, assignment, line, last):
    """Is the comment of the send `last` (no answer came) on Canvas?  One request: the submission with its
    comments, looked through for the comment's tag."""
    canvas = connection.call(f"checking whether {line.who}'s last comment arrived",
                             state.assignment.get_submission, line.canvas_user, include=["submission_comments"])
    wanted = f"#{last.comment_sha256[:12]}]"
    return any(wanted in str((c or {}).get("comment", "")) for c in getattr(canvas, "submission_comments", None) or [])


# --- sending ----------------------------------------------------------------------------------------

def _send_each(connection, state, gradebook, assignment, out_dir, todo, push, events):
    """Per student: the page uploaded, then one edit with grade, comment and file.  A student Canvas refuses
    (422) is said and the others go on; a failure of Canvas's own (5xx, no answer) stops the push."""
    folder = Path(tempfile.mkdtemp(prefix=".canvas-upload-", dir=out_dir))
    try:
        progress = events.sending(len(todo)) if events is not None else _Nothing()
        with progress:
            for line in todo:
                if not _send_one(connection, state, gradebook, assignment, folder, line, push):
                    break
                if events is not None:
                    events.sent(line)
    finally:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()


def _send_one(connection, state, gradebook, assignment, folder, line, push):
    """Send one student's grade and comment; False when the push must stop."""
    file_id = None
    if line.page is not None and line.comment:
        path = folder / feedback_name(assignment)
        path.write_text(line.page.html, encoding="utf-8")
        try:
            done, answer = connection.call(
                f"uploading {line.who}'s feedback page", Uploader(
                    connection.requester, f"courses/{connection.course_id}/assignments/{state.assignment.id}/"
                                          f"submissions/{line.canvas_user}/comments/files",
                    str(path), content_type="text/html").start)
        except CanvasError as error:
            return _failed(push, line, error, sent_anything=False)
        finally:
            path.unlink()
        if not done or not str(answer.get("id", "")).isdigit():
            push.failed.append((line, "Canvas did not take the feedback page's upload"))
            return True
        file_id = str(answer["id"])
    excused = line.kind == "excused"
    row = lms_sent.sending(gradebook, assignment.id, LMS, line.key, line.canvas_user, line.submission_id,
                           line.attempt, None if excused else line.score, line.comment_hash, excused=excused)
    comment = {"text_comment": line.comment, **({"file_ids": [file_id]} if file_id else {}),
               **({"attempt": line.attempt} if line.attempt else {})} if line.comment else None
    submission = Submission(connection.requester, {"id": line.submission_id, "user_id": line.canvas_user,
                                                   "assignment_id": state.assignment.id,
                                                   "course_id": connection.course_id})
    kwargs = {"submission": _grade_data(line), **({"comment": comment} if comment else {})}
    what = "excuse" if excused else "grade"
    try:
        answer = connection.call(f"sending {line.who}'s {what}" + (" and comment" if comment else ""),
                                 submission.edit, **kwargs)
    except CanvasError as error:
        outcome = lms_sent.UNKNOWN if error.status == 0 or error.status >= 500 else lms_sent.FAILED
        lms_sent.answered(gradebook, row, outcome, f"{error.status or 'no answer'}: {error}")
        return _failed(push, line, error, sent_anything=True)
    lms_sent.answered(gradebook, row, lms_sent.SENT, _answer_words(answer, file_id))
    push.sent.append(line)
    return True


def _failed(push, line, error, sent_anything):
    """A student Canvas refused goes on the list; Canvas's own failure (or none answering) stops the push."""
    push.failed.append((line, str(error)))
    if error.status == 0 or error.status >= 500:
        push.stopped = (f"Canvas failed while sending to {line.who} ({error.status or 'no answer'}): stopped; "
                        "run the same command again to send the rest"
                        + (" (it first checks whether that comment arrived)" if sent_anything else ""))
        return False
    if error.status in (401, 403, 404):
        raise error
    return True


def _grade_data(line):
    """What sets the student's standing in Canvas: Canvas's Excused, or the grade (never both: Canvas refuses)."""
    return {"excuse": "true"} if line.kind == "excused" else {"posted_grade": _points(line.score)}


def _answer_words(answer, file_id):
    words = [f"score {getattr(answer, 'score', None)}", f"grade {getattr(answer, 'grade', None)!r}",
             f"excused {getattr(answer, 'excused', None)}",
             f"workflow_state {getattr(answer, 'workflow_state', None)}", f"attempt {getattr(answer, 'attempt', None)}"]
    if file_id:
        words.append(f"file {file_id}")
    return "200: " + ", ".join(words)


def _send_grades(connection, state, gradebook, assignment, todo, push):
    """Every grade in one bulk update; recorded once Canvas's job says it is done."""
    rows = {line.key: lms_sent.sending(gradebook, assignment.id, LMS, line.key, line.canvas_user, line.submission_id,
                                       line.attempt, None if line.kind == "excused" else line.score, None,
                                       excused=line.kind == "excused") for line in todo}
    data = {line.canvas_user: _grade_data(line) for line in todo}
    try:
        progress = connection.call("sending the grades (one bulk update)", state.assignment.submissions_bulk_update,
                                   grade_data=data)
        for _ in range(PROGRESS_POLLS):
            if getattr(progress, "workflow_state", "") in ("completed", "failed"):
                break
            connection.pacing.sleep(1.0)
            progress = connection.call("asking how the bulk update goes", progress.query)
    except CanvasError as error:
        for line in todo:
            lms_sent.answered(gradebook, rows[line.key], lms_sent.FAILED, f"{error.status or 'no answer'}: {error}")
            push.failed.append((line, str(error)))
        push.stopped = f"the bulk update failed ({error}): run the same command again"
        return
    state_word = getattr(progress, "workflow_state", "")
    outcome = {"completed": lms_sent.SENT, "failed": lms_sent.FAILED}.get(state_word, lms_sent.UNKNOWN)
    answer = f"progress {getattr(progress, 'id', '?')}: {state_word} {getattr(progress, 'message', '') or ''}".strip()
    for line in todo:
        lms_sent.answered(gradebook, rows[line.key], outcome, answer)
        (push.sent.append(line) if outcome == lms_sent.SENT else push.failed.append((line, answer)))
    if outcome != lms_sent.SENT:
        push.stopped = f"Canvas's bulk update did not finish ({answer}): run the same command again"


def _post(connection, state, push):
    answer = connection.call("posting the grades", connection.canvas.graphql, POST_GRADES,
                             {"assignmentId": str(state.assignment.id)})
    errors = ((answer or {}).get("data") or {}).get("postAssignmentGrades", {}) or {}
    problems = (answer or {}).get("errors") or errors.get("errors")
    if problems:
        push.posting = f"Canvas did not post the grades: {str(problems)[:200]}; post them in Canvas's gradebook"
    else:
        push.posting = "manual posting: the grades are posted (--post); students see them now"


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

