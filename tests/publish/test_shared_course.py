"""A course shared on purpose with its teaching team: a TA in the course's group runs every verb.

As root, the test makes a group and two real accounts in it, an instructor and a TA (and removes them
after).  The course's grades/ folder is group-owned and setgid (docs/semester.md, "A shared course
folder").  The instructor imports the roster and grades; the TA then runs gradebook, extend, accommodate,
adjust, feedback, release, roster import and a regrade, each of which writes to SQLite files the
instructor made (SQLite needs their folder writable for its journal).  Everything made is the group's
(files 0660, folders 2770), and an account outside the group reads nothing.
"""

import grp
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import copy_course
from semesters import CANVAS_ROSTER, canvas_zip, configure

pytestmark = [pytest.mark.slow, pytest.mark.conditions]


def _skip_unless_root():
    if os.geteuid() != 0 or not all(shutil.which(tool) for tool in ("useradd", "groupadd", "setpriv")):
        pytest.skip("needs root with useradd, groupadd and setpriv (as CI runs)")


@pytest.fixture
def staff(tmp_path_factory):
    """(group, instructor, TA, outsider): accounts made for this test, removed after it."""
    _skip_unless_root()
    tag = f"{os.getpid() % 100000}"
    group, people = f"agstaff{tag}", [f"aginst{tag}", f"agta{tag}", f"agout{tag}"]
    subprocess.run(["groupadd", group], check=True)
    try:
        for person in people:
            groups = [] if person.startswith("agout") else ["-G", group]
            subprocess.run(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", *groups, person], check=True)
        yield group, *people
    finally:
        for person in people:
            subprocess.run(["userdel", person], capture_output=True)
        subprocess.run(["groupdel", group], capture_output=True)


def as_user(person, home, course, *args):
    entry = pwd.getpwnam(person)
    command = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups", "--",
               sys.executable, "-m", "autograder", "--course", str(course), *args]
    env = {**os.environ, "HOME": str(home), "MPLCONFIGDIR": str(home / "mpl")}
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=env, cwd=home, umask=0o022)


def _course_of(base, instructor, gid, people, class_list):
    """A copy of the course in `base`, the instructor's and the group's; a home for each of `people`; the roster
    export (base/export.csv) and a Canvas download of `class_list`, readable by all."""
    base.chmod(0o755)
    course = copy_course(base / "course")
    configure(course)
    for path in [course, *course.rglob("*")]:
        os.chown(path, pwd.getpwnam(instructor).pw_uid, gid)
    homes = {}
    for person in people:
        homes[person] = base / f"home-{person}"
        homes[person].mkdir()
        os.chown(homes[person], pwd.getpwnam(person).pw_uid, gid)
    (base / "export.csv").write_text(CANVAS_ROSTER)
    download = canvas_zip(base / "nq.zip", "n-queens", class_list)
    for path in (base / "export.csv", download):
        path.chmod(0o644)
    return course, homes, download


