"""Collect hand-ins from the command line's paths.

Every hand-in gets its student (identity.py) and, when something trustworthy
says so, the time it was handed in and where that time came from: the LMS's
own record (Gradescope's metadata, a times file given with --times), or a
Classroom clone's last commit.  Never a zip entry's time or a file's
modification time: an LMS writes every entry with the time of the download,
and a browser stamps a file when it saves it.  Canvas's `_LATE_` mark says
late without saying by how much.

What decides whose a file is, and what is trusted:

* Which LMS wrote a level is decided by its structure as a whole
  (structure.py), never by a vote of names a student could choose.
* In a folder the instructor names: each child folder is a student's folder
  (a Moodle submission folder, or one named after the student) or a GitHub
  Classroom clone (`<prefix><user>`, or a folder with `.git` where every
  folder beside it is a clone too); `gh classroom clone`'s
  `<slug>-submissions/` folder holds clones.  Each child file is named by the
  LMS (Canvas, flat Moodle) or after the student, and gets a row whatever it
  is, but the course's own files (a roster, a README).  A zip there is an
  LMS's download only when it is alone: beside students' hand-ins it is one
  student's.
* In a zip: the LMS wrote only the top level.  A zip whose top level names
  nobody (one student's own zip, otter's export) is the student its own name
  says.
* Anything inside a student's folder, a clone or a zip's folder is that
  student's, whatever it is called: no folder name, `.git` or nested zip
  there can claim another row, and no repository there is read.

A student's notebook is the hand-in; other `.py` files of the same hand-in
are its companions, put beside it when it runs.  Files are read through
files.py: regular files only, capped, never through a symbolic link out of
the student's own folder.
"""

import hashlib
import os
import re
import shutil
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from . import assemble, canvas_pull, commits, files, identity, structure, zips
from .budget import Shortfalls, UnpackBudget
from .assemble import NOTE, Found
from .cells import SubmissionError, parse
from .downloads import GRADESCOPE_METADATA, Downloads, iso
from .files import IntakeError, UnsafeFile
from .zips import display

NOTEBOOK_SUFFIXES = (".ipynb", ".py")
SKIPPED_PARTS = {".ipynb_checkpoints", "__pycache__", ".git", "__MACOSX", ".DS_Store"}
MAX_COMPANION_BYTES = 1024 * 1024      # helper modules, not a data set: each, and all of one hand-in's together
MAX_COMPANIONS = 32                    # of them beside one notebook
MAX_DEPTH = zips.MAX_DEPTH             # folders inside a student's folder, clone or zip
MAX_NESTED_ZIPS = 2                    # a zip in a student's submission, and one in that: no deeper
MAX_WRAPPERS = 3                       # folders that only wrap a download's top level (`class/`, `Downloads/`)
# What a notebook that uses Colab's own module is told: here it is a stand-in (engine/colab_standin.py).
COLAB_NOTE = (f"{NOTE}the notebook uses google.colab, which is a stand-in when it is graded: drive.mount, "
              "files.upload, files.download and output.* do nothing (no Drive, no file is uploaded)")

__all__ = ["Handin", "IntakeError", "IntakeOptions", "collect", "display"]


# `gh teacher download <org> <classroom> <assignment>` clones into `<classroom>-<assignment>_submissions_<time>/`
# (foundation50/classroom50 cli/gh-teacher/internal/download/download.go, dirTimestampFormat 2006_01_02_T_15_04_05).
CLASSROOM50_DOWNLOAD = re.compile(r"^(?P<prefix>[a-z0-9][a-z0-9-]*)_submissions_\d{4}_\d{2}_\d{2}_T_\d{2}_\d{2}_\d{2}$")


@dataclass(frozen=True)
class IntakeOptions:
    assignment_id: str
    notebook_name: str                 # e.g. n-queens.ipynb, preferred inside a repository
    student_pattern: str | None = None
    classroom_prefix: str | None = None  # default: "<assignment id>-"
    exclude: tuple = ()                # folders never read (the output folder, when it sits inside an input)


@dataclass
class Handin:
    student: str                       # the key: an LMS id when the LMS gives one (identity.py)
    source: str                        # where it came from, for people (printable)
    path: Path | None                  # the file to grade; None when there is nothing to grade
    submitted_at: str | None           # when it was handed in, ISO 8601, only from a trustworthy record
    status: str | None = None          # None: gradable; else why not (unsafe-path, wrong-file-type, ...)
    message: str = ""
    sha256: str = field(default="")
    name: str = ""                     # the student's name for people ("" -> the key)
    email: str = ""
    late_mark: bool | None = None      # the LMS's own verdict (Canvas _LATE_); None when it gives none
    time_source: str = ""              # where submitted_at (or the late mark) came from, for people
    lms: str = ""                      # canvas, moodle, gradescope, blackboard, d2l, ... (identity.Identity.lms)
    lms_id: str = ""                   # the LMS's own id of the student, when it gave one
    lms_prefix: str = ""               # what the LMS pairs its feedback file by (identity.Identity.lms_prefix)
    companions: tuple = ()             # ((file name beside the notebook, Path), ...): the hand-in's other .py files
    file_time: str | None = None       # a file's modification time: orders two downloads, never judges lateness
    assignment: str | None = None      # the assignment its metadata names, when it names one
    language: str | None = None        # its kernel's language, when it names one
    notes: tuple = ()                  # what intake says of this hand-in, for its row and feedback ("handed in: ...")
    repository: str = ""               # a Classroom clone's folder name (roster/match.py finds its GitHub user)
    upload: str = ""                   # the LMS's id of the upload or submission (identity.Identity.upload)
    lms_order: int | None = None       # where the LMS put its submission in time (Canvas: its last attachment id)
    position: int = 0                  # which of the paths given to `grade` it came from
    unplaced: str = ""                 # why it may be a roster student's it is not placed on (roster/match.py)
    # Its code cells, from intake's one reading of the file: what is run and what similarity keeps are the bytes
    # that were hashed, and no later stage parses the notebook again.  Code alone (no outputs): small.
    cells: tuple | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        self.name = self.name or self.student
        if self.sha256:
            return
        data = b""
        if self.path is not None and self.status is None:
            try:
                data = files.read_capped(self.path)
            except UnsafeFile as error:
                self.path, self.status, self.message = None, error.status, str(error)
        digest = hashlib.sha256(data + (b"" if data else self.source.encode("utf-8", "replace")))
        for name, path in self.companions:     # a changed helper module changes the hand-in
            digest.update(name.encode("utf-8", "replace") + b"\0" + _read_or_empty(path))
        self.sha256 = digest.hexdigest()
        if data:                      # a notebook or .py file, or a notebook under another suffix (its note says)
            try:
                notebook = parse(data, self.path.name)
            except SubmissionError as error:
                self.status, self.message = error.status, str(error)
            else:
                self.cells = notebook.cells
                self.assignment = notebook.assignment
                self.language = notebook.language
                self.notes += notebook.notes + ((COLAB_NOTE,) if notebook.uses_colab else ())

    def companion_files(self):
        """{name: bytes} of its helper modules, read now (as the notebook is), to put beside it: at most
        MAX_COMPANIONS of them and MAX_COMPANION_BYTES in all, since they reach the worker in one request."""
        found, total = {}, 0
        for name, path in self.companions[:MAX_COMPANIONS]:
            data = _read_or_empty(path)
            if total + len(data) > MAX_COMPANION_BYTES:
                break
            found[name], total = data, total + len(data)
        return found


@dataclass
class Intake:
    handins: list
    ignored: list                      # files seen but not hand-ins (README.md in a repository, ...)
    notes: list = field(default_factory=list)   # what was decided about an unclear layout, for people
    guess_warning: str = ""            # the note on Classroom clones keyed by their whole name (a roster may settle it)


def check_paths(paths):
    """Every path given exists (checked before anything is written)."""
    for raw in paths:
        if not os.path.lexists(raw):
            raise IntakeError(f"{raw}: no such file or folder")


def collect(paths, unpack_dir, options):
    """All hand-ins under `paths`; zips (given, or found in a folder given) are unpacked inside `unpack_dir`."""
    check_paths(paths)
    intake = Intake([], [])
    walk = _Walk(intake, options, Path(unpack_dir))
    for position, raw in enumerate(paths):
        path = Path(raw)
        found, added = len(walk.found), len(intake.handins)
        if walk.excluded(path):
            intake.notes.append(f"{display(raw)} is the output folder: it is not read as hand-ins")
        elif path.is_dir():
            walk.given_folder(path)
        elif path.suffix.lower() == ".zip":
            walk.zip(Path(os.path.realpath(path)), display(path.name), owner=None)
        else:
            walk.given_file(path)
        for item in walk.found[found:] + intake.handins[added:]:
            item.position = position      # which download came later on the command line: orders them
    walk.finish()
    canvas_pull.apply_pulled_times(paths, intake, Handin)     # a Canvas pull's folder: Canvas's own times
    if not intake.handins:
        seen = f" (ignored: {', '.join(intake.ignored[:3])}{' ...' if len(intake.ignored) > 3 else ''})" \
            if intake.ignored else ""
        raise IntakeError(f"no hand-ins found in {', '.join(display(p) for p in paths)}: no notebook (.ipynb), "
                          f".py file, zip or Classroom repository{seen}")
    return intake


class _Walk(Downloads):
    def __init__(self, intake, options, unpack_dir):
        self.intake = intake
        self.options = options
        self.unpack_dir = unpack_dir
        self.prefix = options.classroom_prefix or f"{options.assignment_id}-"
        self.junk_only = {}            # LMS identities seen in ignored files (macOS forks, dotfiles)
        self.found = []                # assemble.Found, put together into hand-ins by finish()
        self.seen = {}                 # LMS key -> (Identity, source, what): every student an LMS name names
        self.excluded_paths = {os.path.realpath(p) for p in options.exclude}
        self.zips = 0
        self.budget = UnpackBudget()    # what unpacking may cost, per upload and for the class (budget.py)
        self.shortfalls = Shortfalls()  # what of each student's upload was past its limits (one row each)
        self.guessed_slices = []       # Classroom clones keyed by their whole name: whose, the roster tells
        self.entry_names = {}          # an unpacked file's path -> its name in the zip, where the two differ
        self.repositories = {}         # a clone's group -> (its folder name, its path)

    def excluded(self, path):
        """Inside the output folder (but not the zips this run unpacks there)."""
        real = os.path.realpath(path)
        unpacked = os.path.realpath(self.unpack_dir)
        if real == unpacked or real.startswith(unpacked + os.sep):
            return False
        return any(real == p or real.startswith(p + os.sep) for p in self.excluded_paths)

    @staticmethod
    def skipped(path):
        """Not a hand-in: macOS's and tools' own files, and hidden ones, but never a name an LMS wrote (a
        Moodle student whose full name is `.` has `._701_assignsubmission_file/`): names decide no grade."""
        if path.name in SKIPPED_PARTS:
            return True
        if not path.name.startswith("."):
            return False
        lms_named = identity.moodle_folder(path.name) or identity.moodle_file(path.name) or \
            identity.canvas_file(path.name) or identity.blackboard_name(path.name) or identity.d2l_name(path.name)
        return not lms_named or _apple_double(path)

    @staticmethod
    def source(label, relative):
        return _source(label, relative)

    def warn(self, text):
        self.intake.notes.append(f"warning: {text}")

    def files_in(self, folder):
        return _files_in(folder)

    # --- what the instructor named -----------------------------------------------------------------

    def given_folder(self, root, wrappers=0):
        """A folder named on the command line: a class of students, clones or LMS downloads, or one clone."""
        if self.is_submissions_folder(root):
            self.classroom_submissions(root)
            return
        if self.is_repository(root):
            self.repository(root, None, trusted=True)
            return
        if self.download(root, None, display(root.name)):
            return
        entries = files.entries(root)
        shown = [(c, k) for c, k in entries if not self.skipped(c) and not self.excluded(c)]
        # A zip is an LMS's download only when it is alone: beside students' notebooks or folders, or beside
        # another zip (per-student downloads, otter's exports), each zip is one student's upload, and what is
        # inside is theirs, whatever its names say.
        zips = sum(1 for c, k in shown if k == "file" and c.suffix.lower() == ".zip")
        per_student_zips = zips > 1 or (zips and structure.handed_in_beside(shown, structure.looks_like_notebook))
        names = self.lms_names(shown, None)
        # A folder holding `.git` is a Classroom clone where the level is a class of clones (every folder one),
        # or its name is Classroom's (<prefix><user>): a `.git` a student put in their own folder is data.
        folders = [c for c, k in shown if k == "dir"]
        clones = bool(folders) and all(self.is_repository(c) or self.is_submissions_folder(c) for c in folders)
        for child, kind in entries:
            name = display(child.name)
            if self.excluded(child):
                self.intake.notes.append(f"{display(child)} is the output folder: it is not read as hand-ins")
            elif self.skipped(child):
                self.junk(child, name, kind, label=None)
            elif kind == "dir" and self.is_submissions_folder(child):
                self.classroom_submissions(child)
            elif kind == "dir" and not names.folders and (clones or child.name.startswith(self.prefix)) \
                    and self.is_repository(child):
                self.repository(child, None, trusted=True)
            elif kind == "dir":
                self.student_folder(child, name, identity.folder_identity(name, names.folders), label=None,
                                    group_root=root)
            elif kind == "file" and child.suffix.lower() == ".zip":
                self.zip(child, name, owner=self.zip_owner(name) if per_student_zips else None)
            elif kind == "file":
                self.top_file(child, name, name, label=None, group=str(root), file_time=_mtime(child),
                              lms_names=names.files, class_folder=not zips or per_student_zips)
            elif child.suffix.lower() in NOTEBOOK_SUFFIXES:
                self.add(Handin(identity.file_identity(name, names.files).key, name, None, None, "unsafe-path",
                                f"{name} is a link or not a regular file; it was not read"))
            else:
                self.intake.ignored.append(name + (" (a link, not followed)" if kind == "link" else ""))

    def given_file(self, path):
        """A file named on the command line is the instructor's choice: a link to it is followed, to a file."""
        name = display(path.name)
        real = Path(os.path.realpath(path))
        try:
            files.checked(real)
        except UnsafeFile as error:
            self.add(Handin(identity.file_identity(name).key, name, None, None, error.status, f"{name}: {error}"))
            return
        self.top_file(real, name, name, label=None, group=f"given:{real}", file_time=_mtime(real), explicit=True)

    def zip_owner(self, name):
        """The student a per-student zip is named after (`alice.zip`)."""
        return replace(self.pattern(name) or identity.file_identity(name), lms="zip")

    def lms_names(self, entries, label):
        """The grammar this level's names are read with (structure.Names): Canvas's or Moodle's only when
        every notebook (every folder) here has that LMS's form, one LMS's for all.  A plain folder holding one
        `x_4_0_y.ipynb` among `alice.ipynb`s is not a Canvas download, and a flat Moodle download is read as
        Moodle's even where a student's own file name holds Canvas's ids: the look-alikes are said."""
        names, lookalikes = structure.level_names([(c, k) for c, k in entries if not self.skipped(c)])
        if lookalikes:
            self.warn(f"{', '.join(_source(label, display(c.name)) for c in lookalikes[:4])}"
                      f"{' ...' if len(lookalikes) > 4 else ''}: named like an LMS's download, but the names beside "
                      "them are not, so they are read as named by student, not as an LMS's ids")
        return names

    def is_repository(self, folder):
        return files.real_dir(folder / ".git") or folder.name.startswith(self.prefix)

    def is_submissions_folder(self, folder):
        """`gh teacher download`'s `<classroom>-<assignment>_submissions_<time>/` (Classroom 50) or `gh classroom
        clone student-repos`' `<slug>-submissions/` (GitHub Classroom): not a clone itself, clones inside."""
        return ((folder.name.endswith("-submissions") or CLASSROOM50_DOWNLOAD.match(folder.name))
                and not files.real_dir(folder / ".git")
                and any(kind == "dir" and files.real_dir(child / ".git") for child, kind in files.entries(folder)))

    def classroom_submissions(self, folder):
        """`gh teacher download` wrote `<classroom>-<assignment>_submissions_<time>/<classroom>-<assignment>-<user>/`
        (beside them its scores.csv, in each its result.json: Classroom 50's own, not hand-ins), `gh classroom
        clone student-repos` `<slug>-submissions/<slug>-<user>/`: the folder's name gives the clones' prefix."""
        downloaded = CLASSROOM50_DOWNLOAD.match(folder.name)
        slug = downloaded.group("prefix") if downloaded else folder.name[:-len("-submissions")]
        prefix = f"{slug}-"
        if slug != self.options.assignment_id and not self.options.classroom_prefix:
            self.intake.notes.append(f"{display(folder.name)}/ holds {'Classroom 50' if downloaded else 'GitHub Classroom'} "
                                     f"clones named {prefix}<user>: graded as assignment "
                                     f"{self.options.assignment_id!r}, each student named by the part after {prefix!r}")
        for child, kind in files.entries(folder):
            if kind == "dir" and self.is_repository(child):
                self.repository(child, None, trusted=True, prefix=prefix, certain=True)
            elif not self.skipped(child):
                self.intake.ignored.append(f"{display(folder.name)}/{display(child.name)}")

    # --- one student's things ------------------------------------------------------------------------

    def student_folder(self, folder, relative, who, label, group_root, group=None, depth=0):
        """Everything under a student's folder is that student's: files, folders, zips (unpacked as theirs)."""
        if group is None:             # the student's own folder, not one inside it: one submission
            group = f"{group_root}:{relative}"
            if who.lms in assemble.LMS_KINDS:     # an LMS's folder names its student even when empty; a plain
                self.saw(who, _source(label, relative), "online text" if who.entry == "onlinetext" else None)
                # folder is its student's by the files in it (owned() says so, after any --student-pattern)
        if depth > MAX_DEPTH:
            self.intake.notes.append(f"{_source(label, relative)}: folders nested more than {MAX_DEPTH} deep "
                                     "were not read")
            return
        top = relative.split("/", 1)[0]
        for path, kind in files.entries(folder):
            inner = f"{relative}/{display(path.name)}"
            if self.excluded(path):
                self.intake.notes.append(f"{display(path)} is the output folder: it is not read as hand-ins")
            elif self.skipped(path):
                self.junk(path, inner, kind, label, owner=who)
            elif kind == "dir":
                self.student_folder(path, inner, who, label, group_root, group, depth + 1)
            elif kind == "file" or (kind == "link" and path.suffix.lower() in NOTEBOOK_SUFFIXES):
                self.owned(path, inner, who, label, group, where=relative[len(top):].lstrip("/"),
                           folder_root=group_root if label is None else None, top=top)
            else:
                self.intake.ignored.append(_source(label, inner) + (" (a link, not followed)"
                                                                    if kind == "link" else ""))

    def owned(self, path, inner, who, label, group, submitted_at=None, time_source="", original=None, notes=(),
              where="", folder_root=None, top=None, nested=0):
        """A file of `who`'s submission: a notebook or .py to put together, a zip to open as theirs, or else
        what they handed in that is not a notebook (said in their row when nothing else is)."""
        who = self.pattern(inner) or who          # the instructor's pattern overrides every built-in rule
        shown = _source(label, inner)
        if who.entry != "onlinetext":
            self.saw(who, shown, original or display(path.name))
        suffix = path.suffix.lower()
        if suffix == ".zip" and path.is_file() and not path.is_symlink():
            self.nested_zip(path, shown, who, group, submitted_at, time_source, notes, nested)
            return
        disguised = suffix not in NOTEBOOK_SUFFIXES and structure.looks_like_notebook(path)
        if suffix not in NOTEBOOK_SUFFIXES and not disguised:
            self.intake.ignored.append(shown)
            return
        student_root = Path(folder_root) / top if folder_root is not None and top else None
        try:
            real = files.checked(path, student_root)
        except UnsafeFile as error:
            self.add(_refused(who, shown, error, submitted_at, time_source))
            return
        name = original or display(path.name)
        self.found.append(Found(real, shown, who, name, group, submitted_at,
                                time_source, file_time=_mtime(real) if label is None else None,
                                notes=(*notes, *_disguised_note(name, disguised)), where=where, as_notebook=disguised))

    def top_file(self, path, name, shown, label, group, file_time=None, explicit=False, lms_names=True,
                 class_folder=True):
        """A file at the top of a folder given or of a zip: the LMS named it, or it is named after its student.
        Beside an LMS's download (`class_folder` False: ~/Downloads holding the zip), only a notebook is."""
        who = self.pattern(name) or identity.file_identity(name, lms_names)
        if who.entry:               # a text or URL entry (Canvas's, or a flat Moodle download's): said by finish()
            self.saw(who, _source(label, shown), assemble.ENTRY_WORDS.get(who.entry, f"its {who.entry} entry"))
            return
        suffix = PurePosixPath(name).suffix.lower()
        disguised = suffix not in NOTEBOOK_SUFFIXES + (".zip",) and structure.looks_like_notebook(path)
        if who.lms == "file" and not explicit and suffix not in NOTEBOOK_SUFFIXES and not disguised:
            # Not a student's: beside an LMS's download, among the files an LMS named, or the course's own.
            if lms_names in ("canvas", "moodle"):
                self.intake.ignored.append(f"{_source(label, shown)} (not named by {lms_names.capitalize()})")
                return
            if not class_folder or structure.course_file(name):
                self.intake.ignored.append(_source(label, shown) + (" (the course's file, not a hand-in)"
                                                                    if class_folder else ""))
                return
        original = PurePosixPath(who.original or name).name
        self.saw(who, _source(label, shown), original)
        if suffix in NOTEBOOK_SUFFIXES or disguised:
            self.found.append(Found(path, _source(label, shown), who, who.original or name, group,
                                    file_time=file_time, explicit=explicit,
                                    notes=_disguised_note(original, disguised), as_notebook=disguised))
        elif suffix == ".zip" and who.lms in ("canvas", "moodle"):     # a student's zip, uploaded to the LMS
            self.nested_zip(path, _source(label, shown), who, f"{group}:{who.key}", None, "", (), 0)
        elif explicit:
            status, message = assemble.nothing_to_grade([original])
            self.add(Handin(who.key, _source(label, shown), None, None, status, message, name=who.name,
                            late_mark=who.late_mark, lms=who.lms, lms_id=who.lms_id,
                            lms_prefix=who.lms_prefix, time_source=_late_mark_source(who)))
        # Any other file is what its student handed in instead of a notebook: finish() gives it the row every
        # layout gives it (a `wrong-file-type` that names it), whichever path it came by.

    def no_notebook(self, who, source, submitted_at, time_source, message, notes=(), status="no-notebook"):
        self.add(Handin(who.key, source, None, submitted_at, status, message, name=who.name,
                        email=who.email, time_source=time_source, lms=who.lms, lms_id=who.lms_id,
                        notes=tuple(notes), upload=who.upload,
                        lms_prefix=who.lms_prefix))

    def pattern(self, relative):
        if self.options.student_pattern:
            return identity.pattern_identity(relative, self.options.student_pattern)
        return None

    # --- zips -----------------------------------------------------------------------------------------

    def unpack(self, archive, label, who, allowance):
        """Unpack `archive` into a folder of its own; (folder, Unpacked), or None after adding a row saying why."""
        self.zips += 1
        target = self.unpack_dir / f"{self.zips:03d}-{zips.safe_name(Path(label.rsplit(':', 1)[-1]).stem)}"
        shutil.rmtree(target, ignore_errors=True)      # an earlier run's copy: unpacked afresh
        target.mkdir(parents=True)
        try:
            unpacked = zips.unpack(archive, target, self.unpack_dir, allowance)
        except zips.UnusableZip as error:
            self.add(Handin(who.key, label, None, None, error.status,
                            f"{PurePosixPath(label).name} is not a usable zip file: {error}", name=who.name,
                            lms=who.lms, lms_id=who.lms_id, lms_prefix=who.lms_prefix))
            return None
        for original, renamed in sorted(unpacked.renamed.items()):
            self.entry_names[str(target / original)] = PurePosixPath(renamed).name
            why = "the zip holds more than one entry of that name, and each was unpacked" \
                if _only_numbered(original, renamed) else "its name held characters a file name cannot"
            self.intake.notes.append(f"{label}: the entry {renamed!r} was unpacked as {original!r} ({why})")
        if unpacked.windows:
            self.intake.notes.append(f"{label}: made on Windows (its entries are marked as made by MS-DOS), so `\\` "
                                     f"separates folders in {unpacked.windows} entry name(s), as Info-ZIP's unzip "
                                     "and libarchive read them")
        return target, unpacked

    def over_limits(self, who, label, unpacked=None, submitted_at=None, time_source="", rule=""):
        """What a student's zip held past their upload's (or the class's) limits: one row per student, however
        many of their zips it was (budget.Shortfalls; written by finish())."""
        name = PurePosixPath(label.rsplit(":", 1)[-1]).name if unpacked is None else ""
        self.shortfalls.add(who.key, (who, label, submitted_at, time_source), unpacked, name, rule)

    def shortfall_rows(self):
        for key, (who, label, submitted_at, time_source), message in self.shortfalls.rows():
            self.add(Handin(key, label, None, submitted_at, "too-large", message, name=who.name, lms=who.lms,
                            lms_id=who.lms_id, lms_prefix=who.lms_prefix, time_source=time_source))

    def entry_name(self, path):
        """The name a file had in its zip (two entries of one name are unpacked as two files, `-2` added)."""
        return self.entry_names.get(str(path), display(path.name))

    def zip(self, archive, label, owner):
        """An LMS download, or one student's zip (`owner`: the student whose folder held it)."""
        zip_owner = owner or self.zip_owner(PurePosixPath(label).name)
        allowance = self.budget.upload(owner.key) if owner is not None else self.budget.download()
        done = self.unpack(archive, label, zip_owner, allowance)
        if done is None:
            return
        target, unpacked = done
        for entry in unpacked.refused + (unpacked.over if owner is None else []):
            self.add(_refused(owner or _entry_owner(entry.name), f"{label}:{entry.name}", entry))
        if owner is not None:
            self.over_limits(owner, label, unpacked)
        if owner is None and self.download(target, label, PurePosixPath(label).name):   # only an LMS's names others
            return
        self.zip_contents(target, label, owner, zip_owner)

    def nested_zip(self, archive, label, who, group, submitted_at, time_source, notes, nested):
        """A zip inside a student's submission is theirs: opened like their folder, within the same limits on
        size, entries and depth as any zip, and no deeper than MAX_NESTED_ZIPS."""
        if nested >= MAX_NESTED_ZIPS:
            self.intake.ignored.append(f"{label} (a zip nested more than {MAX_NESTED_ZIPS} deep: not opened)")
            return
        allowance = self.budget.upload(who.key)
        spent = [kind for kind in ("entries", "files", "bytes") if allowance.left(kind) <= 0]
        if spent:                     # its limits are reached: not even opened
            self.over_limits(who, label, None, submitted_at, time_source, allowance.rule(spent[0]))
            return
        done = self.unpack(archive, label, who, allowance)
        if done is None:
            return
        target, unpacked = done
        for entry in unpacked.refused:
            self.add(_refused(who, f"{label}:{entry.name}", entry, submitted_at, time_source))
        self.over_limits(who, label, unpacked, submitted_at, time_source)
        inside = f"{NOTE}its notebook came in a zip, {PurePosixPath(label.rsplit(':', 1)[-1]).name}"
        for path in _files_in(target):
            relative = display(path.relative_to(target).as_posix())
            self.owned(path, relative, who, label, group, submitted_at, time_source, notes=(*notes, inside),
                       where=f"{label}:{PurePosixPath(relative).parent}", nested=nested + 1)

    def zip_contents(self, root, label, owner, zip_owner, wrappers=0):
        """The top level of an unpacked zip: what the LMS named; one student's zip when it names nobody."""
        entries = files.entries(root)
        if owner is None and self._one_students_zip(root, entries):
            owner = zip_owner
        shown = [(c, k) for c, k in entries if not self.skipped(c)]
        if owner is None and wrappers < MAX_WRAPPERS and len(shown) == 1 and shown[0][1] == "dir" \
                and not identity.moodle_folder(shown[0][0].name):
            # One folder holding several students' work (a zipped class folder): its inside is the top level.
            self.intake.notes.append(f"{label}: its one folder, {display(shown[0][0].name)}/, is read as the "
                                     "download's top level")
            if not self.download(shown[0][0], label, display(shown[0][0].name)):
                self.zip_contents(shown[0][0], label, owner, zip_owner, wrappers + 1)
            return
        names = self.lms_names(entries, label) if owner is None else structure.Names()
        for child, kind in entries:
            name = display(child.relative_to(self.unpack_root(root, label)).as_posix()) if wrappers else \
                display(child.name)
            if self.skipped(child):
                self.junk(child, name, kind, label, owner=owner)
            elif kind == "dir":
                who = owner or self.pattern(name) or identity.folder_identity(display(child.name), names.folders)
                self.student_folder(child, name, who, label, group_root=str(root))
            elif kind == "file" and owner is not None:
                self.owned(child, name, owner, label, f"{root}:", where="")
            elif kind == "file":
                self.top_file(child, self.entry_name(child), name, label, group=str(root), lms_names=names.files)

    def unpack_root(self, root, label):
        """The folder a zip was unpacked into (`root` is inside it, under wrapper folders)."""
        while root.parent != self.unpack_dir and root.parent != root:
            root = root.parent
        return root

    def _one_students_zip(self, root, entries):
        """Nothing at the top names a student, and it holds one hand-in: a single notebook in the whole zip (a
        per-student download, otter's export).  Several notebooks whose owners nothing names are not one
        student's: each gets its own row (assemble.py), never one row for a class."""
        shown = [(c, k) for c, k in entries if not self.skipped(c)]
        if any((k == "file" and (identity.canvas_file(c.name) or identity.moodle_file(c.name)))
               or (k == "dir" and identity.moodle_folder(c.name)) for c, k in shown):
            return False
        notebooks = [p for p in _files_in(root) if p.suffix.lower() == ".ipynb"]
        return len(notebooks) <= 1 and any(k == "file" for _, k in shown) or \
            (len(notebooks) <= 1 and len(shown) == 1)

    # --- GitHub Classroom ----------------------------------------------------------------------------

    def repository(self, repo, label, trusted, prefix=None, certain=False):
        """A Classroom clone named <prefix><username>: the student's own repository, nothing outside it.

        The part after the prefix is the student only where the prefix is certain (`gh classroom clone`'s
        folder, --classroom-prefix) or holds no `-` (a GitHub login may hold one, so `n-queens-puzzle-alice`
        could be `puzzle-alice`'s or `alice`'s): otherwise the whole name keys it and one warning says so.
        With a Classroom roster, roster/match.py finds the GitHub login wherever it sits in the name."""
        prefix = prefix or self.prefix
        name = display(repo.name)
        rest = name[len(prefix):] if name.startswith(prefix) and len(name) > len(prefix) else ""
        certain = certain or bool(self.options.classroom_prefix)
        user = rest if rest and (certain or "-" not in rest) else name
        if user == name and "-" in name:
            self.guessed_slices.append(name)
        who = identity.Identity(identity.bare(user), user, "classroom", user)
        if self.options.student_pattern:
            who = identity.pattern_identity(name, self.options.student_pattern) or who
        source = _source(label, name)
        when = commits.last_commit_time(repo) if trusted else None
        how = "last commit (the student's own clock)" if when else ""
        candidates, refused = [], []
        for path in _notebooks_in(repo):
            try:
                candidates.append((path, files.checked(path, repo)))
            except UnsafeFile as error:
                refused.append((path, error))
        if not candidates:
            named = [r for r in refused if r[0].name == self.options.notebook_name] or refused
            if named:
                path, error = named[0]
                self.add(replace(_refused(who, f"{source}/{display(path.relative_to(repo).as_posix())}", error,
                                          submitted_at=when, time_source=how), repository=name))
            else:
                self.add(Handin(who.key, source, None, when, "no-notebook",
                                f"the repository {name} has no .ipynb file", name=who.name, time_source=how,
                                lms=who.lms, lms_id=who.lms_id, lms_prefix=who.lms_prefix, repository=name))
            return
        for link, notebook in candidates:
            self.found.append(Found(notebook, f"{source}/{display(link.relative_to(repo).as_posix())}", who,
                                    display(link.name), f"{repo}:classroom", when, how,
                                    where=display(link.parent.relative_to(repo).as_posix())))
        self.repositories[f"{repo}:classroom"] = (name, repo)

    # --- what is not a hand-in -----------------------------------------------------------------------

    def junk(self, path, relative, kind, label, owner=None):
        """macOS resource forks and hidden files are never hand-ins; the students they name still get a row."""
        parts = [p.removeprefix("._") for p in PurePosixPath(relative).parts if p != "__MACOSX"]
        if parts:
            found = owner or identity.moodle_folder(parts[0]) if len(parts) > 1 else owner
            if found is None and len(parts) == 1:
                found = identity.canvas_file(parts[0]) or identity.moodle_file(parts[0])
            if found is not None and found.lms in ("canvas", "moodle"):
                self.junk_only.setdefault(found.key, (found, _source(label, relative)))
        if kind == "dir" and path.name == "__MACOSX":
            for child, child_kind in files.entries(path):
                self.junk(child, f"{relative}/{display(child.name)}", child_kind, label)

    # --- putting each hand-in together ----------------------------------------------------------------

    def add(self, handin):
        self.intake.handins.append(handin)

    def saw(self, who, source, what):
        """A layout names this student (an LMS, their folder, their file or zip); `what` (a file name, "online
        text") is what they handed in, if known.  Whoever is named gets a row, a notebook or not."""
        if who.lms not in ("classroom", "path"):
            entry = self.seen.setdefault(who.key, (who, source, []))
            if what:
                entry[2].append(what)

    def finish(self):
        self.shortfall_rows()
        warnings = []
        claimed = {f.who.key for f in self.found}      # before assemble.py keys what it cannot tell by path
        for submission in assemble.submissions(self.found, self.options.notebook_name, warnings):
            self.hand_ins(submission)
        self.intake.notes += [f"warning: {text}" for text in warnings]
        have = {h.student for h in self.intake.handins} | claimed
        for key, (who, source, what) in sorted(self.seen.items()):
            if key not in have:            # an LMS names them, but nothing they handed in is a notebook
                status, message = assemble.nothing_to_grade(what)
                self.add(Handin(key, source, None, None, status, message, name=who.name, email=who.email,
                                late_mark=who.late_mark, lms=who.lms, lms_id=who.lms_id, lms_prefix=who.lms_prefix,
                                time_source=_late_mark_source(who), upload=who.upload))
                have.add(key)
        for key, (found, source) in sorted(self.junk_only.items()):
            if key not in have:
                self.add(Handin(found.key, source, None, None, "no-notebook",
                                f"only a hidden or macOS resource-fork file ({source.rsplit('/', 1)[-1]}) was "
                                "handed in, no notebook", name=found.name, late_mark=found.late_mark,
                                lms=found.lms, lms_id=found.lms_id, lms_prefix=found.lms_prefix))
        self.layout_notes()

    def hand_ins(self, submission):
        """A hand-in for each notebook of one submission to be graded, its helper modules beside it."""
        companions = tuple((f.original, f.path) for f in submission.helpers if _companion_ok(f, self.intake))
        # The notebooks of one submission were handed in together: none is newer, the best one counts.
        together = max((f.file_time or "" for f in submission.notebooks), default="") or None \
            if len(submission.notebooks) > 1 and submission.notes else None
        # Canvas numbers every upload (an attachment id), a later one higher: its submissions' order.
        uploads = [int(f.who.upload) for f in submission.notebooks if f.who.lms == "canvas" and f.who.upload.isdigit()]
        for found in submission.notebooks:
            who = found.who if found.who.lms == "path" else submission.who
            repository = self.repositories.get(found.group, ("", None))[0]
            mine = companions if found.group not in self.repositories else \
                _companions(found.path.parent, self.repositories[found.group][1])
            handin = Handin(who.key, found.source, found.path, found.submitted_at, name=who.name,
                            email=who.email, late_mark=who.late_mark,
                            time_source=found.time_source or _late_mark_source(who), lms=who.lms,
                            lms_id=who.lms_id, lms_prefix=who.lms_prefix, companions=mine,
                            file_time=together or found.file_time,
                            notes=(*found.notes, *submission.notes), repository=repository,
                            upload=found.who.upload, lms_order=max(uploads) if uploads else None,
                            position=found.position)
            self.check_assignment(handin)
            self.add(handin)

    def check_assignment(self, handin):
        """A notebook whose metadata names another assignment is not graded against this one."""
        named = handin.assignment
        if handin.status is None and named and named != self.options.assignment_id:
            handin.path = None
            handin.status = "wrong-assignment"
            handin.message = (f"this notebook is the {named!r} assignment (its metadata says so), not "
                              f"{self.options.assignment_id!r}: hand in {self.options.notebook_name}")

    def layout_notes(self):
        stem = PurePosixPath(self.options.notebook_name).stem
        hint = "if that is wrong, name students with --student-pattern REGEX"
        per_student = defaultdict(list)
        for handin in self.intake.handins:
            per_student[handin.student].append(handin)
        for key, mine in sorted(per_student.items()):
            kinds = {h.lms for h in mine}
            if kinds == {"file"} and len(mine) > 1:
                self.intake.notes.append(f"{', '.join(h.source for h in mine)}: taken as downloads of one "
                                         f"hand-in by {mine[0].name!r} (the newest counts)")
            if kinds == {"file"} and mine[0].name in (stem, self.options.assignment_id):
                self.intake.notes.append(f"{mine[0].source} is named after the assignment, not a student: "
                                         f"graded as student {mine[0].name!r}; {hint}")
        if self.guessed_slices:
            shown = ", ".join(self.guessed_slices[:6]) + (" ..." if len(self.guessed_slices) > 6 else "")
            self.warn(f"GitHub Classroom clone(s) whose GitHub user cannot be told from the name alone: {shown}; "
                      f"each is keyed by its whole repository name (Classroom names a clone <assignment>-<user>, "
                      "and both may hold a `-`): import the Classroom roster (`autograder roster import`) to match "
                      "them by GitHub username, or give --classroom-prefix")
            self.intake.guess_warning = self.intake.notes[-1]


def _entry_owner(name):
    """Whose a zip entry that was not unpacked is, by the names an LMS writes (its row says why)."""
    top, last = name.lstrip("/").split("/")[0], name.split("/")[-1]
    if "/" not in name.lstrip("/") and identity.lms_file(last):   # Canvas's or Moodle's name, theirs first: it
        return identity.lms_file(last)                             # is the LMS's, what follows is the student's
    blackboard = identity.blackboard_name(last)
    d2l = identity.d2l_name(top)
    if blackboard:
        return identity.blackboard_identity(blackboard[0].rsplit("_", 1)[-1])
    if d2l:
        return identity.d2l_identity(d2l[1])
    return identity.moodle_folder(top) or identity.file_identity(last)


def _disguised_note(name, disguised):
    return (f"{NOTE}{structure.wrong_suffix_note(name)}",) if disguised else ()


def _only_numbered(unpacked_as, entry):
    """Two entries of one name, the second unpacked with `-2`: the same name, numbered, not a cleaned one."""
    head, dot, suffix = entry.rpartition(".")
    return bool(re.fullmatch(re.escape(head) + r"-\d+\." + re.escape(suffix), unpacked_as)) if dot else \
        bool(re.fullmatch(re.escape(entry) + r"-\d+", unpacked_as))


def _apple_double(path):
    """A macOS resource fork (`._name`): AppleDouble's magic number opens it."""
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"\x00\x05\x16\x07"
    except OSError:
        return False


def _companion_ok(found, intake):
    """A helper module small enough to put beside the notebook, under a plain file name."""
    name = found.original
    if "/" in name or name.startswith(".") or not name.isprintable() or len(name.encode()) > 200:
        intake.notes.append(f"{found.source}: not put beside the notebook (its name cannot be a module's)")
        return False
    try:
        if os.stat(found.path).st_size > MAX_COMPANION_BYTES:
            intake.notes.append(f"{found.source}: not put beside the notebook (larger than "
                                f"{MAX_COMPANION_BYTES // 1024} KB)")
            return False
    except OSError:
        return False
    return True


def _companions(folder, repo):
    """The .py files beside a clone's notebook (regular files inside the clone only)."""
    found = []
    for path, kind in files.entries(folder):
        if kind == "file" and path.suffix.lower() == ".py" and not path.name.startswith("."):
            try:
                real = files.checked(path, repo)
            except UnsafeFile:
                continue
            if os.stat(real).st_size <= MAX_COMPANION_BYTES and path.name.isprintable():
                found.append((path.name, real))
    return tuple(found)


def _read_or_empty(path):
    try:
        return files.read_capped(path, limit=MAX_COMPANION_BYTES)
    except UnsafeFile:
        return b""


def _refused(who, source, error, submitted_at=None, time_source=""):
    return Handin(who.key, source, None, submitted_at, error.status, str(getattr(error, "message", error)),
                  name=who.name, late_mark=who.late_mark, lms=who.lms, lms_id=who.lms_id, lms_prefix=who.lms_prefix,
                  time_source=time_source or _late_mark_source(who))


def _late_mark_source(who):
    return "Canvas's _LATE_ mark (no time)" if who.lms == "canvas" and who.late_mark else ""


def _source(label, relative):
    return f"{label}:{relative}" if label else relative


def _files_in(folder, links=False, depth=0):
    """Files under `folder` (no link to a folder followed, no deeper than MAX_DEPTH); links to files too
    when `links`."""
    found = []
    if depth > MAX_DEPTH:
        return found
    for path, kind in files.entries(folder):
        if path.name in SKIPPED_PARTS or path.name.startswith("."):
            continue
        if kind == "dir":
            found += _files_in(path, links, depth + 1)
        elif kind == "file" or (links and kind in ("link", "other")):
            found.append(path)
    return found


def _notebooks_in(repo):
    return [p for p in _files_in(repo, links=True) if p.suffix.lower() == ".ipynb"]


def _mtime(path):
    try:
        return iso(datetime.fromtimestamp(os.stat(path).st_mtime, tz=timezone.utc).replace(microsecond=0))
    except OSError:
        return None
