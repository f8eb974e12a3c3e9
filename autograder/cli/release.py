"""`autograder release`: feedback and grades to the LMS or to Classroom clones, or the student bundle."""

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..core.course import load_course
from ..core.listing import names
from ..feedback.pages import build_pages
from ..core.lms_columns import ASSIGNMENT_COLUMN, best_column
from ..gradebook import lock
from ..grade.refresh import bring_up_to_date
from ..gradebook.read import (FeedbackError, gradebook_path, load_absent, load_graded_apart, load_graded_files,
                              load_pending, load_stale, load_unplaced)
from ..gradebook.store import UNGRADABLE, set_aside
from ..publish.course.write import unplaced_lines
from ..publish.classroom import release_classroom, write_manifest
from ..publish.canvas_checks import check_canvas_columns
from ..roster.store import CourseRecords, unusable
from ..publish.lms import release_lms
from ..publish.students import release_students
from .options import ASSIGNMENT, graded_assignment


@click.command("release")
@ASSIGNMENT
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="The folder `grade --out` wrote: it holds gradebook.db (not needed with --students).")
@click.option("--to", "target", required=True, type=click.Path(file_okay=False),
              help="Where to release: a folder for the LMS files or the student bundle, the folder holding the "
                   "GitHub Classroom clones, or `canvas`: each student's grade and comment with their feedback "
                   "page, through Canvas's API (a folder named canvas: ./canvas).")
@click.option("--format", "kind", type=click.Choice(["lms", "classroom"]), default=None,
              help="lms: feedback files, a zip and grade CSVs; classroom: a `feedback` branch in each clone "
                   "(default: classroom when course.toml says lms = \"classroom\", else lms).")
@click.option("--lms-column", default=None, metavar="NAME",
              help="Header of the grade column in canvas_grades.csv (default: the assignment's lms_column "
                   "in course.toml, else its title).")
@click.option("--students", "students_bundle", is_flag=True,
              help="Release what students may see instead (assignments/, public_rubric.xlsx, README.md), "
                   "after a leak check.")
@click.option("--all-formats", is_flag=True,
              help="Write every LMS's grade file, not only the course's own (course.toml's lms).")
@click.option("--force", is_flag=True,
              help="Release although some hand-ins are not graded yet (a run was stopped), or the roster cannot "
                   "place some: the students whose grade that leaves unknown get a blank grade, never 0 (with "
                   "--to canvas, nothing); with --to canvas, also send grades graded from an older attempt than "
                   "Canvas's latest.")
@click.option("--dry-run", is_flag=True, help="With --to canvas: print what would be sent, and send nothing.")
@click.option("--post", is_flag=True,
              help="With --to canvas, when the assignment posts grades manually: post them once sent.")
@click.option("--grades-only", is_flag=True,
              help="With --to canvas: the grades alone, in one bulk update (no comment, no feedback file).")
@click.pass_obj
def release_command(course_root, assignment_id, out_dir, target, kind, lms_column, students_bundle, all_formats,
                    force, dry_run, post, grades_only):
    """Release feedback and grades (LMS files, Canvas through its API, or Classroom branches), or the student
    bundle."""
    if target == "canvas" and not students_bundle:
        return canvas_release(course_root, assignment_id, out_dir, force, dry_run=dry_run, post=post,
                              grades_only=grades_only)
    if dry_run or post or grades_only:
        raise click.UsageError("--dry-run, --post and --grades-only go with --to canvas")
    target = Path(target)
    if students_bundle:
        bundle = release_students(load_course(course_root), target)
        click.echo(f"leak check passed; student bundle in {target}: "
                   + (f"{len(bundle.written)} file(s) written" if bundle.written else "nothing changed"))
        if bundle.left_out:       # optional: for working locally, which a course need not offer
            click.echo(f"not in the bundle, as the course has none: {names(bundle.left_out)} (what Colab has, "
                       "for students working on their own computer)")
        return
    if out_dir is None:
        raise click.UsageError("--out is required (the folder holding gradebook.db), unless --students")
    course, assignment = graded_assignment(course_root, assignment_id, out_dir)
    click.echo(f"{assignment.id}: read {gradebook_path(out_dir)}" + (
        "" if course.is_grades_dir(assignment.id, out_dir)
        else f" (not the course's gradebook for {assignment.id}, {course.grades_dir(assignment.id)})"))
    # Who is missing or excused, and the slip days spent, by the one rule as of now, whatever command ran last.
    note = bring_up_to_date(course, assignment, out_dir)
    if note:
        click.echo(note, err=True)
    with lock.shared(out_dir):       # never while `grade` or `extend` changes it (gradebook/lock.py)
        kind, result, pages = _release(course, assignment, out_dir, target, kind, lms_column, force, all_formats)
    _say_what_changed(kind, result, {page.student: page.who for page in pages.pages})


