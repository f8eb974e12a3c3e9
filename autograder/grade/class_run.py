"""Grade a whole class: intake, the sandbox, the pool, the gradebook and grades.csv, in one call.

`grade_class` is what `autograder grade` runs, and what any other code (a
test, a script, a server) calls to grade a class without a subprocess.  It
prints nothing: what a person should hear goes to the `events` object, and
the outcome comes back as a GradeRun.
"""

import os
import shlex
import shutil
import signal
import stat
import threading
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from ..core.course import late_rules
from ..engine import HIDES, Limits, Sandbox, preload_for
from ..gradebook import Gradebook, lock
from ..gradebook.store import ABSENT, NOT_GRADED
from ..roster.match import d2l_namesakes_without_roster, match
from ..roster.store import CourseRecords, RecordsError
from ..intake import IntakeError, IntakeOptions, collect
from ..intake.assemble import NOTE, with_notes
from ..intake.collect import check_paths
from ..intake.times import apply_times, read_times, times_notes
from ..gradebook.code import code_pieces
from .pool import grade_all, grader_error
from .regrades import say_why_regraded
from .resubmissions import SUPERSEDED, set_aside_older
from .unpacked import UNPACKED, remove_unpacked


@dataclass(frozen=True)
class GradeOptions:
    """What `grade`'s options say; None everywhere means the course's and the assignment's own settings."""
    jobs: int | None = None
    case_timeout: float | None = None
    submission_timeout: float | None = None
    limit_floor: float | None = None
    limit_factor: float | None = None
    memory_mb: int = 2048
    regrade: bool = False
    student_pattern: str | None = None
    classroom_prefix: str | None = None
    isolation: str = "auto"
    deadline: str | None = None
    late_policy: str | None = None
    late_penalty: float | None = None
    late_cap: float | None = None
    merge: bool = False
    times: str | None = None              # a file of hand-in times (Moodle's grading worksheet, or a plain CSV)
    roster: bool = True                   # match hand-ins to the course's roster (grades/course.db), if it has one
    student: str | None = None            # grade only this student's hand-ins (a regrade request)
    all_submissions: bool = False         # run a student's older submissions too, not only the one that counts
    keep_unpacked: bool = False           # keep what was unpacked into --out/handins after grading
    command: str = "autograder grade"     # recorded with the run, for people


class GradeEvents:
    """What grading tells a person as it goes; every method may be left as it is (silent)."""

    def note(self, text):
        """Something decided about the input that a person should know."""

    def isolation(self, layer, hides, cpu_groups, protected, lacks=()):
        """The sandbox is up: its layer, what that hides, what was made private, and what it cannot hold here."""

    def started(self, handin):
        """A hand-in starts running."""

    def finished(self, handin, result):
        """A hand-in's result is in the gradebook."""

    def grading(self, total):
        """Grading of `total` hand-ins begins; returns a context manager (the progress display)."""
        return _Nothing()


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@dataclass
class GradeRun:
    """What a class run did: rows of grades.csv, counts, lateness and where the files are."""
    assignment_id: str
    rows: list                       # gradebook.GradeRow, one per student
    graded: int                      # hand-ins graded in this run
    skipped: int                     # unchanged since an earlier run
    ignored: list                    # files seen that are not hand-ins
    rules: object                    # core.course.LateRules
    late: list                       # [(student, name, note)] of counted late hand-ins
    unknown_lateness: int            # rows whose lateness nothing says
    other_assignments: list          # other assignments in the same gradebook
    csv_path: Path
    gradebook_path: Path
    isolation: str = ""              # the sandbox's layer; "" when no student code had to run
    notes: list = field(default_factory=list)
    wrong_assignment: str = ""       # one line when every hand-in is another assignment's
    absent: list = field(default_factory=list)   # [(student, name, status, deadline)]: roster students with no hand-in
    other_students: int = 0          # hand-ins of other students, left as they were (--student)
    course_folder: Path | None = None   # the course's own folder for this assignment, when `out` is not it
    not_graded: list = field(default_factory=list)   # [(student, name, source)] still waiting from a stopped run
    retimed: int = 0                 # graded hand-ins whose time the times file gave (or changed)
    graded_apart: list = field(default_factory=list)   # [(student, name)] graded with other cases than most


