"""Collect hand-ins from the command line's paths.

Every hand-in gets its student (identity.py), the time it was handed in from
where that time really is (the LMS's zip entry or metadata, a Classroom
repository's last commit; a file's modification time only when nothing
better exists) and, when the LMS says so, whether it was late.  Files are read
through files.py: regular files only, capped, never through a symbolic link
out of the student's own folder.
"""

import hashlib
import json
import os
import subprocess
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

import yaml

from . import files, identity, zips
from .files import UnsafeFile
from ..core.errors import AutograderError

NOTEBOOK_SUFFIXES = (".ipynb", ".py")
SKIPPED_PARTS = {".ipynb_checkpoints", "__pycache__", ".git", "__MACOSX", ".DS_Store"}
GRADESCOPE_METADATA = "submission_metadata.yml"


class IntakeError(AutograderError):
    """A path given on the command line cannot be used at all."""


@dataclass(frozen=True)
class IntakeOptions:
    assignment_id: str
    notebook_name: str                 # e.g. n-queens.ipynb, preferred inside a repository
    student_pattern: str | None = None
    classroom_prefix: str | None = None  # default: "<assignment id>-"


@dataclass
class Handin:
    student: str                       # the key: an LMS id when the LMS gives one (identity.py)
    source: str                        # where it came from, for people
    path: Path | None                  # the file to grade; None when there is nothing to grade
    submitted_at: str | None           # when it was handed in, ISO 8601 (with its offset when known)
    status: str | None = None          # None: gradable; else why not (unsafe-path, wrong-file-type, ...)
    message: str = ""
    sha256: str = field(default="")
    name: str = ""                     # the student's name for people ("" -> the key)
    email: str = ""
    late_mark: bool | None = None      # the LMS's own verdict (Canvas _LATE_); None when it gives none
    time_source: str = ""              # where submitted_at came from, for people

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
        self.sha256 = hashlib.sha256(data + (b"" if data else self.source.encode())).hexdigest()


@dataclass
class Intake:
    handins: list
    ignored: list                      # files seen but not hand-ins (README.md in a repository, ...)
    notes: list = field(default_factory=list)   # what was decided about an unclear layout, for people


def collect(paths, unpack_dir, options):
    """All hand-ins under `paths`; zips (given, or found in a folder given) are unpacked inside `unpack_dir`."""
    intake = Intake([], [])
    walk = _Walk(intake, options, Path(unpack_dir))
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise IntakeError(f"{raw}: no such file or folder")
        if path.is_dir():
            walk.folder(path, path, {}, label=None)
        elif path.suffix.lower() == ".zip":
            walk.zip(path, path.name)
        else:
            # A file named on the command line is the instructor's choice: a link to it is followed,
            # but only to a regular file.
            real = Path(os.path.realpath(path))
            try:
                files.checked(real)
            except UnsafeFile as error:
                walk.add(Handin(identity.plain_stem(path.name), path.name, None, None, error.status,
                                f"{path.name}: {error}"))
                continue
            walk.file(real, path.name, path.name, {}, explicit=True)
    walk.finish()
    if not intake.handins:
        seen = f" (ignored: {', '.join(intake.ignored[:3])}{' ...' if len(intake.ignored) > 3 else ''})" \
            if intake.ignored else ""
        raise IntakeError(f"no hand-ins found in {', '.join(map(str, paths))}: no notebook (.ipynb), .py file, "
                          f"zip or Classroom repository{seen}")
    return intake


