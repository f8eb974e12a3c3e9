"""The student-facing view of one hand-in: the only place hidden cases are filtered.

Templates get plain dicts built here and nothing else, so a template cannot
show what this module did not put in.  A case is hidden when the gradebook
says so or the assignment's cases.toml does now; a hidden case contributes
its description, points and result words only (never its call, expected or
received value, hint or message).  Nothing that changes from one grading run
to the next (timings, grading times, run ids) is in the view, so the same
results give the same bytes.
"""

from datetime import datetime
from urllib.parse import quote

from .. import runtime
from . import explain
from ..core import call_graph
from ..core.course_file import deadline_text
from ..gradebook.read import CaseRow
from ..intake.assemble import NOTE, notes_in


def _number(value):
    return f"{round(value, 4):g}"


def _when(iso):
    """"2026-03-01 10:00" from an ISO 8601 time; the text as it is when it is not one."""
    try:
        moment = datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return iso or ""
    zone = moment.strftime(" %Z") if moment.tzinfo else ""
    return moment.strftime("%Y-%m-%d %H:%M") + zone


def _note_repeat(item, earlier):
    """A failure that repeats an earlier one (the same error from the same function) is folded into it: the
    earlier block lists this call among `also`, and this one gets no block of its own (`same_as`)."""
    same = ("status", "message", "why", "advice", "function")
    for other in earlier:
        if not other["passed"] and not other.get("same_as") and all(other[k] == item[k] for k in same) \
                and (item["message"] or item["traceback"]) and item["status"] != "failed":
            item["same_as"] = other["call"]
            other["also"].append(item["call"])
            return
    item["same_as"] = ""


def _not_run(assignment):
    """A hand-in that never ran still lists what its checks would have been, none of them run."""
    return [CaseRow(position=i, name=c.name, function=c.function, hidden=c.hidden, description=c.description,
                    call=None if c.hidden else c.call.text, points=0.0, max_points=c.points, status="not-run",
                    message="", received="", traceback="", seconds=0.0)
            for i, c in enumerate(assignment.cases)]


def path_in_clone(source, repository):
    """The hand-in's path inside its Classroom clone, from its source (`[zip name:]<repository>/<path>`), or ""."""
    head, found, inside = source.partition(f"{repository}/") if repository else ("", "", "")
    return inside if found and (head == "" or head.endswith(":")) else ""


def notebook_link(submission, assignment, course):
    """(Colab URL, what it opens): the student's own file for a GitHub Classroom clone, else the template.

    The gradebook keeps the clone's folder, named as the repository (`n-queens-alice`); the notebook's path
    inside it follows it in the hand-in's source (`[zip name:]n-queens-alice/<path>`).  The repository lives
    under the course repository's owner.
    """
    repository = submission.repository or ""
    inside = path_in_clone(submission.source, repository)
    if inside and inside.endswith(".ipynb"):
        owner = course.repository.removeprefix("https://github.com/").strip("/").split("/")[0]
        url = (f"https://colab.research.google.com/github/{owner}/{quote(repository)}/blob/main/"
               f"{quote(inside)}")
        return url, "Open your notebook from your repository in Colab"
    return (course.colab_url(f"assignments/{assignment.id}/{assignment.notebook}"),
            "Open the original assignment in Colab (a fresh copy, not the notebook you handed in)")


def _public_item(row, case, expected, callers_of_cause):
    call = row.call or (case.call.text if case else row.name)
    shown_expected = runtime.show(expected[row.name]) if row.name in expected else None
    slow = explain.is_slow(row.status, row.message)
    withheld = explain.is_withheld(row.status, row.message)
    status = "slow" if slow else "withheld" if withheld else row.status or "not-run"
    item = dict(passed=row.status == "passed", status=status, call=call,
                result=explain.case_result(row.status, row.message),
                expected=shown_expected, received=row.received if row.status in ("passed", "failed") else "",
                advice="", message="", why="", diff="", error_words="", traceback="", hint="", same_as="",
                also=[], function=row.function)
    if row.status == "not-run":
        item["expected"] = None
    elif row.status != "passed":
        item["advice"] = explain.CASE_ADVICE.get(status if slow or withheld else row.status, "")
        item["hint"] = case.hint if case is not None else ""
        cause = callers_of_cause.get(row.function)
        if cause:
            # The case's own hint would send the student to the wrong function.
            item["hint"] = runtime.fix_first(cause)
        if slow:
            item["expected"], item["received"], item["why"] = None, "", row.message
        elif withheld:
            # The value was right: the why is which required check did not pass (grade/scoring.py).
            item["why"] = row.message.removeprefix("withheld: ")
            item["hint"] = ""
        elif row.status == "failed" and row.message and row.message != "wrong value":
            # runtime.explain_difference: a sentence, then (strings) the lines that differ
            item["why"], _, item["diff"] = row.message.partition("\n")
        elif row.status in ("error", "memory"):
            item["message"] = row.message
            item["error_words"] = explain.error_words(row.message)
            item["traceback"] = explain.short_traceback(row.traceback)
            # The case's hint speaks of the student's functions: an error that came from elsewhere is named as such,
            # and one that says how the notebook runs (exit(), input(), an import) is its own explanation.
            if explain.exception_name(row.message) in explain.NOT_THE_FUNCTION:
                item["hint"] = ""
            elif library := explain.raised_in_library(row.traceback):
                item["hint"] = library
        elif row.status == "timeout":
            item["message"] = explain.timeout_location(row.message, row.traceback) or row.message
            item["traceback"] = explain.short_traceback(row.traceback)
        elif row.status == "crashed":
            item["message"] = row.message
    return item


