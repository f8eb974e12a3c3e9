"""Who may read a course's grades: the grading user alone, or the course's group, on purpose.

Names, ids, emails and grades are private by default: every command that writes
them runs with the umask 077, so folders are created 0700 and files 0600 (they
were 0755 and 0644: any account on a shared machine could read them).

A course is shared on purpose by making the folder that holds its grades (the
course's `grades/`, else the course folder) group-owned with the setgid bit:

    chgrp -R course-staff grades && chmod -R g+rwX,o-rwx grades && find grades -type d -exec chmod g+s {} +

Then the umask is 007: files are created 0660 and folders 0770, and Linux gives
each new file and folder the folder's group (a setgid folder's new folders are
setgid too), so a TA in that group can run every verb.  SQLite writes a journal
beside each database, which is why the folder itself must be group-writable.

Only NEW folders inherit the setgid bit: a course that had grades before it was shared keeps folders
without it, where a TA's new files get the TA's own group and the next member of the group is refused.
So every verb of a shared course first checks the tree (`repair_shared_tree`): what this user owns it
gives back to the group; what another owns and is not the group's, it refuses to work on, with the command
that repairs it.
"""

import errno
import os
import shlex
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


# Folders a live `grade` makes for its sandbox hold files of the grading slots' own users: never the group's.
_NOT_THE_GROUP_S = ("autograder-sandbox-",)


class SharingError(PermissionError):
    """A shared course's grades hold folders or files another account owns that are not the group's."""


def repair_shared_tree(course):
    """When the course's grades' folder is a shared (setgid group) folder: every folder under it setgid, the
    group's and group-writable, every file the group's and group-writable.  What this user owns is repaired
    (returns how many); what another account owns and is not so raises SharingError naming the command."""
    top = course.grades_root
    try:
        info = top.stat()
    except OSError:
        return 0
    if grades_umask(course) != SHARED or not stat.S_ISGID & info.st_mode:
        return 0
    group, me, repaired, theirs = info.st_gid, os.geteuid(), 0, []
    for folder, folders, files in os.walk(top):
        folders[:] = [f for f in folders if not f.startswith(_NOT_THE_GROUP_S)]
        for name in [None, *files]:
            path = folder if name is None else os.path.join(folder, name)
            try:
                found = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISLNK(found.st_mode) or _is_the_group_s(found, group):
                continue
            if found.st_uid != me and me != 0:
                theirs.append(path)
                continue
            try:
                os.chown(path, -1, group)
                os.chmod(path, stat.S_IMODE(found.st_mode) | (0o2070 if stat.S_ISDIR(found.st_mode) else 0o060))
                repaired += 1
            except OSError:
                theirs.append(path)
    if theirs:
        raise SharingError(errno.EACCES, f"the course's grades are shared with its group, but {len(theirs)} "
                           f"folder(s) or file(s) there are not the group's (made before it was shared, or "
                           f"under a folder without the setgid bit), e.g. {theirs[0]}: their owner (or root) "
                           f"repairs them by running any autograder command, or: cd {shlex.quote(str(top.parent))} "
                           f"&& {fix_command(top.name, group)}", str(top))
    return repaired


def _is_the_group_s(found, group):
    wanted = 0o2070 if stat.S_ISDIR(found.st_mode) else 0o060
    return found.st_gid == group and found.st_mode & wanted == wanted


def fix_command(folder, group):
    """The shell command that makes `folder` (and all in it) the group's, its folders setgid."""
    try:
        import grp
        name = grp.getgrgid(group).gr_name
    except (ImportError, KeyError):
        name = str(group)
    folder = shlex.quote(folder)
    return (f"chgrp -R {shlex.quote(name)} {folder} && chmod -R g+rwX,o-rwx {folder} && "
            f"find {folder} -type d -exec chmod g+s {{}} +")
