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

    def __init__(self, ledgers, whole_or_nothing):
        self.ledgers = ledgers
        # An LMS's download is the instructor's: more entries than the class may read refuses it whole, as it
        # says.  A student's zip is unpacked as far as its upload's limits go, and the rest is named.
        self.whole_or_nothing = whole_or_nothing

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
        """An LMS's download, or a zip the instructor named: only the class's ledger."""
        return Allowance([self.whole], whole_or_nothing=True)

    def upload(self, key):
        """A zip of the student `key`: theirs and the class's."""
        ledger = self.uploads.setdefault(key, Ledger("one upload", self.upload_limits))
        return Allowance([ledger, self.whole], whole_or_nothing=False)


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
