"""Where a course keeps its files, and its settings from course.toml.

The layout is fixed so every command agrees on it:
  solutions/<id>/<notebook>              reference notebook (hidden)
  assignments/<id>/<notebook>            student notebook (generated)
  autograder/assignments/<id>/cases.toml cases, public and hidden
  autograder/assignments/<id>/expected.json  expected values (generated)
  public_rubric.xlsx                     public rubric (generated)
  grades/course.db, grades/<id>/         the course's records and each assignment's gradebook
                                         (git-ignored; `grades` in course.toml's [course] or an
                                         assignment's table moves them)

Assignments are in course order everywhere (prompts, columns, sheets, the
student README): by deadline, then by their order in course.toml, then by id.
"""

import re
import tomllib
from urllib.parse import urlsplit
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
from pathlib import Path
from .errors import AutograderError
from .lms_columns import ASSIGNMENT_COLUMN
from .numbers import MAX_LIMIT_SECONDS, MAX_POINTS, NumberError, checked
from .slip_days import SlipDaysError, SlipPolicy, read_policy

# The value course.toml ships with: `autograder init` replaces it, `build` warns until then.
EXAMPLE_REPOSITORY = "https://github.com/ContextLab/n-queens-course"
# Where an instructor's students hand in and get grades; `release` follows it.
LMS_CHOICES = ("canvas", "moodle", "gradescope", "classroom", "blackboard", "d2l", "other")
# Time limits (seconds) an assignment gets when its cases.toml sets none; [limits] in course.toml overrides.
DEFAULT_LIMITS = {"case_timeout": 5.0, "cell_timeout": 30.0, "submission_timeout": 300.0}


class CourseError(AutograderError):
    """The course folder is missing something a command needs."""


@dataclass(frozen=True)
class Course:
    root: Path
    name: str
    repository: str          # GitHub URL; the Colab badges point here
    branch: str
    points_per_assignment: float
    lms: str = "other"
    limits: dict = field(default_factory=lambda: dict(DEFAULT_LIMITS), compare=False, hash=False)
    # [assignment.<id>] tables of course.toml, as read (deadline, late policy, lms_column, ...).
    assignments: dict = field(default_factory=dict, compare=False, hash=False)

    # Where the course keeps its grades ([course] grades in course.toml; relative to the course folder).
    grades: str = "grades"
    # The course's time zone by name ([course] timezone, e.g. "America/New_York"), "" when not given.  A
    # deadline's UTC offset holds on its own date only: a time written without an offset (Moodle's worksheet,
    # a zip entry, `extend --until 2026-11-05`) on the other side of a change to or from summer time is an
    # hour off when read at it.
    timezone: str = ""
    # Canvas's own address and this course's id there ([course] canvas_url and canvas_course): where
    # `autograder canvas pull` and `release --to canvas` talk to Canvas's API ("" when not set).
    canvas_url: str = ""
    canvas_course: str = ""
    # A roster student added after an assignment's deadline and with no hand-in for it: "excused" (the default:
    # it was due before they were in the course) or "missing" ([course] late_joiners).
    late_joiners: str = "excused"
    # [slip_days]: each student's pool of late days (core/slip_days.py); None when the course gives none.
    slip_days: SlipPolicy | None = field(default=None, compare=False, hash=False)

    @property
    def zone(self):
        """The course's time zone (zoneinfo), or None when course.toml names none."""
        return ZoneInfo(self.timezone) if self.timezone else None

    @property
    def cases_dir(self):
        return self.root / "autograder" / "assignments"

    def assignment_ids(self):
        """Every assignment, in course order: by deadline, then by course.toml's order, then by id.

        Alphabetical order put bitwise-queens before n-queens, so the semester report compared a
        student's scores backwards (a rise read as a drop)."""
        found = sorted(p.parent.name for p in self.cases_dir.glob("*/cases.toml"))
        listed = list(self.assignments)
        return sorted(found, key=lambda a: (_deadline_key(self.assignments.get(a, {}).get("deadline")),
                                            listed.index(a) if a in listed else len(listed), a))

    @property
    def grades_root(self):
        """The folder of the course's records (course.db) and, by default, of each assignment's gradebook."""
        return (self.root / self.grades).resolve()

    def grades_dir(self, assignment_id):
        """The one folder that holds `assignment_id`'s grades for the course: its `grades` in course.toml,
        else <grades>/<id>/.  Set by the course, never by where a `grade --out` last wrote."""
        own = self.assignments.get(assignment_id, {}).get("grades")
        return (self.root / own).resolve() if own else self.grades_root / assignment_id

    def is_grades_dir(self, assignment_id, folder):
        """Is `folder` the course's own gradebook folder for `assignment_id`?"""
        return Path(folder).resolve() == self.grades_dir(assignment_id)

    def colab_url(self, relative_path):
        owner_repo = self.repository.removeprefix("https://github.com/").rstrip("/")
        return f"https://colab.research.google.com/github/{owner_repo}/blob/{self.branch}/{relative_path}"

    @property
    def is_example(self):
        """Still the example repository: badges and links point at someone else's course."""
        return self.repository.lower() == EXAMPLE_REPOSITORY.lower()

    def lms_column(self, assignment_id):
        """The LMS grade column of an assignment (course.toml's lms_column), or None."""
        return self.assignments.get(assignment_id, {}).get("lms_column")

    def canvas_assignment(self, assignment_id):
        """The assignment's id in Canvas: its table's canvas_assignment, else the id its Canvas grade column
        names (`N-Queens (501)`), else None."""
        table = self.assignments.get(assignment_id, {})
        if table.get("canvas_assignment") is not None:
            return str(table["canvas_assignment"])
        found = ASSIGNMENT_COLUMN.match(table.get("lms_column") or "")
        return found.group("id") if found else None


