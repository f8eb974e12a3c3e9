"""Who handed a file in, from the names LMSs give their downloads.

A student is keyed by the LMS's own id whenever the download carries one, so
two students with the same name never share a row:

  Canvas      `canvas:<user id>`            file `smithjohn[_LATE]_111_9001_n-queens.ipynb`
              `canvas:anon_<anonymous id>`  anonymous grading: `[LATE_]anon_<id>_...`
  Moodle      `moodle:<participant id>`     folder `Jane Doe_501_assignsubmission_file_/`
  Gradescope  `gradescope:<sid>`, else `gradescope:<email>`, else the name (submission_metadata.yml)
  Blackboard  `blackboard:<username>`       file `<assignment>_<username>_attempt_<stamp>_<file>` and receipt
  D2L         `d2l:name:<First Last>`       file `<submission>-<file id> - <First Last> - <date> - <file>`
  Drive       `drive:<Name>`                Classroom's per-student copy `<Name> - <template>` in a folder download
  Teams       `teams:<Name>`                folder `Submitted files/<Name>/<assignment>/`

and the display name ("smithjohn", "Jane Doe", "Ada Lovelace") is kept beside
the key.  GitHub Classroom users, per-student folders and file names are
unique within their folder already, so they are the key as they are; such a
bare key never holds a `:`, so no folder name can pass for an LMS's key.

Names are parsed as each LMS documents its layout, from the end the LMS
itself wrote: a student chooses their display name (the start of a name) and
their file's name (its end), never the ids and markers the LMS puts between.
Only the name the LMS wrote is parsed: a folder or file inside a student's
own folder is that student's, whatever it is called (intake/collect.py).
"""

import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePosixPath

# Canvas "Download Submissions" (lib/content_zipper.rb, get_filename and add_upload_submission):
# <name>[_LATE]_<user id>_<attachment id>_<file name> for uploads, <name>[_LATE]_<user id>_text.html and
# _link.html for text and URL entries.  <name> is the sortable name (a group assignment's: the group's
# name, under its representative's id), with `_<digits>_` collapsed ("because we use /_\d+_/ to infer the
# user/attachment ids"), DOWN-CASED, then every non-word character removed; it is always there (an empty
# name leaves a leading `_`), even when it is all digits (`2024_1009_9009_...`: user 1009, not 2024).  The
# mark is `LATE` in capitals, so a lower-case `late` (user "Jo_Late") is part of the name; older Canvas
# versions down-cased the mark too, and their `late` is read the same way.  The FIRST
# `_<digits>_<digits>_` after the name is the LMS's (the file name after it may hold anything).
CANVAS = re.compile(r"^(?P<student>.*?)_(?P<late>LATE_)?(?P<user>\d+)_(?P<submission>\d+)_(?P<original>.+)$",
                    re.DOTALL)
CANVAS_ENTRY = re.compile(r"^(?P<student>.*?)_(?P<late>LATE_)?(?P<user>\d+)_(?P<kind>text|link)\.html$", re.DOTALL)
# Anonymous grading: the name and user id become anon_<5 base58 characters> (lib/anonymity.rb).
_BASE58 = r"[1-9A-HJ-NP-Za-km-z]{5}"
CANVAS_ANONYMOUS = re.compile(rf"^(?P<late>LATE_)?anon_(?P<anonymous>{_BASE58})_"
                              r"(?:(?P<submission>\d+)_(?P<original>.+)|(?P<kind>text|link)\.html)$", re.DOTALL)
# Moodle "Download all submissions" (mod/assign/classes/downloader.php): a folder
# <Full Name>_<participant id>_assignsubmission_<plugin> per student (a group's name and id for team
# submissions; "Participant" under blind marking), or, with folders off, flat files
# <Full Name>_<participant id>_assignsubmission_<plugin>_<file name>.  Moodle turns underscores in the
# name into spaces, so in a flat name the FIRST marker is the LMS's; a folder name ends with the
# marker, so there it is the LAST one (whatever a patched Moodle left in the name).
MOODLE_FOLDER = re.compile(r"^(?P<student>.*?)(?:_(?P<participant>\d+))?_assignsubmission_(?P<plugin>[a-z][a-z0-9]*)_?$",
                           re.DOTALL)
