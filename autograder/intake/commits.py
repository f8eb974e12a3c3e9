"""When a GitHub Classroom clone's last commit was made, read without running git.

A repository's own config can make git run commands (a promisor remote of
`ext::sh -c ...`, a file-system monitor, hooks), so no git program ever
reads a student's repository in the grader's process.  Dulwich reads the
objects as files: it never fetches, runs nothing, and is refused any
repository that asks for an extension (partial clones among them).  A
repository whose objects live elsewhere (`objects/info/alternates`), or
whose `.git` is a file or a link pointing elsewhere, is not read at all:
the commit time then stays unknown.

Only clones the instructor named are read (intake/collect.py decides); the
time is the committer's own clock, which docs/lms.md and docs/grading.md say plainly.
"""

import os
import stat
from datetime import datetime, timedelta, timezone

_MAX_REF_HOPS = 5


def last_commit_time(repository):
    """ISO 8601 (UTC) of the commit HEAD names, or None when it cannot be known safely."""
    git_dir = os.path.join(repository, ".git")
    try:
        if not stat.S_ISDIR(os.lstat(git_dir).st_mode):
            return None                      # a .git file or link: a pointer to somewhere else
    except OSError:
        return None
    if os.path.lexists(os.path.join(git_dir, "objects", "info", "alternates")):
        return None
    # Dulwich is loaded here, for a Classroom clone, not at every `grade` (30 ms of each start).
    from dulwich.errors import NotGitRepository
    from dulwich.objects import Commit
    from dulwich.repo import Repo

    try:
        with Repo(str(repository)) as repo:
            commit = repo.object_store[repo.refs.follow(b"HEAD")[1]] if _head_is_local(repo) else None
    except (NotGitRepository, KeyError, ValueError, OSError, Exception):  # noqa: BLE001 - any damage: unknown
        return None
    if not isinstance(commit, Commit):
        return None
    try:         # a commit made by hand can say any time and zone (`+9999`, year 300,000): unknown, not a crash
        zone = timezone(timedelta(seconds=commit.commit_timezone))
        moment = datetime.fromtimestamp(commit.commit_time, tz=zone)
        return moment.astimezone(timezone.utc).isoformat()
    except (ValueError, OverflowError, OSError, TypeError):
        return None


def _head_is_local(repo):
    """HEAD resolves through this repository's own refs, in a few hops."""
    refs, _ = repo.refs.follow(b"HEAD")
    return 0 < len(refs) <= _MAX_REF_HOPS