class GradingInterrupted(Exception):
    """Ctrl-C: grading stopped; grades.csv holds every hand-in graded so far, and marks the rest `not-graded`."""

    def __init__(self, graded, total, csv_path, regrade=False):
        super().__init__(f"interrupted after {graded} of {total} hand-in(s)")
        self.graded, self.total, self.csv_path, self.regrade = graded, total, csv_path, regrade

    def advice(self):
        """How to finish, and nothing that is not true: a plain rerun grades exactly what this run had not
        got to (those hand-ins are `pending` in the gradebook), with or without --regrade given here."""
        left = self.total - self.graded
        head = (f"interrupted: graded {self.graded} of {self.total} hand-in(s) in this run; {self.csv_path} has "
                f"everything graded so far, and the {left} not graded yet as not-graded (no score; `release` and "
                "`gradebook` refuse until they are graded).")
        if self.regrade:
            return (head + " To finish, run the same command WITHOUT --regrade: it grades the "
                    f"{left} hand-in(s) this run had not regraded yet and keeps the {self.graded} it did "
                    "(with --regrade it would grade all of them again).")
        return head + (" Run the same command again to finish: it grades those and keeps the hand-ins already "
                       "graded.")


def _stop_at_the_first_interrupt():
    """From the first Ctrl-C on, further ones are ignored: the sandbox must close (its folder removed, its
    zygotes stopped) and grades.csv be written, however impatient the user.  Returns the handler to put
    back after a run that ended normally; None when there was nothing to change (SIGINT ignored, as under
    `nohup`, or not the main thread, where Python lets no handler be set)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        return None

    def first_interrupt(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, first_interrupt)
    return previous


def grade_class(course, assignment, inputs, out, options=GradeOptions(), events=None):
    """Grade the hand-ins found under `inputs` (paths) into the folder `out`; returns a GradeRun.

    Raises IntakeError, CourseError, AssignmentError, GradebookError or
    SandboxError when the run cannot happen at all (one line each), and
    GradingInterrupted on Ctrl-C, after writing grades.csv.
    """
    events = events or GradeEvents()
    out = Path(out)
    check_paths(inputs)                       # before --out exists: a mistyped path leaves nothing behind
    _not_a_parent_of_the_course_s_folder(course, assignment.id, out)
    times = read_times(Path(options.times)) if options.times else None
    _check_writable(out, course)
    # One run at a time in a folder (a background `grade &` and a second one, or `extend` meanwhile): the
    # second says who holds it and changes nothing (gradebook/lock.py).
    with lock.exclusive(out, options.command):
        run = _settled(course, assignment, inputs, out, options, events, times)
        try:
            return _grade_class(run)
        finally:      # after Ctrl-C or a refusal too: a rerun unpacks again what it needs
            if not options.keep_unpacked:
                for note in remove_unpacked(out / UNPACKED):
                    events.note(note)


@dataclass
class _Run:
    """One class run as it goes: what it was given, settled, then what each step of _grade_class adds for the next."""
    course: object
    assignment: object
    inputs: list
    out: Path
    events: GradeEvents
    times: object                      # the times file, read (intake/times.py), or None
    # What the options say, settled once (_settled): no step reads GradeOptions.
    rules: object                      # core.course.LateRules
    expected: dict
    settings: object                   # the assignment's limits, as the options change them
    key: str                           # what "graded before" means: these cases, these limits
    jobs: int
    intake_options: IntakeOptions
    roster: bool
    student: str | None
    regrade: bool
    merge: bool
    all_submissions: bool              # run older resubmissions too (else set aside as superseded)
    limits: Limits                     # the sandbox's
    isolation_asked: str
    command: str
    # _take_in_the_handins, _say_what_was_decided
    intake: object = None
    records: CourseRecords | None = None
    rekeyed: list = field(default_factory=list)
    elsewhere: Path | None = None      # the course's own folder for this assignment, when `out` is not it
    # _open_the_gradebook, _choose_what_to_grade
    gradebook: Gradebook | None = None
    considered: list = field(default_factory=list)
    todo: list = field(default_factory=list)
    retimed: int = 0
    # _grade_the_handins
    isolation: str = ""
    graded: int = 0

    @property
    def csv_path(self):
        return self.out / "grades.csv"


def _grade_class(run):
    """grade_class, with the folder's lock held: a class run's steps, in order, each handing `run` on."""
    _take_in_the_handins(run)          # intake (each file read and parsed once), the times file, the roster
    _say_what_was_decided(run)         # and sweep what runs killed outright left behind
    _open_the_gradebook(run)           # rows of earlier runs adopted, re-keyed, placed; no second class
    _choose_what_to_grade(run)         # --student, --regrade, and what a times file re-times
    with _grades_csv_on_ctrl_c(run), _umask_for_the_sandbox():
        _expect_rows(run)              # every hand-in a row before anything runs
        _grade_the_handins(run)        # in the sandbox, when any student code must run
        _keep_code(run.gradebook, run.considered)
    return _finish(run)


def _settled(course, assignment, inputs, out, options, events, times):
    """The run, with what its options say settled: lateness, expected values, limits, jobs, intake's options."""
    rules = late_rules(course, assignment.id, options.deadline, options.late_policy, options.late_penalty,
                       options.late_cap)
    expected = assignment.load_expected()
    settings = assignment.settings(case_timeout=options.case_timeout, budget=options.submission_timeout,
                                   limit_floor=options.limit_floor, limit_factor=options.limit_factor)
    intake_options = IntakeOptions(assignment.id, assignment.notebook, options.student_pattern,
                                   options.classroom_prefix, exclude=(str(out),))
    return _Run(course, assignment, list(inputs), out, events, times, rules=rules, expected=expected,
                settings=settings, key=assignment.grader_key(settings),
                jobs=options.jobs or len(os.sched_getaffinity(0)), intake_options=intake_options,
                roster=options.roster, student=options.student, regrade=options.regrade, merge=options.merge,
                all_submissions=options.all_submissions,
                limits=replace(Limits(), memory_mb=options.memory_mb), isolation_asked=options.isolation,
                command=options.command)


