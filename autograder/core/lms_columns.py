"""Canvas's grade-column names, and which one is which assignment.

Canvas (Grades → Export → Export Entire Gradebook) writes a CSV whose header is
`Student,ID,SIS User ID,SIS Login ID,[Integration ID,]Section,<assignments...>,
<assignment-group and course totals...>`; each assignment's column is its name
followed by its Canvas id in parentheses, `N-Queens (123456)`. A grade import
must use that header exactly, or Canvas makes a new assignment: so
course.toml's lms_column keeps it whole.  The export itself is read in one
place, roster/lms_files.py (`canvas_columns`, and `read_roster` for its students).
"""

import difflib
import re

# Columns with an id in parentheses are assignments; totals ("Current Score") have none.
ASSIGNMENT_COLUMN = re.compile(r"^(?P<name>.*\S)\s+\((?P<id>\d+)\)$")


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
