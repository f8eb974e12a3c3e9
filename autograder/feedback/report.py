"""The class report for the teaching team: DIR/report.html, one self-contained page.

It answers "what did most students get wrong?": cases sorted by pass rate
(worst first), each public case's wrong answers grouped by the value
received, the most common failures and who hit them, one row per student who
wrote nothing, the students whose notebook did not run cleanly (only when
their cases suffered), late hand-ins, the slowest hand-ins and every score in
a sortable table.  Hidden cases appear by description only, and their
failures by result words (explain.failure_summary), never by message, call or
value.
"""

import statistics
from collections import defaultdict
from dataclasses import dataclass

from ..gradebook import UNGRADABLE
from ..gradebook.store import late_word
from .. import runtime
from . import explain
from . import plots
from ..core import call_graph
from ..gradebook.read import load_absent, load_submissions
from ..core.render import render

TOP_FAILURES = 12
SLOWEST = 10
GROUPS_PER_CASE = 4      # the most common wrong values of a case
RECEIVED_CHARS = 160     # a wrong value is cut to this in the report


@dataclass
class CaseStats:
    label: str
    hidden: bool
    max_points: float
    passed: int = 0
    total: int = 0
    statuses: dict = None

    @property
    def rate(self):
        return self.passed / self.total if self.total else 0.0


def _label(row, cases_by_name):
    case = cases_by_name.get(row.name)
    if row.hidden or (case is not None and case.hidden):
        return f"hidden: {row.description or (case.description if case else 'a hidden check')}", True
    return row.call or (case.call.text if case else row.name), False


def _pass_chart(case_rows, narrow):
    if not case_rows:
        return None
    return plots.pass_rates([c.label.removeprefix("hidden: ") for c in case_rows], [c.rate for c in case_rows],
                            [c.hidden for c in case_rows], narrow=narrow)


def did_not_run_cleanly(submission):
    """A hand-in that could not be read or run, or whose failing cells or limits cost it points.

    A failing demo cell in a notebook that still earns every point does not count.
    """
    if submission.status in UNGRADABLE:
        return True
    lost = any(r.status != "passed" for r in submission.cases)
    troubled = bool(submission.cell_errors) or submission.status in ("timeout", "memory", "crashed") \
        or "cell" in (submission.message or "")
    return troubled and lost


def _root_causes(submissions, assignment):
    """([{function, callers, students}], most students first; {student: {caller: the function it comes from}})."""
    uses = call_graph.function_uses(assignment)
    found, blamed = defaultdict(list), defaultdict(dict)
    for submission in submissions:
        for function, _, _, callers in call_graph.root_causes(submission.cases, uses):
            found[(function, tuple(callers))].append(_who(submission))
            for caller in callers:
                blamed[submission.student].setdefault(caller, function)
    return ([dict(function=function, callers=list(callers), students=sorted(students))
             for (function, callers), students in sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0]))],
            blamed)


def _wrong_answers(submissions, cases_by_name, expected, order, blamed):
    """Public cases' wrong values, grouped by the value received (most common first).

    A group whose students' failure comes from another function (`blamed`) says so.
    """
    groups = defaultdict(lambda: defaultdict(list))
    for submission in submissions:
        for row in submission.cases:
            case = cases_by_name.get(row.name)
            if row.hidden or (case is not None and case.hidden) or row.status != "failed" \
                    or explain.is_slow(row.status, row.message) or explain.is_withheld(row.status, row.message):
                continue
            label = row.call or (case.call.text if case else row.name)
            why = (row.message or "wrong value").splitlines()[0]
            cause = blamed.get(submission.student, {}).get(row.function)
            if cause:
                why += f"; comes from `{cause}`"
            groups[label][(row.received, why)].append(_who(submission))
    result = []
    for label in sorted(groups, key=lambda label: order.get(label, len(order))):
        values = sorted(groups[label].items(), key=lambda kv: (-len(kv[1]), kv[0]))
        shown = [dict(received=_cut(received), why=why, students=sorted(students))
                 for (received, why), students in values[:GROUPS_PER_CASE]]
        name = next((c.name for c in cases_by_name.values() if not c.hidden and c.call.text == label), None)
        result.append(dict(label=label, expected=_cut(runtime.show(expected[name])) if name in expected else "",
                           groups=shown, more=len(values) - len(shown), count=sum(len(v) for _, v in values)))
    return result


def _cut(text):
    return text if len(text) <= RECEIVED_CHARS else text[:RECEIVED_CHARS] + " ..."