def _take_in_the_handins(run):
    """The hand-ins under the paths given, their times from a times file, and whose each is, as the roster says."""
    run.intake = collect(run.inputs, run.out / UNPACKED, run.intake_options)
    run.records = CourseRecords.if_any(run.course) if run.roster else None
    if run.times is not None:     # before the roster renames anyone: the file may name the LMS's own keys
        untimed, stray = _apply_times(run.intake, run.times, run.records)
    run.rekeyed = _match_roster(run.records, run.intake, run.assignment.id)
    if run.times is not None:     # said with the names the roster gives
        run.intake.notes += times_notes(untimed, stray)


def _say_what_was_decided(run):
    """Every note on the input, to the person running it; and whether this is a trial run."""
    course, assignment_id = run.course, run.assignment.id
    # A trial run, `make demo`: the roster is read, nothing of the course's is written; GradeRun says so when
    # the course keeps grades or records that a person might think this run changes.
    elsewhere = None if course.is_grades_dir(assignment_id, run.out) else course.grades_dir(assignment_id)
    if elsewhere is not None and ((elsewhere / "gradebook.db").is_file()
                                  or (course.grades_root / "course.db").is_file()):
        run.elsewhere = elsewhere
    run.intake.notes += _sweep_stale_sandboxes(run.out)
    run.intake.notes += _offsetless_times(course, run.rules, run.intake.handins)
    for note in run.intake.notes:
        run.events.note(note)


def _open_the_gradebook(run):
    """The gradebook in --out, its rows of earlier runs brought up to what intake and the roster say now."""
    run.gradebook = gradebook = Gradebook(run.out / "gradebook.db")
    assignment_id, handins = run.assignment.id, run.intake.handins
    for handin in handins:
        gradebook.adopt(assignment_id, handin)       # rows of an older gradebook, keyed by name
    for old, handin, own in run.rekeyed:
        gradebook.rekey(assignment_id, old, handin.student, handin.name, source=handin.source if own else None)
    for handin in handins:      # whether each hand-in graded before is placed, as the roster says now
        gradebook.set_placement(assignment_id, handin)
    _same_class(gradebook, assignment_id, run.intake, run.out, run.merge, run.events)


