"""What Blackboard's receipts and D2L's file names say about a hand-in: who, and when the LMS recorded it.

Blackboard Learn writes one receipt per attempt beside the attempt's files in
its *Assignment File Download* (`<assignment>_<username>_attempt_<stamp>.txt`),
as public tools that read the download show it (gradex-cli's README, the
blackboard "datafile" parser of BBGradebookOrganiser and others):

    Name: Alice Smith (asmith)
    Assignment: N-Queens
    Date Submitted: Tuesday, February 20, 2024 12:35:07 AM CST
    Current Grade: Needs Grading

    Submission Field:
    There is no student submission text data for this assignment.

    Comments:
    There are no student comments for this assignment.

    Files:
    	Original filename: n-queens.ipynb
    	Filename: N-Queens_asmith_attempt_2024-02-20-00-35-07_n-queens.ipynb

(British English Blackboard writes `Tuesday, 21 April 2020 06:34:13 o'clock BST`
and `Current Mark: Needs Marking`; an attempt with no file says `No files were
attached to this submission.`)  The time is the server's, with its zone's
abbreviation, which is turned into an offset where the abbreviation is
unambiguous; otherwise the time is kept without an offset and read in the
deadline's zone, as every zone-less LMS time is (core/lateness.py).

D2L Brightspace names every file of its *Download* `<submission id>-<file id> -
<First Last> - <Mon D, YYYY HMM AM> - <file name>` (or, newer, `<DD Month YYYY
HMM AM>`), in the downloading user's time zone, without an offset.

Both are text from a download: read capped, parsed line by line, never trusted
beyond the fields named here.
"""

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from .files import decode_text

MAX_RECEIPT_BYTES = 1024 * 1024
# Zone abbreviations Blackboard prints that name one offset only (IST, for one, is India's and Ireland's).
ZONES = {
    "UTC": 0, "GMT": 0, "WET": 0, "WEST": 1, "BST": 1, "CET": 1, "CEST": 2, "EET": 2, "EEST": 3, "SAST": 2,
    "MSK": 3, "GST": 4, "PKT": 5, "SGT": 8, "HKT": 8, "AWST": 8, "JST": 9, "KST": 9, "ACST": 9.5, "ACDT": 10.5,
    "AEST": 10, "AEDT": 11, "NZST": 12, "NZDT": 13, "NST": -3.5, "NDT": -2.5, "AST": -4, "ADT": -3,
    "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7, "AKST": -9,
    "AKDT": -8, "HST": -10,
}
_BLACKBOARD_TIMES = ("%A, %B %d, %Y %I:%M:%S %p", "%A, %d %B %Y %H:%M:%S o'clock", "%A, %d %B %Y %H:%M:%S",
                     "%A, %B %d, %Y %H:%M:%S", "%d %B %Y %H:%M:%S", "%B %d, %Y %I:%M:%S %p")
NO_FILES = "No files were attached to this submission."
NO_TEXT = "There is no student submission text data for this assignment."


@dataclass(frozen=True)
class Receipt:
    name: str = ""               # "Alice Smith"
    username: str = ""           # Blackboard's username, the key its Grade Centre uploads match by
    submitted_at: str | None = None   # ISO 8601 (with an offset when the zone names one)
    zone_note: str = ""          # why the time has no offset, when it has none
    text_entry: bool = False     # the attempt has a text submission
    no_files: bool = False       # Blackboard says no file was attached
    files: tuple = field(default=())   # (original name, name in the download) of each file