def _release(course, assignment, out_dir, target, kind, lms_column, force, all_formats=False):
    """(the kind released, its result, the pages) of one assignment's release, to the LMS or to clones."""
    roster, column, seen, tests, waiting, absent, pages = ready(course, assignment, out_dir, lms_column, force)
    kind = kind or ("classroom" if course.lms == "classroom" else "lms")
    if kind == "lms":
        result = release_lms(assignment, pages, target, column, absent, course.lms, waiting, roster, seen,
                             all_formats)
        for note in result.notes:
            click.echo(f"warning: {note}", err=True)
        _say_who_needs_a_look(result, pages, absent, tests)
        return kind, result, pages
    if not target.is_dir():
        raise FeedbackError(f"{target} is not a folder of GitHub Classroom clones")
    result = release_classroom(assignment, pages, target, load_graded_files(out_dir, assignment.id))
    write_manifest(out_dir, assignment, target, result)
    return kind, result, pages


def ready(course, assignment, out_dir, lms_column, force, columns=True):
    """(roster, column, seen, tests, waiting, absent, pages): what every release checks first, passed, and the
    pages of the students who get one (`columns`: check the Canvas columns of a grade file too)."""
    roster, column, seen = _canvas_checks(course, assignment, lms_column or course.lms_column(assignment.id),
                                          lms_column, columns)
    tests = {key for key, student in roster.items() if student.test_student}
    waiting = _not_graded_yet(out_dir, assignment, force, tests)
    _one_rubric(out_dir, assignment, force)
    absent = load_absent(out_dir, assignment.id)
    _unresolved(out_dir, assignment, absent, _set_aside(course, assignment), force)
    if not roster:
        _unplaced_without_roster(out_dir, assignment, force)
    pages = build_pages(course, assignment, out_dir)
    waiting_keys = {row.student for row in waiting}
    pages.pages = [page for page in pages.pages if page.student not in waiting_keys]
    return roster, column, seen, tests, waiting, absent, pages


def _say_who_needs_a_look(result, pages, absent, tests):
    """What an LMS release left out, blank or at 0 for want of a notebook, by name."""
    if result.test_accounts:
        click.echo(f"left out of every file (the LMS's test account): {names(result.test_accounts)}")
    ungradable = [f"{p.who} ({p.submission.status})" for p in pages.pages if p.submission.status in UNGRADABLE]
    if ungradable:
        click.echo(f"0 points, as what they handed in holds no notebook that could be graded (their feedback "
                   f"says what it was; look at it in the LMS): {names(ungradable)}")
    if result.off_roster:
        click.echo(f"warning: their feedback is released, but no grade file has them, as they match nobody on "
                   f"the roster, or have left it: {names(result.off_roster)}", err=True)
    unresolved = [a for a in absent if a.status == "unresolved" and a.student not in tests]
    if unresolved:
        click.echo("warning: released with a blank grade, unresolved (a hand-in the roster cannot place may be "
                   f"theirs; --force): {names([_person(a.name, a.student) for a in unresolved])}", err=True)
    if result.no_grade_row:
        click.echo("warning: not in moodle_grades.csv, as their hand-in did not come from a Moodle download "
                   f"(whose names carry the participant id): {names(result.no_grade_row)}", err=True)
    if result.blank:
        click.echo(f"warning: released with a blank grade, not graded yet (--force): {names(result.blank)}",
                   err=True)
    if result.excused:
        click.echo(f"excused, EX in canvas_grades.csv and in no other grade file (Blackboard's Exempt Grade, D2L's "
                   f"Exempt and Moodle's Excluded are set in the LMS by hand): {names(result.excused)}")


