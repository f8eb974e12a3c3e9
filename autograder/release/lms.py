"""`release --format lms`: feedback files, a zip of them and grade CSVs, for bulk upload.

TARGET gets:
  feedback/<name>          one self-contained HTML feedback page per student
  <assignment>-feedback.zip  the same files, for an LMS's bulk feedback upload
  canvas_grades.csv        Canvas gradebook import (Grades → Import); not for a Moodle course
  moodle_grades.csv        for a Moodle course: the assignment's grading worksheet, as Moodle's "Upload grading
                           worksheet" reads it (mod/assign/feedback/offline/importgradeslib.php: `Identifier`
                           "Participant <id>", `Grade`, `Last modified (grade)`, `Feedback comments`)
  gradescope_grades.csv    Name,SID,Email,Total Score,Max Points,Status,handed_in_at,late
  blackboard_grades.csv    Blackboard's Work Offline upload (release/blackboard.py): students keyed by username
  d2l_grades.csv           D2L's grade import (release/d2l.py): students keyed by Username or OrgDefinedId
  lateness.csv             Student,ID,handed_in_at,late,penalty,late_note: when each hand-in came, and what
                           lateness cost (Canvas makes a new assignment of any column it does not know,
                           so canvas_grades.csv keeps to its import columns and lateness goes here)
  adjustments.csv          Student,ID,score,adjustment,reason: every score changed by hand (`autograder adjust`)
  release_manifest.json    one content hash per student: what the last release wrote

With a roster, the grade files list the roster's students, as `gradebook`'s import files do: a student who
handed in nothing by their own deadline with 0 points (`missing`); one whose deadline is still ahead
(`not-yet`), or who may have handed in a hand-in the roster cannot place (`unresolved`, which `release`
refuses without --force), with an empty cell, so the LMS enters nothing.  A hand-in that matches nobody on
the roster gets its feedback file and no grade row: it is named.

File names pair feedback with students the way the LMS does:
  * a hand-in from a Canvas "Download Submissions" zip keeps Canvas's prefix
    `lastfirst[_LATE]_userid_submissionid_` (`smithalice_1001_5001_feedback.html`),
    which is how Canvas matches files in a bulk upload to submissions;
  * one from a Moodle "Download all submissions" zip goes in a folder named
    like Moodle's (`Alice Smith_4711_assignsubmission_file_/feedback.html`), or, from
    a download made without folders, keeps Moodle's file prefix
    (`Alice Smith_4711_assignsubmission_file_feedback.html`): Moodle's feedback zip
    import pairs either with the participant;
  * anything else is named by student (`alice_feedback.html`).

canvas_grades.csv has Canvas's import columns `Student,ID,SIS User ID,SIS
Login ID,Section,<assignment>`: Student is the name we know, ID the Canvas
user id from the file prefix (empty when the hand-in did not come from
Canvas: Canvas then asks to match that row by hand), the SIS and Section
columns are left empty (we do not know them; Canvas matches by ID), and the
grade column is headed by the Canvas assignment's column (--lms-column, else
lms_column in course.toml, which `autograder init` reads from a Canvas gradebook
export), or else the assignment's title (Canvas creates a new assignment for an
unknown header).

No file holds Canvas's Test Student (a roster's flagged test account, or, without a roster, Canvas's
"Test Student" / `studenttest` in a Canvas download); a student called so on another LMS is a student.
A student whose hand-in is not graded yet (a run was stopped) is refused by `release`; with --force they
get a blank grade, never 0, and no feedback file.

Releasing again writes nothing unless something changed (same bytes, same
zip: entries have fixed times), and names the students whose feedback or
grade changed.
"""

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.csv_cells import Number, csv_text
from ..grade.explain import is_test_student
from ..gradebook.store import UNGRADABLE, late_word
from . import blackboard, d2l
from .names import canvas_prefix, canvas_user_id, moodle_folder, moodle_participant, moodle_prefix
from ..feedback.write import digest, write_if_changed, zip_bytes

MANIFEST = "release_manifest.json"
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
GRADESCOPE_COLUMNS = ("Name", "SID", "Email", "Total Score", "Max Points", "Status", "handed_in_at", "late")
LATENESS_COLUMNS = ("Student", "ID", "handed_in_at", "late", "penalty", "late_note")
ADJUSTMENT_COLUMNS = ("Student", "ID", "score", "adjustment", "reason")


