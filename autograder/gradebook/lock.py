"""One command at a time changes an assignment's gradebook folder.

`grade` holds the folder's lock for its whole run, and `extend`, `adjust` and `accommodate` while they
change the course's records and refresh that assignment's gradebook; `release` and `gradebook`, which only
read, share it with each other.  A second `grade` started beside a background one (`cmd &` ignores Ctrl-C,
so it is easy to forget), or an `extend` while grading runs, would otherwise work on the same rows at once.
The one refused says who holds the lock (process, user, host, since when, what command) and exits with an
error before it changes anything.

The lock is flock(2) on `gradebook.lock` in the folder: the kernel drops it when its process ends, however
it ends (kill -9 too), so there is never a stale lock to clear by hand.  Its file says who holds it, for
people; it is made with the course's umask, so in a shared course (core/sharing.py) a TA of the course's
group takes it as the instructor does.  It is opened close-on-exec, so the sandbox's processes never hold it.
"""

import errno
import fcntl
import json
import os
import socket
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from ..core.errors import AutograderError
from ..roster.store import user

LOCK_NAME = "gradebook.lock"
# How long a command waits for a lock held by a command that only reads (or one that has not yet said who it
# is), which takes seconds: longer than that, it says who holds it.  A lock held by a command that changes
# the folder (a grading run) is refused at once: it may hold it for an hour.
WAIT_SECONDS = 10.0
MAX_INFO_BYTES = 4096


class GradebookBusy(AutograderError):
    """Another command holds the gradebook folder's lock."""


@contextmanager
def exclusive(folder, command):
    """Hold `folder`'s lock alone while the block runs (the folder must exist); GradebookBusy when it is held."""
    fd = _open(Path(folder), write=True)
    try:
        _take(fd, Path(folder), fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps({"pid": os.getpid(), "user": user(), "host": socket.gethostname(),
                                   "since": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
                                   "command": str(command)[:1000]}) + "\n").encode("utf-8"), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)        # whoever looks next finds it free, or held by a reader
    finally:
        os.close(fd)


@contextmanager
def exclusive_unless_read(folder, command):
    """Hold `folder`'s lock alone, as `exclusive`, and yield True; or yield False, at once and without it, while
    commands that only read hold it (they brought it up to date as they started: see grade/refresh.py); raise
    GradebookBusy while a command that changes the folder holds it."""
    fd = _open(Path(folder), write=True)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            holder = _holder(Path(folder))
            if holder:
                raise GradebookBusy(f"{folder} is in use: {_describe(holder)}, so nothing was done. Wait for it "
                                    "to finish (or stop it) and run this again") from None
            yield False
            return
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps({"pid": os.getpid(), "user": user(), "host": socket.gethostname(),
                                   "since": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
                                   "command": str(command)[:1000]}) + "\n").encode("utf-8"), 0)
        try:
            yield True
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)


@contextmanager
def shared(folder):
    """Hold `folder`'s lock beside other readers while the block runs; GradebookBusy while a command that
    changes the folder holds it.  A folder with no lock file that this user may not write cannot be being
    changed by a command of this version, and is read without one."""
    folder = Path(folder)
    try:
        fd = _open(folder, write=False)
    except PermissionError:
        yield
        return
    try:
        _take(fd, folder, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


def _open(folder, write):
    path = folder / LOCK_NAME
    flags = os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(path, flags | os.O_RDWR, 0o666)
    except PermissionError:
        if write or not path.exists():
            raise
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))


def _take(fd, folder, kind):
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fd, kind | fcntl.LOCK_NB)
            return
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.EACCES):
                raise
        holder = _holder(folder)
        if holder or time.monotonic() >= deadline:
            raise GradebookBusy(f"{folder} is in use: {_describe(holder)}, so nothing was done. Wait for it to "
                                "finish (or stop it) and run this again")
        time.sleep(0.2)


def _holder(folder):
    """What the file says of the process that changes the folder now ({} when it is a reader, or none)."""
    try:
        with open(folder / LOCK_NAME, "rb") as handle:
            return json.loads(handle.read(MAX_INFO_BYTES).decode("utf-8", "replace") or "{}")
    except (OSError, ValueError):
        return {}


def _describe(holder):
    if not holder:
        return "another command reads it (`release` or `gradebook`)"
    return (f"process {holder.get('pid', '?')} of {holder.get('user', '?')} on {holder.get('host', '?')} has held "
            f"it since {holder.get('since', '?')}, running `{holder.get('command', '?')}`")