def _person(name, key):
    return key if not name or name == key else f"{name} ({key})"


def _set_aside(course, assignment):
    """What the teaching team placed as nobody's on the roster (`roster place`), from the course's records."""
    records = CourseRecords.if_any(course)
    if records is None:
        return set_aside(None, assignment.id)
    with records:
        return set_aside(records, assignment.id)


def _unresolved(out_dir, assignment, absent, aside, force):
    """Refused (nothing released) while a roster student's grade waits for a hand-in to be placed, unless
    `force`: whether they handed in is not known, so neither 0 nor any other number is theirs."""
    unresolved = [a for a in absent if a.status == "unresolved"]
    if not unresolved or force:
        return
    error = FeedbackError(f"{len(unresolved)} roster student(s) of {assignment.id} have no hand-in under their name, "
                          "but the roster cannot place some hand-ins, which may be theirs, so nothing is released: "
                          + names([_person(a.name, a.student) for a in unresolved]))
    error.details = (*unplaced_lines(assignment.id, load_unplaced(out_dir, assignment.id, aside)),
                     "or give --force to release those students with a blank grade (never 0)")
    raise error


def _unplaced_without_roster(out_dir, assignment, force):
    """Refused (nothing released) while hand-ins wait for a class list to say whose they are (D2L submissions
    under one name, grade/class_run.py), unless `force`: released then as graded, each under its own row."""
    found = load_unplaced(out_dir, assignment.id)
    if not found:
        return
    if force:
        click.echo("warning: released with no class list to say whose they are (--force): "
                   + names([f"{name} ({key})" for key, name, _, _ in found]), err=True)
        return
    error = FeedbackError(f"{len(found)} hand-in(s) of {assignment.id} cannot be placed without a class list, so "
                          "nothing is released: " + names([f"{name} ({key})" for key, name, _, _ in found]))
    error.details = (*sorted({why for _, _, _, why in found}),
                     "or give --force to release each as a row of its own")
    raise error


def _one_rubric(out_dir, assignment, force):
    """Refused (nothing released) while the class's scores come from different cases, expected values or limits,
    unless `force`: a `grade --student` after cases.toml changed scored one student by the new rubric and left
    the others' by the old, and their numbers do not compare."""
    _rubric_still_the_assignment_s(out_dir, assignment, force)
    apart = load_graded_apart(out_dir, assignment.id)
    if not apart:
        return
    fewest = [f"{name} ({student})" if name != student else student for student, name in apart]
    if force:
        click.echo(f"warning: released with scores from different cases or limits (--force): {names(fewest)}",
                   err=True)
        return
    error = FeedbackError(f"the scores of {assignment.id} were not all graded with the same cases, expected values "
                          f"and limits, so nothing is released; graded apart from the rest: {names(fewest)}")
    error.details = (f"run `autograder grade --assignment {assignment.id} --out {out_dir} PATHS` without --student, "
                     "PATHS every download of the class: it regrades each hand-in graded otherwise than the cases "
                     "are now",
                     "or give --force to release them as they are (a regrade request graded with its own --timeout, "
                     "say)")
    raise error


def _rubric_still_the_assignment_s(out_dir, assignment, force):
    """Refused (nothing released) while a counted hand-in was graded under cases, points, expected values or limits
    that are no longer the assignment's (they changed since, `autograder build` ran), unless `force`: a plain
    `grade` regrades them (and says why)."""
    stale = load_stale(out_dir, assignment.id, assignment.rubric_key())
    if not stale:
        return
    who = [f"{name} ({student})" if name != student else student for student, name in stale]
    if force:
        click.echo(f"warning: released with scores graded under the assignment's former cases, points, expected "
                   f"values or limits (--force): {names(who)}", err=True)
        return
    error = FeedbackError(f"{len(stale)} score(s) of {assignment.id} were graded under cases, points, expected "
                          f"values or limits that are no longer the assignment's (cases.toml, expected.json or "
                          f"timing.json changed since), so nothing is released: {names(who)}")
    error.details = (f"regrade them: run `autograder grade --assignment {assignment.id} --out {out_dir} PATHS`, "
                     "PATHS every download of the class: it grades again each hand-in graded under the former "
                     "rubric, and says why",
                     "or give --force to release the former scores as they are")
    raise error


