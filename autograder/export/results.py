"""Per-case results of an `autograder grade --out DIR` run, for the exporters.

The one place that knows where they come from: DIR/gradebook.db (the
submissions that count, and their case_results), or, with an engine that
writes only grades.csv, the Python API `autograder.grading.grade`.
"""

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

HANDIN_SUFFIXES = (".ipynb", ".py")


@dataclass
class CaseRow:
    position: int
    name: str
    function: str
    hidden: bool
    description: str
    call: str | None          # None for hidden cases
    points: float
    max_points: float
    status: str
    message: str
    received: str
    traceback: str
    seconds: float


@dataclass
class Graded:
    student: str
    source: str
    score: float
    max_score: float
    status: str
    message: str
    cases: list = field(default_factory=list)


def read(out_dir, assignment, paths=()):
    """The graded hand-ins of `assignment` in out_dir: from gradebook.db if there is one, else re-graded."""
    database = Path(out_dir) / "gradebook.db"
    if database.is_file():
        return from_gradebook(database, assignment.id)
    return from_api(assignment, handin_files(paths))


def from_gradebook(database, assignment_id):
    db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        db.row_factory = sqlite3.Row
        submissions = db.execute(
            "SELECT id, student, source, score, max_score, status, message FROM submissions "
            "WHERE assignment = ? AND counted = 1 ORDER BY student", (assignment_id,)).fetchall()
        graded = []
        for s in submissions:
            rows = db.execute("SELECT * FROM case_results WHERE submission_id = ? ORDER BY position",
                              (s["id"],)).fetchall()
            cases = [CaseRow(position=r["position"], name=r["name"], function=r["function"],
                             hidden=bool(r["hidden"]), description=r["description"] or "", call=r["call"],
                             points=r["points"] or 0.0, max_points=r["max_points"] or 0.0,
                             status=r["status"] or "", message=r["message"] or "",
                             received=r["received"] or "", traceback=r["traceback"] or "",
                             seconds=r["seconds"] or 0.0) for r in rows]
            graded.append(Graded(student=s["student"], source=s["source"] or "", score=s["score"] or 0.0,
                                 max_score=s["max_score"] or 0.0, status=s["status"] or "",
                                 message=s["message"] or "", cases=cases))
        return graded
    finally:
        db.close()


def handin_files(paths):
    files = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in HANDIN_SUFFIXES
                            and not any(part.startswith(".") or part == "__pycache__"
                                        for part in p.relative_to(path).parts))
        elif path.is_file():
            files.append(path)
    return files


def from_api(assignment, files):
    from ..grading import grade

    expected = assignment.load_expected()
    graded = []
    for path in files:
        result = grade(assignment, expected, Path(path).stem, path)
        by_name = {c.name: c for c in assignment.cases}
        cases = []
        for position, c in enumerate(result.cases):
            case = by_name.get(c.name)
            cases.append(CaseRow(position=position, name=c.name, function=c.function, hidden=c.hidden,
                                 description=case.description if case else "",
                                 call=None if c.hidden or case is None else case.call.text,
                                 points=c.points, max_points=c.max_points, status=c.status,
                                 message=c.message, received=c.received, traceback=c.traceback,
                                 seconds=c.seconds))
        graded.append(Graded(student=result.student, source=str(path), score=result.score,
                             max_score=result.max_score, status=result.status, message=result.message,
                             cases=cases))
    return graded
