"""The roster and the extensions as Canvas itself records them, read through its API (`autograder canvas pull`).

* **The roster** comes from the course's enrollments (`GET /api/v1/courses/:id/enrollments`, students and
  the Test Student: `type[]=StudentEnrollment&type[]=StudentViewEnrollment`; Canvas lists the active and
  invited ones unless asked otherwise, so a student who dropped is no longer listed).  Each student is keyed
  `canvas:<user id>` as the Download Submissions zip and the gradebook export key them; the Test Student is
  the one whose enrollment is a StudentViewEnrollment (Canvas's "Student View"), flagged as every class list
  flags it.  Section names come from `GET /api/v1/courses/:id/sections`.
* **Extensions** are the assignment's due-date overrides (`GET .../assignments/:id/overrides`): an override
  for students gives each of them its due date, one for a section gives it to each student enrolled there;
  where several apply, the latest counts, as Canvas counts it.  They are kept as extensions granted by
  `canvas` (roster/store.py), so `grade` judges lateness by each student's own deadline, as Canvas does; a
  later pull updates them, and withdraws those whose override is gone.  An extension a person granted
  (`autograder extend`) is never replaced: both are said.  A group's override is said, not applied (the
  group's members are another list).
* **Excused.**  A submission Canvas excuses (its `excused`) is an excuse here, as `autograder excuse` makes
  one: the reason "excused in Canvas", granted by `canvas`, kept in the history with the others.  A later
  pull that finds Canvas no longer excusing them withdraws it.  An excuse a person made here is never
  replaced or withdrawn by a pull, and after a person withdrew the student's last excuse here, none is made
  again while Canvas still excuses them (it may be the one `release --to canvas` sent, which the next
  release ends by sending the grade): both are said.
"""

from dataclasses import dataclass, field
from datetime import datetime

from ..core.course import late_rules
from ..intake.canvas_api import CanvasError, no_canvas_assignment
from ..intake.canvas_pull import pull_submissions
from .lms_files import Entry, RosterFile

STUDENT, TEST_STUDENT = "StudentEnrollment", "StudentViewEnrollment"
GRANTED_BY = "canvas"          # who granted an extension that a due-date override made, or an excuse
EXCUSED_REASON = "excused in Canvas"
KIND = "Canvas enrollments (API)"


@dataclass
class CanvasRoster:
    roster: RosterFile
    sections: dict                                   # {section id: its name}
    members: dict                                    # {section id: [user id]}
    notes: list = field(default_factory=list)


def read_enrollments(connection, course, assignment=None):
    """The course's students as a RosterFile (with the assignment's column and points when `assignment`, a
    canvasapi Assignment, is given: `release` checks them as it checks a gradebook export's)."""
    sections = {str(s.id): str(getattr(s, "name", "") or s.id)
                for s in connection.pages("listing the course's sections", course.get_sections())}
    enrollments = connection.pages("listing the course's students (enrollments)",
                                   course.get_enrollments(type=[STUDENT, TEST_STUDENT]))
    people, members = {}, {}
    for enrollment in enrollments:
        user = getattr(enrollment, "user", None) or {}
        user_id = str(getattr(enrollment, "user_id", "") or user.get("id", ""))
        if not user_id.isdigit():
            continue
        section = str(getattr(enrollment, "course_section_id", "") or "")
        members.setdefault(section, []).append(user_id)
        entry = people.setdefault(user_id, {"user": user, "sections": [], "test": False})
        entry["test"] = entry["test"] or getattr(enrollment, "type", "") == TEST_STUDENT
        if section and sections.get(section, section) not in entry["sections"]:
            entry["sections"].append(sections.get(section, section))
    result = RosterFile("canvas", KIND, [])
    for user_id, entry in sorted(people.items(), key=lambda item: int(item[0])):
        user = entry["user"]
        login = str(user.get("login_id") or "")
        result.entries.append(Entry(
            key=f"canvas:{user_id}", name=str(user.get("name") or user.get("short_name") or user_id),
            sortable_name=str(user.get("sortable_name") or ""), lms="canvas", lms_id=user_id,
            sis_id=str(user.get("sis_user_id") or ""), login=login, email=login.lower() if "@" in login else "",
            section=" and ".join(entry["sections"]), test_student=entry["test"]))
    if assignment is not None:
        column = f"{assignment.name} ({assignment.id})"
        result.lms_columns = [column]
        if getattr(assignment, "points_possible", None) is not None:
            result.points_possible = {column: float(assignment.points_possible)}
    return CanvasRoster(result, sections, members)


