"""Canvas columns checked before a grade file is written for Canvas (`gradebook` and `release`)."""

from ..core.lms_columns import ASSIGNMENT_COLUMN


def check_canvas_columns(course, chosen, seen, points, max_scores):
    """(refusals, warnings) for the Canvas columns `chosen` ({assignment id: column}) before a file is written.

    Canvas's importer (lib/gradebook_importer.rb) matches a column to an assignment by the id in `Title (id)`;
    an id it does not know, or a header without one, becomes a NEW assignment.  So a column that is not in the
    Canvas export we were given is refused.  A column worth other points in Canvas than our Points Possible row
    says is warned about: Canvas keeps its own points possible, and reads our scores against them."""
    refusals, warnings = [], []
    known = [header for header in seen if ASSIGNMENT_COLUMN.match(header)]
    for assignment_id, column in chosen.items():
        if known and column is None:
            refusals.append(f"{assignment_id} has no column in the Canvas gradebook export imported (its columns: "
                            f"{', '.join(known[:8])}{' ...' if len(known) > 8 else ''}): Canvas would create a new "
                            "assignment. Set its lms_column in course.toml, or create the assignment in Canvas and "
                            "import a newer export (`autograder roster import FILE`)")
        elif column is None:
            continue
        elif known and column not in known:
            refusals.append(f"the Canvas column {column!r} of {assignment_id} is not in the Canvas gradebook export "
                            f"imported (its columns: {', '.join(known[:8])}{' ...' if len(known) > 8 else ''}): "
                            "Canvas would create a new assignment of that name. Set lms_column in course.toml to "
                            "one of them, or import a newer export (`autograder roster import FILE`)")
        elif column in points and abs(points[column] - max_scores[assignment_id]) > 1e-9:
            warnings.append(f"Canvas says {column!r} is worth {points[column]:g} points, but {assignment_id} is "
                            f"graded out of {max_scores[assignment_id]:g}: Canvas reads the scores against its "
                            f"own points possible; set that assignment to {max_scores[assignment_id]:g} points in "
                            "Canvas")
    if chosen and not known and course.lms == "canvas":
        warnings.append("the Canvas columns are not checked: no Canvas gradebook export has been imported "
                        "(`autograder roster import FILE`, from Grades → Export)")
    return refusals, warnings
