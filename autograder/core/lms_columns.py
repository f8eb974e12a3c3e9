"""Grade-column names from a Canvas gradebook export, and which one is which assignment.

Canvas (Grades → Export → Export Entire Gradebook) writes a CSV whose header is
`Student,ID,SIS User ID,SIS Login ID,[Integration ID,]Section,<assignments...>,
<assignment-group and course totals...>`; each assignment's column is its name
followed by its Canvas id in parentheses, `N-Queens (123456)`. A grade import
must use that header exactly, or Canvas makes a new assignment: so
course.toml's lms_column keeps it whole.
"""

import csv
import difflib
import re
from .errors import AutograderError

# Columns with an id in parentheses are assignments; totals ("Current Score") have none.
ASSIGNMENT_COLUMN = re.compile(r"^(?P<name>.*\S)\s+\((?P<id>\d+)\)$")


class LmsColumnsError(AutograderError):
    """The file is not a Canvas gradebook export we can read."""


def canvas_assignment_columns(path):
    """The assignment columns of a Canvas gradebook export, in the file's order."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            header = next(csv.reader(handle), None)
    except OSError as error:
        raise LmsColumnsError(f"cannot read {path}: {error.strerror}") from None
    except (UnicodeDecodeError, csv.Error) as error:
        raise LmsColumnsError(f"{path} is not a CSV file as Canvas exports it ({error})") from None
    if not header or [h.strip() for h in header[:2]] != ["Student", "ID"]:
        raise LmsColumnsError(f"{path} is not a Canvas gradebook export: its first columns are not "
                              "`Student,ID` (Canvas: Grades → Export → Export Entire Gradebook)")
    columns = [h.strip() for h in header if ASSIGNMENT_COLUMN.match(h.strip())]
    if not columns:
        raise LmsColumnsError(f"{path} has no assignment columns (`Name (id)`): create the assignments "
                              "in Canvas first, then export the gradebook again")
    return list(dict.fromkeys(columns))


def _words(text):
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def best_column(assignment_id, title, columns):
    """The column that names this assignment, or None when no column is close enough."""
    if not columns:
        return None
    names = {column: _words(ASSIGNMENT_COLUMN.match(column).group("name")) for column in columns}
    wanted = [_words(assignment_id), _words(title)]
    exact = [column for column, name in names.items() if name in wanted]
    if len(exact) == 1:
        return exact[0]
    scored = sorted(((max(difflib.SequenceMatcher(None, name, w).ratio() for w in wanted), column)
                     for column, name in names.items()), reverse=True)
    best_score, best = scored[0]
    runner_up = scored[1][0] if len(scored) > 1 else 0
    # Close, and clearly closer than the next one: otherwise ask rather than guess.
    return best if best_score >= 0.6 and best_score - runner_up >= 0.1 else None