def overrides_as_extensions(connection, canvas_assignment, canvas_roster, records, assignment_id, deadline):
    """Each student's latest due date from the assignment's overrides, kept as extensions; returns
    (applied [(key, until, why)], notes) — notes for what is not applied, and why."""
    overrides = connection.pages("reading the assignment's due-date overrides",
                                 canvas_assignment.get_overrides())
    due, notes = {}, []
    for override in overrides:
        when = _moment(getattr(override, "due_at", None))
        title = " ".join(str(getattr(override, "title", "") or f"override {override.id}").split())[:80]
        if getattr(override, "group_id", None):
            notes.append(f"Canvas's due-date override {title!r} is for a group: not applied (give its members "
                         f"`autograder extend --assignment {assignment_id}` each)")
            continue
        if when is None:
            continue                # it moves only when the assignment opens or closes
        users = [str(u) for u in getattr(override, "student_ids", None) or []]
        section = getattr(override, "course_section_id", None)
        if section is not None:
            users += canvas_roster.members.get(str(section), [])
        for user in users:
            key = f"canvas:{user}"
            if key not in due or when > due[key][0]:
                due[key] = (when, f"Canvas due-date override: {title}")
    return _keep(records, assignment_id, due, deadline, notes)


def _keep(records, assignment_id, due, deadline, notes):
    """Extensions granted by `canvas` made to say what `due` says: added, changed, or withdrawn."""
    standing = {}
    for extension in records.extensions(assignment_id):
        standing.setdefault(extension.student, []).append(extension)
    applied = []
    for key, (when, why) in sorted(due.items()):
        until = when.isoformat(timespec="seconds")
        mine = [e for e in standing.get(key, []) if e.granted_by == GRANTED_BY]
        others = [e for e in standing.get(key, []) if e.granted_by != GRANTED_BY]
        if deadline is not None and when <= deadline:
            notes.append(f"{records.who(key)}: Canvas's due date for them ({until}) is not after the course's "
                         "deadline: nothing to extend")
            continue
        if others:
            notes.append(f"{records.who(key)}: Canvas gives them until {until}, but an extension granted here "
                         f"stands (until {others[-1].until}, by {others[-1].granted_by}): kept as it is")
            continue
        if not any(e.until == until and e.reason == why for e in mine):
            records.extend(assignment_id, key, until, why, by=GRANTED_BY)
        applied.append((key, until, why))
    for key, extensions in standing.items():
        for extension in extensions:
            if extension.granted_by == GRANTED_BY and key not in due:
                records.withdraw_extension(extension.id, by=GRANTED_BY)
                notes.append(f"{records.who(key)}: their Canvas due-date override is gone, so its extension "
                             f"(until {extension.until}) is withdrawn")
    return applied, notes


def _moment(text):
    """Canvas's ISO 8601 time (`2026-12-01T04:59:00Z`) as an aware datetime, or None."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        raise CanvasError(f"Canvas gave a due date that is not a time: {str(text)[:40]!r}") from None
    return moment if moment.tzinfo is not None else None


def excuses_from_canvas(records, assignment_id, submissions, test_users=()):
    """Canvas's `excused` of each submission (`submissions`: {user id: the pull's record of it}) kept as the
    course's excuses; returns (excused [keys], withdrawn [keys], notes)."""
    history = {}
    for excuse in records.excuses(assignment_id, all_of_them=True):      # oldest first: the last one counts
        history[excuse.student] = excuse
    excused, withdrawn, notes = [], [], []
    for user_id, entry in sorted(submissions.items(), key=lambda item: int(item[0])):
        key = f"canvas:{user_id}"
        if key in test_users:
            continue
        last = history.get(key)
        standing = last if last is not None and last.active else None
        if entry.get("excused"):
            if standing is not None:
                if standing.made_by != GRANTED_BY:
                    notes.append(f"{records.who(key)}: excused in Canvas, and here ({standing.reason}, by "
                                 f"{standing.made_by}): kept as it is")
                continue
            if last is not None and last.withdrawn_by != GRANTED_BY:       # a person withdrew it here
                notes.append(f"{records.who(key)}: excused in Canvas, but {last.withdrawn_by} withdrew their excuse "
                             f"here ({last.withdrawn_at[:10]}): not excused here, and `release --to canvas` sends "
                             "their grade, which ends the excuse in Canvas (`autograder excuse` excuses them again)")
                continue
            records.excuse(assignment_id, key, EXCUSED_REASON, by=GRANTED_BY)
            excused.append(key)
        elif standing is not None and standing.made_by == GRANTED_BY:
            records.withdraw_excuse(standing.id, "no longer excused in Canvas", by=GRANTED_BY)
            withdrawn.append(key)
    return excused, withdrawn, notes