def read_receipt(raw):
    """The Receipt in a Blackboard receipt's bytes (an empty Receipt when it says nothing we read)."""
    text = decode_text(raw[:MAX_RECEIPT_BYTES])
    name = username = when = ""
    files, original, section, sections = [], None, None, {}
    for line in text.splitlines()[:10_000]:
        stripped = line.strip()
        head, colon, rest = stripped.partition(":")
        if not username and stripped.startswith("Name:"):
            found = name_line(stripped)
            if found:
                name, username = found[0][:200], found[1][:100]
        elif not when and stripped.startswith("Date Submitted:"):
            when = rest.strip()
        elif colon and not rest.strip() and head in ("Submission Field", "Comments", "Files"):
            section = head
        elif section == "Files" and stripped.startswith("Original filename:"):
            original = rest.strip()
        elif section == "Files" and stripped.startswith("Filename:"):
            files.append((original or rest.strip(), rest.strip()))
            original = None
        elif section and stripped:
            sections.setdefault(section, []).append(stripped)
    submitted_at, zone_note = blackboard_time(when) if when else (None, "")
    text_entry = " ".join(sections.get("Submission Field", [])) not in ("", NO_TEXT)
    return Receipt(name, username, submitted_at, zone_note, text_entry,
                   NO_FILES in " ".join(sections.get("Files", [])), tuple(files))


def name_line(line):
    """(name, username) of a receipt's `Name: Alice Smith (asmith)`: the username is in the last parentheses,
    which end the line; None when it has none.  Read by splitting, not a regular expression: the one this
    replaces (`Name:\\s*(.*?)\\s*\\(`) cost time quadratic in a line of spaces."""
    rest = line[len("Name:"):].strip()
    if not rest.endswith(")"):
        return None
    name, bracket, username = rest[:-1].rpartition("(")
    if not bracket or ")" in username:
        return None
    return name.strip(), username.strip()


def blackboard_time(text):
    """(ISO 8601, why it has no offset) of a receipt's `Date Submitted`; (None, why) when it is not a date."""
    text = " ".join(text.split())[:80]
    words = text.rsplit(" ", 1)
    zone = words[1] if len(words) == 2 and words[1].isalpha() and words[1].isupper() else ""
    stamp = words[0] if zone else text
    for pattern in _BLACKBOARD_TIMES:
        try:
            moment = datetime.strptime(stamp, pattern)
        except ValueError:
            continue
        if zone in ZONES:
            return moment.replace(tzinfo=timezone(timedelta(hours=ZONES[zone]))).isoformat(), ""
        return moment.isoformat(), (f"the receipt's zone {zone!r} names no single offset, so the time is read in "
                                    "the deadline's zone" if zone else "")
    return None, f"the receipt's date {text!r} is not one Blackboard writes"


def blackboard_stamp(stamp):
    """ISO 8601 (no offset: the server's own time) of a download name's `2024-02-20-00-35-07`, or None."""
    try:
        return datetime.strptime(stamp, "%Y-%m-%d-%H-%M-%S").isoformat()
    except ValueError:
        return None


_D2L_MONTH_FIRST = re.compile(r"^(?P<month>[A-Za-z]+)\.? (?P<day>\d{1,2}), (?P<year>\d{4}) (?P<clock>\d{3,4}) "
                              r"(?P<half>[AP]M)$")
_D2L_DAY_FIRST = re.compile(r"^(?P<day>\d{1,2}) (?P<month>[A-Za-z]+) (?P<year>\d{4}) (?P<clock>\d{3,4}) "
                            r"(?P<half>[AP]M)$")


def d2l_time(text):
    """ISO 8601 (no offset) of a D2L name's `Mar 2, 2026 315 PM` or `05 March 2026 612 PM`, or None."""
    match = _D2L_MONTH_FIRST.match(text) or _D2L_DAY_FIRST.match(text)
    if not match:
        return None
    month = _month(match.group("month"))
    clock = match.group("clock")
    hour, minute = int(clock[:-2]), int(clock[-2:])
    if month is None or not 1 <= hour <= 12 or minute > 59:
        return None
    hour = hour % 12 + (12 if match.group("half") == "PM" else 0)
    try:
        return datetime(int(match.group("year")), month, int(match.group("day")), hour, minute).isoformat()
    except ValueError:
        return None


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def _month(word):
    word = word.lower()
    for number, prefix in enumerate(_MONTHS, 1):
        if word.startswith(prefix) and len(word) >= 3 and (len(word) == 3 or word in _FULL_MONTHS or
                                                           word == "sept"):
            return number
    return None


_FULL_MONTHS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december"}

