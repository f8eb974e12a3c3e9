"""Shut a freshly forked worker into its sandbox, before any student code runs.

Four layers, the strongest that works here is picked (`probe`):

"namespaces"  New mount, PID, network, IPC and UTS namespaces, and a new root
              holding only read-only views of the OS and of the Python
              installation, a private /proc (the hand-in's own processes
              only) and a small private tmpfs for home and /tmp.  The course,
              its hidden cases, the gradebook, --out and other hand-ins are
              simply not there.  As root with CAP_SYS_ADMIN the worker then
              runs under a user id of its own per grading slot; anywhere else
              (an ordinary user, or root without CAP_SYS_ADMIN as in Docker)
              the namespaces come from an unprivileged user namespace and
              the worker drops every capability.  The worker is PID 1 of its
              namespace: when it dies, the kernel kills every process the
              hand-in started.
"users"       Root, but namespaces refused (a container whose seccomp profile
              forbids them).  Workers run under their own user ids in a
              private folder; the grader makes what it keeps unreadable to
              other users (`protect`), and adds Landlock when the kernel has it.
"landlock"    An ordinary user where user namespaces are forbidden: Landlock
              (Linux 5.13+, no privilege needed) lets the worker open only the
              OS and Python files, read-only, and its own private folder;
              newer kernels also stop it signalling other processes and
              using TCP.
"none"        Resource and time limits only: student code can read what the
              grader can.  Used only when asked for by name.

Standard library only: this file is copied into the sandbox's private folder
with the worker, and imported by the grader to probe and describe layers.
"""

import ctypes
import json
import os
import resource
import struct
import sys
from types import MappingProxyType

if __package__:   # imported by the grader
    from . import landlock, seccomp
else:             # in the sandbox's folder, beside zygote.py
    import landlock
    import seccomp

LAYERS = ("namespaces", "users", "landlock", "none")
# What each layer hides, for messages, the gradebook and docs/security.md's table.
HIDES = MappingProxyType({
    "namespaces": "course, expected values, gradebook, other hand-ins, network, other processes",
    "users": "course, expected values, gradebook, other hand-ins (file permissions), other slots' processes",
    "landlock": "every file outside the OS, Python and the hand-in's own folder; signals to other processes",
    "none": "nothing: student code can read whatever the grader can",
})

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 1, 4, 24, 38, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAP_SYS_ADMIN = 21

MAX_SLOTS = 128   # grading slots at once (--jobs)
# Inside a user namespace the worker is this user; outside it is the grader's.
INNER_ID = 1000

# As root every worker runs under a user id of its own "lane".  A slot's zygote has two lanes and gives its
# workers each in turn, so the hand-in running and the next one's worker (a spare, made meanwhile) never share a
# user id: neither can chmod, signal or count against the other's processes.  A sandbox has LANES lanes: two for
# each slot's zygote it starts (a slot that cannot be cleaned gets a new zygote, with new lanes), and the last
# two for the probe of the layers.
LANES = 512
PROBE_LANE = LANES - 2
_FIRST_UID = 1_000_000


def worker_uid(sandbox_pid, lane):
    """The user id of lane `lane` of the sandbox whose first zygote is `sandbox_pid`.

    Unique among sandboxes running at once (their zygotes' pids are), so one grading process never sweeps
    away another one's workers; under 2**32 for every pid Linux gives (at most 2**22)."""
    return _FIRST_UID + sandbox_pid * LANES + lane


def sandbox_of_uid(uid):
    """The first zygote's pid of the sandbox whose worker has user id `uid`, or None for no worker's."""
    return (uid - _FIRST_UID) // LANES if uid >= _FIRST_UID else None


HOME = "/home/student"
# The layers whose workers see the machine's /dev/shm (out of their reach, or not theirs alone): multiprocessing
# makes its semaphores without a name there (semaphores.py).  In "namespaces" each worker has its own; "none"
# promises nothing.
SHARED_DEV_SHM = ("users", "landlock")
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


def has_cap_sys_admin():
    """Does this process hold CAP_SYS_ADMIN?  (Root in Docker does not.)"""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> CAP_SYS_ADMIN & 1)
    except OSError:
        pass
    return False


# ---------------------------------------------------------------- namespaces
#
# Two steps, because a new PID namespace takes effect for the caller's
# children only: the zygote's child calls `enter_namespaces` (new namespaces,
# the new root's mounts) and forks; the grandchild, PID 1 of the new PID
# namespace, calls `finish_namespaces` (its /proc, chroot, identity) and serves.
# As root the zygote makes the PID namespace itself (unshare_pid, fork,
# restore_pid), so its one child is PID 1 already and does both steps.

