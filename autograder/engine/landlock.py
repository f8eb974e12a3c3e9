"""Landlock (Linux 5.13+, no privilege needed): a process may open only the files a ruleset allows, and (ABI 4)
use TCP, and (ABI 6) signal or reach by abstract socket, only what it started.

Standard library only: copied into the sandbox's folder with the zygote.
"""

import ctypes
import os
import stat
import struct
import sys

_libc = ctypes.CDLL(None, use_errno=True)

SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION, LANDLOCK_RULE_PATH_BENEATH = 1, 1
# Filesystem rights by ABI version (linux/landlock.h).
_FS_V1 = (1 << 13) - 1              # execute, write, read file/dir, remove, make_* ...
_FS_REFER, _FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FS_READ = (1 << 0) | (1 << 2) | (1 << 3)   # execute, read_file, read_dir
_NET_ALL = (1 << 0) | (1 << 1)              # bind_tcp, connect_tcp (ABI 4)
_SCOPE_ALL = (1 << 0) | (1 << 1)            # abstract unix sockets, signals (ABI 6)


class LandlockError(OSError):
    pass


def _check(result, what):
    if result != 0:
        error = ctypes.get_errno()
        raise LandlockError(error, f"{what}: {os.strerror(error)}")


def landlock_abi():
    """The kernel's Landlock ABI version, 0 where it has none."""
    if not sys.platform.startswith("linux"):
        return 0
    version = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                            ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def restrict_files(read_paths, private_dir, devices):
    """From now on the calling process (and all it starts) may only read `read_paths`, read and write `devices`
    (names under /dev) and do anything in `private_dir`; scoped (ABI 6) and without TCP (ABI 4) where it can."""
    abi = landlock_abi()
    if abi < 1:
        raise LandlockError(0, "this kernel has no Landlock")
    fs = _FS_V1 | (_FS_REFER if abi >= 2 else 0) | (_FS_TRUNCATE if abi >= 3 else 0) | \
        (_FS_IOCTL_DEV if abi >= 5 else 0)
    net = _NET_ALL if abi >= 4 else 0
    scoped = _SCOPE_ALL if abi >= 6 else 0
    attr = struct.pack("QQQ", fs, net, scoped)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    ruleset = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, attr, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise LandlockError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        for path in read_paths:
            _allow(ruleset, path, _FS_READ)
        # The /dev files Python and numpy open; nothing else under /dev.
        for device in devices:
            _allow(ruleset, f"/dev/{device}", (1 << 1) | (1 << 2))  # write_file, read_file
        _allow(ruleset, private_dir, fs & ~_FS_IOCTL_DEV)
        _check(_libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)),
               "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _allow(ruleset, path, access):
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # not on this system (e.g. /lib32)
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            access &= (1 << 0) | (1 << 1) | (1 << 2) | (1 << 14)  # file rights only for a file
        rule = struct.pack("=Qi", access, fd)
        _check(_libc.syscall(SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset),
                             ctypes.c_uint32(LANDLOCK_RULE_PATH_BENEATH), rule, ctypes.c_uint32(0)),
               f"landlock_add_rule {path}")
    finally:
        os.close(fd)
