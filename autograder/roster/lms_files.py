"""Read a class list as an LMS exports it, recognising the LMS by the file's header.

  Canvas      Grades → Export: `Student,ID,[SIS User ID,]SIS Login ID,[Integration ID,][Root Account,]Section,
              <Assignment (id)>...,<totals>`, an optional `    Points Possible` row (and a `Manual Posting`
              or `Muted` row) before the students, names as sortable names ("Doe, Jane"), the Test Student
              last (canvas-lms lib/gradebook_exporter.rb).  Also `LastName,FirstName,ID,...`.
  Moodle      Participants → "Download table data as" CSV: `First name,Last name,Email address[,ID number]
              [,Username]...` (user/action_redir.php), or an assignment's grading worksheet:
              `Identifier,Full name,Email address,Status,...` with `Participant 1234567` identifiers, the
              number in that assignment's download folder names (mod/assign/gradingtable.php).
  Gradescope  Roster download or the roster it imports: `Name` (or `First Name`,`Last Name`), `Email`,
              `SID`, `Section(s)`, `Role` (only students are kept).
  Classroom   "Download roster": `"identifier","github_username","github_id","name"[,"group_name"]`
              (GitHub Classroom's, retired 2026-08-28: app/models/roster_entry.rb); Classroom 50's roster.csv:
              `username,first_name,last_name,email,section,github_id[,role]` (its username is the GitHub login; a
              `role` of the teaching team is no student).
  Blackboard  Grade Centre → Work Offline → Download (Full Grade Centre), or Ultra's gradebook download:
              `"Last Name","First Name","Username","Student ID","Last Access","Availability",<Column
              [Total Pts: 5 Score] |664617>...`, comma- or tab-separated (its `.xls` is UTF-16 text).
  D2L         Grades → Export (Both key fields): `OrgDefinedId,Username,Last Name,First Name,Email,
              <Item> Points Grade <Numeric MaxPoints:5>...,End-of-Line Indicator`, ids written `#123`
              (D2L's guard against a spreadsheet dropping leading zeros; the `#` is not part of the id).

Each file is read whole through a size cap, as UTF-8 (with or without BOM), UTF-16 (with a BOM) or else
Latin-1, with a `;` delimiter where Canvas's regional settings wrote one, or tabs where Blackboard did.  What cannot be read is one line naming the
file and what was expected; a row without the student's id is said, never guessed.
"""

import csv
import io
import re
from dataclasses import dataclass, field

from ..core.errors import AutograderError
from ..core.lms_columns import ASSIGNMENT_COLUMN
from ..intake import files
from ..intake.identity import bare

MAX_BYTES = 20 * 1024 * 1024
MAX_ROWS = 100_000
# Canvas writes the Test Student with this name (course.rb, find_or_create_student_view_student); its
# sortable form is "Student, Test".  It is the teacher's own view of the course, not a person.
TEST_STUDENT_NAMES = {"test student", "student, test"}
_CANVAS_INFO = ("Student", "LastName", "FirstName", "ID", "SIS User ID", "SIS Login ID", "Integration ID",
                "Root Account", "Section")
_MOODLE_PARTICIPANT = re.compile(r"(\d+)\s*$")


class RosterFileError(AutograderError):
    """The file is not a class list we can read."""


@dataclass(frozen=True)
class Entry:
    """One student as the LMS lists them."""
    key: str                  # the gradebook's key for them (the hand-ins' key where the LMS gives one)
    name: str                 # "Jane Doe"
    sortable_name: str = ""   # "Doe, Jane" (Canvas's Student column; import files want it back)
    lms: str = ""
    lms_id: str = ""          # Canvas user id, Gradescope SID, GitHub id
    sis_id: str = ""          # Canvas SIS User ID, Moodle ID number
    login: str = ""           # Canvas SIS Login ID, Moodle username, GitHub login
    email: str = ""
    section: str = ""
    test_student: bool = False
    aliases: tuple = ()       # other keys the LMS's downloads use for them (Moodle: `moodle:<participant>`)


@dataclass
class RosterFile:
    lms: str                  # canvas, moodle, gradescope, classroom
    kind: str                 # for people: "Canvas gradebook export", ...
    entries: list
    skipped: list = field(default_factory=list)      # (row number, why)
    lms_columns: list = field(default_factory=list)  # Canvas: its assignment columns, `Name (id)`
    points_possible: dict = field(default_factory=dict)  # Canvas: {column: its Points Possible row's number}


