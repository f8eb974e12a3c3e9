"""Course gradebooks made by hand (publish/course/book.py dataclasses), for the tests of what is written from one."""

from pathlib import Path

from autograder.publish.course.book import AssignmentColumn, CourseBook, CourseRow, HistoryEvent, Mark
from autograder.roster.store import Student

IDS = ("bitwise-queens", "n-queens", "no-three-in-line", "uninformed-search")


def mark(assignment, score, status="graded", **extra):
    return Mark(assignment, score, 5.0, status, **extra)


def sample_book(students=12):
    """Four assignments (the last not yet graded), a class with every kind of mark: late, missing, not-yet,
    adjusted, falling scores, two missed, a name that starts like a formula, one hand-in not on the roster."""
    columns = [AssignmentColumn(a, f"Title of {a}", 5.0, "2026-11-01T23:59:00-05:00",
                                None if a == "uninformed-search" else Path("x")) for a in IDS]
    rows = []
    for number in range(students):
        student = Student(f"canvas:{1000 + number}", f"Student Number{number} With A Long Name",
                          f"Number{number} With A Long Name, Student", "canvas", str(1000 + number),
                          f"S{1000 + number}", f"login{number}", f"s{number}@uni.example",
                          "Section A and Section B" if number % 2 else "Section A")
        marks = {a: mark(a, (number + i) % 6 if (number + i) % 6 <= 5 else 5) for i, a in enumerate(IDS[:3])}
        rows.append(CourseRow(student, marks))
    rows[0].marks["n-queens"] = mark("n-queens", 3.5, late=True, penalty=1.0)
    rows[1].marks["n-queens"] = mark("n-queens", 4.0, adjustment=1.0, adjust_note="+1 point(s): case 3's wording")
    rows[2].marks = {"bitwise-queens": mark("bitwise-queens", 5), "n-queens": mark("n-queens", 3),
                     "no-three-in-line": mark("no-three-in-line", 1)}                       # falling
    rows[3].marks = {"bitwise-queens": mark("bitwise-queens", 0, "missing"),
                     "n-queens": mark("n-queens", 0, "missing"),
                     "no-three-in-line": mark("no-three-in-line", 0, "not-yet")}            # missed two
    rows[4] = CourseRow(Student("canvas:2000", "=HYPERLINK(\"http://x\")<script>alert(1)</script>",
                                "=HYPERLINK, x", "canvas", "2000", "", "", "", "<b>Section</b>"),
                        {"n-queens": mark("n-queens", 5)})
    rows.append(CourseRow(Student("stray", "stray", on_roster=False), {"n-queens": mark("n-queens", 2)}))
    test = Student("canvas:1099", "Test Student", "Student, Test", "canvas", "1099", test_student=True)
    history = [HistoryEvent("canvas:1001", "n-queens", "2026-11-02T10:00:00+00:00", "adjustment", "#1 +1")]
    return CourseBook("The n-queens course", columns, rows, [test], history)
