"""What unpacking may cost: one upload, and the whole class, whatever the nesting of their zips.

A limit per archive is no limit: nested zips multiply it (a 25 KB Canvas
download of 30 inner zips once wrote 2.2 GB into `--out/handins`).  So what
is unpacked is counted in three ways, each against two ledgers:

* **bytes** written to disk;
* **entries** read from archives (folders and refused entries too: each costs
  a look);
* **files and folders** made on disk (a file 32 folders deep makes up to 33).

One ledger is the **upload's**: a student's own zip and every zip inside it,
counted together (keyed by the student the layout names, so all of one
student's zips in a download share it).  The other is the **class's**:
everything one `grade` run unpacks, the LMS's download included.  An archive
may unpack what the fuller of its two ledgers has left; what is past it is not
unpacked, and the hand-in's row says which limit was reached.
"""

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from . import identity

MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    bytes: int
    entries: int
    files: int


# A student's upload: a notebook, helper modules and perhaps a data file, never thousands of files.
UPLOAD = Limits(bytes=100 * MB, entries=2_000, files=1_000)
# One run: a class of a thousand with a few files each, with room to spare (a Canvas download of 1,000
# notebooks unpacks to about 1,000 files and, with outputs, a few hundred MB).
CLASS = Limits(bytes=4 * 1024 * MB, entries=100_000, files=50_000)

_WORDS = {"bytes": "bytes", "entries": "zip entries", "files": "files and folders"}


def amount(kind, value):
    return f"{value // MB:,} MB" if kind == "bytes" else f"{value:,} {_WORDS[kind]}"


@dataclass
class Ledger:
    what: str                  # "one upload", "one class run"
    limits: Limits
    used: dict = field(default_factory=lambda: {"bytes": 0, "entries": 0, "files": 0})

    def left(self, kind):
        return getattr(self.limits, kind) - self.used[kind]

    def rule(self, kind):
        return f"{self.what} may unpack at most {amount(kind, getattr(self.limits, kind))}"


class Allowance:
    """What one archive may still unpack: the least that any of its ledgers has left."""

    def __init__(self, ledgers, whole_or_nothing, budget=None):
        self.ledgers = ledgers
        # An LMS's download is the instructor's: more entries than the class may read refuses it whole, as it
        # says.  A student's zip is unpacked as far as its upload's limits go, and the rest is named.
        self.whole_or_nothing = whole_or_nothing
        self.budget = budget        # a download's: its entries an LMS named are also their student's upload

    def for_entry(self, name):
        """What the entry `name` may cost: in an LMS's download, an entry the LMS named after a student (a Canvas
        attachment, a file in a Moodle folder) is part of that student's upload, and counts against it too."""
        key = upload_key(name) if self.budget is not None else None
        if key is None:
            return self
        return Allowance([self.budget.ledger(key), *self.ledgers], self.whole_or_nothing)

    def left(self, kind):
        return min(ledger.left(kind) for ledger in self.ledgers)

    def spend(self, kind, value):
        for ledger in self.ledgers:
            ledger.used[kind] += value

    def rule(self, kind):
        """The rule that binds `kind` now: the ledger with the least left."""
        return min(self.ledgers, key=lambda ledger: ledger.left(kind)).rule(kind)


class UnpackBudget:
    """The ledgers of one `grade` run: the class's, and one per upload."""

    def __init__(self, upload=None, whole=None):
        self.upload_limits = upload or UPLOAD
        self.whole = Ledger("one class run", whole or CLASS)
        self.uploads = {}

    def download(self):
        """An LMS's download, or a zip the instructor named: the class's ledger, and for each entry an LMS named
        after a student, that student's (Allowance.for_entry)."""
        return Allowance([self.whole], whole_or_nothing=True, budget=self)

    def upload(self, key):
        """A zip of the student `key`: theirs and the class's."""
        return Allowance([self.ledger(key), self.whole], whole_or_nothing=False)

    def ledger(self, key):
        return self.uploads.setdefault(key, Ledger("one upload", self.upload_limits))


def upload_key(name):
    """The student whose upload the entry `name` of a download is, by the first part of its path an LMS names
    after a student (a Canvas or flat Moodle file, a Moodle or D2L folder, a Blackboard attempt's file), keyed
    as intake keys that student (so their zips share the ledger); None when no part is an LMS's name.  The parts
    above the student's are the LMS's or the instructor's, so a student's own names inside their folder never
    choose the ledger.  (A download no LMS wrote may name many ledgers: each holds to the upload's limits, and
    all to the class's, as before.)"""
    parts = [p for p in PurePosixPath(name).parts if p not in ("/", ".", "")]
    for index, part in enumerate(parts):
        key = _file_owner(part) if index == len(parts) - 1 else _folder_owner(part)
        if key is not None:
            return key
    return None


def _folder_owner(part):
    who = identity.moodle_folder(part)
    d2l = identity.d2l_name(part)
    return who.key if who is not None else identity.d2l_identity(d2l[1]).key if d2l is not None else None


def _file_owner(part):
    """The key a file name's LMS prefix gives: of the grammars it fits, the one whose own part (name and ids, written
    by the LMS) ends first, since what follows is the student's file name, which may fit another grammar further
    on (`x_7_8_big.bin` after Blackboard's `<assignment>_<user>_attempt_<stamp>_` fits Canvas's)."""
    found = []
    canvas = identity.CANVAS_ANONYMOUS.match(part) or identity.CANVAS.match(part)
    if canvas is not None and identity.canvas_file(part) is not None:
        found.append((0 if canvas.re is identity.CANVAS_ANONYMOUS else canvas.start("user"),
                      identity.canvas_file(part).key))
    moodle = identity.MOODLE_MARK.search(part)
    if moodle is not None and identity.moodle_file(part) is not None:
        found.append((moodle.start(), identity.moodle_file(part).key))
    blackboard = identity.BLACKBOARD.match(part)
    if blackboard is not None:
        found.append((blackboard.end("head"),
                      identity.blackboard_identity(blackboard.group("head").rsplit("_", 1)[-1]).key))
    d2l = identity.d2l_name(part)
    if d2l is not None:
        found.append((0, identity.d2l_identity(d2l[1]).key))
    return min(found)[1] if found else None


class Shortfalls:
    """What each student's uploads held past their limits, gathered over all of their zips: one row each."""

    def __init__(self):
        self.by_student = {}

    def add(self, key, context, unpacked=None, zip_name="", rule=""):
        """`unpacked` (zips.Unpacked) of one of `key`'s zips, or, with `zip_name`, a zip not even opened since the
        limits were reached; `context` is what their row needs (its first zip's: who, source, time)."""
        over = unpacked.over if unpacked is not None else []
        count = len(over) + (unpacked.unread if unpacked is not None else 0)
        if unpacked is not None and not count:
            return
        tally = self.by_student.setdefault(key, {"context": context, "entries": 0, "zips": [], "names": [],
                                                 "rule": ""})
        tally["entries"] += count
        if zip_name:
            tally["zips"].append(zip_name)
        tally["names"] += [r.name for r in over[:3 - len(tally["names"])]]
        tally["rule"] = tally["rule"] or rule or (over[0].message.rsplit(": ", 1)[-1] if over else "")

    def rows(self):
        """(key, context, message) for each student whose upload passed a limit."""
        for key, tally in self.by_student.items():
            zipped = ", ".join(tally["zips"][:3]) + (" ..." if len(tally["zips"]) > 3 else "")
            parts = [f"{tally['entries']:,} zip entries" if tally["entries"] else "",
                     f"{len(tally['zips']):,} zip(s) inside it ({zipped})" if tally["zips"] else ""]
            names = ", ".join(repr(n) for n in tally["names"]) + (" ..." if tally["entries"] > 3 else "")
            yield key, tally["context"], (f"{' and '.join(p for p in parts if p)} of this upload were not unpacked"
                                          f"{f' ({names})' if tally['names'] else ''}: {tally['rule']}; the rest "
                                          "was read as usual")
