"""Shut a freshly forked worker into its sandbox, before any student code runs.

"full" isolation (root on Linux): new mount, network, IPC and UTS namespaces;
a new root file system that holds only read-only views of the OS and of the
Python installation plus a small writable tmpfs for home and /tmp (so the
course, its hidden cases, the gradebook, the output folder and other hand-ins
are simply not there); no network at all; a user id of its own per grading
slot; resource limits; no way to gain privileges.

"basic" isolation (anything else): resource limits only.  The grader says
which level it ran with.  Standard library only: this file is copied into the
sandbox's private folder with the worker.
"""

import ctypes
import os
import resource
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET = 0x20000, 0x04000000, 0x08000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_NO_NEW_PRIVS = 38

MAX_SLOTS = 256


def slot_uid(zygote_pid, slot):
    """The user id of grading slot `slot` of the zygote `zygote_pid`.

    Unique among sandboxes running at once (zygote pids are), so one grading
    process never sweeps away another one's workers.
    """
    return 1_000_000 + zygote_pid * MAX_SLOTS + slot
HOME = "/home/student"
# Read-only views inside the sandbox: the OS, then the Python installation.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
DEVICES = ("null", "zero", "full", "random", "urandom")

_libc = ctypes.CDLL(None, use_errno=True)


class IsolationError(OSError):
    pass


def _check(result, what):
    if result != 0:
        error = ctypes.get_errno()
        raise IsolationError(error, f"{what}: {os.strerror(error)}")


def _mount(source, target, fstype, flags, data=None):
    _check(_libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                       flags, data and data.encode()), f"mount {target}")


def python_paths():
    """The folders Python needs: its installation and the virtual environment."""
    paths = {sys.base_prefix, sys.prefix, sys.base_exec_prefix, sys.exec_prefix}
    return sorted(p for p in paths if p)


def enter(level, uid, limits, root_mountpoint):
    """Called in the child right after fork.  Raises IsolationError on failure."""
    if level == "full":
        _enter_namespaces(uid, limits, root_mountpoint)
    else:
        os.chdir(root_mountpoint)
    _limit(limits)
    if level == "full":
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    os.environ.update({"HOME": HOME if level == "full" else os.getcwd(), "TMPDIR": "/tmp" if level == "full"
                       else os.getcwd(), "MPLCONFIGDIR": os.path.join(os.getcwd(), ".matplotlib")})


def _enter_namespaces(uid, limits, root):
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, f"size={limits['disk_mb']}m,mode=755")
    for path in SYSTEM_PATHS + tuple(python_paths()):
        _bind_read_only(path, root)
    os.makedirs(root + "/dev", exist_ok=True)
    for device in DEVICES:
        target = f"{root}/dev/{device}"
        open(target, "w").close()
        _mount(f"/dev/{device}", target, None, MS_BIND)
    # A private pseudo-terminal instance: IPython runs `!cmd` lines through one.
    os.makedirs(root + "/dev/pts", exist_ok=True)
    _mount("devpts", root + "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
    os.symlink("pts/ptmx", root + "/dev/ptmx")
    os.makedirs(root + "/proc", exist_ok=True)
    _bind_read_only("/proc", root)
    for folder, mode in ((HOME, 0o700), ("/tmp", 0o1777)):
        os.makedirs(root + folder, exist_ok=True)
        os.chown(root + folder, uid, uid)
        os.chmod(root + folder, mode)
    os.chroot(root)
    os.chdir(HOME)


def _bind_read_only(path, root):
    if not os.path.exists(path) or os.path.exists(root + path):
        return
    if os.path.islink(path):  # e.g. /bin -> usr/bin on merged-/usr systems
        os.makedirs(os.path.dirname(root + path), exist_ok=True)
        os.symlink(os.readlink(path), root + path)
        return
    os.makedirs(root + path, exist_ok=True)
    _mount(path, root + path, None, MS_BIND | MS_REC)
    _mount(None, root + path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)


def _limit(limits):
    def cap(kind, value):
        soft, hard = resource.getrlimit(kind)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (value, value))

    cap(resource.RLIMIT_AS, limits["memory_mb"] * 1024 * 1024)
    cap(resource.RLIMIT_FSIZE, limits["file_mb"] * 1024 * 1024)
    if os.geteuid() == 0:
        # Counted per user id: meaningful for a slot's own uid, harmful for a
        # teacher's own account (it would count their browser too).
        cap(resource.RLIMIT_NPROC, limits["processes"])
    cap(resource.RLIMIT_CPU, limits["cpu_seconds"])
    cap(resource.RLIMIT_CORE, 0)


def probe(root_mountpoint):
    """The strongest level that works here: try it in a throwaway child."""
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return "basic"
    pid = os.fork()
    if pid == 0:
        try:
            _enter_namespaces(slot_uid(os.getppid(), 0), {"disk_mb": 1}, root_mountpoint)
            os._exit(0)
        except BaseException:  # noqa: BLE001 - any failure means "not here"
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return "full" if os.waitstatus_to_exitcode(status) == 0 else "basic"