def _choose_what_to_grade(run):
    """The hand-ins this run considers (one student's, with --student), and of those the ones to grade now."""
    gradebook, assignment_id = run.gradebook, run.assignment.id
    gradebook.upgrade_key(assignment_id, run.assignment.legacy_grader_key(run.settings), run.key)
    run.considered = run.intake.handins
    if run.student is not None:
        run.considered = _only(run.student, run.records, run.intake.handins)
    run.todo = [h for h in run.considered if run.regrade or not gradebook.is_graded(assignment_id, h, run.key)]
    superseded = 0 if run.all_submissions else set_aside_older(run.todo, run.considered, _zone(run.rules))
    if superseded:
        run.events.note(f"{superseded} older submission(s) not run: a later one of the same student counts, and "
                        "an older one never does (each row names it); --all-submissions runs every one")
    say_why_regraded(gradebook, assignment_id, [h for h in run.todo if h.status != SUPERSEDED], run.key,
                     run.regrade, run.events)
    # A times file speaks of hand-ins already graded too: their lateness follows it, without a regrade.
    if run.times is not None:
        run.retimed = sum(gradebook.set_time(assignment_id, h) for h in run.considered if h not in run.todo)


@contextmanager
def _grades_csv_on_ctrl_c(run):
    """Ctrl-C while grading: grades.csv is written with every hand-in graded so far, then GradingInterrupted."""
    previous = _stop_at_the_first_interrupt()
    try:
        yield
    except KeyboardInterrupt:
        _apply_lateness_and_write_csv(run)
        run.gradebook.close()
        raise GradingInterrupted(run.graded, len(run.todo), run.csv_path, run.regrade) from None
    finally:
        if previous is not None:    # (an interrupted run is ended by then: what it wrote is complete)
            signal.signal(signal.SIGINT, previous)


@contextmanager
def _umask_for_the_sandbox():
    """What this process keeps is private (core/sharing.py: umask 077, or 007 for a shared course), but the
    sandbox counts on the usual 022 for what its workers write and read back (with 077 a hand-in's helper
    module cannot be imported): it gets that while it runs.  Everything of the grader's inside --out is
    under a folder made private before (and the users layer sets its own umask as it starts)."""
    mask = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(mask)


def _expect_rows(run):
    """A row for each hand-in to grade, `pending` until graded.  With --student, the other students' hand-ins
    that were never graded are waiting too: handed in, so never `missing`."""
    graded_before = run.gradebook.students(run.assignment.id)
    waiting = [h for h in run.intake.handins if h not in run.considered and h.student not in graded_before]
    run.gradebook.expect(None, run.assignment.id, run.todo + waiting, run.assignment.max_score)


def _grade_the_handins(run):
    """Grade run.todo, recording each result as it comes, in a sandbox when there is student code to run."""
    course, gradebook = run.course, run.gradebook
    if any(h.status is None for h in run.todo):
        # What the "users" layer must hide by file permissions (the others hide everything but the OS):
        # the whole course folder (its .git and solutions too) and the hand-ins.
        private = [course.root / "solutions", course.cases_dir, *(Path(p) for p in run.inputs)]
        codes = ["\n".join(cell.source for cell in h.cells or ()) for h in run.todo if h.status is None]
        with Sandbox(run.limits, preload=preload_for(codes), workdir=run.out, isolation=run.isolation_asked,
                     protect=private, protect_trees=[course.root]) as sandbox:
            run.isolation = sandbox.isolation
            run_id = gradebook.start_run(run.assignment.id, run.command, run.jobs, run.isolation)
            run.events.isolation(run.isolation, HIDES[run.isolation], sandbox.cpu_groups, sandbox.protected,
                                 sandbox.lacks)
            _grade_all(run, sandbox, run_id)
    else:
        # Nothing of a student's runs (all graded before, or none could be read): no sandbox is started,
        # which costs a second for nothing; the rows of what could not be read are recorded all the same.
        run_id = gradebook.start_run(run.assignment.id, run.command, run.jobs, run.isolation)
        _grade_all(run, None, run_id)
    gradebook.finish_run(run_id)


def _apply_lateness_and_write_csv(run):
    """Lateness, as the rules and the roster say (returns the late hand-ins); then grades.csv."""
    late = run.gradebook.apply_lateness(run.assignment.id, run.rules, run.records, run.assignment.max_score,
                                        run.course)
    run.gradebook.export_csv(run.assignment.id, run.csv_path)
    return late