_MOODLE_FOLDER_FROM_THE_END = re.compile(r"^(?P<student>.*)_(?P<participant>\d+)_assignsubmission_"
                                         r"(?P<plugin>[a-z][a-z0-9]*)_?$", re.DOTALL)
MOODLE_MARK = re.compile(r"_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z][a-z0-9]*?)_")
# Blackboard Learn "Assignment File Download": <assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS> then
# `_<file name>` for each file and `.txt` for the attempt's receipt (intake/receipts.py).  The stamp is the
# LMS's, so the FIRST `_attempt_<stamp>` is its (the file name after it is the student's).
BLACKBOARD = re.compile(r"^(?P<head>.+?)_attempt_(?P<stamp>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})"
                        r"(?:_(?P<original>.+)|(?P<receipt>\.txt))$", re.DOTALL)
# D2L Brightspace "Download": `<submission id>-<file id> - <name> - <date> - <file name>` for each file, or
# a folder `<submission id>-<file id> - <name> - <date>` per submission; the date is `Mar 2, 2026 315 PM`
# or `05 March 2026 612 PM`.  The name is the LMS's, so the FIRST ` - <date>` after it ends it.
_D2L_DATE = r"(?:[A-Z][a-z]+\.? \d{1,2}, \d{4}|\d{1,2} [A-Z][a-z]+ \d{4}) \d{3,4} [AP]M"
D2L = re.compile(rf"^(?P<submission>\d+)-(?P<file>\d+) - (?P<name>.+?) - (?P<date>{_D2L_DATE})"
                 r"(?: - (?P<original>.+))?$", re.DOTALL)
# The download's own name, where the LMS names it (the outer zip, or the folder it was unpacked into):
# Blackboard's `gradebook_<course>_<assignment>_<YYYY-MM-DD-HH-MM-SS>.zip`, D2L's `<assignment> Download <date>.zip`.
BLACKBOARD_ZIP = re.compile(r"^gradebook_.+_\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}(?:\.zip)?$", re.DOTALL)
D2L_ZIP = re.compile(rf"^.+ Download {_D2L_DATE}(?:\.zip)?$", re.DOTALL)
# Gradescope's "Export Submissions": `submission_<id>/` per submission (`submission_<id>.pdf` for a PDF one).
GRADESCOPE_ENTRY = re.compile(r"^submission_\d+(?:\.[^/]+)?$")
# Google Drive's folder download: `<folder>-<YYYYMMDD>T<HHMMSS>Z-<part>.zip`, the folder inside.
DRIVE_ZIP = re.compile(r"^(?P<folder>.+)-(?P<stamp>\d{8}T\d{6}Z)-(?P<part>\d{3})(?:\.zip)?$", re.DOTALL)
# Google Classroom's "Make a copy for each student": `<Student Name> - <template's title>`.
CLASSROOM_COPY = re.compile(r"^(?P<name>[^/]+?) - (?P<original>[^/]+)$", re.DOTALL)
# A browser's second download of the same file: "n-queens (1).ipynb".
_DUPLICATE = re.compile(r"^(?P<stem>.+?)(?: \(\d+\))?$", re.DOTALL)


