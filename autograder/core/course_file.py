"""course.toml as `autograder init` writes it: values checked, every key kept, comments that explain.

The file is written whole from the layout below (tomllib cannot write, and the
layout's comments are the documentation of each setting). Keys this module does
not know, in any table, are carried over with their values, so settings other
commands add survive an `init`; the instructor's own comments do not (git keeps
the old file). What is written is read back and must equal what was meant.
"""

import json
import math
import os
import re
import tomllib
from datetime import date, datetime, time, timedelta

from .course import (DEFAULT_LIMITS, LMS_CHOICES, CourseError, canvas_id, canvas_url, check_branch, check_timezone,
                     github_repository, parse_deadline, setting)
from .numbers import MAX_LIMIT_SECONDS, MAX_POINTS, NumberError, plain_number

LATE_POLICIES = ("none", "per-day", "cap")
COURSE_KEYS = ("name", "repository", "branch", "points_per_assignment", "lms", "timezone", "canvas_url", "canvas_course")
TIMEZONE_NOTE = "times without a UTC offset are read on this zone's clock (summer time)"
ASSIGNMENT_KEYS = ("deadline", "late_policy", "late_penalty", "late_cap", "lms_column")


# --- values, checked ------------------------------------------------------------------------------

def deadline_text(iso):
    """A deadline as students read it: 'Tue 1 Dec 2026, 23:59 (UTC-05:00)'."""
    moment = iso if isinstance(iso, datetime) else datetime.fromisoformat(iso)
    offset = moment.utcoffset() or timedelta(0)
    sign, minutes = ("-" if offset < timedelta(0) else "+"), abs(int(offset.total_seconds())) // 60
    return f"{moment:%a} {moment.day} {moment:%b %Y, %H:%M} (UTC{sign}{minutes // 60:02d}:{minutes % 60:02d})"


def late_policy_text(table):
    """What a late hand-in costs, in a sentence, from an [assignment.<id>] table."""
    policy = table.get("late_policy", "none")
    if policy == "per-day":
        return f"late hand-ins lose {table['late_penalty']:g} points per started day late"
    if policy == "cap":
        return f"late hand-ins earn at most {table['late_cap']:g} points"
    return "late hand-ins are marked late, with no points off"


def check_late_policy(table, points, where):
    """The late-policy keys of an [assignment.<id>] table, or CourseError saying what is wrong."""
    policy = table.get("late_policy", "none")
    if policy not in LATE_POLICIES:
        raise CourseError(f"{where}: late_policy {policy!r} is not one of {', '.join(LATE_POLICIES)}")
    for key, needed in (("late_penalty", "per-day"), ("late_cap", "cap")):
        if policy != needed:
            continue
        value = table.get(key)
        lowest = 0 if key == "late_cap" else 0.01      # a per-day penalty of 0 is policy none
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lowest <= value <= points:
            raise CourseError(f"{where}: late_policy {policy!r} needs {key} = a number of points "
                              f"from {lowest:g} to {points:g}, not {value!r}")   # NaN fails the range too


def parse_late_policy(text, points, where):
    """'none', 'per-day:0.5' or 'cap:2.5' as the table keys they stand for."""
    policy, _, amount = str(text).strip().partition(":")
    table = {"late_policy": policy}
    if policy in ("per-day", "cap"):
        try:
            table["late_penalty" if policy == "per-day" else "late_cap"] = plain_number(amount)
        except NumberError:
            raise CourseError(f"{where}: {text!r}: write per-day:<points off per day> or "
                              "cap:<most points a late hand-in earns>") from None
    elif amount:
        raise CourseError(f"{where}: {text!r}: late policy none takes no number")
    check_late_policy(table, points, where)
    return table


def check_document(document, where="course.toml"):
    """Everything `init` sets, checked the way the commands that read it will."""
    course = document.get("course", {})
    for key in ("name", "repository"):
        if not str(course.get(key, "")).strip():
            raise CourseError(f"{where}: [course] {key} is empty")
    github_repository(course["repository"])
    check_branch(course.get("branch", "main"))
    if course.get("lms", "other") not in LMS_CHOICES:
        raise CourseError(f"{where}: lms {course.get('lms')!r} is not one of {', '.join(LMS_CHOICES)}")
    points = setting(course.get("points_per_assignment", 5), 0.01, MAX_POINTS,
                     f"{where}: points_per_assignment", " points")
    check_timezone(course.get("timezone", ""), f"{where}: [course] timezone")
    canvas_url(course.get("canvas_url", ""), f"{where}: [course] canvas_url")
    canvas_id(course.get("canvas_course", ""), f"{where}: [course] canvas_course")
    for key, value in document.get("limits", {}).items():
        if key in DEFAULT_LIMITS:
            setting(value, 0.01, MAX_LIMIT_SECONDS, f"{where}: {key}", " seconds")
    for assignment_id, table in document.get("assignment", {}).items():
        place = f"{where}: [assignment.{assignment_id}]"
        deadline = table.get("deadline")
        if deadline is not None and not (isinstance(deadline, datetime) and deadline.tzinfo is not None):
            if parse_deadline(deadline) != str(deadline):
                raise CourseError(f"{place}: deadline {table['deadline']!r} needs a UTC offset, "
                                  "e.g. 2026-12-01T23:59:00-05:00")
        check_late_policy(table, points, place)
        column = table.get("lms_column")
        if column is not None and (not isinstance(column, str) or not column.strip()):
            raise CourseError(f"{place}: lms_column must be the grade column's name as text")