def canvas_url(value, where="canvas_url"):
    """Canvas's address as people paste it (`https://canvas.uni.edu/`, a course's page), as the API's base:
    `https://canvas.uni.edu`; "" for none.  Plain http only to this machine: the token travels with every
    request."""
    if value in ("", None):
        return ""
    text = str(value).strip()
    parts = urlsplit(text if "://" in text else f"https://{text}")
    local = parts.hostname in ("localhost", "127.0.0.1", "::1")
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.username or parts.password \
            or (parts.scheme == "http" and not local) or any(c.isspace() for c in text):
        raise CourseError(f"{where}: {text[:80]!r} is not Canvas's https address, such as "
                          "\"https://canvas.uni.edu\"")
    path = parts.path.split("/courses/", 1)[0].rstrip("/")      # a course's own page, pasted whole
    return f"{parts.scheme}://{parts.netloc}{path}"


def canvas_id(value, where):
    """A Canvas id (a course's, an assignment's): digits, as text; "" for none."""
    if value in ("", None):
        return ""
    text = str(value).strip()
    if isinstance(value, bool) or not re.fullmatch(r"[1-9][0-9]{0,17}", text):
        raise CourseError(f"{where}: {text[:40]!r} is not a Canvas id (the number in the course's or "
                          "assignment's address, e.g. https://canvas.uni.edu/courses/12345)")
    return text


def _deadline_key(value):
    """How a deadline sorts (UTC); no deadline, or one that cannot be read, after every deadline."""
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value)) if value else None
        except ValueError:
            moment = None
    if moment is None or moment.tzinfo is None:
        return (1, "")
    return (0, moment.astimezone(timezone.utc).isoformat())


def _folder(value, where):
    """A `grades` folder setting: relative text (inside the course folder or not), never empty."""
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise CourseError(f"{where}: grades must be a folder, as text (e.g. \"grades\"), not {value!r}")
    return value.strip()


def github_repository(text):
    """The canonical https://github.com/<owner>/<name> of a GitHub repository URL, or CourseError.

    Accepts what people paste: with or without https://, a trailing .git or /, or the
    SSH form git@github.com:owner/name.git."""
    value = str(text).strip()
    match = re.fullmatch(r"(?:(?:https?://)?(?:www\.)?github\.com/|git@github\.com:)"
                         r"([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9._-]{1,100}?)(?:\.git)?/?", value)
    if not match or match.group(2) in (".", ".."):
        raise CourseError(f"repository {value!r} is not a GitHub repository URL: "
                          "expected https://github.com/<owner>/<name> (Colab opens notebooks from GitHub)")
    return f"https://github.com/{match.group(1)}/{match.group(2)}"


def check_branch(text):
    """A git branch name (the Colab links name it), or CourseError."""
    value = str(text).strip()
    if (not re.fullmatch(r"[A-Za-z0-9._/-]+", value) or value.startswith(("-", "/", ".")) or ".." in value
            or value.endswith(("/", ".", ".lock")) or "//" in value):
        raise CourseError(f"branch {value!r} is not a git branch name (letters, digits, '.', '_', '-', '/')")
    return value


def setting(value, low, high, where, unit=""):
    """A number from a file an instructor edits (course.toml, cases.toml), checked as the command line checks
    the same setting (core/numbers.py): finite, in range, or CourseError naming where it is."""
    try:
        return checked(value, low, high, unit)
    except NumberError as error:
        raise CourseError(f"{where}: {error}") from None