class _Walk:
    def __init__(self, intake, options, unpack_dir):
        self.intake = intake
        self.options = options
        self.unpack_dir = unpack_dir
        self.prefix = options.classroom_prefix or f"{options.assignment_id}-"
        self.junk_only = {}            # LMS identities seen in ignored files (macOS forks, dotfiles)
        self.folders = defaultdict(list)   # (root, student folder) -> relative paths of its hand-ins

    # --- what is where ----------------------------------------------------------------------------

    def zip(self, archive, label, owner=None):
        """`owner`: the student whose folder held the zip; what it holds is theirs unless an LMS name says whose."""
        base = self.unpack_dir / zips.safe_name(archive.stem)
        target, number = base, 1
        while target.exists():
            number += 1
            target = base.with_name(f"{base.name}-{number}")
        target.mkdir(parents=True)
        try:
            times, refused = zips.unpack(archive, target)
        except zipfile.BadZipFile as error:
            self.add(Handin(identity.plain_stem(archive.name), label, None, None, "invalid-zip",
                            f"{archive.name} is not a usable zip file: {error}"))
            return
        for entry in refused:
            name = entry.name.replace("\\", "/")
            # Whose it is, from the LMS folder or file name, even when the path itself was refused.
            found = identity.lms_identity(name.lstrip("/")) or self.identity(name.split("/")[-1], owner)
            self.add(Handin(found.key, f"{label}:{entry.name}", None, None, entry.status, entry.message,
                            name=found.name, late_mark=found.late_mark))
        self.folder(target, target, times, label=label, owner=owner)

    def folder(self, root, folder, times, label, owner=None):
        """`label` names the zip a folder came from (None for a folder given as is)."""
        if _regular(folder / GRADESCOPE_METADATA):
            self.gradescope(root, folder, times, label)
            return
        for child, kind in files.entries(folder):
            relative = child.relative_to(root).as_posix()
            if child.name in SKIPPED_PARTS or child.name.startswith("."):
                self.junk(child, relative, kind, label)
            elif kind == "dir" and ((child / ".git").exists() or child.name.startswith(self.prefix)):
                self.repository(child, label)
            elif kind == "dir":
                self.folder(root, child, times, label, owner)
            elif kind == "file" and child.suffix.lower() == ".zip" and label is None:
                # A zip found in a folder given (Canvas's submissions.zip left in Downloads) is unpacked
                # like one given by name; a zip inside an unpacked zip is a student's file, not unpacked.
                # In a student's own folder (alice/work.zip), what it holds is that student's.
                found = self.identity(relative)
                self.zip(child, _source(label, relative), owner=found if found.lms == "folder" else None)
            elif kind == "file":
                self.file(child, relative, _source(label, relative), times, folder_root=root,
                          found=self.identity(relative, owner))
            elif child.suffix.lower() in NOTEBOOK_SUFFIXES or identity.from_lms(relative):
                found = self.identity(relative, owner)
                student_root = root / PurePosixPath(relative).parts[0] if found.lms == "folder" else None
                try:
                    real = files.checked(child, student_root)
                except UnsafeFile as error:
                    self.add(Handin(found.key, _source(label, relative), None, None, error.status, str(error),
                                    name=found.name, late_mark=found.late_mark))
                    continue
                self.file(real, relative, _source(label, relative), times, folder_root=root, found=found)
            else:
                self.intake.ignored.append(_source(label, relative) + (" (a link, not followed)"
                                                                       if kind == "link" else ""))

    def file(self, path, relative, source, times, explicit=False, found=None, submitted_at=None,
             time_source=None, folder_root=None):
        found = found or self.identity(relative)
        when, how = submitted_at, time_source
        if when is None and relative in times:
            when, how = times[relative], "zip entry time"
        if when is None:
            when, how = _mtime(path), "file modified"
        common = dict(name=found.name, email=found.email, late_mark=found.late_mark, time_source=how)
        if PurePosixPath(relative).suffix.lower() in NOTEBOOK_SUFFIXES:    # the name given, not a link's target
            handin = Handin(found.key, source, path, when, **common)
            self.check_assignment(handin)
            self.add(handin)
            if folder_root is not None and found.lms == "folder" and len(PurePosixPath(relative).parts) > 1:
                self.folders[(str(folder_root), found.key)].append(relative)
            elif folder_root is not None and found.lms == "file":
                self.folders[(str(folder_root), "")].append(relative)
        elif explicit or found.lms in ("canvas", "moodle"):
            self.add(Handin(found.key, source, None, when, "wrong-file-type",
                            f"{PurePosixPath(relative).name} is not a notebook (.ipynb) or Python file (.py)",
                            **common))
        else:
            self.intake.ignored.append(source)

    def repository(self, repo, label):
        """A GitHub Classroom clone named <prefix><username>: the student's own repository, nothing outside it."""
        user = repo.name[len(self.prefix):] if repo.name.startswith(self.prefix) else repo.name
        found = identity.Identity(user, user, "classroom", user)
        if self.options.student_pattern:
            found = identity.pattern_identity(repo.name, self.options.student_pattern) or found
        source = _source(label, repo.name)
        when = _commit_time(repo)
        how = "last commit" if when else None
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
                self.add(Handin(found.key, f"{source}/{path.relative_to(repo).as_posix()}", None, when,
                                error.status, str(error), name=found.name, time_source=how or ""))
            else:
                self.add(Handin(found.key, source, None, when, "no-notebook",
                                f"the repository {repo.name} has no .ipynb file", name=found.name,
                                time_source=how or ""))
            return
        link, notebook = chosen[0]
        relative = link.relative_to(repo).as_posix()
        handin = Handin(found.key, f"{source}/{relative}", notebook, when or _mtime(notebook), name=found.name,
                        time_source=how or "file modified")
        self.check_assignment(handin)
        self.add(handin)
        self.intake.ignored += [f"{source}/{p.relative_to(repo).as_posix()}" for p, _ in candidates if p != link]

    def gradescope(self, root, folder, times, label):
        """A Gradescope "Export submissions" folder: submission_metadata.yml names the submitters."""
        try:
            text = files.read_capped(folder / GRADESCOPE_METADATA).decode("utf-8")
            metadata = yaml.safe_load(text) or {}
        except (yaml.YAMLError, UnicodeDecodeError, UnsafeFile) as error:
            raise IntakeError(f"{folder / GRADESCOPE_METADATA}: unreadable ({error})") from None
        if not isinstance(metadata, dict):
            raise IntakeError(f"{folder / GRADESCOPE_METADATA}: not a Gradescope submission list")
        for key in sorted(metadata, key=str):
            entry = metadata[key] if isinstance(metadata[key], dict) else {}
            people = [_gradescope_identity(s) for s in entry.get(":submitters") or [] if isinstance(s, dict)]
            people = [p for p in people if p] or [identity.Identity(f"gradescope:{key}", str(key), "gradescope")]
            created = entry.get(":created_at")
            submitted_at = _iso(created) if isinstance(created, datetime) else (str(created) if created else None)
            submission = folder / str(key)
            notebooks = []
            if submission.is_dir() and not submission.is_symlink():
                notebooks = [p for p in _files_in(submission) if p.suffix.lower() in NOTEBOOK_SUFFIXES]
            for person in people:
                if not notebooks:
                    self.add(Handin(person.key, _source(label, str(key)), None, submitted_at, "no-notebook",
                                    f"Gradescope submission {key} has no notebook", name=person.name,
                                    email=person.email, time_source="Gradescope created_at"))
                for notebook in notebooks:
                    relative = notebook.relative_to(root).as_posix()
                    self.file(notebook, relative, _source(label, relative), times, found=person,
                              submitted_at=submitted_at, time_source="Gradescope created_at")

    def junk(self, path, relative, kind, label):
        """macOS resource forks and hidden files are never hand-ins; the students they name still get a row."""
        parts = [p.removeprefix("._") for p in PurePosixPath(relative).parts if p != "__MACOSX"]
        if parts:
            found = identity.lms_identity(PurePosixPath(*parts))
            if found:
                self.junk_only.setdefault(found.key, (found, _source(label, relative)))
        if kind == "dir" and path.name == "__MACOSX":
            for child, child_kind in files.entries(path):
                self.junk(child, f"{relative}/{child.name}", child_kind, label)

    # --- bookkeeping ------------------------------------------------------------------------------

    def identity(self, relative, owner=None):
        if owner is not None and identity.lms_identity(relative) is None and not (
                self.options.student_pattern and identity.pattern_identity(relative, self.options.student_pattern)):
            return owner
        return identity.identity_for(relative, self.options.student_pattern)

    def add(self, handin):
        self.intake.handins.append(handin)

    def check_assignment(self, handin):
        """A notebook whose metadata names another assignment is not graded against this one."""
        if handin.status is not None or handin.path is None or handin.path.suffix.lower() != ".ipynb":
            return
        try:
            metadata = json.loads(files.read_capped(handin.path).decode("utf-8-sig")).get("metadata") or {}
            named = (metadata.get("autograder") or {}).get("assignment")
        except (ValueError, AttributeError, UnsafeFile):
            return                       # grading says what is wrong with it
        if isinstance(named, str) and named and named != self.options.assignment_id:
            handin.path = None
            handin.status = "wrong-assignment"
            handin.message = (f"this notebook is the {named!r} assignment (its metadata says so), not "
                              f"{self.options.assignment_id!r}: hand in {self.options.notebook_name}")

    def finish(self):
        have = {h.student for h in self.intake.handins}
        for key, (found, source) in sorted(self.junk_only.items()):
            if key not in have:
                self.add(Handin(found.key, source, None, None, "no-notebook",
                                f"only a hidden or macOS resource-fork file ({source.rsplit('/', 1)[-1]}) was "
                                "handed in, no notebook", name=found.name, late_mark=found.late_mark))
        self.layout_notes()

    def layout_notes(self):
        stem = PurePosixPath(self.options.notebook_name).stem
        pattern_hint = "if that is wrong, name students with --student-pattern REGEX"
        for (root, student), relatives in sorted(self.folders.items()):
            if student == "":          # files directly in a folder given: each file is a student
                by_student = defaultdict(list)
                for relative in relatives:
                    by_student[identity.plain_stem(relative)].append(relative)
                for name, group in sorted(by_student.items()):
                    if len(group) > 1:
                        self.intake.notes.append(
                            f"{', '.join(group)}: taken as downloads of one hand-in by {name!r} (the newest counts)")
                    if name in (stem, self.options.assignment_id):
                        self.intake.notes.append(
                            f"{group[0]} is named after the assignment, not a student: graded as student "
                            f"{name!r}; {pattern_hint}")
                continue
            inner = [PurePosixPath(r).relative_to(PurePosixPath(r).parts[0]) for r in relatives]
            folders_inside = {p.parent for p in inner}
            names = {identity.plain_stem(p.name) for p in inner}
            if len(folders_inside) > 1 and len({p.name for p in inner}) < len(inner):
                self.intake.notes.append(
                    f"{student}/ holds {len(inner)} notebooks in different folders "
                    f"({', '.join(sorted(str(f) for f in folders_inside)[:4])}): graded as ONE student, "
                    f"{student!r}, the newest counting; {pattern_hint}, e.g. "
                    f"--student-pattern '(?P<student>[^/]+)/[^/]+$'")
            elif len(names - {stem}) > 1:
                self.intake.notes.append(
                    f"{student}/ holds {len(inner)} differently named notebooks "
                    f"({', '.join(sorted(str(p) for p in inner)[:4])}): graded as one student, {student!r}, "
                    f"the newest counting; {pattern_hint}")


def _gradescope_identity(submitter):
    name = str(submitter.get(":name") or "").strip()
    email = str(submitter.get(":email") or "").strip()
    sid = str(submitter.get(":sid") or "").strip()
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


def _files_in(folder, links=False):
    """Files under `folder` (no link to a folder followed); links to files too when `links`."""
    found = []
    for path, kind in files.entries(folder):
        if path.name in SKIPPED_PARTS or path.name.startswith("."):
            continue
        if kind == "dir":
            found += _files_in(path, links)
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


def _commit_time(repo):
    """The last commit's time (what the student's git recorded), in UTC.

    Clones owned by another user are still read (safe.directory): only `git log` runs, with no pager,
    hook or file-system monitor that a repository's config could name.
    """
    if not (repo / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-c", "core.fsmonitor=false", "-c", "safe.directory=*", "-C", str(repo),
                              "log", "-1", "--format=%cI"],
                             capture_output=True, text=True, timeout=30,
                             env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"})
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    try:
        return _iso(datetime.fromisoformat(out.stdout.strip()))
    except ValueError:
        return None
