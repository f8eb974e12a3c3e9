"""`release --format lms`: feedback files, a zip of them and grade CSVs, for bulk upload.

TARGET gets:
  feedback/<name>          one self-contained HTML feedback page per student
  <assignment>-feedback.zip  the same files, for an LMS's bulk feedback upload
  Of the grade files, only the course's own LMS's (course.toml's lms; all of them for `other`, or with
  `release --all-formats`):
  canvas_grades.csv        Canvas gradebook import (Grades → Import)
  moodle_grades.csv        for a Moodle course: the assignment's grading worksheet, as Moodle's "Upload grading
                           worksheet" reads it (mod/assign/feedback/offline/importgradeslib.php: `Identifier`
                           "Participant <id>", `Grade`, `Last modified (grade)`, `Feedback comments`)
  gradescope_grades.csv    Name,SID,Email,Total Score,Max Points,Status,handed_in_at,late
  blackboard_grades.csv    Blackboard's Work Offline upload (release/blackboard.py): students keyed by username
  d2l_grades.csv           D2L's grade import (release/d2l.py): students keyed by Username or OrgDefinedId
  classroom50_scores.csv   for a Classroom 50 course: the columns of `gh teacher download`'s scores.csv (it has
                           no grade import), a row per student with a GitHub username
  lateness.csv             Student,ID,handed_in_at,late,penalty,late_note: when each hand-in came, and what
                           lateness cost (Canvas makes a new assignment of any column it does not know,
                           so canvas_grades.csv keeps to its import columns and lateness goes here)
  adjustments.csv          Student,ID,score,adjustment,reason: every score changed by hand (`autograder adjust`)
  release_manifest.json    one content hash per student: what the last release wrote

With a roster, the grade files list the roster's students, as `gradebook`'s import files do: a student who
handed in nothing by their own deadline with 0 points (`missing`); an excused one with `EX` in
canvas_grades.csv (what Canvas's importer reads as excused) and in no other grade file, whose imports have
no such value (the LMS exempts them by hand); one whose deadline is still ahead
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
from dataclasses import dataclass, field
from pathlib import Path

from ..core.csv_cells import Number, csv_text
from ..feedback.explain import is_test_account
from ..gradebook.store import UNGRADABLE, late_word
from . import blackboard, d2l
from .who import of_absent, of_pending, of_submission
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
    excused: list = field(default_factory=list)     # excused: EX in canvas_grades.csv, in no other grade file
    notes: list = field(default_factory=list)       # what keeps the course's own LMS file from being imported


@dataclass(frozen=True)
class Line:
    """One student's row in the grade files: a graded hand-in, a roster student `missing` (0 points),
    a hand-in not graded yet (`blank`: --force writes an empty cell, never 0), or an `excused` student
    (Canvas's EX; no score anywhere else)."""
    who: object                   # who.Who
    kind: str                     # graded, missing, blank, excused
    score: float | None = None
    max_score: float = 0.0
    status: str = ""
    handed_in_at: str = ""
    late: bool | None = None
    penalty: float = 0.0
    late_note: str = ""
    adjustment: float | None = None
    adjust_note: str = ""
    message: str = ""             # the hand-in's: why an ungradable one got 0 (Moodle's feedback column says it)

    @property
    def shown_score(self):
        return "" if self.score is None else f"{self.score:g}"


def graded_line(page, roster):
    s = page.submission
    if s.excused:           # handed in, graded, its feedback released; its score counts nowhere
        return Line(of_submission(s, roster), "excused", None, s.max_score, s.status, s.submitted_at)
    return Line(of_submission(s, roster), "graded", s.score, s.max_score, s.status, s.submitted_at, s.late,
                s.penalty, s.late_note, s.adjustment, s.adjust_note, s.message)


def missing_line(absent, roster):
    return Line(of_absent(absent, roster), "missing", absent.score, absent.max_score, absent.status,
                adjust_note=absent.adjust_note)


def feedback_file_name(page, who):
    """Named the way the LMS pairs feedback with students: Canvas's file prefix
    (`smithalice_1001_5001_feedback.html`), Moodle's folder (`Alice Smith_4711_assignsubmission_file_/
    feedback.html`) or file prefix, as the download named the hand-in; else by student."""
    if who.feedback_prefix:
        return f"{who.feedback_prefix}feedback.html"
    return f"{page.folder}_feedback.html"


def _csv(rows, header):
    return csv_text(header, rows)      # cells from students never become spreadsheet formulas


def canvas_csv(lines, column):
    """Graded and missing students with their score, and those not graded yet (--force) with an empty cell."""
    return _csv([(line.who.name, line.who.canvas_id, "", "", "", "EX" if line.kind == "excused" else line.shown_score)
                 for line in lines], (*CANVAS_COLUMNS, column))


MOODLE_WORKSHEET_COLUMNS = ("Identifier", "Full name", "Email address", "Grade", "Maximum Grade",
                            "Last modified (grade)", "Feedback comments")


def moodle_csv(lines, max_score):
    """Moodle's grading worksheet for this assignment: one row per hand-in from a Moodle download (its folder
    or file name carried this assignment's participant id; Moodle numbers participants per assignment, so no
    other id will do).  `Last modified (grade)` is left empty, so Moodle takes the row unless its own grade is
    newer and "ignore modified" is off.  Returns (text, students left out because no participant id is known)."""
    rows, left = [], []
    for line in lines:
        if line.kind != "graded":
            continue
        if not line.who.moodle_participant:
            left.append(line.who.name if line.who.name == line.who.key else f"{line.who.name} ({line.who.key})")
            continue
        said = [text for text in line.message.splitlines() if text and not text.startswith("handed in: ")]
        why = f"{line.status}: {said[0]}" if line.status in UNGRADABLE and said else ""    # a 0 that says why
        rows.append((f"Participant {line.who.moodle_participant}", line.who.name, line.who.email, line.shown_score,
                     f"{max_score:g}", "", "; ".join(filter(None, [why, line.adjust_note or ""]))))
    return _csv(rows, MOODLE_WORKSHEET_COLUMNS), left


# `gh teacher download`'s scores.csv, Classroom 50's one grade file (it has no import: its own gradebook is the
# scores.json its collector builds from each submission's Release; download.go, scoresCSVHeader).
CLASSROOM50_COLUMNS = ("username", "first_name", "last_name", "email", "section", "score", "max_score", "datetime",
                       "submission_tag", "submitted_by", "review_url", "late", "override")


def classroom50_csv(lines):
    """The course's grades in the columns of Classroom 50's scores.csv, a row per student with a GitHub username
    (a Classroom roster's): `override` "true" where the teaching team adjusted the score, as Classroom 50 marks a
    hand correction; blank score for an excused student, not graded yet or not due."""
    rows = []
    for line in lines:
        if not line.who.github_username:
            continue
        last, _, first = (line.who.sortable_name or "").partition(",")
        score = "" if line.kind in ("blank", "excused") else line.shown_score
        rows.append((line.who.github_username, first.strip(), last.strip(), line.who.email, line.who.section, score,
                     f"{line.max_score:g}" if line.max_score else "", line.handed_in_at, "", "", "",
                     {True: "true", False: "false"}.get(line.late, ""), "true" if line.adjust_note else ""))
    return _csv(rows, CLASSROOM50_COLUMNS)


def gradescope_csv(lines):
    return _csv([(line.who.name, line.who.gradescope_sid, line.who.email, line.shown_score, f"{line.max_score:g}",
                  "excused" if line.kind == "excused" else line.status, line.handed_in_at, late_word(line.late))
                 for line in lines if line.kind != "blank"],
                GRADESCOPE_COLUMNS)


def adjustments_csv(lines):
    return _csv([(line.who.name, line.who.canvas_id or line.who.key, line.shown_score,
                  "" if line.adjustment is None else Number(line.adjustment), line.adjust_note)
                 for line in lines if line.kind != "blank" and line.adjust_note], ADJUSTMENT_COLUMNS)


def lateness_csv(lines):
    return _csv([(line.who.name, line.who.canvas_id or line.who.key, line.handed_in_at, late_word(line.late),
                  f"{line.penalty:g}", line.late_note) for line in lines if line.kind == "graded"],
                LATENESS_COLUMNS)


# The grade files of each LMS's course: only its own (a Blackboard course got canvas_grades.csv with every id blank
# and a header-only d2l_grades.csv, three files for a tired TA to choose from); `release --all-formats` writes
# them all.  A course whose LMS is none of these (`other`, or Classroom's clones released as files) gets them all.
GRADE_FILES = ("canvas", "moodle", "gradescope", "blackboard", "d2l", "classroom50")
OWN_GRADE_FILES = {"canvas": ("canvas",), "moodle": ("moodle",), "gradescope": ("gradescope",),
                   "blackboard": ("blackboard",), "d2l": ("d2l",), "classroom": ("classroom50",)}


def grade_files(lms, all_formats=False):
    """Which LMSes' grade files a release writes: the course's own, or every one (`--all-formats`, or a course
    whose LMS has none of its own).  Moodle's needs Moodle's participant ids, which only its download carries."""
    if all_formats:
        return tuple(f for f in GRADE_FILES if f != "moodle" or lms == "moodle")
    if lms not in OWN_GRADE_FILES:      # `other`: every file a course without an LMS of its own has had
        return ("canvas", "gradescope", "blackboard", "d2l")
    return OWN_GRADE_FILES[lms]


def release_lms(assignment, pages, target, column=None, absent=(), lms="other", blank=(), roster=None, seen=(),
                all_formats=False):
    """`absent`: gradebook.read.AbsentRow of roster students with no hand-in (the `missing` ones get 0 points,
    the others, not yet due or unresolved, an empty cell); `blank`: gradebook.read.PendingRow of students not
    graded yet, released blank (--force); `roster`: {key: roster Student} (ids and the LMS's test accounts,
    which are in no file); `seen`: the columns of the LMS export the roster was imported from; `all_formats`:
    every LMS's grade file, not only the course's own (grade_files)."""
    formats = grade_files(lms, all_formats)
    roster = roster or {}
    whos = {page.student: of_submission(page.submission, roster) for page in pages.pages}
    left_out = [p for p in pages.pages if whos[p.student].test_account or is_test_account(p.submission)]
    kept = [p for p in pages.pages if p not in left_out]
    # The grade files list the roster's students, as `gradebook` does: a hand-in that matched nobody on the
    # roster has its feedback file, and no row an LMS would have to match by hand (named instead).
    # A student the class list no longer has (dropped since grading: the gradebook row still says on the roster)
    # is left out too, as `gradebook` leaves them out.
    listed = [p for p in kept if p.submission.on_roster != 0 and getattr(roster.get(p.student), "on_roster", True)]
    lines = [graded_line(p, roster) for p in listed]
    lines += [missing_line(a, roster) if a.status == "missing" else
              Line(of_absent(a, roster), "excused" if a.status == "excused" else "blank", None, a.max_score, a.status,
                   adjust_note=a.adjust_note)
              for a in absent if getattr(roster.get(a.student), "on_roster", True)]
    lines += [Line(of_pending(row, roster), "blank") for row in blank]
    lines = [line for line in lines if not line.who.test_account]
    target = Path(target)
    old = _read_manifest(target)
    files = {feedback_file_name(page, whos[page.student]): page.html for page in kept}
    students = {}
    for page in kept:
        students[page.student] = {"file": feedback_file_name(page, whos[page.student]), "sha256": digest(
            page.html, f"{page.submission.score:g}/{page.submission.max_score:g}", page.submission.status)}
    result = Release(problems=dict(pages.withheld), test_accounts=[p.who for p in left_out],
                     off_roster=[p.who for p in kept if p not in listed])
    outputs = {f"feedback/{name}": html for name, html in files.items()}
    outputs[f"{assignment.id}-feedback.zip"] = zip_bytes(files)
    if "canvas" in formats:
        outputs["canvas_grades.csv"] = canvas_csv(lines, column or assignment.title)
    if "moodle" in formats:
        outputs["moodle_grades.csv"], result.no_grade_row = moodle_csv(lines, assignment.max_score)
    result.blank = [line.who.name if line.who.name == line.who.key else f"{line.who.name} ({line.who.key})"
                    for line in lines if line.kind == "blank" and line.status == ""]     # handed in, not graded
    result.excused = [line.who.name if line.who.name == line.who.key else f"{line.who.name} ({line.who.key})"
                      for line in lines if line.kind == "excused"]
    if "gradescope" in formats:
        outputs["gradescope_grades.csv"] = gradescope_csv(lines)
    if "blackboard" in formats:
        outputs[blackboard.RELEASE_FILE], notes = blackboard.release_file(lines, column, assignment, seen)
        result.notes += notes if lms == "blackboard" else []
    if "d2l" in formats:
        outputs[d2l.RELEASE_FILE], notes = d2l.release_file(lines, column, assignment, seen)
        result.notes += notes if lms == "d2l" else []
    if "classroom50" in formats:
        outputs["classroom50_scores.csv"] = classroom50_csv(lines)
    outputs["lateness.csv"] = lateness_csv(lines)
    outputs["adjustments.csv"] = adjustments_csv(lines)
    outputs[MANIFEST] = json.dumps({"assignment": assignment.id, "format": "lms", "students": students},
                                   indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    for name, data in outputs.items():
        if write_if_changed(target / name, data):
            result.written.append(target / name)
    old_students = old.get("students", {}) if old.get("assignment") == assignment.id else {}
    for student, entry in sorted(students.items()):
        (result.unchanged if old_students.get(student) == entry else result.changed).append(student)
    kept_files = {f"feedback/{name}" for name in files}
    for student, entry in sorted(old_students.items()):
        stale = f"feedback/{entry.get('file', '')}"
        if stale not in kept_files and (target / stale).is_file() and _inside(target / "feedback", target / stale):
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
