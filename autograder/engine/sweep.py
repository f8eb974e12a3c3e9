"""Finding and removing what a hand-in left behind: its processes, its files where any user may write, its System V
IPC objects, its folder.  Used by a slot's zygote (slot_zygote.py) after each hand-in, and at the end.

Standard library only: copied into the sandbox's folder with the zygote.
"""

import ctypes
import os
import shutil
import stat

# Where any user may write, so where one hand-in could leave a file for the next one of its slot (same user id)
# to read, when no Landlock keeps it in its own folder.  Found once per zygote, to a few levels deep.
WORLD_WRITABLE_ROOTS = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run", "/var/lock", "/var/crash")
# /proc/sysvipc/<kind>: the call that removes one, and the column of its owner's user id
# (key, id, perms, then (shm) size, cpid, lpid, nattch, uid ... / (msg) cbytes, qnum, lspid, lrpid, uid ...
# / (sem) nsems, uid ...).
_SYSV_IPC = (("shm", "shmctl", 7), ("msg", "msgctl", 7), ("sem", "semctl", 4))
IPC_RMID = 0


class Leftovers:
    """What a user id left where every user can write, and its System V IPC objects: found and removed."""

    def __init__(self):
        self._world_writable = None   # the folders any user may write into, found on first use
        self._libc = ctypes.CDLL(None)

    def remove(self, uid, files=True):
        """Remove what `uid` owns there, never following a link (a link is removed, not its target).

        `files`: False where Landlock let it write nowhere but its own folder (only IPC objects are looked for).
        (A seccomp filter refuses System V IPC to every worker where one can be installed: isolation.py.)"""
        if files and self._world_writable is None:
            self._world_writable = [p for root in WORLD_WRITABLE_ROOTS for p in writable_folders(root, depth=3)]
        for folder in self._world_writable if files else ():
            _remove_owned(folder, uid)
        for kind, remove, owner in _SYSV_IPC:
            try:
                with open(f"/proc/sysvipc/{kind}") as handle:
                    lines = handle.read().splitlines()[1:]
            except OSError:
                continue
            for line in lines:
                fields = line.split()
                try:
                    if int(fields[owner]) == uid:
                        self._libc[remove](int(fields[1]), IPC_RMID, None) if kind != "sem" else \
                            self._libc[remove](int(fields[1]), 0, IPC_RMID)
                except (IndexError, ValueError, AttributeError):
                    pass


def _remove_owned(folder, uid):
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
            if info.st_uid != uid:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            pass


def writable_folders(root, depth):
    """`root` and the folders under it that every user may write into, `depth` levels deep, no link followed."""
    found = []
    try:
        info = os.lstat(root)
    except OSError:
        return found
    if not stat.S_ISDIR(info.st_mode):
        return found
    if info.st_mode & stat.S_IWOTH:
        found.append(root)
    if depth:
        try:
            children = [e.path for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
        except OSError:
            children = []
        for child in children:
            found += writable_folders(child, depth - 1)
    return found


def pids_of(uid):
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    pids.append(int(entry))
            except FileNotFoundError:
                pass
    return pids


def children():
    """The calling process's children."""
    pids = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as handle:
            pids += [int(pid) for pid in handle.read().split()]
    return pids


def remove_tree(path):
    """Remove the folder `path` whatever modes a hand-in left inside (a folder of mode 0500 holding a file, one
    of 0300 that cannot be listed): as their owner, or as root, each folder is made ours to list and change
    first, once no process of that hand-in is left to change it back.  Never follows a link.  True once it is
    gone (or was never there)."""
    parent, name = os.path.split(path)
    try:
        fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return not os.path.lexists(path)
    try:
        _remove_entry(fd, name)
    finally:
        os.close(fd)
    return not os.path.lexists(path)


def _remove_entry(parent_fd, name, depth=0):
    try:
        info = os.lstat(name, dir_fd=parent_fd)
    except OSError:
        return
    if not stat.S_ISDIR(info.st_mode):
        _quietly(os.unlink, name, dir_fd=parent_fd)
        return
    if depth > 500:   # (a hand-in's folders nest at most as deep as a path can reach)
        return
    _quietly(os.chmod, name, 0o700, dir_fd=parent_fd)   # no hand-in process is left to change it back
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
    except OSError:
        return
    try:
        with os.scandir(fd) as entries:
            names = [entry.name for entry in entries]
        for child in names:
            _remove_entry(fd, child, depth + 1)
    except OSError:
        pass
    finally:
        os.close(fd)
    _quietly(os.rmdir, name, dir_fd=parent_fd)


def _quietly(action, *args, **options):
    try:
        action(*args, **options)
    except OSError:
        pass
