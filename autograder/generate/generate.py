"""`autograder build`: regenerate every generated file from the reference notebooks.

Generated: assignments/<id>/<notebook>, autograder/assignments/<id>/expected.json,
autograder/assignments/<id>/timing.json (the reference's timing, see limits.py),
public_rubric.xlsx, and autograder/assignments/<id>/audit.json for assignments whose
cases.toml sets a mutation_floor (re-audited only when stale; see audit/cache.py).  With check=True nothing is written; the stale files
are returned so the command can name them and fail.
"""

import os
from dataclasses import dataclass, field

from ..core.assignment import load_assignment
from ..audit import run_audit
from ..audit.cache import audit_path, check_audit
from ..audit.config import load_config
from ..grade.handin import shared_sandbox
from .expected_values import compute_expected, compute_timing, expected_text
from ..core.limits import case_limits, load_timing, timing_text
from ..core.limits import timing_is_current as limits_current
from .rubric import read_rubric, rubric_rows, write_rubric
from ..notebook.student_notebook import Context, build_student_notebook, notebook_text, read_reference

RUBRIC = "public_rubric.xlsx"


@dataclass
class BuildReport:
    written: list
    stale: list
    failures: list = field(default_factory=list)  # mutation scores below their floor


def build(course, check=False, progress=print, retime=True):
    """`retime=False` (`autograder init`): keep each recorded timing that names the assignment's cases, unmeasured.
    init changes links and settings, never the reference's code, so its times still hold; measured again on a busy
    machine they could move a limit, and with it every student notebook, which a fork's example class must match."""
    texts, sheets, audits = {}, {}, []
    for assignment_id in course.assignment_ids():
        assignment = load_assignment(course, assignment_id)
        progress(f"{assignment_id}: running the reference notebook")
        reference = read_reference(assignment)
        expected = compute_expected(assignment, reference)
        texts[assignment.expected_path] = expected_text(assignment, expected)
        recorded = load_timing(assignment)
        if not retime and recorded is not None and set(recorded["cases"]) == {c.name for c in assignment.cases}:
            texts[assignment.timing_path], timing = _read(assignment.timing_path), recorded
        else:
            # Timings vary run to run: the recorded ones stay while they still hold (limits.py).
            timing = compute_timing(assignment, reference)
            if limits_current(recorded, timing, assignment.limit_floor, assignment.limit_factor):
                texts[assignment.timing_path], timing = _read(assignment.timing_path), recorded
            else:
                texts[assignment.timing_path] = timing_text(assignment, timing["cases"], timing["cells"],
                                                            timing["calibration"])
        # The rubric's column and the check cells state the same limits: those of the machine that built.
        limits_here = case_limits(assignment, timing, 1.0)
        context = Context(assignment, expected, course.colab_url(assignment.student_path.relative_to(course.root)),
                          dict(zip((c.name for c in assignment.cases), limits_here)))
        texts[assignment.student_path] = notebook_text(build_student_notebook(reference, context))
        sheets[assignment_id] = rubric_rows(assignment, expected, course.assignments.get(assignment_id),
                                            limits_here)
        audits.append((assignment, load_config(assignment).floor))

    rubric_path = course.root / RUBRIC
    stale = [path for path, text in texts.items() if _read(path) != text]
    # In course order too: a sheet order that is not the semester's is stale.
    if not rubric_path.exists() or list(read_rubric(rubric_path).items()) != list(_as_read_back(sheets).items()):
        stale.append(rubric_path)
    stale_audits = [a for a, floor in audits if check_audit(a, floor, texts[a.expected_path])[0]]
    stale = [p.relative_to(course.root) for p in stale + [audit_path(a) for a in stale_audits]]
    if check:
        return BuildReport(written=[], stale=stale, failures=_floor_failures(audits))
    for path, text in texts.items():
        if path.relative_to(course.root) in stale:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if rubric_path.relative_to(course.root) in stale:
        write_rubric(sheets, rubric_path)
    if stale_audits:
        sandbox = shared_sandbox()
        for assignment in stale_audits:
            progress(f"{assignment.id}: auditing the cases (mutants of the reference)")
            run_audit(assignment, sandbox, len(os.sched_getaffinity(0)), progress=progress)
    return BuildReport(written=stale, stale=[], failures=_floor_failures(audits))


def _floor_failures(audits):
    return [problem for assignment, floor in audits if (problem := check_audit(assignment, floor)[1])]


def _read(path):
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _as_read_back(sheets):
    # What openpyxl gives back: sheet titles cut to 31 characters, tuples of values.
    return {title[:31]: [tuple(row) for row in rows] for title, rows in sheets.items()}
