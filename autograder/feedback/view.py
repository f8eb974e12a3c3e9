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

from .. import runtime
from . import explain
from ..gradebook.read import CaseRow


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
    """A failure that repeats an earlier one word for word says so instead of repeating it all."""
    same = ("status", "message", "traceback", "advice")
    for other in earlier:
        if not other["passed"] and not other.get("same_as") and all(other[k] == item[k] for k in same) \
                and (item["message"] or item["traceback"]):
            item["same_as"] = other["call"]
            return
    item["same_as"] = ""


def _not_run(assignment):
    """A hand-in that never ran still lists what its checks would have been, none of them run."""
    return [CaseRow(position=i, name=c.name, function=c.function, hidden=c.hidden, description=c.description,
                    call=None if c.hidden else c.call.text, points=0.0, max_points=c.points, status="not-run",
                    message="", received="", traceback="", seconds=0.0)
            for i, c in enumerate(assignment.cases)]


def student_view(submission, assignment, expected, course):
    cases_by_name = {c.name: c for c in assignment.cases}
    public, hidden = [], []
    for row in submission.cases or _not_run(assignment):
        case = cases_by_name.get(row.name)
        is_hidden = row.hidden or (case is not None and case.hidden)
        common = dict(points=_number(row.points), max_points=_number(row.max_points),
                      passed=row.status == "passed", status=row.status or "not-run")
        if is_hidden:
            description = row.description or (case.description if case else "") or "a hidden check"
            hidden.append(dict(common, description=description,
                               result=explain.hidden_result(row.status, row.message)))
            continue
        call = row.call or (case.call.text if case else row.name)
        shown_expected = runtime.show(expected[row.name]) if row.name in expected else None
        item = dict(common, call=call, result=explain.case_result(row.status),
                    expected=shown_expected, received=row.received if row.status in ("passed", "failed") else "",
                    advice="", message="", error_words="", traceback="", hint="", same_as="")
        if row.status == "not-run":
            item["expected"] = None
        elif row.status != "passed":
            item["advice"] = explain.CASE_ADVICE.get(row.status, "")
            item["hint"] = case.hint if case is not None else ""
            if row.status == "error" or row.status == "memory":
                item["message"] = row.message
                item["error_words"] = explain.error_words(row.message)
                item["traceback"] = explain.short_traceback(row.traceback)
            elif row.status == "failed" and row.message and row.message != "wrong value":
                item["message"] = row.message
            elif row.status in ("timeout", "crashed"):
                item["message"] = row.message
            _note_repeat(item, public)
        public.append(item)
    problem = explain.submission_problem(submission.status, submission.message)
    notebook = f"assignments/{assignment.id}/{assignment.notebook}"
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
        detail=submission.message if submission.status not in ("graded",) else "",
        source=submission.source,
        submitted_at=_when(submission.submitted_at),
        late=submission.late_note if submission.late else "",      # what lateness cost, when it was late
        public=public,
        hidden=hidden,
        public_points=_number(sum(float(c["points"]) for c in public)),
        public_max=_number(sum(float(c["max_points"]) for c in public)),
        hidden_points=_number(sum(float(c["points"]) for c in hidden)),
        hidden_max=_number(sum(float(c["max_points"]) for c in hidden)),
        passed_count=sum(c["passed"] for c in public + hidden),
        case_count=len(public) + len(hidden),
        colab_url=course.colab_url(notebook),
    )