def _limits(data, path):
    limits = dict(DEFAULT_LIMITS)
    for key, value in data.items():
        if key not in DEFAULT_LIMITS:
            raise CourseError(f"{path}: [limits] has no setting {key!r} (known: {', '.join(DEFAULT_LIMITS)})")
        limits[key] = setting(value, 0.01, MAX_LIMIT_SECONDS, f"{path}: [limits] {key}", " seconds")
    return limits


def _assignment_tables(data, path):
    if not isinstance(data, dict) or not all(isinstance(t, dict) for t in data.values()):
        raise CourseError(f"{path}: [assignment.<id>] must be tables, one per assignment")
    for assignment_id, table in data.items():
        column = table.get("lms_column")
        if column is not None and (not isinstance(column, str) or not column.strip()):
            raise CourseError(f"{path}: [assignment.{assignment_id}] lms_column must be the grade column's "
                              f"name as text, not {column!r}")
        if "grades" in table:
            table["grades"] = _folder(table["grades"], f"{path} [assignment.{assignment_id}]")
        if "canvas_assignment" in table:
            table["canvas_assignment"] = canvas_id(table["canvas_assignment"],
                                                   f"{path}: [assignment.{assignment_id}] canvas_assignment")
    return {assignment_id: dict(table) for assignment_id, table in data.items()}


def find_root(start=None):
    """The nearest folder at or above `start` holding course.toml."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "course.toml").is_file():
            return folder
    raise CourseError(f"no course.toml in {here} or any folder above it; "
                      "run the command inside the course repository or pass --course")


def load_course(root=None):
    root = Path(root).resolve() if root else find_root()
    path = root / "course.toml"
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
        data = document["course"]
        name, repository = data["name"], data["repository"]
    except FileNotFoundError:
        raise CourseError(f"{path} does not exist") from None
    except (tomllib.TOMLDecodeError, KeyError) as error:
        raise CourseError(f"{path}: {error}") from None
    lms = data.get("lms", "other")
    if lms not in LMS_CHOICES:
        raise CourseError(f"{path}: lms = {lms!r} is not one of {', '.join(LMS_CHOICES)}")
    return Course(root=root, name=name, repository=github_repository(repository),
                  branch=check_branch(data.get("branch", "main")),
                  points_per_assignment=setting(data.get("points_per_assignment", 5), 0.01, MAX_POINTS,
                                                f"{path}: [course] points_per_assignment", " points"), lms=lms,
                  limits=_limits(document.get("limits", {}), path),
                  assignments=_assignment_tables(document.get("assignment", {}), path),
                  grades=_folder(data.get("grades", "grades"), f"{path} [course]"),
                  timezone=check_timezone(data.get("timezone", ""), f"{path}: [course] timezone"),
                  canvas_url=canvas_url(data.get("canvas_url", ""), f"{path}: [course] canvas_url"),
                  canvas_course=canvas_id(data.get("canvas_course", ""), f"{path}: [course] canvas_course"),
                  late_joiners=_late_joiners(data.get("late_joiners", "excused"), path),
                  slip_days=_slip_days(document.get("slip_days"), path))


LATE_JOINERS = ("excused", "missing")


def _late_joiners(value, path):
    if value not in LATE_JOINERS:
        raise CourseError(f"{path}: [course] late_joiners = {value!r} is not one of {', '.join(LATE_JOINERS)} (what a "
                          "student added to the roster after an assignment's deadline is for it)")
    return value


def _slip_days(table, path):
    try:
        return read_policy(table, path)
    except SlipDaysError as error:
        raise CourseError(str(error)) from None


def check_timezone(value, where):
    """A time zone's name as the IANA database spells it ("Europe/Paris"), or "" for none."""
    if value in ("", None):
        return ""
    try:
        ZoneInfo(str(value))
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise CourseError(f"{where}: {str(value)[:60]!r} is not a time zone's name, such as \"America/New_York\" or "
                          "\"Europe/Paris\" (the IANA database's)") from None
    return str(value)