@dataclass
class Release:
    changed: list = field(default_factory=list)     # students whose release changed (new ones included)
    removed: list = field(default_factory=list)     # students released before, no longer in the gradebook
    unchanged: list = field(default_factory=list)
    problems: dict = field(default_factory=dict)    # student -> why not released
    written: list = field(default_factory=list)     # files written (paths)
    test_accounts: list = field(default_factory=list)   # the LMS's test accounts, in no file
    blank: list = field(default_factory=list)       # handed in, not graded yet: a blank grade (--force)
    no_grade_row: list = field(default_factory=list)   # in no grade file: moodle_grades.csv needs Moodle's id
    off_roster: list = field(default_factory=list)  # hand-ins that match nobody on the roster: in no grade file


def _is_test_account(submission, test_students):
    """The LMS's test account: flagged by the roster, or, without one, Canvas's Test Student (the only LMS that
    has such an account) in a Canvas download.  A Moodle student named "Test Student" is a student."""
    if submission.student in test_students:
        return True
    from_canvas = submission.student.startswith("canvas:") or canvas_prefix(submission.source)
    return bool(from_canvas) and is_test_student(submission.display_name)


def feedback_file_name(page):
    source = page.submission.source
    prefix = canvas_prefix(source) or moodle_prefix(source)
    if prefix:
        return f"{prefix}feedback.html"
    folder = moodle_folder(source)
    if folder:
        return f"{folder}/feedback.html"
    return f"{page.folder}_feedback.html"


def _csv(rows, header):
    return csv_text(header, rows)      # cells from students never become spreadsheet formulas


def _lms_id(submission, lms):
    """The LMS's own id from the student key (`canvas:111`), or from a Canvas file name."""
    prefix = f"{lms}:"
    if submission.student.startswith(prefix):
        return submission.student[len(prefix):]
    return canvas_user_id(getattr(submission, "source", "")) if lms == "canvas" else ""


def _absent_score(row):
    """A roster student with no hand-in: 0 when `missing`; an empty cell when `not-yet` or `unresolved`."""
    return f"{row.score:g}" if row.status == "missing" else ""


def canvas_csv(pages, column, absent=(), blank=()):
    """`absent`: AbsentRow of roster students with no hand-in; `blank`: [(name, student key)] of students handed
    in and not graded yet (--force): an empty cell."""
    rows = [(p.submission.display_name, _lms_id(p.submission, "canvas"), "", "", "", f"{p.submission.score:g}")
            for p in pages]
    rows += [(a.name, _lms_id(a, "canvas"), "", "", "", _absent_score(a)) for a in absent]
    rows += [(name, key.removeprefix("canvas:") if key.startswith("canvas:") else "", "", "", "", "")
             for name, key in blank]
    return _csv(rows, (*CANVAS_COLUMNS, column))


MOODLE_WORKSHEET_COLUMNS = ("Identifier", "Full name", "Email address", "Grade", "Maximum Grade",
                            "Last modified (grade)", "Feedback comments")


def moodle_csv(pages, max_score):
    """Moodle's grading worksheet for this assignment: one row per hand-in from a Moodle download (the
    participant id is in its folder or file name; Moodle numbers participants per assignment, so no other
    id will do).  `Last modified (grade)` is left empty, so Moodle takes the row unless its own grade is newer
    and "ignore modified" is off.  Returns (text, students left out because no participant id is known)."""
    rows, left = [], []
    for page in pages:
        s = page.submission
        participant = moodle_participant(s.source)
        if not participant:
            left.append(page.who)
            continue
        said = [line for line in s.message.splitlines() if line and not line.startswith("handed in: ")]
        why = f"{s.status}: {said[0]}" if s.status in UNGRADABLE and said else ""     # a 0 that says why
        rows.append((f"Participant {participant}", s.display_name, s.email, f"{s.score:g}", f"{max_score:g}", "",
                     "; ".join(filter(None, [why, s.adjust_note or ""]))))
    return _csv(rows, MOODLE_WORKSHEET_COLUMNS), left


def gradescope_csv(pages, absent=(), people=None):
    """`people`: {key: roster Student}, for the email of a student with no hand-in (a key is never an email)."""
    rows = []
    for s in [p.submission for p in pages]:
        sid = _lms_id(s, "gradescope")
        email = s.email or (sid if "@" in sid else "")
        rows.append((s.display_name, "" if "@" in sid else sid, email, f"{s.score:g}", f"{s.max_score:g}", s.status,
                     s.submitted_at, late_word(s.late)))
    for a in absent:
        sid = _lms_id(a, "gradescope")
        student = (people or {}).get(a.student)
        email = (student.email if student is not None else "") or (sid if "@" in sid else "")
        rows.append((a.name, "" if "@" in sid else sid, email, _absent_score(a), f"{a.max_score:g}", a.status, "",
                     ""))
    return _csv(rows, GRADESCOPE_COLUMNS)