@dataclass(frozen=True)
class Identity:
    key: str                  # the gradebook's student: unique within a class
    name: str                 # for people
    lms: str = ""             # canvas, moodle, gradescope, blackboard, d2l, drive, teams, classroom, folder, file,
                              # pattern, path (a notebook whose owner the layout cannot tell)
    lms_id: str = ""          # the LMS's own id (Canvas user id, Moodle participant, Gradescope SID, Blackboard
                              # username)
    late_mark: bool | None = None   # the LMS's own verdict on lateness (Canvas names say _LATE), None: unknown
    upload: str = ""          # the LMS's own id of this upload (Canvas's attachment id: a later upload's is
                              # larger) or submission (D2L's: two namesakes' are two)
    email: str = ""
    original: str = ""        # the file's own name, as the student named it (after the LMS's prefix)
    entry: str = ""           # canvas: "text" or "link" for a text or URL entry (an HTML file, not a hand-in)
    lms_prefix: str = ""      # what the LMS pairs a feedback file by, kept in the gradebook for `release`:
                              # Canvas's `lastfirst[_LATE]_userid_fileid_`, a flat Moodle download's
                              # `Full Name_id_assignsubmission_file_`, or a Moodle folder's name and `/`


def plain_stem(name):
    """A file's stem without a duplicate download's " (1)", nor the `.ipynb` of a notebook saved under another
    suffix (Safari's `alice.ipynb.txt` is alice's)."""
    stem = PurePosixPath(name).stem
    if stem.lower().endswith(".ipynb") and len(stem) > len(".ipynb"):
        stem = stem[:-len(".ipynb")]
    match = _DUPLICATE.match(stem)
    return match.group("stem") if match else stem       # ("": a zip entry with no name)


def bare(text):
    """A key made of a name a person or a tool chose: never one an LMS key could be."""
    return text.replace(":", "_").strip() or "_"


def canvas_file(name):
    """The Identity a Canvas download's file name carries, or None."""
    match = CANVAS_ANONYMOUS.match(name)
    if match:
        anonymous = match.group("anonymous")
        return Identity(f"canvas:anon_{anonymous}", f"anonymous {anonymous}", "canvas", f"anon_{anonymous}",
                        late_mark=bool(match.group("late")), original=match.group("original") or "",
                        entry=match.group("kind") or "", upload=match.group("submission") or "",
                        lms_prefix=name[:match.start("original")] if match.group("original") else "")
    match = CANVAS.match(name) or CANVAS_ENTRY.match(name)      # an upload first: its file may be text.html
    if not match or match.group("student") != match.group("student").lower():
        return None         # Canvas down-cases the name part: capitals there are someone else's naming
    upload = match.groupdict().get("submission") or ""
    original = match.groupdict().get("original") or ""
    return Identity(f"canvas:{match.group('user')}", match.group("student"), "canvas", match.group("user"),
                    late_mark=bool(match.group("late")), original=original,
                    entry=(match.groupdict().get("kind") or "").lower(), upload=upload,
                    lms_prefix=name[:match.start("original")] if original else "")


def canvas_name(sortable_name):
    """A name as Canvas writes it in a download's file name (content_zipper.rb, sanitize_user_name then
    sanitize_file_name): `_<digits>_` collapsed, down-cased, every character but a word character ([[:word:]]:
    letters, marks, digits, connectors) removed.  "O'Brien-Smith, Frank" is `obriensmithfrank`."""
    name = re.sub(r"_(\d+)_", r"\1", str(sortable_name or "")).lower()
    return "".join(c for c in name if unicodedata.category(c)[0] in "LM" or unicodedata.category(c) in
                   ("Nd", "Nl", "Pc"))


def lms_file(name):
    """The Identity a Canvas or a flat Moodle download's file name carries, or None.  A name can fit both
    grammars only where the student's own file name (its end) holds the other LMS's marker; both LMSes write
    their ids right after the student's name, which holds no such marker (Canvas collapses `_<digits>_` in it,
    Moodle writes no `_`), so the marker that comes first is the LMS's."""
    canvas, moodle = canvas_file(name), moodle_file(name)
    if canvas and moodle:
        return canvas if _canvas_mark(name) < MOODLE_MARK.search(name).start() else moodle
    return canvas or moodle


def file_grammar(name):
    """"canvas" or "moodle": whose download's grammar this file name fits (lms_file), else None."""
    found = lms_file(name)
    return found.lms if found else None


def _canvas_mark(name):
    if CANVAS_ANONYMOUS.match(name):
        return 0
    match = CANVAS.match(name) or CANVAS_ENTRY.match(name)
    return match.end("student")


