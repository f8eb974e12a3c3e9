"""The class report for the teaching team: DIR/report.html, one self-contained page.

Score distribution, pass rate per case, the most common failures and who hit
them, students who scored 0 or whose notebook did not run, the slowest
hand-ins.  Hidden cases appear by description only, and their failures by
result words (explain.failure_summary), never by message, call or value.
"""

import statistics
from collections import defaultdict
from dataclasses import dataclass

from ..gradebook import UNGRADABLE
from ..gradebook.store import late_word
from . import explain, plots
from ..gradebook.read import load_submissions
from .render import render

TOP_FAILURES = 12
SLOWEST = 10


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


def class_report(course, assignment, out_dir):
    submissions = load_submissions(out_dir, assignment.id)
    cases_by_name = {c.name: c for c in assignment.cases}
    stats = {}
    for case in assignment.cases:
        label = f"hidden: {case.description}" if case.hidden else case.call.text
        stats[label] = CaseStats(label, case.hidden, case.points, statuses=defaultdict(int))
    failures = defaultdict(lambda: {"students": set(), "checks": set(), "count": 0})
    for submission in submissions:
        for row in submission.cases:
            label, hidden = _label(row, cases_by_name)
            entry = stats.setdefault(label, CaseStats(label, hidden, row.max_points, statuses=defaultdict(int)))
            entry.total += 1
            entry.statuses[row.status] += 1
            if row.status == "passed":
                entry.passed += 1
                continue
            key = (row.function, explain.failure_summary(row.status, row.message, hidden))
            failures[key]["students"].add(_who(submission))
            failures[key]["checks"].add(label)
            failures[key]["count"] += 1
    case_rows = [s for s in stats.values() if s.total]
    order = {c.label: i for i, c in enumerate(case_rows)}
    scores = [s.score for s in submissions]
    max_score = assignment.max_score
    context = dict(
        course=course.name, title=assignment.title, assignment_id=assignment.id,
        count=len(submissions), max_score=f"{max_score:g}",
        mean=f"{statistics.fmean(scores):.2f}" if scores else "-",
        median=f"{statistics.median(scores):g}" if scores else "-",
        full_marks=sum(1 for s in scores if s >= max_score - 1e-9),
        histogram=plots.score_histogram(scores, max_score) if scores else None,
        pass_chart=plots.pass_rates([c.label.removeprefix("hidden: ") for c in case_rows], [c.rate for c in case_rows],
                                    [c.hidden for c in case_rows]) if case_rows else None,
        cases=[dict(label=c.label, hidden=c.hidden, points=f"{c.max_points:g}", passed=c.passed, total=c.total,
                    rate=f"{100 * c.rate:.0f}%",
                    other=", ".join(f"{explain.case_result(s)}: {n}" for s, n in sorted(c.statuses.items())
                                    if s != "passed"))
               for c in case_rows],
        failures=[dict(function=function, message=message, students=sorted(v["students"]),
                       checks=sorted(v["checks"], key=lambda label: order.get(label, len(order))),
                       count=v["count"])
                  for (function, message), v in sorted(failures.items(),
                                                       key=lambda kv: (-len(kv[1]["students"]), -kv[1]["count"],
                                                                       kv[0]))][:TOP_FAILURES],
        not_run=[_student_row(s) for s in submissions
                 if s.score == 0 or s.status in UNGRADABLE or "cell" in (s.message or "")],
        slowest=[_student_row(s) for s in sorted(submissions, key=lambda s: -s.seconds)[:SLOWEST]],
        students=[_student_row(s) for s in submissions],
    )
    return render("report.html.j2", **context)


def _who(submission):
    """The name, with the LMS id when it is not the name (two students can share a name)."""
    name = submission.display_name
    return name if name == submission.student else f"{name} ({submission.student})"


def _student_row(submission):
    message = submission.message or ("no case passed" if submission.score == 0 and submission.cases else "")
    return dict(student=_who(submission), score=f"{submission.score:g}", status=submission.status,
                handed_in_at=submission.submitted_at, late=late_word(submission.late), late_note=submission.late_note,
                message=message, seconds=f"{submission.seconds:.2f}",
                student_seconds=f"{submission.student_seconds:.2f}", source=submission.source,
                handins=submission.handins)