# --- writing --------------------------------------------------------------------------------------

def read_document(path):
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as error:
        raise CourseError(f"{path}: {error}") from None


def toml_key(key):
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else toml_value(key)


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        # JSON's escapes are TOML's; DEL is the one control character JSON leaves raw.
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise CourseError(f"cannot write {value!r} to course.toml")


def _line(key, value, comment=""):
    text = f"{toml_key(key)} = {toml_value(value)}"
    return f"{text:<40} # {comment}" if comment and len(text) < 40 else (f"{text}  # {comment}" if comment else text)


def _others(table, known):
    return [_line(k, v) for k, v in table.items() if k not in known]


def render(document, assignment_ids):
    """course.toml's text for `document`, with a table for every assignment id (in course order)."""
    course = document.get("course", {})
    limits = document.get("limits", {})
    tables = document.get("assignment", {})
    lines = ["# Course settings, written by `autograder init` (run it again to change them, or edit this file",
             "# and run `autograder build`). The one place the repository URL lives: Colab badges, feedback",
             "# links and the student README are generated from it."]
    lines += [_line(k, v) for k, v in document.items() if not isinstance(v, dict)]   # keys before any table
    lines += ["", "[course]",
              _line("name", course["name"]),
              _line("repository", course["repository"], "your GitHub repository (students open it in Colab)"),
              _line("branch", course.get("branch", "main"), "the branch the Colab links open"),
              _line("points_per_assignment", course.get("points_per_assignment", 5)),
              _line("lms", course.get("lms", "other"), " | ".join(LMS_CHOICES)),
              _line("timezone", course["timezone"], TIMEZONE_NOTE) if course.get("timezone")
              else f'# timezone = "America/New_York"     # {TIMEZONE_NOTE}']
    if course.get("canvas_url") or course.get("canvas_course") or course.get("lms") == "canvas":
        lines += [_line("canvas_url", course["canvas_url"], "Canvas's address: `canvas pull`, `release --to canvas`")
                  if course.get("canvas_url") else '# canvas_url = "https://canvas.uni.edu"   # Canvas\'s address',
                  _line("canvas_course", course["canvas_course"], "the course's id in Canvas (in its address)")
                  if course.get("canvas_course") else "# canvas_course = 12345             # the course's id in Canvas"]
    lines += _others(course, COURSE_KEYS)
    lines += ["", "# Time limits in seconds, for assignments whose cases.toml sets none.", "[limits]"]
    lines += [_line(k, limits.get(k, v)) for k, v in DEFAULT_LIMITS.items()]
    lines += _others(limits, DEFAULT_LIMITS)
    for table_name, table in document.items():
        if table_name not in ("course", "limits", "assignment") and isinstance(table, dict):
            lines += ["", f"[{toml_key(table_name)}]", *(_line(k, v) for k, v in table.items())]
    lines += ["", "# One table per assignment. deadline: ISO 8601 with a UTC offset. late_policy: none (lateness",
              "# recorded only), per-day (late_penalty points off per started day late) or cap (a late",
              "# hand-in earns at most late_cap points). lms_column: the assignment's grade column in the LMS,",
              "# as the LMS names it (Canvas: `Name (id)`), used by `autograder release`. Assignments are in",
              "# course order everywhere: by deadline, then in the order of these tables. Grades are kept in",
              "# grades/<id>/ (git-ignored); `grades = \"FOLDER\"` here or in [course] moves them."]
    for assignment_id in [*assignment_ids, *(a for a in tables if a not in assignment_ids)]:
        table = tables.get(assignment_id, {})
        lines += ["", f"[assignment.{toml_key(assignment_id)}]"]
        lines.append(_line("deadline", table["deadline"]) if "deadline" in table
                     else '# deadline = "2026-12-01T23:59:00-05:00"')
        lines.append(_line("late_policy", table.get("late_policy", "none")))
        for key in ("late_penalty", "late_cap", "lms_column"):
            if key in table:
                lines.append(_line(key, table[key]))
        lines += _others(table, ASSIGNMENT_KEYS)
    return "\n".join(lines) + "\n"


def _normalized(document, assignment_ids):
    """`document` as render() writes it: defaults filled in, so the read-back can be compared."""
    course = dict(document["course"])
    course.setdefault("branch", "main")
    course.setdefault("points_per_assignment", 5)
    course.setdefault("lms", "other")
    limits = {**DEFAULT_LIMITS, **document.get("limits", {})}
    tables = {a: dict(t) for a, t in document.get("assignment", {}).items()}
    for assignment_id in assignment_ids:
        tables.setdefault(assignment_id, {})
    for table in tables.values():
        table.setdefault("late_policy", "none")
    return {**document, "course": course, "limits": limits, "assignment": tables}


def write(path, document, assignment_ids):
    """Check `document`, write it as course.toml at `path` (atomically) and return the text."""
    check_document(document, path.name)
    text = render(document, assignment_ids)
    if tomllib.loads(text) != _normalized(document, assignment_ids):
        raise CourseError(f"{path}: internal error: the settings did not survive writing; nothing was written")
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    return text
