"""Collect hand-ins from the command line's paths."""

import hashlib
import subprocess
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import yaml

from . import identity, zips

NOTEBOOK_SUFFIXES = (".ipynb", ".py")
SKIPPED_PARTS = {".ipynb_checkpoints", "__pycache__", ".git", "__MACOSX", ".DS_Store"}
GRADESCOPE_METADATA = "submission_metadata.yml"


class IntakeError(Exception):
    """A path given on the command line cannot be used at all."""


@dataclass(frozen=True)
class IntakeOptions:
    assignment_id: str
    notebook_name: str                 # e.g. n-queens.ipynb, preferred inside a repository
    student_pattern: str | None = None
    classroom_prefix: str | None = None  # default: "<assignment id>-"


@dataclass
class Handin:
    student: str
    source: str                        # where it came from, for people
    path: Path | None                  # the file to grade; None when there is nothing to grade
    submitted_at: str | None           # ISO 8601
    status: str | None = None          # None: gradable; else why not (unsafe-path, wrong-file-type, ...)
    message: str = ""
    sha256: str = field(default="")

    def __post_init__(self):
        if not self.sha256:
            data = self.path.read_bytes() if self.path is not None and self.path.is_file() else b""
            self.sha256 = hashlib.sha256(data + (b"" if data else self.source.encode())).hexdigest()


@dataclass
class Intake:
    handins: list
    ignored: list                      # files seen but not hand-ins (README.md in a repository, ...)


def collect(paths, unpack_dir, options):
    """All hand-ins under `paths`; zips are unpacked inside `unpack_dir`."""
    intake = Intake([], [])
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise IntakeError(f"{raw}: no such file or folder")
        if path.is_dir():
            _folder(path, path, intake, options, times={})
        elif path.suffix.lower() == ".zip":
            _zip(path, unpack_dir, intake, options)
        else:
            _file(path, path.name, path.name, intake, options, times={}, explicit=True)
    return intake


def _zip(archive, unpack_dir, intake, options):
    target = unpack_dir / zips.safe_name(archive.stem)
    number = 1
    while target.exists():
        number += 1
        target = unpack_dir / f"{zips.safe_name(archive.stem)}-{number}"
    target.mkdir(parents=True)
    try:
        times, refused = zips.unpack(archive, target)
    except zipfile.BadZipFile as error:
        intake.handins.append(Handin(archive.stem, archive.name, None, None, "invalid-zip",
                                     f"{archive.name} is not a usable zip file: {error}"))
        return
    for entry in refused:
        student = identity.student_for(entry.name.replace("\\", "/").split("/")[-1], options.student_pattern)
        intake.handins.append(Handin(student, f"{archive.name}:{entry.name}", None, None, entry.status,
                                     entry.message))
    _folder(target, target, intake, options, times, label=archive.name)


def _folder(root, folder, intake, options, times, label=None):
    """`label` names the zip a folder came from (None for a folder given as is)."""
    if (folder / GRADESCOPE_METADATA).is_file():
        _gradescope(root, folder, intake, options, times, label)
        return
    prefix = options.classroom_prefix or f"{options.assignment_id}-"
    for child in sorted(folder.iterdir()):
        if child.name in SKIPPED_PARTS or child.name.startswith("."):
            continue
        if child.is_dir() and ((child / ".git").exists() or child.name.startswith(prefix)):
            _repository(child, prefix, intake, options, label)
        elif child.is_dir():
            _folder(root, child, intake, options, times, label)
        elif child.is_file():
            relative = child.relative_to(root).as_posix()
            _file(child, relative, _source(label, relative), intake, options, times)


def _file(path, relative, source, intake, options, times, explicit=False, student=None, submitted_at=None):
    student = student or identity.student_for(relative, options.student_pattern)
    submitted_at = submitted_at or times.get(relative) or _mtime(path)
    if path.suffix.lower() in NOTEBOOK_SUFFIXES:
        intake.handins.append(Handin(student, source, path, submitted_at))
    elif explicit or identity.from_lms(relative):
        intake.handins.append(Handin(student, source, None, submitted_at, "wrong-file-type",
                                     f"{path.name} is not a notebook (.ipynb) or Python file (.py)"))
    else:
        intake.ignored.append(source)


def _source(label, relative):
    return f"{label}:{relative}" if label else relative


def _repository(repo, prefix, intake, options, label):
    """A GitHub Classroom clone named <prefix><username>."""
    student = repo.name[len(prefix):] if repo.name.startswith(prefix) else repo.name
    if options.student_pattern:
        student = identity.student_for(repo.name, options.student_pattern)
    notebooks = sorted(p for p in repo.rglob("*.ipynb") if not SKIPPED_PARTS & set(p.relative_to(repo).parts))
    chosen = [p for p in notebooks if p.name == options.notebook_name] or notebooks
    source = _source(label, repo.name)
    if not chosen:
        intake.handins.append(Handin(student, source, None, _commit_time(repo), "no-notebook",
                                     f"the repository {repo.name} has no .ipynb file"))
        return
    notebook = chosen[0]
    intake.handins.append(Handin(student, f"{source}/{notebook.relative_to(repo).as_posix()}", notebook,
                                 _commit_time(repo) or _mtime(notebook)))
    intake.ignored += [f"{source}/{p.relative_to(repo).as_posix()}" for p in notebooks if p != notebook]


def _gradescope(root, folder, intake, options, times, label):
    """A Gradescope "Export submissions" folder: submission_metadata.yml names the submitters."""
    try:
        metadata = yaml.safe_load((folder / GRADESCOPE_METADATA).read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise IntakeError(f"{folder / GRADESCOPE_METADATA}: unreadable ({error})") from None
    for key in sorted(metadata):
        entry = metadata[key] or {}
        submitters = [s.get(":name") or s.get(":email") or s.get(":sid") for s in entry.get(":submitters", [])]
        submitters = [str(s) for s in submitters if s] or [str(key)]
        created = entry.get(":created_at")
        submitted_at = created.isoformat() if isinstance(created, datetime) else (str(created) if created else None)
        submission = folder / str(key)
        files = sorted(p for p in submission.rglob("*") if p.is_file()) if submission.is_dir() else []
        notebooks = [p for p in files if p.suffix.lower() in NOTEBOOK_SUFFIXES]
        for student in submitters:
            if not notebooks:
                intake.handins.append(Handin(student, _source(label, key), None, submitted_at, "no-notebook",
                                             f"Gradescope submission {key} has no notebook"))
            for notebook in notebooks:
                relative = notebook.relative_to(root).as_posix()
                _file(notebook, relative, _source(label, relative), intake, options, times,
                      student=student, submitted_at=submitted_at)


def _mtime(path):
    return datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc).replace(tzinfo=None).isoformat()


def _commit_time(repo):
    if not (repo / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%cI"], capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    return datetime.fromisoformat(out.stdout.strip()).astimezone(timezone.utc).replace(tzinfo=None).isoformat()