def _finish(run):
    """grades.csv written, the gradebook and the roster closed; what the run did, as a GradeRun."""
    late = _apply_lateness_and_write_csv(run)
    gradebook, assignment, handins = run.gradebook, run.assignment, run.intake.handins
    rows = gradebook.grades(assignment.id)
    absent = gradebook.absent(assignment.id)
    waiting = gradebook.pending(assignment.id)
    apart = gradebook.graded_apart(assignment.id)
    others = [a for a in gradebook.assignments() if a != assignment.id]
    gradebook.close()
    if run.records is not None:
        run.records.close()
    unknown_lateness = sum(1 for row in rows if row.late is None and row.status not in (*ABSENT, NOT_GRADED))
    return GradeRun(assignment.id, rows, len(run.todo), len(run.considered) - len(run.todo), run.intake.ignored,
                    run.rules, late, unknown_lateness, others, run.csv_path, run.out / "gradebook.db", run.isolation,
                    list(run.intake.notes), _wrong_assignment(assignment, handins), absent,
                    len(handins) - len(run.considered), run.elsewhere, waiting, run.retimed, apart)


def _zone(rules):
    """The zone a hand-in time without a UTC offset is read in: the deadline's, as the gradebook reads it."""
    return rules.deadline.tzinfo if rules.deadline is not None else None


def _apply_times(intake, times, records):
    """Each hand-in's time from the times file, its student found as `--student` finds one: the key or the
    LMS's id, else (with a roster) a login, an email or a name, accents and case aside."""
    find = None
    if records is not None and records.has_roster():
        def find(value):
            try:
                return records.find(value).key
            except RecordsError:
                return None
    return apply_times(intake.handins, times, find)


def _keep_code(gradebook, handins):
    """Hand-ins graded before the gradebook kept code (`autograder similarity` reads it) get it kept now, from the
    cells intake read (never a second reading of the notebook)."""
    for handin in handins:
        if handin.status is not None or handin.cells is None or gradebook.has_code(handin.sha256):
            continue        # a row that says why it could not be read has no code to keep
        gradebook.keep_code(handin.sha256, code_pieces(handin.cells, handin.companion_files()))


def _only(who, records, handins):
    """The hand-ins of the one student `who` names (a key, an id, an email or a name), or IntakeError."""
    if records is not None and records.has_roster():
        key = records.find(who).key
        mine = [h for h in handins if h.student == key]
    else:
        folded = who.casefold()
        mine = [h for h in handins if folded in (h.student.casefold(), h.name.casefold(), h.email.casefold())]
    if not mine:
        raise IntakeError(f"--student {who}: no hand-in of theirs among these paths")
    return mine


def _match_roster(records, intake, assignment_id):
    """Give each hand-in its roster student's key and name (a team's hand-in: a copy for each member), and say
    why one the roster cannot place is unplaced; returns [(old key, hand-in, only this hand-in's rows)] of those
    re-keyed.

    What matched by name alone, or not at all, is added to the intake's notes."""
    if records is None or not records.has_roster():
        return _d2l_apart(intake)
    students = records.students(include_off_roster=True)
    matching = match(intake.handins, students, records.aliases(), records.placements(assignment_id))
    rekeyed, copies = [], []
    for handin, decision in zip(list(intake.handins), matching.decisions):
        old = handin.student
        handin.unplaced = decision.unplaced
        if decision.students:
            first, *others = decision.students
            _give(handin, first)
            copies += [_give(replace(handin), other) for other in others]     # each member's own row
        elif decision.key:              # a namesake's submission (D2L): a row of its own, under D2L's id
            handin.student, handin.namesake = decision.key, True
            handin.notes = tuple(n for n in handin.notes if "the last one counts" not in n) + (
                f"{NOTE}D2L submission {handin.upload} by {handin.name!r}, kept apart from the other submissions "
                "under that name: the roster has several students so named",)
        if old != handin.student:
            rekeyed.append((old, handin, bool(decision.key)))
    intake.handins += copies
    if intake.guess_warning and any(s.lms == "classroom" and s.login for s in students):
        intake.notes.remove(intake.guess_warning)      # the Classroom roster matched them (or says which not)
    intake.notes += matching.notes(assignment_id)
    return rekeyed