def read_roster(path):
    rows = _rows(path)
    header = [h.strip() for h in rows[0]]
    body = rows[1:]
    for recognise, read in _FORMATS:
        if recognise(header):
            return read(path, header, body)
    raise RosterFileError(
        f"{path}: not a class list this tool knows (its header starts {', '.join(header[:4])!r}). It reads "
        "Canvas's gradebook export (Grades → Export), Moodle's participants download or grading worksheet, "
        "Gradescope's roster CSV, GitHub Classroom's and Classroom 50's roster CSV, Blackboard's Grade Centre "
        "download (Work Offline → Download) and D2L's grades export (Grades → Export)")


def canvas_columns(path):
    """The assignment columns (`Name (id)`) of a Canvas gradebook export, in the file's order.

    The one reader of that export: `init` lists its columns with this, `roster import` reads its students
    with read_roster, so a file one accepts the other does too (a `;`-separated export, as Canvas writes
    it where the decimal mark is a comma; one headed `LastName,FirstName,ID`; a UTF-16 or Latin-1 file)."""
    rows = _rows(path)
    header = [h.strip() for h in rows[0]]
    if not _is_canvas(header):
        raise RosterFileError(f"{path} is not a Canvas gradebook export: its first columns are not `Student,ID` "
                              "(or `LastName,FirstName,ID`) (Canvas: Grades → Export → Export Entire Gradebook)")
    roster = _read_canvas(path, header, rows[1:])
    if not roster.lms_columns:
        raise RosterFileError(f"{path} has no assignment columns (`Name (id)`): create the assignments in Canvas "
                              "first, then export the gradebook again")
    return roster.lms_columns


def _rows(path):
    try:
        text = files.read_text(path, MAX_BYTES)
    except files.UnsafeFile as error:
        raise RosterFileError(f"{path}: {error}") from None
    first = text.split("\n", 1)[0]
    delimiter = max((",", ";", "\t"), key=lambda d: (first.count(d), d == ","))
    try:
        rows = [row for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
                if any(cell.strip() for cell in row)]
    except csv.Error as error:
        raise RosterFileError(f"{path}: not a CSV file ({error})") from None
    if not rows:
        raise RosterFileError(f"{path}: the file is empty")
    if len(rows) > MAX_ROWS:
        raise RosterFileError(f"{path}: {len(rows)} rows; a class list has at most {MAX_ROWS}")
    return rows


def _cells(header, row):
    """{column: value} of a row, stripped; a short row's missing cells are empty."""
    return {name: (row[i].strip() if i < len(row) else "") for i, name in enumerate(header)}


def _lower(header):
    return {h.lower(): h for h in header}


# --- Canvas -------------------------------------------------------------------------------------

def _is_canvas(header):
    return len(header) > 2 and (header[:2] == ["Student", "ID"] or header[:3] == ["LastName", "FirstName", "ID"])


def _read_canvas(path, header, body):
    result = RosterFile("canvas", "Canvas gradebook export", [],
                        lms_columns=list(dict.fromkeys(h for h in header if ASSIGNMENT_COLUMN.match(h))))
    for number, row in enumerate(body, 2):
        cells = _cells(header, row)
        first = row[0] if row else ""
        if "Points Possible" in first:     # what each column is worth in Canvas: checked against ours
            result.points_possible = {c: points for c in result.lms_columns
                                      if (points := _canvas_points(cells.get(c, ""))) is not None}
            continue
        if all(re.fullmatch(r"(Muted|Manual Posting.*)?", c, re.I) for c in cells.values()):
            continue                   # the posting row is not a student
        user_id = cells.get("ID", "")
        if "Student" in cells:
            sortable = _unguard(cells["Student"])
            name = _first_last(sortable)
        else:
            sortable = f"{cells.get('LastName', '')}, {cells.get('FirstName', '')}".strip(", ")
            name = f"{cells.get('FirstName', '')} {cells.get('LastName', '')}".strip()
        if not re.fullmatch(r"\d+", user_id):
            result.skipped.append((number, f"{name or 'a row'} has no Canvas user id (ID column: {user_id!r})"))
            continue
        test = sortable.lower() in TEST_STUDENT_NAMES or name.lower() in TEST_STUDENT_NAMES
        result.entries.append(Entry(
            key=f"canvas:{user_id}", name=name, sortable_name=sortable, lms="canvas", lms_id=user_id,
            sis_id=cells.get("SIS User ID", ""), login=cells.get("SIS Login ID", ""),
            email=cells.get("SIS Login ID", "").lower() if "@" in cells.get("SIS Login ID", "") else "",
            section=cells.get("Section", ""), test_student=test))
    return result


