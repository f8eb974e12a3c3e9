"""`autograder build`: regenerate every generated file from the reference notebooks.

Generated: assignments/<id>/<notebook>, autograder/assignments/<id>/expected.json
and public_rubric.xlsx.  With check=True nothing is written; the stale files
are returned so the command can name them and fail.
"""

from dataclasses import dataclass

from .assignment import load_assignment
from .expected_values import compute_expected, expected_text
from .rubric import read_rubric, rubric_rows, write_rubric
from .student_notebook import Context, build_student_notebook, notebook_text, read_reference

RUBRIC = "public_rubric.xlsx"


@dataclass
class BuildReport:
    written: list
    stale: list


def build(course, check=False, progress=print):
    texts, sheets = {}, {}
    for assignment_id in course.assignment_ids():
        assignment = load_assignment(course, assignment_id)
        progress(f"{assignment_id}: running the reference notebook")
        reference = read_reference(assignment)
        expected = compute_expected(assignment, reference)
        context = Context(assignment, expected, course.colab_url(assignment.student_path.relative_to(course.root)))
        texts[assignment.expected_path] = expected_text(assignment, expected)
        texts[assignment.student_path] = notebook_text(build_student_notebook(reference, context))
        sheets[assignment_id] = rubric_rows(assignment, expected, course.assignments.get(assignment_id))

    rubric_path = course.root / RUBRIC
    stale = [path for path, text in texts.items() if _read(path) != text]
    if not rubric_path.exists() or read_rubric(rubric_path) != _as_read_back(sheets):
        stale.append(rubric_path)
    stale = [p.relative_to(course.root) for p in stale]
    if check:
        return BuildReport(written=[], stale=stale)
    for path, text in texts.items():
        if path.relative_to(course.root) in stale:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if rubric_path.relative_to(course.root) in stale:
        write_rubric(sheets, rubric_path)
    return BuildReport(written=stale, stale=[])


def _read(path):
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _as_read_back(sheets):
    # What openpyxl gives back: sheet titles cut to 31 characters, tuples of values.
    return {title[:31]: [tuple(row) for row in rows] for title, rows in sheets.items()}