def _offsetless_times(course, rules, handins):
    """A warning when hand-in times without a UTC offset (Moodle's worksheet, D2L's and Blackboard's names, a
    times file) are read at the deadline's fixed offset because course.toml names no time zone: an hour off
    for the hand-ins on the other side of a change to or from summer time."""
    if rules.deadline is None or course.zone is not None:
        return []
    count = sum(1 for handin in handins if _offsetless(handin.submitted_at))
    if not count:
        return []
    return [f"warning: {count} hand-in time(s) carry no UTC offset, so they are read at the deadline's "
            f"({rules.deadline.tzinfo}), which is an hour off across a change to or from summer time: name the "
            "course's time zone in course.toml ([course] timezone = \"America/New_York\", say) and grade again"]


def _offsetless(text):
    try:
        return bool(text) and datetime.fromisoformat(text).tzinfo is None
    except (TypeError, ValueError):
        return False


def _d2l_apart(intake):
    """With no roster: D2L submissions under one name, each a row of its own, unplaced (see
    d2l_namesakes_without_roster); [(old key, hand-in, True)] as _match_roster returns."""
    rekeyed = []
    for handin, why in d2l_namesakes_without_roster(intake.handins):
        old, handin.student, handin.unplaced = handin.student, f"d2l:submission:{handin.upload}", why
        handin.notes = tuple(n for n in handin.notes if "the last one counts" not in n) + (f"{NOTE}{why}",)
        rekeyed.append((old, handin, True))
    if rekeyed:
        names = sorted({handin.name for _, handin, _ in rekeyed})
        intake.notes.append(f"warning: {len(names)} name(s) with several D2L submissions and no class list to tell "
                            f"whose each is, kept apart and released with no grade until it is imported: "
                            + ", ".join(repr(n) for n in names[:8]) + (" ..." if len(names) > 8 else ""))
    return rekeyed


def _give(handin, student):
    """The hand-in, as the roster's `student`'s."""
    handin.student, handin.name = student.key, student.name or handin.name
    handin.email = student.email or handin.email
    return handin


def _grade_all(run, sandbox, run_id):
    """Grade run.todo in the pool, recording each result as it comes; run.graded counts them."""
    assignment, gradebook, events = run.assignment, run.gradebook, run.events
    cancel = threading.Event()
    with events.grading(len(run.todo)):
        results = grade_all(assignment, run.expected, run.todo, sandbox, run.jobs, run.settings, cancel=cancel,
                            started=events.started)
        try:
            for handin, result in results:
                result = replace(result, message=with_notes(handin.notes, result.message))   # its row names them
                try:
                    gradebook.record(run_id, handin, result, run.key)
                except Exception as error:  # noqa: BLE001 - the row still gets written, saying why
                    result = grader_error(assignment, handin, error)
                    gradebook.record(run_id, handin, result, run.key)
                run.graded += 1
                events.finished(handin, result)
        finally:
            cancel.set()
            results.close()


def _wrong_assignment(assignment, handins):
    """Every notebook is another assignment's: the command named the wrong one, most likely."""
    if not handins or any(h.status != "wrong-assignment" for h in handins):
        return ""
    named = Counter(h.message.split("'")[1] for h in handins if h.message.count("'") >= 2)
    guess = named.most_common(1)[0][0] if named else None
    return (f"every hand-in is another assignment's (their metadata say {guess!r}), not {assignment.id!r}: "
            f"did you mean --assignment {guess}?" if guess else
            f"every hand-in is another assignment's, not {assignment.id!r}")


def _not_a_parent_of_the_course_s_folder(course, assignment_id, out):
    """`--out grades/` (or the course folder) would put a gradebook beside course.db, which the course never
    reads for an assignment: a trial run nobody meant.  Refused, with the folder the course keeps it in."""
    own = course.grades_dir(assignment_id).resolve()
    where = out.resolve()
    inside = (where == course.root.resolve() or course.root.resolve() in where.parents)   # a folder elsewhere is a trial
    if inside and where != own and where in own.parents:
        raise IntakeError(f"--out {out} holds the course's records, not {assignment_id}'s grades: give --out "
                          f"{_shown(own, course)}, the folder the course keeps them in (`gradebook`, `extend` and "
                          "`release` read it); a trial run goes anywhere outside the course's grades folder")


def _shown(folder, course):
    try:
        return folder.relative_to(Path.cwd())
    except ValueError:
        return folder


