"""The semester report: every assignment side by side, and the students who need a look.

One self-contained page from the course gradebook (book.py):
how many students and assignments, each graded assignment's distribution
drawn on one shared scale with its mean, median, missing, late, adjusted and excused
counts (an excused student is in no mean or total), the students who earned 0 in every graded assignment,
whose scores are falling or who missed two or more assignments (with why each is listed), every student's
row with their slip days left, and the hand-ins that matched nobody on the roster.  Test accounts are in
none of it.
"""

import statistics

import numpy as np

from ...core.render import render
from ...feedback.plots import OK, data_uri, new_figure

# A drop this large between two due assignments (as a share of their points) is worth a look by itself.
STEEP_DROP = 0.4


def distributions(book):
    """One histogram per graded assignment, in a row, on the same y scale: the PNG data URI, or None."""
    graded = book.graded()
    if not graded:
        return None
    figure = new_figure(figsize=(min(3.0 * len(graded), 12), 2.6))
    axes = figure.subplots(1, len(graded), sharey=True, squeeze=False)[0]
    for axis, assignment in zip(axes, graded):
        scores = [r.marks[assignment.id].score for r in book.rows
                  if assignment.id in r.marks and r.marks[assignment.id].due]
        edges = np.arange(0.0, assignment.max_score + 1.0, 1.0)
        axis.hist(np.clip(scores, 0, assignment.max_score), bins=edges, color=OK, edgecolor="white")
        axis.set_title(assignment.id, fontsize=9)
        axis.set_xlim(0, assignment.max_score)
        axis.set_xlabel("score", fontsize=8)
        axis.tick_params(labelsize=7)
        axis.spines[["top", "right"]].set_visible(False)
    axes[0].set_ylabel("students", fontsize=8)
    axes[0].yaxis.get_major_locator().set_params(integer=True)
    return data_uri(figure)


def _stats(book, assignment):
    marks = [r.marks[assignment.id] for r in book.rows if assignment.id in r.marks]
    due = [m.score for m in marks if m.due]
    return dict(id=assignment.id, title=assignment.title, max=f"{assignment.max_score:g}",
                mean=f"{statistics.fmean(due):.2f}" if due else "-",
                median=f"{statistics.median(due):g}" if due else "-",
                handed_in=sum(1 for m in marks if m.status not in ("missing", "not-yet", "excused")),
                missing=sum(1 for m in marks if m.missing), late=sum(1 for m in marks if m.late),
                adjusted=sum(1 for m in marks if m.adjust_note),
                not_yet=sum(1 for m in marks if not m.due and not m.excused),
                excused=sum(1 for m in marks if m.excused))


def why_to_look(book, row):
    """Why a student needs a look (0 in everything, falling scores, two or more missed), in plain words; [] when
    they do not.  An excused assignment counts for none of it."""
    reasons = []
    shares = [(a.id, row.marks[a.id].score / a.max_score) for a in book.graded()
              if a.id in row.marks and row.marks[a.id].due and a.max_score]
    # 0 in everything graded (Ivan: 0 of 10, in no list), said once: "missed N" says it of one who handed in nothing.
    if shares and all(share == 0 for _, share in shares) and not (len(row.missing) >= 2
                                                                  and len(row.missing) == len(shares)):
        reasons.append(f"0 points in every graded assignment ({len(shares)} of {len(shares)})"
                       if len(shares) > 1 else "0 points in the one assignment graded so far")
    if len(shares) >= 3 and all(later < earlier for (_, earlier), (_, later) in zip(shares[-3:], shares[-2:])):
        reasons.append("scores falling over the last three assignments")
    reasons += [f"a drop of {round(100 * (x - y))} points in 100 from {a} to {b}"
                for (a, x), (b, y) in zip(shares, shares[1:]) if x - y >= STEEP_DROP]
    if len(row.missing) >= 2:
        reasons.append(f"missed {len(row.missing)} assignments ({', '.join(row.missing)})")
    return reasons


def _cell(mark):
    if mark is None:
        return dict(text="", kind="")
    if mark.status == "not-yet":
        return dict(text="not yet", kind="not-yet")
    if mark.not_graded:      # handed in, no grade yet (a stopped run): never shown as a number
        return dict(text="not graded yet", kind="not-yet")
    if mark.excused:         # in no mean or total
        return dict(text="excused", kind="excused")
    kind = "missing" if mark.missing else "late" if mark.late else "adjusted" if mark.adjust_note else ""
    return dict(text=f"{mark.score:g}" + (f" ({kind})" if kind else ""), kind=kind)


def _student(book, row, reasons=()):
    s = row.student
    return dict(name=s.name, key=s.key, section=s.section, total=f"{row.total:g}", possible=f"{row.possible:g}",
                marks=[_cell(row.marks.get(a.id)) for a in book.assignments], reasons=list(reasons),
                slip="" if row.slip_pool is None else f"{row.slip_left} of {row.slip_pool}")


def semester_report(book):
    graded = book.graded()
    on_roster = [r for r in book.rows if r.student.on_roster]
    look = [(row, why_to_look(book, row)) for row in on_roster]
    return render("semester_report.html.j2", course=book.course, students=len(on_roster),
                  test_accounts=len(book.test_students), graded=len(graded), assignments=len(book.assignments),
                  max_total=f"{book.max_total:g}", chart=distributions(book),
                  stats=[_stats(book, a) for a in graded], columns=[a.id for a in book.assignments],
                  look=[_student(book, row, reasons) for row, reasons in look if reasons],
                  rows=[_student(book, row) for row in on_roster],
                  slip_days=any(row.slip_pool is not None for row in on_roster),
                  off_roster=[_student(book, row) for row in book.rows if not row.student.on_roster])
