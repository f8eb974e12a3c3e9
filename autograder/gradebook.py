"""grades.csv: one row per student, written in a stable order."""

import csv

COLUMNS = ("student", "assignment", "score", "max_score", "status", "message")


def write_grades_csv(results, path):
    rows = sorted(results, key=lambda r: (r.assignment, r.student))
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for r in rows:
            writer.writerow((r.student, r.assignment, f"{r.score:g}", f"{r.max_score:g}", r.status, r.message))
