"""`release --format classroom`: commit each student's feedback on a `feedback` branch of their clone.

TARGET is the folder holding the GitHub Classroom clones that were graded
(the gradebook keeps each hand-in's clone folder, as intake found it).  In each
clone, feedback/feedback.md and feedback/feedback.html are committed on the
branch `feedback` with git plumbing only (hash-object, mktree, commit-tree,
update-ref): the working tree, the index, HEAD and every other branch stay
exactly as they were.

The new commit's parent is the local `feedback` branch if there is one, else
`origin/feedback` (GitHub Classroom makes that branch for its feedback pull
requests, so `git push origin feedback` is then a fast-forward), else the
clone's HEAD.  When the feedback files are already what the branch holds,
nothing is committed: releasing twice is a no-op, and after a regrade only
students whose feedback changed get a new commit.  Pushing is left to the TA
(`git -C <clone> push origin feedback`).  A Classroom 50 clone keeps its `feedback` branch frozen at the
student's first commit, as the base of its Feedback pull request (its org rulesets refuse a push to it): its
feedback goes on `autograder-feedback` instead (branch_of).
"""

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .who import of_submission
from ..feedback.view import path_in_clone
from ..intake.files import UnsafeFile, read_capped
from ..feedback.write import digest, write_if_changed
from ..core.errors import AutograderError

BRANCH = "refs/heads/feedback"
CLASSROOM50_BRANCH = "refs/heads/autograder-feedback"
FOLDER = "feedback"
IDENTITY = {"GIT_AUTHOR_NAME": "autograder", "GIT_AUTHOR_EMAIL": "autograder@localhost",
            "GIT_COMMITTER_NAME": "autograder", "GIT_COMMITTER_EMAIL": "autograder@localhost"}


class GitError(AutograderError):
    pass


@dataclass
class Release:
    changed: list = field(default_factory=list)
    unchanged: list = field(default_factory=list)
    problems: dict = field(default_factory=dict)     # student -> why not released
    commits: dict = field(default_factory=dict)      # student -> commit on the feedback branch
    hashes: dict = field(default_factory=dict)       # student -> content hash


