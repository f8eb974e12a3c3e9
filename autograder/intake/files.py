"""Read hand-in files safely: regular files only, never through a link out of the student's own folder, capped.

A Classroom clone is the student's own repository: a notebook committed as a
symbolic link can point at a classmate's clone, at the course's reference
notebook or at /dev/zero.  Everything intake reads goes through here, so no
such file is followed out of its student's folder, and no read can hang or
fill memory.
"""

import os
import stat
from pathlib import Path

from ..core.errors import AutograderError

MAX_FILE_BYTES = 50 * 1024 * 1024     # the same as a zip entry's limit


class IntakeError(AutograderError):
    """A path given on the command line cannot be used at all."""


class UnsafeFile(Exception):
    """A file that must not be read; `status` is the gradebook's short reason."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def inside(root, path):
    try:
        Path(path).relative_to(root)
        return True
    except ValueError:
        return False


def checked(path, root=None):
    """The real path of `path` when it may be read, else UnsafeFile.

    `root` is the student's own folder (their repository, their folder): a
    symbolic link may point only at a regular file inside it.  With no root,
    no link is followed at all.
    """
    path = Path(path)
    try:
        info = os.lstat(path)
    except OSError as error:
        raise UnsafeFile("unreadable", f"cannot read {path.name}: {error.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(path)
        real = Path(os.path.realpath(path))
        if root is None or not inside(Path(os.path.realpath(root)), real):
            raise UnsafeFile("unsafe-path", f"{path.name} is a symbolic link to {target}, outside the student's "
                                            "own folder; it was not read")
        try:
            info = os.stat(real)
        except OSError as error:
            raise UnsafeFile("unreadable", f"{path.name} is a broken symbolic link to {target}: "
                                           f"{error.strerror}") from None
        path = real
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeFile("unsafe-path", f"{path.name} is not a regular file; it was not read")
    if info.st_size > MAX_FILE_BYTES:
        raise UnsafeFile("too-large", f"{path.name} is {info.st_size // 2**20} MB; the limit is "
                                      f"{MAX_FILE_BYTES // 2**20} MB")
    return path


def read_capped(path, limit=MAX_FILE_BYTES):
    """The bytes of the regular file at `path` (no link followed), or UnsafeFile; never more than `limit`."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if os.path.islink(path):
            raise UnsafeFile("unsafe-path", f"{Path(path).name} is a symbolic link; it was not read") from None
        raise UnsafeFile("unreadable", f"cannot read {Path(path).name}: {error.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeFile("unsafe-path", f"{Path(path).name} is not a regular file; it was not read")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UnsafeFile("too-large", f"{Path(path).name} is larger than {limit // 2**20} MB")
    return data


def read_head(path, size):
    """At most the first `size` bytes of the regular file at `path` (no link followed), or UnsafeFile."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        raise UnsafeFile("unreadable", f"cannot read {Path(path).name}: {error.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeFile("unsafe-path", f"{Path(path).name} is not a regular file; it was not read")
        return handle.read(size)


def read_text(path, limit=MAX_FILE_BYTES):
    """The text of a small file a person or an LMS wrote (a class list, a times file): read_capped's bytes,
    decoded by decode_text."""
    return decode_text(read_capped(path, limit))


def decode_text(raw):
    """Bytes as an LMS or a spreadsheet saves text: UTF-16 when a byte order mark says so (Blackboard's
    `.xls` download, Excel's "Unicode text"), else UTF-8 with or without a BOM, else Latin-1 (Windows
    exports), which decodes any bytes, so a file is never refused for its encoding alone."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16", "replace")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def entries(folder):
    """(path, kind) of a folder's entries, sorted by name; kind is dir, file, link or other (nothing followed)."""
    try:
        found = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    listed = []
    for entry in found:
        if entry.is_symlink():
            kind = "link"
        elif entry.is_dir(follow_symlinks=False):
            kind = "dir"
        elif entry.is_file(follow_symlinks=False):
            kind = "file"
        else:
            kind = "other"
        listed.append((Path(entry.path), kind))
    return listed


def regular(path):
    """Is `path` a regular file that may be read (no link followed)?"""
    try:
        checked(path)
        return True
    except UnsafeFile:
        return False


def real_dir(path):
    """Is `path` a folder, not a link to one?"""
    try:
        return os.path.isdir(path) and not os.path.islink(path)
    except OSError:
        return False
