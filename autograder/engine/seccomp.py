"""System calls no worker may make, refused (or made to do nothing) by a seccomp filter.

A seccomp filter, which any process may install once it has no_new_privs, shuts what the layers
cannot, for the worker and all it starts; system calls of another architecture (32-bit x86 on a
64-bit kernel, x32) are refused whole, since their numbers differ.  seccomp sees a call's number and
its plain arguments, never a path, so each rule is for a whole family of calls, fd-based ones too.

* Leftovers, in every layer but none: System V shared memory, message queues and semaphores, POSIX
  message queues, and the kernel's keyrings outlive the process that made them and are found by a key
  or a name, not a path, so no file permission or Landlock rule keeps them from the next hand-in (the
  IPC namespace covers only the first three, and keyrings are kept per user id).  No notebook needs
  them (multiprocessing's locks and shared memory are files under /dev/shm): refused.
* The network, in the users and landlock layers, which share the machine's: Landlock (ABI 4+) refuses
  TCP only; UDP, DNS and Unix sockets stay open.  Refused: making a socket (socketpair(), which only
  connects a process to its own children, is a different call and stays), connect and bind on one
  inherited, and io_uring, which could do all of it behind the filter's back.
* A file's metadata, in the landlock layer as an ordinary user, where the worker is the grading user
  itself: Landlock does not mediate chmod, chown, utime or extended attributes, so a hand-in could
  change them on every file the grader owns (issue 32: a canary went from 0600 to 0666, and the
  gradebook to 0400).  The whole family is done with no effect: the call succeeds and changes nothing.
  Not refused, because Python's own shutil.copy and Path.touch call them on the notebook's files, and
  a refusal would make an honest cell fail here alone; nothing a notebook computes depends on a mode or
  a time it set.  As root a worker has a user id of its own, which owns nothing but its own folder.
* A sibling of the worker, in every layer but none.  A case's CPU time is the sum over its worker's process
  tree (engine/watch.py), which every process the hand-in starts stays in: the worker is their subreaper (PID 1
  in the namespaces layer), so setsid, setpgid or a double fork leave a process in it.  clone(CLONE_PARENT)
  would not: from the worker it makes a child of the slot's zygote, running outside the count (the kernel
  refuses it to a PID namespace's first process only).  Refused, with CLONE_PARENT in its flags; and clone3,
  whose flags are in memory a filter cannot read, answers ENOSYS as on a kernel before 5.3, so glibc makes its
  threads and processes with clone (as Docker's default profile has it; Python's os.fork never used clone3).

Standard library only: copied into the sandbox's folder with the zygote.
"""

import ctypes
import os
import struct
from types import MappingProxyType

_libc = ctypes.CDLL(None, use_errno=True)

SECCOMP_SET_MODE_FILTER, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 22, 2
_BPF_LD_W_ABS, _BPF_JEQ_K, _BPF_JGE_K, _BPF_RET_K = 0x20, 0x15, 0x35, 0x06
_SECCOMP_RET_ALLOW, _SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
_ERRNO = 13                                  # EACCES: "permission denied", what a student then reads
_ARCHITECTURES = MappingProxyType({"x86_64": 0xC000003E, "aarch64": 0xC00000B7})


def _table(x86_64, aarch64):
    """{machine: {call name: its number}}, read-only."""
    return MappingProxyType({"x86_64": MappingProxyType(x86_64), "aarch64": MappingProxyType(aarch64)})


_NETWORK_CALLS = _table(
    {"socket": 41, "connect": 42, "bind": 49, "listen": 50, "io_uring_setup": 425},
    {"socket": 198, "bind": 200, "listen": 201, "connect": 203, "io_uring_setup": 425})
_LEFTOVER_CALLS = _table(
    {"shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65, "semctl": 66, "shmdt": 67, "msgget": 68,
     "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "semtimedop": 220, "mq_open": 240, "mq_unlink": 241,
     "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245, "add_key": 248,
     "request_key": 249, "keyctl": 250},
    {"mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184,
     "mq_getsetattr": 185, "msgget": 186, "msgctl": 187, "msgrcv": 188, "msgsnd": 189, "semget": 190, "semctl": 191,
     "semtimedop": 192, "semop": 193, "shmget": 194, "shmctl": 195, "shmat": 196, "shmdt": 197, "add_key": 217,
     "request_key": 218, "keyctl": 219})