def _git_bytes(repo, *args, data=None):
    env = {**os.environ, **IDENTITY, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
        env.pop(name, None)          # always the clone at `repo`, whatever the caller's environment says
    run = subprocess.run(["git", "-C", str(repo), *args], input=data, capture_output=True, env=env)
    if run.returncode != 0:
        raise GitError(f"git {' '.join(args[:2])} failed: {run.stderr.decode(errors='replace').strip()}")
    return run.stdout


def _git(repo, *args, data=None):
    return _git_bytes(repo, *args, data=data).decode("utf-8", errors="replace").strip()


def _resolve(repo, ref):
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except GitError:
        return None


def _tree_entries(repo, tree):
    """{name: (mode, type, sha)} of one tree."""
    if tree is None:
        return {}
    raw = _git_bytes(repo, "ls-tree", "-z", tree)
    entries = {}
    for record in raw.split(b"\0"):
        if record:
            meta, name = record.split(b"\t", 1)
            mode, kind, sha = meta.decode().split()
            entries[name.decode("utf-8", errors="surrogateescape")] = (mode, kind, sha)
    return entries


def _make_tree(repo, entries):
    records = b"".join(f"{mode} {kind} {sha}\t".encode() + name.encode("utf-8", errors="surrogateescape") + b"\0"
                       for name, (mode, kind, sha) in sorted(entries.items()))
    return _git(repo, "mktree", "-z", data=records)


def branch_of(repo):
    """The branch feedback goes on: `feedback`, but in a Classroom 50 clone (its `.classroom50.yaml` at the top),
    whose `feedback` branch is the frozen base of its Feedback pull request, protected by the org's rulesets
    (wiki/Autograders.md, "Feedback pull requests"): there `autograder-feedback`, which moves nothing of it."""
    marker = Path(repo) / ".classroom50.yaml"
    return CLASSROOM50_BRANCH if os.path.lexists(marker) and not os.path.islink(marker) else BRANCH


def commit_files(repo, files, message):
    """Commit {name: text} into feedback/ on the feedback branch; the new commit, or None if unchanged."""
    branch = branch_of(repo)
    if _checked_out_branch(repo) == branch:
        raise GitError(f"the {branch.rsplit('/', 1)[-1]} branch is checked out in this clone; switch to another branch "
                       "first")
    current = _resolve(repo, branch)
    parent = current or _resolve(repo, f"refs/remotes/origin/{branch.rsplit('/', 1)[-1]}") or _resolve(repo, "HEAD")
    if parent is None:
        raise GitError("the repository has no commit yet")
    parent_tree = _git(repo, "rev-parse", f"{parent}^{{tree}}")
    root = _tree_entries(repo, parent_tree)
    old_folder = root.get(FOLDER)
    folder = _tree_entries(repo, old_folder[2]) if old_folder and old_folder[1] == "tree" else {}
    for name, text in files.items():
        blob = _git(repo, "hash-object", "-w", "--stdin", data=text.encode("utf-8"))
        folder[name] = ("100644", "blob", blob)
    root[FOLDER] = ("040000", "tree", _make_tree(repo, folder))
    tree = _make_tree(repo, root)
    if tree == parent_tree:                   # already there (on origin/feedback, say)
        if current is None:
            _git(repo, "update-ref", "-m", "autograder release: feedback", branch, parent, "0" * len(parent))
        return None
    commit = _git(repo, "commit-tree", tree, "-p", parent, "-m", message)
    _git(repo, "update-ref", "-m", "autograder release: feedback", branch, commit, current or "0" * len(commit))
    return commit


def _checked_out_branch(repo):
    try:
        return _git(repo, "symbolic-ref", "--quiet", "HEAD")
    except GitError:
        return None          # a detached HEAD


def release_classroom(assignment, pages, target, graded=None):
    """Each student's feedback on the feedback branch of their clone under `target`; `graded`: {student: sha256
    of the file graded}, held against the clone's file now (a clone pulled since holds other work)."""
    target = Path(target)
    result = Release(problems=dict(pages.withheld))
    for page in pages.pages:
        student = page.student
        name = of_submission(page.submission, {}).repository      # the clone intake found it in
        repo = target / name if name else None
        if repo is None or not (repo / ".git").exists():
            where = repo if repo is not None else page.submission.source
            result.problems[student] = f"no git clone at {where}"
            continue
        changed = _changed_since_graded(repo, path_in_clone(page.submission.source, name),
                                        (graded or {}).get(student))
        if changed:
            result.problems[student] = changed
            continue
        files = {"feedback.md": page.markdown, "feedback.html": page.html}
        message = (f"Feedback for {assignment.title}: {page.submission.score:g} / "
                   f"{page.submission.max_score:g}\n\nGraded file: {page.submission.source}\n")
        try:
            commit = commit_files(repo, files, message)
        except GitError as error:
            result.problems[student] = f"{repo}: {error}"
            continue
        (result.changed if commit else result.unchanged).append(student)
        result.commits[student] = commit or _resolve(repo, branch_of(repo))
        result.hashes[student] = digest(page.markdown, page.html)
    return result


def _changed_since_graded(repo, inside, sha256):
    """Why the clone's file is not the one graded ("" when it is, or when nothing says which was)."""
    if not inside or not sha256:
        return ""
    # What a student pushed since is theirs to shape: a link out of the clone, a FIFO, a huge file.  Read only a
    # regular file inside the clone, no link followed, within intake's cap.
    path = repo / inside
    now = None
    if Path(os.path.realpath(path)).is_relative_to(os.path.realpath(repo)):
        try:
            now = hashlib.sha256(read_capped(path)).hexdigest()
        except UnsafeFile:
            pass
    if now == sha256:
        return ""
    return (f"{repo / inside} is not the file that was graded (the clone was pulled since?): grade it again "
            "before its feedback is released")


def write_manifest(out_dir, assignment, target, result):
    """DIR/classroom_release.json: each student's feedback commit and content hash, for the next release."""
    students = {s: {"commit": result.commits.get(s), "sha256": result.hashes.get(s)} for s in result.hashes}
    write_if_changed(Path(out_dir) / "classroom_release.json",
                     json.dumps({"assignment": assignment.id, "format": "classroom",
                                 "target": str(Path(target).resolve()), "students": students},
                                indent=1, sort_keys=True, ensure_ascii=False) + "\n")