def class_report(course, assignment, out_dir):
    # The LMS's own test account (Canvas's "Test Student") is listed, never counted: it is not a student.
    # Only Canvas has one: a Moodle (or any other) student called "Test Student" is a student.
    submissions, test_accounts = [], []
    for submission in load_submissions(out_dir, assignment.id):
        (test_accounts if explain.is_test_account(submission) else submissions).append(submission)
    absent = load_absent(out_dir, assignment.id)
    cases_by_name = {c.name: c for c in assignment.cases}
    stats = {}
    for case in assignment.cases:
        label = f"hidden: {case.description}" if case.hidden else case.call.text
        stats[label] = CaseStats(label, case.hidden, case.points, statuses=defaultdict(int))
    empty = [s for s in submissions if explain.wrote_nothing(s)]
    nothing_from = {s.student for s in empty}
    failures = defaultdict(lambda: {"students": set(), "checks": set(), "count": 0})
    for submission in submissions:
        nothing = submission.student in nothing_from
        for row in submission.cases:
            label, hidden = _label(row, cases_by_name)
            entry = stats.setdefault(label, CaseStats(label, hidden, row.max_points, statuses=defaultdict(int)))
            entry.total += 1
            entry.statuses[row.status] += 1
            if row.status == "passed":
                entry.passed += 1
                continue
            if nothing:
                continue          # one row in "wrote nothing", not one per case here
            key = (row.function, explain.failure_summary(row.status, row.message, hidden))
            failures[key]["students"].add(_who(submission))
            failures[key]["checks"].add(label)
            failures[key]["count"] += 1
    written = {label: i for i, label in enumerate(stats)}
    # Worst first: what most students got wrong is at the top.
    case_rows = sorted((s for s in stats.values() if s.total), key=lambda c: (c.rate, written[c.label]))
    order = {c.label: i for i, c in enumerate(case_rows)}
    scores = [s.score for s in submissions if not s.excused]     # an excused student is in no mean
    max_score = assignment.max_score
    causes, blamed = _root_causes(submissions, assignment)
    not_run = [s for s in submissions if s.student not in nothing_from and did_not_run_cleanly(s)]
    listed = nothing_from | {s.student for s in not_run}
    context = dict(
        course=course.name, title=assignment.title, assignment_id=assignment.id,
        count=len(submissions), max_score=f"{max_score:g}",
        mean=f"{statistics.fmean(scores):.2f}" if scores else "-",
        median=f"{statistics.median(scores):g}" if scores else "-",
        full_marks=sum(1 for s in scores if s >= max_score - 1e-9),
        histogram=plots.score_histogram(scores, max_score) if scores else None,
        pass_chart=_pass_chart(case_rows, narrow=False),
        pass_chart_narrow=_pass_chart(case_rows, narrow=True),
        cases=[dict(label=c.label, hidden=c.hidden, points=f"{c.max_points:g}", passed=c.passed, total=c.total,
                    rate=f"{100 * c.rate:.0f}%",
                    other=", ".join(f"{explain.case_result(s)}: {n}" for s, n in sorted(c.statuses.items())
                                    if s != "passed"))
               for c in case_rows],
        wrong_answers=_wrong_answers(submissions, cases_by_name, assignment.load_expected(), order, blamed),
        causes=causes,
        failures=[dict(function=function, message=message, students=sorted(v["students"]),
                       checks=sorted(v["checks"], key=lambda label: order.get(label, len(order))),
                       count=v["count"])
                  for (function, message), v in sorted(failures.items(),
                                                       key=lambda kv: (-len(kv[1]["students"]), -kv[1]["count"],
                                                                       kv[0]))][:TOP_FAILURES],
        wrote_nothing=[_student_row(s) for s in empty],
        not_run=[_student_row(s) for s in not_run],
        zero=[_student_row(s) for s in submissions if s.score == 0 and s.student not in listed],
        late=[_student_row(s) for s in submissions if s.late],
        has_lateness=any(s.late is not None for s in submissions),
        slowest=[_student_row(s) for s in sorted(submissions, key=lambda s: -s.seconds)[:SLOWEST]],
        students=[_student_row(s) for s in submissions]
        + [dict(_student_row(s), student=f"{_who(s)} (the LMS's test account: not counted)") for s in test_accounts],
        test_accounts=[_who(s) for s in test_accounts],
        missing=[_who(a) for a in absent if a.status == "missing"],
        not_yet=[_who(a) for a in absent if a.status == "not-yet"],
        adjusted=[dict(student=_who(s), score=f"{s.score:g}", note=s.adjust_note) for s in submissions
                  if s.adjust_note],
    )
    return render("report.html.j2", **context)


def _who(submission):
    """The name, with the LMS id when it is not the name (two students can share a name)."""
    name = getattr(submission, "display_name", submission.name)
    return name if name == submission.student else f"{name} ({submission.student})"


def _student_row(submission):
    message = submission.message or ("no case passed" if submission.score == 0 and submission.cases else "")
    if submission.cell_errors:
        first = submission.cell_errors[0]
        message = f"cell {first.cell}: {first.error.splitlines()[0] if first.error else 'failed'}" + (
            f" (and {len(submission.cell_errors) - 1} more cell(s))" if len(submission.cell_errors) > 1 else "")
    return dict(student=_who(submission), score=f"{submission.score:g}", status=submission.status,
                handed_in_at=submission.submitted_at, late=late_word(submission.late), late_note=submission.late_note,
                deadline=submission.deadline + (f" ({submission.deadline_note})" if submission.deadline_note else ""),
                message=message, seconds=f"{submission.seconds:.2f}",
                student_seconds=f"{submission.student_seconds:.2f}", source=submission.source,
                handins=submission.handins)
