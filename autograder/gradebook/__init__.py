"""The gradebook: SQLite in the output folder.  store.py writes it, read.py reads it back."""

from .store import CSV_COLUMNS, UNGRADABLE, Gradebook, GradebookError, GradeRow

__all__ = ["CSV_COLUMNS", "UNGRADABLE", "Gradebook", "GradebookError", "GradeRow"]