def moodle_folder(name):
    """The Identity a Moodle submission folder's name carries (it ends with the LMS's marker), or None."""
    match = _MOODLE_FOLDER_FROM_THE_END.match(name) or MOODLE_FOLDER.match(name)
    if not match:
        return None
    who = match.group("student").strip()
    entry = "" if match.group("plugin") == "file" else match.group("plugin")
    if match.group("participant") is None:      # a team submission's "Default group": a name, no id
        return Identity(f"moodle:{bare(who)}", who, "moodle", "", entry=entry, lms_prefix=f"{name}/")
    return Identity(f"moodle:{match.group('participant')}", who, "moodle", match.group("participant"), entry=entry,
                    lms_prefix=f"{name}/")


def moodle_file(name):
    """The Identity of a flat Moodle download's file (`Full Name_501_assignsubmission_file_n-queens.ipynb`), or None.

    Both ends are the student's: their full name and their file's name. Moodle
    writes the full name without underscores (it replaces them with spaces
    when it names files), so the first marker is the LMS's.
    """
    match = MOODLE_MARK.search(name)
    if not match or match.start() == 0:
        return None
    plugin = match.group("plugin")        # onlinetext: its text, as a folder download has it (not a file)
    return Identity(f"moodle:{match.group('participant')}", name[:match.start()].strip(), "moodle",
                    match.group("participant"), original=name[match.end():], entry="" if plugin == "file" else plugin,
                    lms_prefix=name[:match.end()] if match.end() < len(name) else "")


def blackboard_name(name):
    """(head `<assignment>_<username>`, stamp, original file name or "", is the receipt) of a Blackboard
    download's file name, or None."""
    match = BLACKBOARD.match(name)
    if not match:
        return None
    return match.group("head"), match.group("stamp"), match.group("original") or "", bool(match.group("receipt"))


def blackboard_identity(username, name=""):
    return Identity(f"blackboard:{username}", name or username, "blackboard", username)


def d2l_name(name):
    """(submission id, the student's name, the date as written, original file name or "") of a D2L download's
    file or folder name, or None."""
    match = D2L.match(name)
    if not match or not match.group("name").strip():
        return None
    return match.group("submission"), match.group("name").strip(), match.group("date"), match.group("original") or ""


def d2l_identity(name, submission=""):
    return Identity(f"d2l:name:{name}", name, "d2l", upload=submission)


def drive_identity(name):
    return Identity(f"drive:{name}", name, "drive")


def teams_identity(name):
    return Identity(f"teams:{name}", name, "teams")


def path_identity(relative_path):
    """A notebook whose owner the layout cannot tell: its own row, keyed by its path (never merged)."""
    path = str(PurePosixPath(relative_path))
    return Identity(bare(path), path, "path")


def pattern_identity(relative_path, pattern):
    """The Identity a --student-pattern finds in the path, or None when it does not match."""
    match = re.search(pattern, str(PurePosixPath(relative_path)))
    if match and match.group("student"):
        return Identity(bare(match.group("student")), match.group("student"), "pattern")
    return None


def folder_identity(name, lms_names=True):
    """A student's folder as the LMS or the instructor named it: a Moodle folder (when the layout is Moodle's
    download, `lms_names`), else the folder's name."""
    return (moodle_folder(name) if lms_names else None) or Identity(bare(name), name, "folder")


def file_identity(name, lms_names=True):
    """A file as the LMS or the instructor named it: a Canvas or flat Moodle name when the layout is that LMS's
    download (`lms_names`: "canvas" or "moodle", the grammar its whole level has; True: whichever the name
    fits, for a file the instructor named alone), else its stem."""
    if lms_names is True:
        found = lms_file(name)
    else:
        found = canvas_file(name) if lms_names == "canvas" else moodle_file(name) if lms_names == "moodle" else None
    if found:
        return found
    stem = plain_stem(name)
    return Identity(bare(stem), stem, "file", original=name)