def parse_deadline(text, zone=None):
    """ISO 8601 text with a UTC offset, from what an instructor types.

    "2026-12-01T23:59:00-05:00" stays as it is; a time without an offset is in `zone` (a tzinfo: the
    course deadline's, so `extend --until 2026-12-04` is 23:59 where the course's deadline is), else this
    machine's local time on that date; a date alone means 23:59 that day."""
    if isinstance(text, datetime) and text.tzinfo is not None:     # TOML's own offset date-time
        return text.isoformat(timespec="seconds")
    value = str(text).strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            moment = datetime.combine(date.fromisoformat(value), time(23, 59))
        else:
            moment = datetime.fromisoformat(value.replace(" ", "T", 1) if "T" not in value else value)
    except ValueError:
        where = ("in the course deadline's zone" if zone is not None else "in this machine's time zone")
        raise CourseError(f"deadline {value!r} is not a date and time: write it as ISO 8601, "
                          f"e.g. 2026-12-01T23:59:00-05:00 (or 2026-12-01 23:59, read {where})") from None
    if moment.tzinfo is None:
        # The deadline's zone; else local time, with that date's offset (summer time included).
        moment = moment.replace(tzinfo=zone) if zone is not None else moment.astimezone()
    return moment.isoformat(timespec="seconds")


def _zone(value):
    """The time zone (a fixed offset) of a deadline as course.toml holds it, or None."""
    if isinstance(value, datetime):
        return value.tzinfo
    try:
        return datetime.fromisoformat(str(value)).tzinfo if value else None
    except ValueError:
        return None


LATE_POLICIES = ("none", "per-day", "cap")


@dataclass(frozen=True)
class LateRules:
    """An assignment's deadline and what a late hand-in costs ([assignment.<id>] in course.toml, or flags).

    policy "none" records lateness only; "per-day" takes `penalty` points off
    per started day late; "cap" lets a late hand-in earn at most `cap` points.
    """
    deadline: datetime | None = None
    policy: str = "none"
    penalty: float = 0.0
    cap: float | None = None

    def in_zone(self, zone):
        """The same rules, the deadline's clock that of `zone` (the course's, None: as it is): what a hand-in
        time without an offset is read in (core/lateness.py)."""
        if zone is None or self.deadline is None:
            return self
        return replace(self, deadline=self.deadline.astimezone(zone))

    def describe(self):
        deadline = f"deadline {self.deadline.isoformat()}" if self.deadline else "no deadline"
        if self.policy == "per-day":
            policy = f"late_policy per-day: {self.penalty:g} point(s) off per started day late"
        elif self.policy == "cap":
            policy = f"late_policy cap: a late hand-in earns at most {self.cap:g} point(s)"
        else:
            policy = "late_policy none: lateness recorded, no points off"
        return f"{deadline}; {policy}"


def late_rules(course, assignment_id, deadline=None, policy=None, penalty=None, cap=None):
    """The LateRules of `assignment_id`: course.toml's [assignment.<id>] keys, each overridden by a flag given."""
    table = course.assignments.get(assignment_id, {})
    where = f"{course.root / 'course.toml'} [assignment.{assignment_id}]"
    if deadline is not None:
        # Typed by a person: without an offset it is in the zone of course.toml's deadline for it, when there
        # is one, else this machine's (as `init` reads it); a date alone is 23:59 there.
        try:
            deadline = parse_deadline(deadline, course.zone or _zone(table.get("deadline")))
        except CourseError as error:
            raise CourseError(f"--deadline: {error}") from None
        where = "--deadline"
    deadline = deadline if deadline is not None else table.get("deadline")
    policy = policy if policy is not None else table.get("late_policy", "none")
    penalty = penalty if penalty is not None else table.get("late_penalty", 0.0)
    cap = cap if cap is not None else table.get("late_cap")
    if isinstance(deadline, datetime):             # TOML's own date-time type
        moment = deadline
    elif deadline is None or deadline == "":
        moment = None
    else:
        try:
            moment = datetime.fromisoformat(str(deadline))
        except ValueError:
            raise CourseError(f"{where}: deadline {deadline!r} is not an ISO 8601 time such as "
                              "2026-12-01T23:59:00-05:00") from None
    if moment is not None and moment.tzinfo is None:
        raise CourseError(f"{where}: deadline {deadline!s} needs its UTC offset, e.g. 2026-12-01T23:59:00-05:00")
    if policy not in LATE_POLICIES:
        raise CourseError(f"{where}: late_policy {policy!r} is not one of {', '.join(LATE_POLICIES)}")
    # Checked as `grade --late-penalty` and `--late-cap` are: `nan` would take "nan" points off, a 0.
    penalty = setting(penalty, 0, MAX_POINTS, f"{where}: late_penalty", " points")
    cap = None if cap is None else setting(cap, 0, MAX_POINTS, f"{where}: late_cap", " points")
    if policy == "per-day" and penalty <= 0:
        raise CourseError(f"{where}: late_policy \"per-day\" needs late_penalty, the points off per day late")
    if policy == "cap" and (cap is None or cap < 0):
        raise CourseError(f"{where}: late_policy \"cap\" needs late_cap, the most points a late hand-in earns")
    return LateRules(moment, policy, penalty, cap).in_zone(course.zone)