def _canvas_points(text):
    """A Points Possible cell as Canvas writes it (gradebook_exporter.rb: I18n.n(points, precision: 2)), in the
    exporting user's locale: `10.00`, `10,00` (with `;` between fields), `1,000.00` or `1.000,00`; None for
    `(read only)` and the like.  The separator before the last digits is the decimal one; the others group
    thousands."""
    match = re.fullmatch(r"(\d{1,3}(?:[.,'\u00a0\u202f ]\d{3})+|\d{1,7})(?:[.,](\d{1,4}))?", text.strip())
    if not match:
        return None
    whole = re.sub(r"\D", "", match.group(1))
    return float(f"{whole}.{match.group(2)}" if match.group(2) else whole)


def _unguard(name):
    """Canvas writes a name that starts with `=` as `="..."` (a formula guard)."""
    match = re.fullmatch(r'="(.*)"', name)
    return match.group(1) if match else name


def _first_last(sortable):
    last, comma, first = sortable.partition(",")
    return f"{first.strip()} {last.strip()}".strip() if comma else sortable.strip()


# --- Moodle -------------------------------------------------------------------------------------

def _is_moodle_participants(header):
    lower = _lower(header)
    return "first name" in lower and "last name" in lower and "email address" in lower


def _is_moodle_worksheet(header):
    return "Identifier" in header and "Full name" in header


def _moodle_key(email, id_number, number, name, result):
    if email:
        return f"email:{email}"
    if id_number:
        return f"moodle-id:{bare(id_number)}"
    result.skipped.append((number, f"{name or 'a row'} has neither an email address nor an ID number "
                                   "(ask Moodle to show one of them: Site administration → Show user identity)"))
    return None


def _read_moodle_participants(path, header, body):
    result = RosterFile("moodle", "Moodle participants list", [])
    for number, row in enumerate(body, 2):
        cells = {k.lower(): v for k, v in _cells(header, row).items()}
        first, last = cells.get("first name", ""), cells.get("last name", "")
        name = f"{first} {last}".strip()
        email = cells.get("email address", "").lower()
        id_number = cells.get("id number", "")
        key = _moodle_key(email, id_number, number, name, result)
        if key:
            result.entries.append(Entry(key=key, name=name, sortable_name=f"{last}, {first}".strip(", "),
                                        lms="moodle", sis_id=id_number, login=cells.get("username", ""),
                                        email=email, section=cells.get("groups", cells.get("group", ""))))
    return result


def _read_moodle_worksheet(path, header, body):
    result = RosterFile("moodle", "Moodle grading worksheet", [])
    for number, row in enumerate(body, 2):
        cells = _cells(header, row)
        name = cells.get("Full name", "")
        email = cells.get("Email address", "").lower()
        id_number = cells.get("ID number", "")
        key = _moodle_key(email, id_number, number, name, result)
        if not key:
            continue
        participant = _MOODLE_PARTICIPANT.search(cells.get("Identifier", ""))
        aliases = (f"moodle:{participant.group(1)}",) if participant else ()
        result.entries.append(Entry(key=key, name=name, lms="moodle", sis_id=id_number, email=email,
                                    section=cells.get("Group", ""), aliases=aliases))
    return result


# --- Gradescope ---------------------------------------------------------------------------------

def _is_gradescope(header):
    lower = _lower(header)
    return "email" in lower and ("name" in lower or "first name" in lower) and (
        "sid" in lower or "role" in lower or any(h.startswith("section") for h in lower))


def _read_gradescope(path, header, body):
    result = RosterFile("gradescope", "Gradescope roster", [])
    for number, row in enumerate(body, 2):
        cells = {k.lower(): v for k, v in _cells(header, row).items()}
        role = cells.get("role", "student").lower()
        if role and role != "student":
            continue                   # staff
        name = cells.get("name") or f"{cells.get('first name', '')} {cells.get('last name', '')}".strip()
        email = cells.get("email", "").lower()
        sid = cells.get("sid", "")
        if not (sid or email):
            result.skipped.append((number, f"{name or 'a row'} has neither a SID nor an email"))
            continue
        section = cells.get("sections", cells.get("section", ""))
        last = cells.get("last name", "")
        result.entries.append(Entry(
            key=f"gradescope:{sid or email}", name=name,
            sortable_name=f"{last}, {cells.get('first name', '')}" if last else "", lms="gradescope",
            lms_id=sid, sis_id=sid, email=email, section=section))
    return result


# --- GitHub Classroom ---------------------------------------------------------------------------

def _is_classroom(header):
    return header[:2] == ["identifier", "github_username"]


