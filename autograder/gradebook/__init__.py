"""The gradebook: SQLite in the output folder.  store.py writes it, read.py reads it back, schema.py says
what its tables hold in each version and upgrades an older one."""

from .store import CSV_COLUMNS, UNGRADABLE, Gradebook, GradebookError, GradeRow

__all__ = ["CSV_COLUMNS", "UNGRADABLE", "Gradebook", "GradebookError", "GradeRow"]