def test_a_ta_in_the_course_group_runs_every_verb(staff, tmp_path_factory):
    group, instructor, ta, outsider = staff
    gid = grp.getgrnam(group).gr_gid
    base = Path(tempfile.mkdtemp(prefix="autograder-shared-"))
    try:
        course, homes, download = _course_of(base, instructor, gid, (instructor, ta, outsider),
                                             ["alice", "bob", "carol", "dave", "erin"])
        # The setup docs/semester.md gives: the grades folder the group's, setgid, no one else's.
        grades = course / "grades"
        grades.mkdir()
        os.chown(grades, pwd.getpwnam(instructor).pw_uid, gid)
        grades.chmod(0o2770)

        def ok(person, *args):
            done = as_user(person, homes[person], course, *args)
            assert done.returncode == 0, f"{person}: {' '.join(args)}\n{done.stdout}\n{done.stderr}"
            return done

        ok(instructor, "roster", "import", str(base / "export.csv"))
        ok(instructor, "grade", "--assignment", "n-queens", "--out", str(grades / "n-queens"), str(download))
        ok(ta, "gradebook", "--to", str(grades / "book"))
        ok(ta, "extend", "--assignment", "n-queens", "--student", "cking", "--until", "2026-11-04")
        ok(ta, "accommodate", "--group", "extra", "--extra-days", "1", "--student", "dlee")
        ok(ta, "adjust", "--assignment", "n-queens", "--student", "Bob Jones", "--points", "1", "--reason", "regrade")
        ok(ta, "feedback", "--out", str(grades / "n-queens"))
        ok(ta, "report", "--out", str(grades / "n-queens"))
        ok(ta, "release", "--out", str(grades / "n-queens"), "--to", str(grades / "release"))
        ok(ta, "roster", "import", str(base / "export.csv"))
        ok(ta, "grade", "--assignment", "n-queens", "--out", str(grades / "n-queens"), "--regrade", "--student",
           "asmith", str(download))
        ok(instructor, "gradebook", "--to", str(grades / "book"))
        ok(instructor, "adjust", "--list")

        for path in [grades, *grades.rglob("*")]:
            mode = path.stat().st_mode
            assert path.stat().st_gid == gid, path
            if path.is_dir():     # o+x at most, on the way to --out (a slot's own user id passes through)
                assert stat.S_IMODE(mode) & ~0o001 == 0o2770, (path, oct(mode))
            else:
                assert stat.S_IMODE(mode) == 0o660, (path, oct(mode))
        outside = as_user(outsider, homes[outsider], course, "roster")
        assert outside.returncode != 0 and "Permission denied" in outside.stderr + outside.stdout
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_course_shared_after_it_has_grades_is_repaired_by_its_owner_and_refused_clearly_before(staff):
    # The trial (finding 17): the recipe's `chmod g+s grades` set setgid on grades/ alone; a TA's new report.html
    # and hand-in folders got the TA's own group, and the next member of the group was refused.
    group, instructor, ta, _ = staff
    gid = grp.getgrnam(group).gr_gid
    base = Path(tempfile.mkdtemp(prefix="autograder-shared-"))
    try:
        course, homes, download = _course_of(base, instructor, gid, (instructor, ta), ["alice", "bob", "carol"])
        out = course / "grades" / "n-queens"

        def run(person, *args):
            return as_user(person, homes[person], course, *args)

        # Graded while the course was private (0700 folders, 0600 files), then the old recipe, word for word.
        assert run(instructor, "roster", "import", str(base / "export.csv")).returncode == 0
        assert run(instructor, "grade", "--assignment", "n-queens", "--out", str(out), str(download)).returncode == 0
        subprocess.run(f"chgrp -R {group} grades && chmod -R g+rwX,o-rwx grades && chmod g+s grades", shell=True,
                       cwd=course, check=True)
        refused = run(ta, "report", "--out", str(out))
        said = " ".join(refused.stderr.split())
        assert refused.returncode == 1 and "not the group's" in said, refused.stderr
        assert "find grades -type d -exec chmod g+s {} +" in said and "Traceback" not in said
        # The owner's next command repairs them; then the TA works, and the next member of the group after her.
        assert run(instructor, "report", "--out", str(out)).returncode == 0
        for person in (ta, instructor, ta):
            done = run(person, "grade", "--assignment", "n-queens", "--out", str(out), "--regrade", "--student",
                       "asmith", str(download))
            assert done.returncode == 0, done.stderr
            assert run(person, "report", "--out", str(out)).returncode == 0
        for path in [course / "grades", *(course / "grades").rglob("*")]:
            assert path.stat().st_gid == gid, path
            if path.is_dir():
                assert path.stat().st_mode & 0o2070 == 0o2070, (path, oct(path.stat().st_mode))
    finally:
        shutil.rmtree(base, ignore_errors=True)