def enter_namespaces(uid, limits, root, new_pid=True):
    """Step one, in the zygote's child.  Returns the state step two needs.

    `new_pid=False`: the caller is already PID 1 of a new PID namespace (as
    root the zygote makes it, see zygote.py) and does step two itself.
    """
    as_root = os.geteuid() == 0 and has_cap_sys_admin()
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | (CLONE_NEWPID if new_pid else 0)
    if not as_root and os.geteuid() == 0:
        # Root without CAP_SYS_ADMIN (Docker, Gradescope): it keeps CAP_SETUID, and becomes the slot's
        # own user id BEFORE making its user namespace, so that outside it the worker is never uid 0
        # (uid 0 outside could write /proc/sys, read /etc/shadow, and is never held to RLIMIT_NPROC).
        # That user id must then be able to read Python, as an ordinary user's workers must.
        _become(uid)
        # A change of user id makes a process undumpable, which gives its /proc files to root: it could
        # not write its own uid_map.  Its processes are its hand-in's alone, and RLIMIT_CORE is 0.
        _check(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "dumpable")
        _can_read_python()
        _can_reach(root)
    outer_uid, outer_gid = os.geteuid(), os.getegid()
    _check(_libc.unshare(flags | (0 if as_root else CLONE_NEWUSER)), "unshare")
    if not as_root:
        # Unprivileged: one id maps, our own (never 0), to INNER_ID inside.
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{INNER_ID} {outer_uid} 1")
        _write("/proc/self/gid_map", f"{INNER_ID} {outer_gid} 1")
        uid = INNER_ID
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    # The folders made on the way to each mount point (/root/.pyenv/versions above a pyenv Python, the folders
    # above a virtual environment) must let the worker's user id through, whatever the grader's umask: 077 once
    # a "users" sandbox or a private course set it, which left them 700, root's, so that the worker could not
    # import what it had not preloaded (multiprocessing, IPython's magics).
    mask = os.umask(0o022)
    try:
        _build_root(uid, limits, root)
    finally:
        os.umask(mask)
    return {"as_root": as_root, "uid": uid}