def adjustments_csv(pages, absent=()):
    rows = [(p.submission.display_name, _lms_id(p.submission, "canvas") or p.submission.student,
             f"{p.submission.score:g}", "" if p.submission.adjustment is None else Number(p.submission.adjustment),
             p.submission.adjust_note) for p in pages if p.submission.adjust_note]
    rows += [(a.name, _lms_id(a, "canvas") or a.student, _absent_score(a), "", a.adjust_note) for a in absent
             if a.adjust_note]
    return _csv(rows, ADJUSTMENT_COLUMNS)


def lateness_csv(pages):
    return _csv([(p.submission.display_name, _lms_id(p.submission, "canvas") or p.submission.student,
                  p.submission.submitted_at, late_word(p.submission.late), f"{p.submission.penalty:g}",
                  p.submission.late_note) for p in pages], LATENESS_COLUMNS)


def release_lms(assignment, pages, target, column=None, absent=(), lms="other", blank=(), test_students=(),
                people=None):
    """`absent`: gradebook.read.AbsentRow of roster students with no hand-in (the `missing` ones get 0 points,
    the others an empty cell); `blank`: [(name, key)] of students not graded yet, released blank (--force);
    `test_students`: keys of the LMS's test accounts, in no file; `people`: {key: roster Student}."""
    left_out = [p for p in pages.pages if _is_test_account(p.submission, test_students)]
    pages = replace(pages, pages=[p for p in pages.pages if p not in left_out])
    absent = [a for a in absent if a.student not in test_students]
    blank = [(name, key) for name, key in blank if key not in test_students]
    # The grade files list the roster's students, as `gradebook` does: a hand-in that matched nobody on the
    # roster has its feedback file, and no row an LMS would have to match by hand (named instead).
    graded = [p for p in pages.pages if p.submission.on_roster != 0]
    target = Path(target)
    old = _read_manifest(target)
    files = {feedback_file_name(page): page.html for page in pages.pages}
    students = {}
    for page in pages.pages:
        name = feedback_file_name(page)
        students[page.student] = {"file": name, "sha256": digest(
            page.html, f"{page.submission.score:g}/{page.submission.max_score:g}", page.submission.status)}
    result = Release(problems=dict(pages.withheld), test_accounts=[p.who for p in left_out],
                     off_roster=[p.who for p in pages.pages if p.submission.on_roster == 0])
    outputs = {f"feedback/{name}": html for name, html in files.items()}
    outputs[f"{assignment.id}-feedback.zip"] = zip_bytes(files)
    left = []
    if lms != "moodle":       # a Moodle course's hand-ins carry no Canvas id: a Canvas file would be all blanks
        outputs["canvas_grades.csv"] = canvas_csv(graded, column or assignment.title, absent, blank)
    else:
        outputs["moodle_grades.csv"], left = moodle_csv(graded, assignment.max_score)
    result.no_grade_row = left
    for name, key in blank:
        result.blank.append(f"{name} ({key})" if name != key else key)
    outputs["gradescope_grades.csv"] = gradescope_csv(graded, absent, people)
    outputs[blackboard.RELEASE_FILE] = blackboard.release_file(graded, column, assignment.title, absent)
    outputs[d2l.RELEASE_FILE] = d2l.release_file(graded, column, assignment, absent)
    outputs["lateness.csv"] = lateness_csv(pages.pages)
    outputs["adjustments.csv"] = adjustments_csv(pages.pages, absent)
    outputs[MANIFEST] = json.dumps({"assignment": assignment.id, "format": "lms", "students": students},
                                   indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    for name, data in outputs.items():
        if write_if_changed(target / name, data):
            result.written.append(target / name)
    old_students = old.get("students", {}) if old.get("assignment") == assignment.id else {}
    for student, entry in sorted(students.items()):
        (result.unchanged if old_students.get(student) == entry else result.changed).append(student)
    kept = {f"feedback/{name}" for name in files}
    for student, entry in sorted(old_students.items()):
        stale = f"feedback/{entry.get('file', '')}"
        if stale not in kept and (target / stale).is_file() and _inside(target / "feedback", target / stale):
            (target / stale).unlink()
            _remove_empty_parents(target / stale, target / "feedback")
        if student not in students:
            result.removed.append(student)
    return result


def _read_manifest(target):
    try:
        return json.loads((target / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _inside(folder, path):
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


def _remove_empty_parents(path, stop):
    parent = path.parent
    while parent != stop and _inside(stop, parent) and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent
