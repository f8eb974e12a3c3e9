"""Collect hand-ins from the command line's paths.

Every hand-in gets its student (identity.py) and, when something trustworthy
says so, the time it was handed in and where that time came from: the LMS's
own record (Gradescope's metadata, a times file given with --times), or a
Classroom clone's last commit.  Never a zip entry's time or a file's
modification time: an LMS writes every entry with the time of the download,
and a browser stamps a file when it saves it.  Canvas's `_LATE_` mark says
late without saying by how much.

What decides whose a file is, and what is trusted:

* In a folder the instructor names: each child folder is a student's folder
  (a Moodle submission folder, or one named after the student) or a GitHub
  Classroom clone (`<prefix><user>`, or any folder with `.git`); `gh
  classroom clone`'s `<slug>-submissions/` folder holds clones.  Each child
  file is named by the LMS (Canvas, flat Moodle) or after the student.
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
import shutil
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

import yaml

from ..core.errors import AutograderError
from . import commits, files, identity, zips
from .cells import SubmissionError, parse
from .files import UnsafeFile

NOTEBOOK_SUFFIXES = (".ipynb", ".py")
SKIPPED_PARTS = {".ipynb_checkpoints", "__pycache__", ".git", "__MACOSX", ".DS_Store"}
GRADESCOPE_METADATA = "submission_metadata.yml"
MAX_COMPANION_BYTES = 1024 * 1024      # helper modules, not a data set: each, and all of one hand-in's together
MAX_COMPANIONS = 32                    # of them beside one notebook
MAX_DEPTH = zips.MAX_DEPTH             # folders inside a student's folder, clone or zip


class IntakeError(AutograderError):
    """A path given on the command line cannot be used at all."""


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
    lms: str = ""                      # canvas, moodle, gradescope, classroom, folder, file, pattern
    lms_id: str = ""                   # the LMS's own id of the student, when it gave one
    companions: tuple = ()             # ((file name beside the notebook, Path), ...): the hand-in's other .py files
    file_time: str | None = None       # a file's modification time: orders two downloads, never judges lateness
    assignment: str | None = None      # the assignment its metadata names, when it names one
    language: str | None = None        # its kernel's language, when it names one

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
        if data and self.path.suffix.lower() in NOTEBOOK_SUFFIXES:
            try:
                notebook = parse(data, self.path.name)
            except SubmissionError as error:
                self.status, self.message = error.status, str(error)
            else:                     # what the metadata says; the cells are read again when it runs, so a
                self.assignment = notebook.assignment      # class of thousands costs no memory while it waits
                self.language = notebook.language

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


@dataclass
class _Found:
    """A file that belongs to a student's hand-in, before the files of one hand-in are put together."""
    path: Path                         # the real file to read
    source: str                        # for people
    who: identity.Identity
    original: str                      # the file's own name, as the student named it
    group: str                         # one student's hand-in in one place: its files are put together
    submitted_at: str | None = None
    time_source: str = ""
    file_time: str | None = None
    explicit: bool = False             # named on the command line


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
    for raw in paths:
        path = Path(raw)
        if walk.excluded(path):
            intake.notes.append(f"{display(raw)} is the output folder: it is not read as hand-ins")
        elif path.is_dir():
            walk.given_folder(path)
        elif path.suffix.lower() == ".zip":
            walk.zip(Path(os.path.realpath(path)), display(path.name), owner=None)
        else:
            walk.given_file(path)
    walk.finish()
    if not intake.handins:
        seen = f" (ignored: {', '.join(intake.ignored[:3])}{' ...' if len(intake.ignored) > 3 else ''})" \
            if intake.ignored else ""
        raise IntakeError(f"no hand-ins found in {', '.join(display(p) for p in paths)}: no notebook (.ipynb), "
                          f".py file, zip or Classroom repository{seen}")
    return intake