def student_view(submission, assignment, expected, course):
    cases_by_name = {c.name: c for c in assignment.cases}
    rows = submission.cases or _not_run(assignment)
    causes = call_graph.root_causes(rows, call_graph.function_uses(assignment))
    callers_of_cause = {}
    for function, _, _, callers in causes:
        for caller in callers:
            callers_of_cause.setdefault(caller, function)
    public, hidden = [], []
    for row in rows:
        case = cases_by_name.get(row.name)
        points = dict(points=_number(row.points), max_points=_number(row.max_points))
        if row.hidden or (case is not None and case.hidden):
            description = row.description or (case.description if case else "") or "a hidden check"
            slow = explain.is_slow(row.status, row.message)
            withheld = explain.is_withheld(row.status, row.message)
            hidden.append(dict(points, passed=row.status == "passed",
                               status="slow" if slow else "withheld" if withheld else row.status or "not-run",
                               description=description, result=explain.hidden_result(row.status, row.message),
                               # only the grader's own sentence: public calls and hidden descriptions
                               why=row.message.removeprefix("withheld: ") if withheld else ""))
            continue
        item = dict(points, **_public_item(row, case, expected, callers_of_cause))
        if submission.cell_errors and explain.exception_name(item["message"]) == "NameError":
            item["error_words"] += (" A cell of your notebook failed (see the top of this page): "
                                    "the name is probably defined or imported there.")
        if not item["passed"] and item["status"] != "not-run":
            _note_repeat(item, public)
        public.append(item)
    problem = explain.submission_problem(submission.status, submission.message)
    if submission.status in FOR_THE_TEACHING_TEAM:    # the message is the grader's, for instructors: not shown
        problem = FOR_THE_TEACHING_TEAM[submission.status]
    cell_errors = [dict(cell=e.cell, source=e.source, error=e.error,
                        words=explain.error_words(e.error, cell=True)) for e in submission.cell_errors]
    if cell_errors and problem and submission.status == "graded":
        problem = None      # the failing cells, shown by name, say it better
    if submission.status != "empty" and explain.wrote_nothing(submission):
        problem = explain.template_problem(assignment.cases[0].function if assignment.cases else "the first function")
        for item in public:     # the notice above says it all once: each block keeps its call and hint only
            item.update(advice="", message="", error_words="", traceback="", expected=None, received="")
    colab_url, colab_note = notebook_link(submission, assignment, course)
    return dict(
        student=submission.display_name,
        assignment_id=assignment.id,
        title=assignment.title,
        course=course.name,
        score=_number(submission.score),
        max_score=_number(submission.max_score),
        percent=round(100 * submission.score / submission.max_score) if submission.max_score else 0,
        status=submission.status,
        problem=dict(what=problem[0], action=problem[1]) if problem else None,
        detail=submission.message if submission.status not in ("graded", *FOR_THE_TEACHING_TEAM) else "",
        cell_errors=cell_errors,
        causes=[call_graph.sentence(f, n, total) for f, n, total, _ in causes],
        source=submission.source,
        handed_in=[note[len(NOTE):] for note in notes_in(submission.message)],   # what intake said of the hand-in
        submitted_at=_when(submission.submitted_at),
        late=submission.late_note if submission.late else "",      # what lateness cost, when it was late
        deadline=_own_deadline(submission),
        adjustment=_adjustment(submission),
        # Slip days: how many this hand-in spent, and what the student's pool holds after it (every page shows it).
        slip=submission.slip_note if submission.slip_days is not None else "",
        excused=submission.excused.removeprefix("excused: ") if submission.excused else "",
        public=public,
        hidden=hidden,
        public_points=_number(sum(float(c["points"]) for c in public)),
        public_max=_number(sum(float(c["max_points"]) for c in public)),
        hidden_points=_number(sum(float(c["points"]) for c in hidden)),
        hidden_max=_number(sum(float(c["max_points"]) for c in hidden)),
        passed_count=sum(c["passed"] for c in public + hidden),
        case_count=len(public) + len(hidden),
        colab_url=colab_url,
        colab_note=colab_note,
    )


# Statuses whose message speaks to the teaching team (what went wrong in the grader, which command fixes it):
# a student page says instead what it means for them, and that it is not theirs to fix.
FOR_THE_TEACHING_TEAM = {
    "grader-error": ("The grader itself failed while grading your hand-in, so this score is not a judgement of "
                     "your work.",
                     "Nothing to do on your side: your teaching team has been told by the grader and will grade "
                     "it again."),
    "not-graded": ("Your hand-in was received but has not been graded yet.",
                   "Nothing to do on your side: your teaching team will finish grading it."),
}


def _own_deadline(submission):
    """"Fri 4 Dec 2026, 23:59 (UTC-05:00), an extension ..." when the student has a deadline of their own."""
    if not submission.deadline or not submission.deadline_note:
        return ""
    return f"{deadline_text(submission.deadline)}: {submission.deadline_note}"


def _adjustment(submission):
    if submission.adjustment is None and not submission.adjust_note:
        return ""
    before = "" if submission.late_score is None else f" (the grader's score: {_number(submission.late_score)})"
    return f"{submission.adjust_note}{before}"