def _not_graded_yet(out_dir, assignment, force, tests=()):
    """[PendingRow] of hand-ins not graded yet (the LMS's test account aside: it is in no file); refused
    (nothing released) unless `force`."""
    waiting = [row for row in load_pending(out_dir, assignment.id) if row.student not in tests]
    if waiting and not force:
        people = [row.name if row.name == row.student else f"{row.name} ({row.student})" for row in waiting]
        error = FeedbackError(f"{len(waiting)} hand-in(s) of {assignment.id} not graded yet, so nothing is "
                              f"released: {names(people)}")
        error.details = ("the grading run that held them was stopped: run the same `autograder grade ... --out "
                         f"{out_dir}` command again (without --regrade); it grades only what is left",
                         "or give --force to release those students with a blank grade (never 0)")
        raise error
    return waiting


def _canvas_checks(course, assignment, column, given=None, columns=True):
    """({key: roster Student}, the grade column, the LMS export's columns) from the course's records (the roster
    gives each LMS file its
    ids and flags the LMS's test accounts); a Canvas column that is not in the Canvas export, which Canvas's
    importer would make a new assignment of, is refused, and so is one course.toml gives another assignment
    (`given`: --lms-column, checked even with no export imported)."""
    _not_anothers(course, assignment, given)
    records = CourseRecords.if_any(course)
    if records is None:
        return {}, column, ()
    with records:
        broken = unusable(records, assignment.id)
        if broken:      # the grades this release would write are not known
            raise FeedbackError(broken[0])
        roster = {s.key: s for s in records.students(include_off_roster=True)}
        seen, points = records.lms_columns(), records.lms_points()
    if course.lms in ("moodle", "blackboard", "d2l") or not columns:   # (their files find their own columns)
        return roster, column, seen
    if column is None and seen:
        column = best_column(assignment.id, assignment.title, [h for h in seen if ASSIGNMENT_COLUMN.match(h)])
    refusals, warnings = check_canvas_columns(course, {assignment.id: column}, seen, points,
                                              {assignment.id: assignment.max_score})
    if refusals:
        raise FeedbackError(refusals[0])
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    return roster, column, seen


def _not_anothers(course, assignment, column):
    """--lms-column naming another assignment's column in course.toml: this assignment's scores would overwrite
    that assignment's grades in the LMS."""
    if not column:
        return
    owners = [a for a in course.assignment_ids() if a != assignment.id and course.lms_column(a) == column]
    if owners:
        raise FeedbackError(f"--lms-column {column!r} is {' and '.join(owners)}'s grade column in course.toml, not "
                            f"{assignment.id}'s: its scores would replace {owners[0]}'s in the LMS. Give "
                            f"{assignment.id}'s own column" + (f" ({course.lms_column(assignment.id)!r})"
                                                               if course.lms_column(assignment.id) else "")
                            + ", or leave --lms-column out")


def _say_what_changed(kind, result, who):
    if result.changed:
        click.echo(f"released {kind} feedback for {len(result.changed)} student(s) whose results changed: "
                   f"{names([who.get(s, s) for s in result.changed])}")
    else:
        click.echo(f"nothing changed since the last release ({len(result.unchanged)} student(s) up to date)")
    if getattr(result, "removed", None):
        click.echo(f"removed the feedback of student(s) no longer in the gradebook: {names(result.removed)}")
    for student, problem in sorted(result.problems.items()):
        if not isinstance(problem, str):     # leaks found in the rendered page
            problem = f"withheld: it would show a hidden case ({problem[0]})"
        click.echo(f"not released for {student}: {problem}", err=True)
    if result.problems:
        sys.exit(1)


# --- release --to canvas ----------------------------------------------------------------------------