def _read_classroom(path, header, body):
    result = RosterFile("classroom", "GitHub Classroom roster", [])
    for number, row in enumerate(body, 2):
        cells = _cells(header, row)
        identifier, login = cells.get("identifier", ""), cells.get("github_username", "")
        if not identifier:
            result.skipped.append((number, "a row without an identifier"))
            continue
        # The hand-ins of a linked student are their repositories, named after the GitHub login.
        key = bare(login) if login else f"classroom:{identifier}"
        result.entries.append(Entry(
            key=key, name=cells.get("name", "") or identifier, lms="classroom", lms_id=cells.get("github_id", ""),
            sis_id=identifier, login=login, email=identifier.lower() if "@" in identifier else "",
            section=cells.get("group_name", "")))
    return result


def _is_classroom50(header):
    lower = _lower(header)
    return {"username", "first_name", "last_name", "github_id"} <= set(lower)


def _read_classroom50(path, header, body):
    result = RosterFile("classroom", "Classroom 50 roster", [])
    for number, row in enumerate(body, 2):
        cells = {k.lower(): v for k, v in _cells(header, row).items()}
        login = cells.get("username", "")
        name = f"{cells.get('first_name', '')} {cells.get('last_name', '')}".strip()
        if not login:
            result.skipped.append((number, f"{name or 'a row'} has no GitHub username"))
            continue
        # `role` (instructor, teacher, hta, ta or student; "" unknown): the teaching team is on the roster too, and
        # is no student to be missing (cli/gh-teacher/internal/configrepo/students_csv.go, RosterColumns).
        role = cells.get("role", "").strip().lower()
        if role and role != "student":
            result.skipped.append((number, f"{name or login} ({login}) is {role} on the teaching team, not a student"))
            continue
        result.entries.append(Entry(
            key=bare(login), name=name or login, sortable_name=f"{cells.get('last_name', '')}, "
            f"{cells.get('first_name', '')}".strip(", "), lms="classroom", lms_id=cells.get("github_id", ""),
            login=login, email=cells.get("email", "").lower(), section=cells.get("section", "")))
    return result


# --- Blackboard Learn ---------------------------------------------------------------------------

BLACKBOARD_COLUMN = re.compile(r"^(?P<name>.*?)\s*\[Total Pts:.*\|\s*(?P<id>\d+)$")


def _is_blackboard(header):
    return header[:3] == ["Last Name", "First Name", "Username"]


def _read_blackboard(path, header, body):
    result = RosterFile("blackboard", "Blackboard Grade Centre download", [],
                        lms_columns=list(dict.fromkeys(h for h in header if BLACKBOARD_COLUMN.match(h))))
    for number, row in enumerate(body, 2):
        cells = _cells(header, row)
        username, first, last = cells.get("Username", ""), cells.get("First Name", ""), cells.get("Last Name", "")
        name = f"{first} {last}".strip()
        if not username:
            result.skipped.append((number, f"{name or 'a row'} has no Blackboard username"))
            continue
        result.entries.append(Entry(
            key=f"blackboard:{username}", name=name or username, sortable_name=f"{last}, {first}".strip(", "),
            lms="blackboard", lms_id=username, sis_id=cells.get("Student ID", ""), login=username,
            email=cells.get("Email", "").lower(), section=cells.get("Child Course ID", "")))
    return result


# --- D2L Brightspace ----------------------------------------------------------------------------

D2L_COLUMN = re.compile(r"^(?P<name>.*\S)\s+Points Grade(?:\s*<.*>)?$")


def _is_d2l(header):
    return "OrgDefinedId" in header or ("Username" in header and "End-of-Line Indicator" in header)


def _read_d2l(path, header, body):
    result = RosterFile("d2l", "D2L Brightspace grades export", [],
                        lms_columns=list(dict.fromkeys(h for h in header if D2L_COLUMN.match(h))))
    for number, row in enumerate(body, 2):
        cells = _cells(header, row)
        org_id = cells.get("OrgDefinedId", "").removeprefix("#").strip()
        username = cells.get("Username", "").removeprefix("#").strip()
        first, last = cells.get("First Name", ""), cells.get("Last Name", "")
        name = f"{first} {last}".strip()
        if not (username or org_id):
            result.skipped.append((number, f"{name or 'a row'} has neither a Username nor an OrgDefinedId"))
            continue
        result.entries.append(Entry(
            key=f"d2l:{username}" if username else f"d2l:org:{org_id}", name=name or username or org_id,
            sortable_name=f"{last}, {first}".strip(", "), lms="d2l", sis_id=org_id, login=username,
            email=cells.get("Email", "").lower(), section=cells.get("Section", "")))
    return result


_FORMATS = ((_is_canvas, _read_canvas), (_is_blackboard, _read_blackboard), (_is_d2l, _read_d2l),
            (_is_classroom50, _read_classroom50), (_is_moodle_worksheet, _read_moodle_worksheet),
            (_is_moodle_participants, _read_moodle_participants), (_is_classroom, _read_classroom),
            (_is_gradescope, _read_gradescope))