def display(text):
    """A file system name as people read it: bytes that are not UTF-8 read as Latin-1, then made printable."""
    text = str(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:          # undecodable bytes, kept by Python as lone surrogates
        raw = os.fsencode(text)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
    return zips.printable(text)


class _Walk:
    def __init__(self, intake, options, unpack_dir):
        self.intake = intake
        self.options = options
        self.unpack_dir = unpack_dir
        self.prefix = options.classroom_prefix or f"{options.assignment_id}-"
        self.junk_only = {}            # LMS identities seen in ignored files (macOS forks, dotfiles)
        self.found = []                # _Found, put together into hand-ins by finish()
        self.seen = {}                 # LMS key -> (Identity, source, what): every student an LMS name names
        self.excluded_paths = {os.path.realpath(p) for p in options.exclude}
        self.zips = 0

    def excluded(self, path):
        """Inside the output folder (but not the zips this run unpacks there)."""
        real = os.path.realpath(path)
        unpacked = os.path.realpath(self.unpack_dir)
        if real == unpacked or real.startswith(unpacked + os.sep):
            return False
        return any(real == p or real.startswith(p + os.sep) for p in self.excluded_paths)

    # --- what the instructor named -----------------------------------------------------------------

    def given_folder(self, root):
        """A folder named on the command line: a class of students, clones or LMS downloads, or one clone."""
        if self.is_submissions_folder(root):
            self.classroom_submissions(root)
            return
        if self.is_repository(root):
            self.repository(root, None, trusted=True)
            return
        if _regular(root / GRADESCOPE_METADATA):
            self.gradescope(root, root, label=None)
            return
        entries = files.entries(root)
        # Two or more zips side by side are one student's each (per-student downloads, otter's exports):
        # what is inside is theirs, whatever its names say.  A single zip is the LMS's download.
        per_student_zips = sum(1 for c, k in entries if k == "file" and c.suffix.lower() == ".zip") > 1
        for child, kind in entries:
            name = display(child.name)
            if self.excluded(child):
                self.intake.notes.append(f"{display(child)} is the output folder: it is not read as hand-ins")
            elif child.name in SKIPPED_PARTS or child.name.startswith("."):
                self.junk(child, name, kind, label=None)
            elif kind == "dir" and self.is_submissions_folder(child):
                self.classroom_submissions(child)
            elif kind == "dir" and self.is_repository(child):
                self.repository(child, None, trusted=True)
            elif kind == "dir":
                self.student_folder(child, name, identity.folder_identity(name), label=None, group_root=root)
            elif kind == "file" and child.suffix.lower() == ".zip":
                self.zip(child, name, owner=(self.pattern(name) or identity.file_identity(name))
                         if per_student_zips else None)
            elif kind == "file":
                self.top_file(child, name, name, label=None, group=str(root), file_time=_mtime(child))
            elif child.suffix.lower() in NOTEBOOK_SUFFIXES:
                self.add(Handin(identity.file_identity(name).key, name, None, None, "unsafe-path",
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

    def is_repository(self, folder):
        return _real_dir(folder / ".git") or folder.name.startswith(self.prefix)

    def is_submissions_folder(self, folder):
        """`gh classroom clone student-repos`' `<slug>-submissions/`: not a clone itself, clones inside."""
        return (folder.name.endswith("-submissions") and not _real_dir(folder / ".git")
                and any(kind == "dir" and _real_dir(child / ".git") for child, kind in files.entries(folder)))

    def classroom_submissions(self, folder):
        """`gh classroom clone student-repos` wrote `<slug>-submissions/<slug>-<user>/`: the slug names them."""
        slug = folder.name[:-len("-submissions")]
        prefix = f"{slug}-"
        if slug != self.options.assignment_id and not self.options.classroom_prefix:
            self.intake.notes.append(f"{display(folder.name)}/ holds GitHub Classroom clones named {prefix}<user>: "
                                     f"graded as assignment {self.options.assignment_id!r}, each student named by "
                                     f"the part after {prefix!r}")
        for child, kind in files.entries(folder):
            if kind == "dir" and self.is_repository(child):
                self.repository(child, None, trusted=True, prefix=prefix)   # named as release --to FOLDER finds it
            elif child.name not in SKIPPED_PARTS and not child.name.startswith("."):
                self.intake.ignored.append(f"{display(folder.name)}/{display(child.name)}")

    # --- one student's things ------------------------------------------------------------------------

    def student_folder(self, folder, relative, who, label, group_root, group=None, depth=0):
        """Everything under a student's folder is that student's: files, folders, zips (unpacked as theirs)."""
        if group is None:             # the student's own folder, not one inside it: one hand-in
            group = f"{group_root}:{relative}"
            self.saw(who, _source(label, relative), "online text" if who.entry == "onlinetext" else None)
        if depth > MAX_DEPTH:
            self.intake.notes.append(f"{_source(label, relative)}: folders nested more than {MAX_DEPTH} deep "
                                     "were not read")
            return
        for path, kind in files.entries(folder):
            inner = f"{relative}/{display(path.name)}"
            if self.excluded(path):
                self.intake.notes.append(f"{display(path)} is the output folder: it is not read as hand-ins")
            elif path.name in SKIPPED_PARTS or path.name.startswith("."):
                self.junk(path, inner, kind, label, owner=who)
            elif kind == "dir":
                self.student_folder(path, inner, who, label, group_root, group, depth + 1)
            elif kind == "file" and path.suffix.lower() == ".zip" and label is None:
                self.zip(path, _source(label, inner), owner=who)
            elif kind == "file" or (kind == "link" and path.suffix.lower() in NOTEBOOK_SUFFIXES):
                self.owned_file(path, inner, who, label, group, folder_root=group_root, relative=relative)
            else:
                self.intake.ignored.append(_source(label, inner) + (" (a link, not followed)"
                                                                    if kind == "link" else ""))

    def owned_file(self, path, inner, who, label, group, folder_root, relative):
        who = self.pattern(inner) or who          # the instructor's pattern overrides every built-in rule
        if who.entry != "onlinetext":
            self.saw(who, _source(label, inner), display(path.name))
        if not path.suffix.lower() in NOTEBOOK_SUFFIXES:
            self.intake.ignored.append(_source(label, inner))
            return
        student_root = Path(folder_root) / PurePosixPath(relative).parts[0] if label is None else None
        try:
            real = files.checked(path, student_root)
        except UnsafeFile as error:
            self.add(_refused(who, _source(label, inner), error))
            return
        self.found.append(_Found(real, _source(label, inner), who, display(path.name), group,
                                 file_time=_mtime(real) if label is None else None))

    def top_file(self, path, name, shown, label, group, file_time=None, explicit=False):
        """A file at the top of a folder given or of a zip: the LMS named it, or it is named after its student."""
        who = self.pattern(name) or identity.file_identity(name)
        self.saw(who, _source(label, shown), PurePosixPath(who.original or name).name)
        if who.entry:               # a Canvas text or URL entry: a row that says so
            kind = "an online text entry" if who.entry == "text" else "a website URL"
            self.add(Handin(who.key, _source(label, shown), None, None, "no-notebook",
                            f"the hand-in is {kind} ({shown}), not a notebook", name=who.name,
                            late_mark=who.late_mark, lms=who.lms, lms_id=who.lms_id,
                            time_source=_late_mark_source(who)))
            return
        suffix = PurePosixPath(name).suffix.lower()
        if suffix in NOTEBOOK_SUFFIXES:
            self.found.append(_Found(path, _source(label, shown), who, who.original or name, group,
                                     file_time=file_time, explicit=explicit))
        elif explicit or who.lms in ("canvas", "moodle"):
            self.add(Handin(who.key, _source(label, shown), None, None, "wrong-file-type",
                            f"{PurePosixPath(who.original or name).name} is not a notebook (.ipynb) or Python "
                            "file (.py)", name=who.name, late_mark=who.late_mark, lms=who.lms, lms_id=who.lms_id,
                            time_source=_late_mark_source(who)))
        else:
            self.intake.ignored.append(_source(label, shown))

    def pattern(self, relative):
        if self.options.student_pattern:
            return identity.pattern_identity(relative, self.options.student_pattern)
        return None

    # --- zips -----------------------------------------------------------------------------------------

    def zip(self, archive, label, owner):
        """An LMS download, or one student's zip (`owner`: the student whose folder held it)."""
        self.zips += 1
        target = self.unpack_dir / f"{self.zips:03d}-{zips.safe_name(Path(label).stem)}"
        shutil.rmtree(target, ignore_errors=True)      # an earlier run's copy: unpacked afresh
        target.mkdir(parents=True)
        zip_owner = owner or self.pattern(label) or identity.file_identity(PurePosixPath(label).name)
        try:
            unpacked = zips.unpack(archive, target, self.unpack_dir)
        except zips.UnusableZip as error:
            self.add(Handin(zip_owner.key, label, None, None, error.status,
                            f"{PurePosixPath(label).name} is not a usable zip file: {error}", name=zip_owner.name,
                            lms=zip_owner.lms, lms_id=zip_owner.lms_id))
            return
        for original, renamed in sorted(unpacked.renamed.items()):
            self.intake.notes.append(f"{label}: the entry {renamed!r} was unpacked as {original!r} (its name "
                                     "held characters a file name cannot)")
        for entry in unpacked.refused:
            top = entry.name.replace("\\", "/").lstrip("/").split("/")[0]
            who = owner or identity.moodle_folder(top) or identity.file_identity(entry.name.split("/")[-1])
            self.add(_refused(who, f"{label}:{entry.name}", entry))
        if owner is None and _regular(target / GRADESCOPE_METADATA):   # only an LMS's download names others
            self.gradescope(target, target, label)
            return
        self.zip_contents(target, label, owner, zip_owner)

    def zip_contents(self, root, label, owner, zip_owner):
        """The top level of an unpacked zip: what the LMS named; one student's zip when it names nobody."""
        entries = [(c, k) for c, k in files.entries(root)]
        if owner is None and self._one_students_zip(entries):
            owner = zip_owner
        for child, kind in entries:
            name = display(child.name)
            if child.name in SKIPPED_PARTS or child.name.startswith("."):
                self.junk(child, name, kind, label, owner=owner)
            elif kind == "dir":
                who = owner or self.pattern(name) or identity.folder_identity(name)
                self.student_folder(child, name, who, label, group_root=str(root))
            elif kind == "file" and owner is not None:
                self.owned_file(child, name, owner, label, f"{root}:", folder_root=root, relative=name)
            elif kind == "file":
                self.top_file(child, name, name, label, group=str(root))

    def _one_students_zip(self, entries):
        """Nothing at the top names a student, and it holds one hand-in: one notebook (or several named after
        the assignment), or a single folder: one student's zip (otter's export, a per-student download)."""
        shown = [(c, k) for c, k in entries if c.name not in SKIPPED_PARTS and not c.name.startswith(".")]
        if any((k == "file" and (identity.canvas_file(c.name) or identity.moodle_file(c.name)))
               or (k == "dir" and identity.moodle_folder(c.name)) for c, k in shown):
            return False
        notebooks = [c for c, k in shown if k == "file" and c.suffix.lower() == ".ipynb"]
        folders = [c for c, k in shown if k == "dir"]
        stem = PurePosixPath(self.options.notebook_name).stem
        if folders:
            return len(folders) == 1 and not notebooks
        return len(notebooks) <= 1 or {identity.plain_stem(c.name) for c in notebooks} <= {stem}

    # --- GitHub Classroom and Gradescope ----------------------------------------------------------------

    def repository(self, repo, label, trusted, prefix=None):
        """A Classroom clone named <prefix><username>: the student's own repository, nothing outside it."""
        prefix = prefix or self.prefix
        name = display(repo.name)
        user = name[len(prefix):] if name.startswith(prefix) and len(name) > len(prefix) else name
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
        chosen = [c for c in candidates if c[0].name == self.options.notebook_name] or candidates
        if not chosen:
            named = [r for r in refused if r[0].name == self.options.notebook_name] or refused
            if named:
                path, error = named[0]
                self.add(_refused(who, f"{source}/{display(path.relative_to(repo).as_posix())}", error,
                                  submitted_at=when, time_source=how))
            else:
                self.add(Handin(who.key, source, None, when, "no-notebook",
                                f"the repository {name} has no .ipynb file", name=who.name, time_source=how,
                                lms=who.lms, lms_id=who.lms_id))
            return
        link, notebook = chosen[0]
        companions = _companions(link.parent, repo)
        self.add(Handin(who.key, f"{source}/{display(link.relative_to(repo).as_posix())}", notebook, when,
                        name=who.name, time_source=how, lms=who.lms, lms_id=who.lms_id, companions=companions))
        self.intake.ignored += [f"{source}/{display(p.relative_to(repo).as_posix())}"
                                for p, _ in candidates if p != link]

    def gradescope(self, root, folder, label):
        """A Gradescope "Export submissions" folder: submission_metadata.yml names the submitters."""
        try:
            text = files.read_capped(folder / GRADESCOPE_METADATA, limit=10 * 1024 * 1024).decode("utf-8")
            metadata = yaml.load(text, Loader=_PlainYaml) or {}     # noqa: S506 - a SafeLoader, aliases refused
        except (yaml.YAMLError, UnicodeDecodeError, UnsafeFile, RecursionError) as error:
            raise IntakeError(f"{display(folder / GRADESCOPE_METADATA)}: unreadable ({str(error)[:200]})") from None
        if not isinstance(metadata, dict):
            raise IntakeError(f"{display(folder / GRADESCOPE_METADATA)}: not a Gradescope submission list")
        for key in sorted(metadata, key=str):
            entry = metadata[key] if isinstance(metadata[key], dict) else {}
            people = [_gradescope_identity(s) for s in entry.get(":submitters") or [] if isinstance(s, dict)]
            people = [p for p in people if p] or [identity.Identity(f"gradescope:{display(key)}", display(key),
                                                                    "gradescope")]
            created = entry.get(":created_at")
            submitted_at = _iso(created) if isinstance(created, datetime) else (str(created)[:40] if created else None)
            submission = folder / str(key)
            for person in people:
                if not (submission.is_dir() and not submission.is_symlink()):
                    self.add(Handin(person.key, _source(label, display(key)), None, submitted_at, "no-notebook",
                                    f"Gradescope submission {display(key)} has no notebook", name=person.name,
                                    email=person.email, time_source="Gradescope's created_at", lms="gradescope",
                                    lms_id=person.lms_id))
                    continue
                for path in _files_in(submission):
                    relative = display(path.relative_to(root).as_posix())
                    if path.suffix.lower() in NOTEBOOK_SUFFIXES:
                        self.found.append(_Found(path, _source(label, relative), person, display(path.name),
                                                 f"{submission}:{person.key}", submitted_at,
                                                 "Gradescope's created_at"))
                if not any(f.group == f"{submission}:{person.key}" for f in self.found):
                    self.add(Handin(person.key, _source(label, display(key)), None, submitted_at, "no-notebook",
                                    f"Gradescope submission {display(key)} has no notebook", name=person.name,
                                    email=person.email, time_source="Gradescope's created_at", lms="gradescope",
                                    lms_id=person.lms_id))

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
        """An LMS names this student; `what` (a file name, "online text") is what they handed in, if known."""
        if who.lms in ("canvas", "moodle"):
            entry = self.seen.setdefault(who.key, (who, source, []))
            if what:
                entry[2].append(what)

    def finish(self):
        groups = defaultdict(list)
        for found in self.found:
            groups[(found.who.key, found.group)].append(found)
        for (key, _), members in sorted(groups.items()):
            notebooks = [f for f in members if f.path.suffix.lower() == ".ipynb"]
            helpers = [f for f in members if f.path.suffix.lower() == ".py"]
            if not notebooks:
                notebooks, helpers = helpers, []
            companions = tuple((f.original, f.path) for f in helpers
                               if _companion_ok(f, self.intake))
            for found in notebooks:
                handin = Handin(key, found.source, found.path, found.submitted_at, name=found.who.name,
                                email=found.who.email, late_mark=found.who.late_mark,
                                time_source=found.time_source or _late_mark_source(found.who),
                                lms=found.who.lms, lms_id=found.who.lms_id, companions=companions,
                                file_time=found.file_time)
                self.check_assignment(handin)
                self.add(handin)
        have = {h.student for h in self.intake.handins}
        for key, (who, source, what) in sorted(self.seen.items()):
            if key not in have:            # an LMS names them, but nothing they handed in is a notebook
                shown = ", ".join(sorted(set(what))[:3]) + (" ..." if len(set(what)) > 3 else "") or "nothing"
                self.add(Handin(key, source, None, None, "no-notebook", f"no notebook was handed in ({shown})",
                                name=who.name, late_mark=who.late_mark, lms=who.lms, lms_id=who.lms_id,
                                time_source=_late_mark_source(who)))
                have.add(key)
        for key, (found, source) in sorted(self.junk_only.items()):
            if key not in have:
                self.add(Handin(found.key, source, None, None, "no-notebook",
                                f"only a hidden or macOS resource-fork file ({source.rsplit('/', 1)[-1]}) was "
                                "handed in, no notebook", name=found.name, late_mark=found.late_mark,
                                lms=found.lms, lms_id=found.lms_id))
        self.layout_notes(groups)

    def check_assignment(self, handin):
        """A notebook whose metadata names another assignment is not graded against this one."""
        named = handin.assignment
        if handin.status is None and named and named != self.options.assignment_id:
            handin.path = None
            handin.status = "wrong-assignment"
            handin.message = (f"this notebook is the {named!r} assignment (its metadata says so), not "
                              f"{self.options.assignment_id!r}: hand in {self.options.notebook_name}")

    def layout_notes(self, groups):
        stem = PurePosixPath(self.options.notebook_name).stem
        hint = "if that is wrong, name students with --student-pattern REGEX"
        per_student = defaultdict(list)
        for (key, _), members in groups.items():
            per_student[key] += members
        for key, members in sorted(per_student.items()):
            notebooks = [m for m in members if m.path.suffix.lower() == ".ipynb"] or members
            kinds = {m.who.lms for m in notebooks}
            if kinds == {"file"} and len(notebooks) > 1:
                self.intake.notes.append(f"{', '.join(m.source for m in notebooks)}: taken as downloads of one "
                                         f"hand-in by {members[0].who.name!r} (the newest counts)")
            if kinds == {"file"} and members[0].who.name in (stem, self.options.assignment_id):
                self.intake.notes.append(f"{notebooks[0].source} is named after the assignment, not a student: "
                                         f"graded as student {members[0].who.name!r}; {hint}")
            if kinds == {"folder"} and len(notebooks) > 1:
                inner = [PurePosixPath(m.source.split(":", 1)[-1]) for m in notebooks]
                folders = {p.parent for p in inner}
                if len(folders) > 1:
                    self.intake.notes.append(
                        f"{key}/ holds {len(inner)} notebooks in different folders "
                        f"({', '.join(sorted(str(f) for f in folders)[:4])}): graded as ONE student, {key!r}, the "
                        f"newest counting; {hint}, e.g. --student-pattern '(?P<student>[^/]+)/[^/]+$'")
                elif len({identity.plain_stem(p.name) for p in inner} - {stem}) > 1:
                    self.intake.notes.append(
                        f"{key}/ holds {len(inner)} differently named notebooks "
                        f"({', '.join(sorted(p.name for p in inner)[:4])}): graded as one student, {key!r}, the "
                        f"newest counting; {hint}")


class _PlainYaml(yaml.SafeLoader):
    """YAML without anchors and aliases: Gradescope writes none, and a few aliases can stand for billions of
    nodes (the "billion laughs") that the grader would then walk."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("it uses YAML aliases, which Gradescope never writes")
        return super().compose_node(parent, index)


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
                  name=who.name, late_mark=who.late_mark, lms=who.lms, lms_id=who.lms_id,
                  time_source=time_source or _late_mark_source(who))


def _late_mark_source(who):
    return "Canvas's _LATE_ mark (no time)" if who.lms == "canvas" and who.late_mark else ""


def _gradescope_identity(submitter):
    name = display(str(submitter.get(":name") or "").strip())[:200]
    email = display(str(submitter.get(":email") or "").strip())[:200]
    sid = display(str(submitter.get(":sid") or "").strip())[:100]
    key = sid or email or name
    if not key:
        return None
    return identity.Identity(f"gradescope:{key}", name or email or sid, "gradescope", sid, email=email)


def _source(label, relative):
    return f"{label}:{relative}" if label else relative


def _regular(path):
    try:
        files.checked(path)
        return True
    except UnsafeFile:
        return False


def _real_dir(path):
    try:
        return os.path.isdir(path) and not os.path.islink(path)
    except OSError:
        return False


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


def _iso(moment):
    """ISO 8601; a time with a zone is given in UTC, a time without one is kept as it is."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.isoformat()


def _mtime(path):
    try:
        return _iso(datetime.fromtimestamp(os.stat(path).st_mtime, tz=timezone.utc).replace(microsecond=0))
    except OSError:
        return None
