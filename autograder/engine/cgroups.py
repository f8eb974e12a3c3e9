"""One CPU cgroup per grading slot, so a hand-in's hog takes only its own slot's share.

Without it the kernel shares the CPU per process: a hand-in that forks 40 busy
children gets 40 shares, and an honest hand-in graded beside it one, so it
times out.  With a cgroup per slot, all equal, each slot gets an equal share
whatever its processes do.  Used where the grader may make cgroups (root, a
writable cgroup file system: v2 or v1's cpu controller); elsewhere case limits
are judged by CPU time instead (worker.py), which contention does not inflate.
Standard library only: copied into the sandbox's folder with the zygote.
"""

import os

V2_ROOT = "/sys/fs/cgroup"
V1_CPU = "/sys/fs/cgroup/cpu"


class SlotGroups:
    """cgroups named autograder-<zygote pid>/slot-<n>; `join(slot)` moves the caller into one."""

    def __init__(self, owner_pid):
        self.base = None
        name = f"autograder-{owner_pid}"
        try:
            if os.path.exists(os.path.join(V2_ROOT, "cgroup.controllers")):
                with open(os.path.join(V2_ROOT, "cgroup.controllers")) as handle:
                    if "cpu" not in handle.read().split():
                        return
                base = os.path.join(V2_ROOT, name)
                os.mkdir(base)
                _write(os.path.join(V2_ROOT, "cgroup.subtree_control"), "+cpu")
                _write(os.path.join(base, "cgroup.subtree_control"), "+cpu")
                self.base = base
            elif os.path.isdir(V1_CPU) and os.access(V1_CPU, os.W_OK):
                base = os.path.join(V1_CPU, name)
                os.mkdir(base)
                self.base = base
        except OSError:
            self.close()

    def join(self, slot):
        """Move the calling process (and so all it will start) into the slot's group; False if none."""
        if self.base is None:
            return False
        folder = os.path.join(self.base, f"slot-{slot}")
        try:
            os.makedirs(folder, exist_ok=True)
            _write(os.path.join(folder, "cgroup.procs"), str(os.getpid()))
            return True
        except OSError:
            return False

    def close(self):
        """Remove the groups (each is empty once its processes are gone)."""
        if self.base is None:
            return
        for entry in os.listdir(self.base) if os.path.isdir(self.base) else ():
            path = os.path.join(self.base, entry)
            if entry.startswith("slot-") and os.path.isdir(path):
                _rmdir(path)
        _rmdir(self.base)
        self.base = None


def _write(path, text):
    with open(path, "w") as handle:
        handle.write(text)


def _rmdir(path):
    try:
        os.rmdir(path)
    except OSError:
        pass