def _build_root(uid, limits, root):
    """The new root's tmpfs, its read-only mounts of the system and of Python, its devices and its own folders."""
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
    try:
        _mount("devpts", root + "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
        os.symlink("pts/ptmx", root + "/dev/ptmx")
    except IsolationError:
        pass  # some containers refuse devpts; only `!cmd` lines need it
    os.makedirs(root + "/proc", exist_ok=True)
    # /dev/shm of its own, in its private root: multiprocessing's locks and shared values (semaphores.py).
    for folder, mode in ((HOME, 0o700), ("/tmp", 0o1777), ("/dev/shm", 0o1777)):
        os.makedirs(root + folder, exist_ok=True)
        os.chown(root + folder, uid, uid)
        os.chmod(root + folder, mode)


def finish_namespaces(state, limits, root):
    """Step two, in PID 1 of the new PID namespace."""
    try:
        # This namespace's own /proc: /proc/self works, no other process shows.
        _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except IsolationError:
        pass  # a container that masks its /proc forbids a new one: it stays empty
    os.chroot(root)
    os.chdir(HOME)
    _limit(limits, count_processes=True)
    if state["as_root"]:
        _become(state["uid"])
    else:
        _drop_capabilities()
    _no_new_privs()
    lacking = [] if seccomp.shut() else [seccomp.NO_FILTER_LEFTOVERS]
    _environment(HOME, "/tmp")
    return lacking


def unshare_pid():
    """As root: the next child forked is PID 1 of a new PID namespace (see restore_pid)."""
    _check(_libc.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")


def restore_pid(own_namespace_fd):
    """Children forked from now on are in our own PID namespace again."""
    _check(_libc.setns(own_namespace_fd, CLONE_NEWPID), "setns(CLONE_NEWPID)")


def _bind_read_only(path, root):
    if not os.path.exists(path) or os.path.exists(root + path):
        return
    if os.path.islink(path):  # e.g. /bin -> usr/bin on merged-/usr systems
        os.makedirs(os.path.dirname(root + path), exist_ok=True)
        os.symlink(os.readlink(path), root + path)
        return
    os.makedirs(root + path, exist_ok=True)
    _mount(path, root + path, None, MS_BIND | MS_REC)
    try:
        _mount(None, root + path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)
    except IsolationError:
        # In a user namespace the remount must keep the flags the kernel
        # locked on the original mount (nodev, noexec...): keep them, add ro.
        _mount(None, root + path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _locked_flags(path))


def _locked_flags(path):
    flags = os.statvfs(path).f_flag
    result = MS_NOSUID
    for bit, mount_flag in ((os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC)):
        if flags & bit:
            result |= mount_flag
    return result


def _drop_capabilities():
    """Give up every capability the user namespace granted, for good."""
    for cap in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break  # past the last capability this kernel knows
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = struct.pack("II", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = bytes(24)                             # effective, permitted, inheritable: none
    _check(_libc.capset(header, data), "capset")


# --------------------------------------------------------------------- users

def enter_users(uid, limits, private_dir, landlock_paths=None):
    """A user id of its own in a private folder; Landlock on top where the kernel has it.

    Returns what this layer cannot hold here, in words (see `lacks`)."""
    os.chdir(private_dir)
    _limit(limits, count_processes=True)
    _become(uid)
    _can_reach(private_dir)   # its own folder by its path too (TMPDIR, HOME), and Landlock's rule is made from it
    _no_new_privs()
    lacking = []
    if landlock_paths is not None and landlock_abi() > 0:
        landlock.restrict_files(landlock_paths, private_dir, DEVICES)
    else:
        lacking.append("files other than the course's hidden by permissions only (no Landlock): world-readable "
                       "files elsewhere on this machine stay readable")
    if not seccomp.shut(network=True):
        lacking += [seccomp.NO_FILTER_NETWORK, seccomp.NO_FILTER_LEFTOVERS, seccomp.NO_FILTER_SIBLINGS]
    _environment(private_dir, private_dir)
    return lacking


def _become(uid):
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


# ------------------------------------------------------------------ landlock

landlock_abi = landlock.landlock_abi


def enter_landlock(limits, private_dir, read_paths, uid=None):
    """`uid`: as root, a user id of its own as well (the kernel never holds root to RLIMIT_NPROC)."""
    os.chdir(private_dir)
    _limit(limits, count_processes=uid is not None)
    if uid is not None:
        _become(uid)
        _can_reach(private_dir)   # (as in enter_users)
    _no_new_privs()  # landlock_restrict_self demands it of an unprivileged process
    landlock.restrict_files(read_paths, private_dir, DEVICES)
    # As an ordinary user the worker is the grading user: what Landlock does not mediate (a file's mode, owner,
    # times and extended attributes) it could change on every file of the grader's (see seccomp.py).
    lacking = [] if seccomp.shut(network=True, metadata=uid is None) else \
        [seccomp.NO_FILTER_NETWORK, seccomp.NO_FILTER_LEFTOVERS, seccomp.NO_FILTER_SIBLINGS] + \
        ([seccomp.NO_FILTER_METADATA] if uid is None else [])
    _environment(private_dir, private_dir)
    return lacking


def _can_read_python():
    """A worker imports modules as it goes: its user id must be able to read Python's files, the standard
    library's and its environment's packages alike.  Only the zygote's preloaded modules are imported before it
    changes user id; a venv under a private folder (`mktemp -d`, a home of mode 700) let a hand-in import those and
    nothing else, and every cell that imported scipy failed, so the hand-in lost points for the machine's doing."""
    prefixes = tuple(os.path.join(prefix, "") for prefix in python_paths())
    folders = [entry for entry in sys.path if entry.startswith(prefixes)]      # the library's, site-packages
    for path in [sys.modules[module].__file__ for module in ("os", "json")] + folders:
        try:
            if path in folders:
                os.listdir(path)
            else:
                with open(path, "rb"):
                    pass
        except (FileNotFoundError, NotADirectoryError):
            continue        # an entry Python lists but nobody made (python311.zip); a folder out of reach is EACCES
        except OSError:
            raise IsolationError(0, f"a worker's user id cannot read Python's own files ({path}): "
                                    "install Python and its venv where every user can read them") from None


def _can_reach(path):
    """As a slot's own user id: every folder down to the sandbox's must let it pass.  A `mktemp -d` above
    --out is its owner's alone (mode 700), and the kernel's refusal to mount there would say nothing useful."""
    current = "/"
    for part in os.path.normpath(path).split("/")[1:]:
        current = os.path.join(current, part)
        if not os.access(current, os.X_OK):
            mode = oct(os.stat(current).st_mode & 0o777) if os.path.exists(current) else "?"
            raise IsolationError(0, f"{REACH_PROBLEM} {current} (mode {mode}) is its owner's alone: make it "
                                    "traversable (chmod o+x; nothing becomes listable) or give an --out other "
                                    "users can reach")


REACH_PROBLEM = "a worker's user id cannot reach the sandbox under --out:"


def landlock_read_paths():
    return [p for p in SYSTEM_PATHS + tuple(python_paths()) if os.path.exists(p)]


# ---------------------------------------------------------------------- none

def enter_none(limits, private_dir):
    os.chdir(private_dir)
    _limit(limits, count_processes=False)
    _environment(private_dir, private_dir)


# -------------------------------------------------------------------- shared

def _limit(limits, count_processes):
    def cap(kind, value):
        soft, hard = resource.getrlimit(kind)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (value, value))

    cap(resource.RLIMIT_AS, limits["memory_mb"] * 1024 * 1024)
    cap(resource.RLIMIT_FSIZE, limits["file_mb"] * 1024 * 1024)
    # RLIMIT_NPROC counts every process of the user id (in its user namespace).
    # A slot's own id or namespace holds the hand-in alone; the grader's own
    # account also runs the teacher's browser, so there the hand-in gets what
    # is running now plus its allowance: a fork bomb still stops.
    extra = 0 if count_processes else _processes_of(os.getuid())
    if os.getuid() != 0:  # root ignores RLIMIT_NPROC anyway
        cap(resource.RLIMIT_NPROC, limits["processes"] + extra)
    elif count_processes:
        cap(resource.RLIMIT_NPROC, limits["processes"])
    cap(resource.RLIMIT_CPU, limits["cpu_seconds"])
    cap(resource.RLIMIT_CORE, 0)


def _processes_of(uid):
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                count += os.stat(f"/proc/{entry}").st_uid == uid
            except OSError:
                pass
    return count


def _no_new_privs():
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def _environment(home, tmp):
    os.environ.update({"HOME": home, "TMPDIR": tmp, "MPLCONFIGDIR": os.path.join(home, ".matplotlib")})


def _write(path, text):
    with open(path, "w") as handle:
        handle.write(text)


# --------------------------------------------------------------------- probe

def probe(root_mountpoint, private_dir, wanted="auto"):
    """(layer, {layer: why it is not available}, [what that layer cannot hold here]) for the strongest
    layer that works here.

    Each candidate is tried for real in a throwaway child, the way a worker
    would enter it.  `wanted` names one layer to try alone.
    """
    candidates = LAYERS[:-1] if wanted == "auto" else (wanted,)
    refused = {}
    for layer in candidates:
        if layer == "none":
            return "none", refused, ["everything: student code can read what the grader can"]
        problem, lacking = _try(layer, root_mountpoint, private_dir)
        if problem is None:
            return layer, refused, lacking
        refused[layer] = problem
    return None, refused, []


def _try(layer, root, private_dir):
    if not sys.platform.startswith("linux"):
        return "needs Linux", []
    if layer == "users" and os.geteuid() != 0:
        return "needs root (to give each worker a user id of its own)", []
    if layer == "landlock" and landlock_abi() < 1:
        return "this kernel has no Landlock (Linux 5.13+ with it enabled)", []
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        message, lacking = b"", []
        try:
            limits = {"disk_mb": 1, "memory_mb": 1 << 20, "file_mb": 1, "processes": 64, "cpu_seconds": 60}
            if layer == "namespaces":
                state = enter_namespaces(worker_uid(os.getppid(), PROBE_LANE), limits, root)
                child = os.fork()
                if child == 0:
                    code = 1
                    try:
                        code = 2 if finish_namespaces(state, limits, root) else 0   # 2: it lacks something
                    finally:
                        os._exit(code)
                _, status = os.waitpid(child, 0)
                if os.waitstatus_to_exitcode(status) not in (0, 2):
                    raise IsolationError(0, "the namespace's first process could not set up its root")
                lacking = [seccomp.NO_FILTER_LEFTOVERS] if os.waitstatus_to_exitcode(status) == 2 else []
            elif layer == "users":
                extra = None if os.environ.get("AUTOGRADER_LANDLOCK") == "0" else landlock_read_paths()
                lacking = enter_users(worker_uid(os.getppid(), PROBE_LANE), limits, private_dir, extra)
                _can_read_python()
            elif layer == "landlock":
                as_root = os.geteuid() == 0
                lacking = enter_landlock(limits, private_dir, landlock_read_paths(),
                                         worker_uid(os.getppid(), PROBE_LANE) if as_root else None)
                if as_root:          # its workers have a user id of their own (an ordinary user's are itself)
                    _can_read_python()
        except BaseException as error:  # noqa: BLE001 - any failure means "not here"
            text = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            message = (text or type(error).__name__).encode()
        os.write(write, message[:500] if message else b"OK" + json.dumps(lacking).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as handle:
        message = handle.read()
    os.waitpid(pid, 0)
    if message.startswith(b"OK"):
        return None, json.loads(message[2:])
    text = message.decode(errors="replace") or "the layer's test process ended without a word"
    if layer == "namespaces" and not text.startswith(REACH_PROBLEM):
        return f"the kernel refused namespaces ({text}); unprivileged user namespaces may be disabled", []
    return text, []