SANDBOX_PREFIX = "autograder-sandbox-"      # engine/sandbox.py's folder in --out, one per run


def _sweep_stale_sandboxes(out, min_age=60):
    """Remove the sandbox folders that runs killed outright (kill -9, a power cut) left in `out`: only those this
    user owns, older than `min_age` seconds, that no live process works in.  A live sandbox's every process has
    AUTOGRADER_SANDBOX=<its folder> in its environment and works inside it (engine/sandbox.py); /proc shows both
    for this user's processes (and for every process, as root).  Returns notes for people."""
    stale = [p for p in _entries(out) if p.name.startswith(SANDBOX_PREFIX) and _ours_and_old(p, min_age)]
    if not stale or not os.path.isdir("/proc"):
        return []
    live = _live_sandbox_folders()
    removed, kept = [], []
    for folder in stale:
        mine = str(folder.resolve())
        if any(path == mine or path.startswith(mine + os.sep) for path in live):
            continue
        shutil.rmtree(folder, onerror=_writable_then_again)
        (kept if folder.exists() else removed).append(folder.name)
    notes = [f"removed {len(removed)} sandbox folder(s) a run that was killed left in {out}: {', '.join(removed)}"] \
        if removed else []
    if kept:
        notes.append(f"warning: could not remove {', '.join(kept)} in {out} (left by a run that was killed): "
                     "remove it as its owner, or as root")
    return notes


def _entries(folder):
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def _ours_and_old(path, min_age):
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and time.time() - info.st_mtime > min_age


def _live_sandbox_folders():
    """Paths live processes name: the sandbox of their environment, and the folder they work in."""
    live = set()
    for pid in filter(str.isdigit, _names("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                for item in handle.read().split(b"\0"):
                    if item.startswith(b"AUTOGRADER_SANDBOX="):
                        live.add(item.split(b"=", 1)[1].decode("utf-8", "replace"))
            live.add(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            continue          # gone, or another user's (whose sandbox is not this user's folder)
    return live


def _names(folder):
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _writable_then_again(function, path, _):
    """A hand-in may leave a folder without write permission: give it back (the folder is ours), then retry."""
    try:
        os.chmod(os.path.dirname(path), 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
        function(path)
    except OSError:
        pass


def _check_writable(out, course=None):
    try:
        made = [folder for folder in (out, *out.parents) if not folder.exists()]
        if course is not None and course.grades_root in out.resolve().parents:
            made.append(course.grades_root)     # made private by `roster import`, say: on the way to --out
        out.mkdir(parents=True, exist_ok=True)
        # Private folders (0700, core/sharing.py) that a slot's own user id can still pass through to the
        # sandbox's folder inside --out (as root, a worker runs as its slot's user): traversable, never
        # listable, as the users layer makes --out (what is inside stays 0600/0700).
        for folder in {out.resolve(), *(m.resolve() for m in made)}:
            if folder.exists() and folder.stat().st_uid == os.geteuid():
                folder.chmod(folder.stat().st_mode & 0o7777 | 0o011)
        (out / ".write-test").touch()
        (out / ".write-test").unlink()
    except OSError as error:
        raise IntakeError(f"cannot write to {out}: {error.strerror}") from None


def _same_class(gradebook, assignment_id, intake, out, merge, events):
    """A second class graded into the same --out would merge into the first: refuse unless --merge."""
    known = gradebook.students(assignment_id)
    incoming = {h.student for h in intake.handins}
    if not known:
        return
    # Grading one file at a time into one folder is not a second class: both sides must be a class.
    if not known & incoming and len(known) > 1 and len(incoming) > 1 and not merge:
        raise IntakeError(
            f"{out} already holds {assignment_id} grades of another class ({len(known)} student(s), from "
            f"{', '.join(gradebook.sources(assignment_id))} ...), none of whom is in these hand-ins: "
            "grade into a new --out, or add --merge to put both classes in one gradebook")
    new = sorted(incoming - known)
    if new:
        who = {h.student: h.name if h.name == h.student else f"{h.name} ({h.student})" for h in intake.handins}
        events.note(f"{len(new)} student(s) new to {out}: {', '.join(who[k] for k in new[:8])}"
                    f"{' ...' if len(new) > 8 else ''}")


def command_line(argv):
    """The command as recorded with a run."""
    return shlex.join(["autograder", *argv])