@dataclass
class PullReport:
    """What `canvas pull` brought in, for people."""
    folder: object
    roster: RosterFile
    added: list
    updated: list
    left: list
    pulled: object                                  # intake.canvas_pull.Pulled
    extensions: list                                 # [(key, until, why)]
    notes: list = field(default_factory=list)
    excused: list = field(default_factory=list)      # keys Canvas excuses, excused here by this pull
    unexcused: list = field(default_factory=list)    # keys whose Canvas excuse ended: withdrawn here


def pull(course, assignment, folder, connection, records, events=None):
    """The roster, the assignment's submissions into `folder`, and its due-date overrides as extensions, from
    Canvas; returns PullReport.  `records`: the course's CourseRecords (written: roster, extensions, excuses)."""
    canvas_id = course.canvas_assignment(assignment.id)
    if canvas_id is None:
        raise CanvasError(no_canvas_assignment(assignment.id))
    canvas_course = connection.call(f"reading course {connection.course_id}", connection.canvas.get_course,
                                    connection.course_id)
    canvas_assignment = connection.call(f"reading assignment {canvas_id} of course {connection.course_id}",
                                        canvas_course.get_assignment, canvas_id)
    if getattr(canvas_assignment, "anonymize_students", False):
        raise CanvasError(f"Canvas's {canvas_assignment.name!r} is graded anonymously: its API hides whose each "
                          "submission is until grades are posted; grade its Download Submissions zip instead")
    found = read_enrollments(connection, canvas_course, canvas_assignment)
    added, updated, left, _ = records.import_roster(found.roster, f"{KIND} {connection.url} course "
                                                                  f"{connection.course_id}")
    names = {entry.lms_id: entry.sortable_name or entry.name for entry in found.roster.entries}
    pulled = pull_submissions(connection, canvas_assignment, folder, names, events)
    rules = late_rules(course, assignment.id)
    applied, notes = overrides_as_extensions(connection, canvas_assignment, found, records, assignment.id,
                                             rules.deadline)
    tests = {entry.key for entry in found.roster.entries if entry.test_student}
    excused, unexcused, said = excuses_from_canvas(records, assignment.id, pulled.submissions, tests)
    report = PullReport(folder, found.roster, added, updated, left, pulled, applied, notes + said, excused,
                        unexcused)
    report.notes += _deadline_notes(assignment.id, rules.deadline, getattr(canvas_assignment, "due_at", None))
    return report


def _deadline_notes(assignment_id, deadline, due_at):
    """The course's deadline and Canvas's due date, when they differ: lateness is judged by the course's."""
    due = _moment(due_at)
    if due is None:
        return []
    if deadline is None:
        return [f"course.toml gives {assignment_id} no deadline, so lateness is Canvas's own mark; Canvas's due date "
                f"is {due.isoformat()}: set deadline = \"{due.isoformat()}\" in [assignment.{assignment_id}] to judge "
                "it by the minute (and apply a late policy)"]
    if abs((due - deadline).total_seconds()) >= 60:
        return [f"warning: {assignment_id}'s deadline in course.toml ({deadline.isoformat()}) is not Canvas's due "
                f"date ({due.isoformat()}): lateness is judged by course.toml's; set it to Canvas's if that is the "
                "one students were given"]
    return []
