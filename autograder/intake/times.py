"""When each student handed in, from a file the LMS (or the instructor) wrote: `grade --times FILE`.

LMS downloads carry no hand-in times worth the name (every zip entry has the
download's time), so lateness needs the LMS's own record.  Two kinds of file
are read, recognised by their header:

* Moodle's grading worksheet (Assignment → "Download grading worksheet"):
  `Identifier` ("Participant 501", the id in the download's folder names),
  `Email address`, `Last modified (submission)` (a date as Moodle prints it,
  in the Moodle user's time zone, so without an offset: it is read in the
  deadline's zone, as docs/semester.md says).
* A plain CSV, for any LMS: a column naming the student (`student`, the key
  grades.csv shows, or `email`, `id`, `name`) and one holding the time
  (`submitted_at` or `handed_in_at`, ISO 8601).

A hand-in is matched by its key, then by the LMS's id, then by email, then
by name; a row that matches no hand-in, or a hand-in no row matches, is
said, never guessed.
"""

import csv
import io
import re
from dataclasses import dataclass
from datetime import datetime

from ..core.errors import AutograderError
from . import files

MAX_BYTES = 20 * 1024 * 1024
MOODLE_ID = "Identifier"
MOODLE_TIME = "Last modified (submission)"
PLAIN_WHO = ("student", "key", "email", "id", "lms_id", "name")
PLAIN_TIME = ("submitted_at", "handed_in_at", "time")
# How Moodle prints "Last modified (submission)" (strftimedatetime and its neighbours, in English).
MOODLE_FORMATS = ("%A, %d %B %Y, %I:%M %p", "%A, %d %B %Y, %H:%M", "%d %B %Y, %I:%M %p", "%d %B %Y, %H:%M",
                  "%A, %B %d, %Y, %I:%M %p", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M")
_NO_SUBMISSION = {"", "-", "no submission"}


class TimesError(AutograderError):
    """The times file cannot be used at all."""


@dataclass(frozen=True)
class Record:
    who: dict            # {"key" | "lms_id" | "email" | "name": value} the row names its student by
    submitted_at: str    # ISO 8601 (without an offset when the file gives none)
    source: str          # for people: which file, which kind


def read_times(path):
    """The Records of a times file, or TimesError saying what is wrong with it."""
    try:
        text = files.read_text(path, MAX_BYTES)
    except files.UnsafeFile as error:
        raise TimesError(f"--times {path}: {error}") from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise TimesError(f"--times {path}: the file is empty")
    header = [h.strip() for h in rows[0]]
    if MOODLE_ID in header and MOODLE_TIME in header:
        return _moodle(path, header, rows[1:])
    lowered = [h.lower() for h in header]
    who = [h for h in PLAIN_WHO if h in lowered]
    when = [h for h in PLAIN_TIME if h in lowered]
    if not who or not when:
        raise TimesError(f"--times {path}: not a Moodle grading worksheet (no {MOODLE_ID!r} and {MOODLE_TIME!r} "
                         f"columns) nor a plain CSV (a column named one of {', '.join(PLAIN_WHO)} and one of "
                         f"{', '.join(PLAIN_TIME)})")
    return _plain(path, lowered, who, when[0], rows[1:])


def _moodle(path, header, rows):
    column = {name: header.index(name) for name in header}
    records = []
    for number, row in enumerate(rows, 2):
        cell = lambda name: row[column[name]].strip() if name in column and column[name] < len(row) else ""  # noqa: E731
        text = cell(MOODLE_TIME)
        if text.lower() in _NO_SUBMISSION:
            continue
        moment = parse_moodle_time(text)
        if moment is None:
            raise TimesError(f"--times {path}, row {number}: {text[:60]!r} is not a date Moodle writes")
        who = {}
        match = re.search(r"(\d+)\s*$", cell(MOODLE_ID))
        if match:
            who["key"] = f"moodle:{match.group(1)}"
        if cell("Email address"):
            who["email"] = cell("Email address").lower()
        if cell("Full name"):
            who["name"] = cell("Full name")
        records.append(Record(who, moment, "Moodle's grading worksheet (Last modified (submission))"))
    return records


def parse_moodle_time(text):
    for pattern in MOODLE_FORMATS:
        try:
            return datetime.strptime(text, pattern).isoformat()
        except ValueError:
            continue
    return None


def _plain(path, header, who_columns, time_column, rows):
    records = []
    for number, row in enumerate(rows, 2):
        cells = dict(zip(header, (c.strip() for c in row)))
        text = cells.get(time_column, "")
        if not text:
            continue
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
        except ValueError:
            raise TimesError(f"--times {path}, row {number}: {text[:60]!r} is not an ISO 8601 time such as "
                             "2026-12-01T23:59:00-05:00") from None
        who = {}
        for column in who_columns:
            value = cells.get(column, "")
            if value:
                kind = {"student": "key", "id": "lms_id"}.get(column, column)
                who[kind] = value.lower() if kind == "email" else value
        if who:
            records.append(Record(who, moment, f"times file {path.name}"))
    return records


def apply_times(handins, records, find=None):
    """Give each hand-in its time from `records`; returns (hand-ins no row names, rows that name no hand-in),
    which `times_notes` says once the hand-ins carry the roster's names.

    `find` (optional) names the roster student a text names, as `--student` does (a login, an email, a name,
    accents and case aside), or None: a row and a hand-in that name the same roster student then match."""
    index = {}
    for record in records:
        for kind, value in record.who.items():
            index.setdefault((kind, value), []).append(record)
    by_student = {}
    if find is not None:
        for record in records:
            keys = {find(value) for value in record.who.values()} - {None}
            if len(keys) == 1:
                by_student.setdefault(keys.pop(), []).append(record)
    used, unmatched = set(), []
    for handin in handins:
        record = None
        for kind, value in (("key", handin.student), ("lms_id", handin.lms_id), ("email", handin.email.lower()),
                            ("name", handin.name)):
            found = index.get((kind, value)) if value else None
            if found and len(found) == 1:
                record = found[0]
                break
        if record is None and by_student:
            found = by_student.get(find(handin.student)) or by_student.get(find(handin.email) if handin.email
                                                                            else None)
            record = found[0] if found and len(found) == 1 else None
        if record is None:
            unmatched.append(handin)
            continue
        used.add(id(record))
        handin.submitted_at, handin.time_source = record.submitted_at, record.source
        # Moodle's worksheet pairs the download's participant id with an email: the roster's own key there.
        handin.email = handin.email or record.who.get("email", "")
    return unmatched, [r for r in records if id(r) not in used]


def times_notes(unmatched, stray):
    """Warnings (said even with --quiet) on what the times file left out: a hand-in it gives no time (its lateness
    is the LMS's mark, or unknown) and a row that names no hand-in (a typo, or a student who handed in nothing),
    each named as people read it."""
    notes = []
    if unmatched:
        shown = sorted({h.name if h.name == h.student else f"{h.name} ({h.student})" for h in unmatched})
        notes.append(f"warning: the times file names no time for {len(unmatched)} hand-in(s), so their lateness is "
                     f"the LMS's mark, or unknown: {', '.join(shown[:8])}{' ...' if len(shown) > 8 else ''}")
    if stray:
        names = sorted({_said(r.who) for r in stray})
        notes.append(f"warning: {len(stray)} row(s) of the times file match no hand-in (a typo, or a student who "
                     f"handed in nothing here): {', '.join(names[:8])}{' ...' if len(names) > 8 else ''}")
    return notes


def _said(who):
    """A times-file row's student as people read it: "Zed Nobody (moodle:509)", else whatever names them."""
    key = who.get("key") or who.get("lms_id") or who.get("email") or ""
    name = who.get("name", "")
    return f"{name} ({key})" if name and key and name != key else name or key or next(iter(who.values()), "?")
