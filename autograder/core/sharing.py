"""Who may read a course's grades: the grading user alone, or the course's group, on purpose.

Names, ids, emails and grades are private by default: every command that writes
them runs with the umask 077, so folders are created 0700 and files 0600 (they
were 0755 and 0644: any account on a shared machine could read them).

A course is shared on purpose by making the folder that holds its grades (the
course's `grades/`, else the course folder) group-owned with the setgid bit:

    chgrp -R course-staff grades && chmod -R g+rwX,o-rwx grades && chmod g+s grades

Then the umask is 007: files are created 0660 and folders 0770, and Linux gives
each new file and folder the folder's group (a setgid folder's new folders are
setgid too), so a TA in that group can run every verb.  SQLite writes a journal
beside each database, which is why the folder itself must be group-writable.
"""

import errno
import os
import stat

PRIVATE, SHARED = 0o077, 0o007


def grades_umask(course):
    """The umask for files the course keeps: SHARED when its grades' folder is a setgid group folder."""
    for folder in (course.grades_root, course.root):
        try:
            mode = folder.stat().st_mode
        except OSError:
            continue
        return SHARED if mode & stat.S_ISGID and mode & stat.S_IRWXG == stat.S_IRWXG else PRIVATE
    return PRIVATE


def keep_private(course):
    """From now on, what this process creates is private to its user, or to the course's group when the course
    is shared (see above).  Returns the umask it replaced."""
    return os.umask(grades_umask(course))


def new_database(path):
    """Create the SQLite file at `path` (if it is not there) with the umask's modes: SQLite itself creates
    one 0644 less the umask (SQLITE_DEFAULT_FILE_PERMISSIONS), which a shared course's group could not write.
    Its journal then gets the same modes as the file (SQLite's unix VFS gives a journal its database's)."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    except FileExistsError:
        pass


def check_access(path, write=True):
    """PermissionError, said plainly, when this user may not read (or write) the database at `path`: SQLite
    would only say "unable to open database file", which reads like a damaged file."""
    if os.path.exists(path) and not os.access(path, os.R_OK | (os.W_OK if write else 0)):
        raise PermissionError(errno.EACCES, "Permission denied: the course's grades are private to their owner, "
                              "or to the course's group when it is shared (docs/semester.md, A shared course "
                              "folder)", str(path))