def canvas_release(course_root, assignment_id, out_dir, force, dry_run, post, grades_only):
    """`release --to canvas`: the checks every release makes, then each student's grade and comment through
    Canvas's API (publish/canvas_push.py), and what was sent, said."""
    # Canvas's client (canvasapi, requests) is loaded for this path alone: a release to files never needs it.
    from ..intake.canvas_api import Connection
    from ..publish.canvas_push import PushOptions, push_to_canvas

    options = PushOptions(dry_run=dry_run, post=post, force=force, grades_only=grades_only)
    if out_dir is None:
        raise click.UsageError("--out is required (the folder holding gradebook.db)")
    course, assignment = graded_assignment(course_root, assignment_id, out_dir)
    connection = Connection.of(course)       # the token first: a missing one is the first thing to say
    note = bring_up_to_date(course, assignment, out_dir)     # who is missing or excused, slip days: as of now
    if note:
        click.echo(note, err=True)
    with lock.exclusive(out_dir, "autograder release --to canvas"):    # one push at a time: no comment twice
        roster, _, _, tests, _, absent, pages = ready(course, assignment, out_dir, None, force, columns=False)
        push = push_to_canvas(course, assignment, out_dir, pages, absent, roster, connection, options, _Sending(),
                              _excuses(course, assignment))
    if options.dry_run:
        _print_plan(push)
    _say_pushed(push, options, len(tests))


def _excuses(course, assignment):
    """The assignment's excuses in the course's records, withdrawn ones too (none without records)."""
    records = CourseRecords.if_any(course)
    if records is None:
        return []
    with records:
        return records.excuses(assignment.id, all_of_them=True)


def _print_plan(push):
    table = Table(title="what would be sent to Canvas (--dry-run: nothing was sent)")
    for column in ("student", "Canvas id", "grade", "attempt", "comment", "action"):
        table.add_column(column, overflow="fold")
    for line in push.lines:
        attempt = f"{line.attempt or '?'} of {line.latest}" if line.latest else ""
        comment = ("with feedback page" if line.page is not None else "text") if line.comment else ""
        grade = "EX (excused)" if line.kind == "excused" else "" if line.score is None else f"{line.score:g}"
        table.add_row(*(escape(str(v)) for v in (line.who, line.canvas_user, grade, attempt, comment,
                                                 line.action + (f": {line.why}" if line.why else ""))))
    Console().print(table)


def _say_pushed(push, options, tests):
    what = "grade(s)" if options.grades_only else "grade(s) and comment(s) with the feedback page"
    if not options.dry_run:
        click.echo(f"sent {len(push.sent)} {what} to Canvas: {names([line.who for line in push.sent])}"
                   if push.sent else "sent nothing to Canvas")
    else:
        click.echo(f"would send {len(push.of('send'))} {what}: {names([line.who for line in push.of('send')])}")
    excused = [line.who for line in (push.of("send") if options.dry_run else push.sent) if line.kind == "excused"]
    if excused:
        click.echo(f"{'would be' if options.dry_run else 'of which'} excused in Canvas (Excused, no grade): "
                   f"{names(excused)}")
    ended = [line.who for line in (push.of("send") if options.dry_run else push.sent)
             if line.canvas_excused and line.kind != "excused"]
    if ended:
        click.echo(f"their excuse here was withdrawn, so their grade ends Canvas's excuse: {names(ended)}")
    unchanged = push.of("unchanged")
    if unchanged:
        click.echo(f"{len(unchanged)} unchanged since they were last sent")
    for line in push.checked:
        click.echo(f"{line.who}: the comment sent before without an answer is on Canvas: not sent again")
    if tests:
        click.echo(f"the Test Student is sent nothing ({tests} test account(s))")
    for line in push.of("skipped"):
        click.echo(f"not sent to {line.who}: {line.why}")
    for note in push.notes:
        click.echo(f"note: {note}")
    click.echo(push.posting)
    click.echo(f"{push.requests} request(s) to Canvas")
    for line, why in push.failed:
        click.echo(f"not sent to {line.who}: {why}", err=True)
    if push.stopped:
        click.echo(f"autograder: error: {push.stopped}", err=True)
    if push.failed or push.stopped:
        sys.exit(1)


class _Sending:
    """A progress bar while grades and comments go (on a terminal)."""

    def sending(self, total):
        console = Console(stderr=True)
        if not console.is_terminal:
            return Progress(console=console, disable=True)
        self.bar = Progress(TextColumn("sending to Canvas"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=console, transient=True)
        self.task = self.bar.add_task("sending", total=total)
        return self.bar

    def sent(self, line):
        if getattr(self, "bar", None) is not None:
            self.bar.advance(self.task)