_METADATA_CALLS = _table(
    {"chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94, "utime": 132, "setxattr": 188,
     "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "utimes": 235,
     "fchownat": 260, "futimesat": 261, "fchmodat": 268, "utimensat": 280, "fchmodat2": 452, "setxattrat": 463,
     "removexattrat": 466},
    {"setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15, "fremovexattr": 16,
     "fchmod": 52, "fchmodat": 53, "fchownat": 54, "fchown": 55, "utimensat": 88, "fchmodat2": 452, "setxattrat": 463,
     "removexattrat": 466})
# clone, judged by its flags (its first argument; seccomp sees the low 32 bits at offset 16), and clone3.
_CLONE = MappingProxyType({"x86_64": 56, "aarch64": 220})
_CLONE3, _CLONE_PARENT, _ENOSYS = 435, 0x00008000, 38   # (clone3 has the same number on both)
_FLAGS_LOW = 16
_BPF_JSET_K = 0x45
_X32_BIT = 0x40000000
# What a layer cannot hold where the filter cannot be installed (another architecture), as `grade` says it.
NO_FILTER_NETWORK = "network (no seccomp filter here)"
NO_FILTER_LEFTOVERS = ("System V IPC, POSIX message queues and keyrings (no seccomp filter here): what one hand-in "
                       "leaves there, the next could find")
NO_FILTER_SIBLINGS = ("a case's CPU time (no seccomp filter here): a process the worker starts as its own sibling "
                      "(clone with CLONE_PARENT) runs outside the count")
NO_FILTER_METADATA = ("the grading user's files (no seccomp filter here): a hand-in can change their modes, times "
                      "and extended attributes")


def shut(network=False, metadata=False):
    """Install the filter: leftovers and a sibling of the worker refused, the network too if `network`, a file's
    metadata left unchanged if `metadata` (see above).  True when it is in place."""
    machine = os.uname().machine
    if machine not in _ARCHITECTURES or os.environ.get("AUTOGRADER_SECCOMP") == "0":  # (tests: as elsewhere)
        return False
    deny, unchanged = _SECCOMP_RET_ERRNO | _ERRNO, _SECCOMP_RET_ERRNO | 0   # errno 0: the call returns 0
    rules = [(number, deny) for number in _LEFTOVER_CALLS[machine].values()]
    rules += [(number, deny) for number in _NETWORK_CALLS[machine].values()] if network else []
    rules += [(number, unchanged) for number in _METADATA_CALLS[machine].values()] if metadata else []
    program = [(_BPF_LD_W_ABS, 0, 0, 4),                       # the call's architecture
               (_BPF_JEQ_K, 1, 0, _ARCHITECTURES[machine]),
               (_BPF_RET_K, 0, 0, deny),                       # another one: refused whole
               (_BPF_LD_W_ABS, 0, 0, 0)]                       # the call's number
    if machine == "x86_64":
        program.append((_BPF_JGE_K, 0, 1, _X32_BIT))           # x32 numbers: refused whole
        program.append((_BPF_RET_K, 0, 0, deny))
    program += [(_BPF_JEQ_K, 0, 4, _CLONE[machine]),           # clone: refused with CLONE_PARENT
                (_BPF_LD_W_ABS, 0, 0, _FLAGS_LOW),
                (_BPF_JSET_K, 1, 0, _CLONE_PARENT),
                (_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
                (_BPF_RET_K, 0, 0, deny),
                (_BPF_JEQ_K, 0, 1, _CLONE3),                   # clone3: ENOSYS
                (_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | _ENOSYS)]
    for number, action in rules:
        program.append((_BPF_JEQ_K, 0, 1, number))
        program.append((_BPF_RET_K, 0, 0, action))
    program.append((_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW))
    filters = (ctypes.c_uint64 * len(program))(*(code | jt << 16 | jf << 24 | k << 32
                                                 for code, jt, jf, k in program))
    fprog = struct.pack("HxxxxxxQ", len(program), ctypes.addressof(filters))
    buffer = ctypes.create_string_buffer(fprog)
    return _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, buffer, 0, 0) == 0
