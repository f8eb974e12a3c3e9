"""Whose hand-in is it, on the roster?

Identity comes only from what the LMS wrote.  A hand-in's key comes from the
LMS's download (intake/identity.py).  It is matched to a roster student by, in
this order:
  1. the instructor's own placement (`autograder roster place`, course.db's placements): a hand-in the roster
     could not place, given to one student, to a team's members, or to nobody on the roster;
  2. the same key (Canvas `canvas:<user id>`, Gradescope `gradescope:<sid>`, Blackboard
     `blackboard:<username>`), where an LMS made the key;
  3. an alias the LMS gave (Moodle's per-assignment participant id, from its grading worksheet);
  4. the LMS's own id (a Canvas user id, a Gradescope SID) against the roster's LMS or SIS id, a
     Blackboard username against the roster's login, and an email the LMS wrote (Gradescope's metadata,
     Moodle's worksheet);
  5. for a GitHub Classroom clone, the roster's GitHub username, wherever it sits in the repository's name
     (`cs-principles-n-queens-alice`, `n-queens-puzzle-alice`: the longest username at its end);
  6. the name an LMS wrote (Moodle's and D2L's "Jane Smith", Teams' folder, Google Classroom's copy), only
     when exactly one roster student has it: the match is said, never silent.
A name a student or whoever saved a file chose (a file's, a folder's, a zip's, a repository's) is never
compared with a roster name, login, email or id: `cking.ipynb` is not Carol King's because her login is
`cking`, and `Alice Smith.ipynb` is not Alice Smith's because it is named so.

An id is checked against the name the LMS wrote beside it.  A Canvas group assignment names its file after
the group under its representative's id (content_zipper.rb takes the group's name as the representative's
sortable name): the hand-in is the representative's, and may be other students' too.  A Moodle team
submission's folder carries the group's id, which is never a participant's (downloader.php,
get_student_prefix): it is placed on the group's members when the roster lists the groups, else nowhere.

A hand-in the roster cannot place keeps its own key and row and carries why (`Decision.unplaced`): while
one is unplaced, nobody on the roster can be called `missing` (gradebook/store.py makes them `unresolved`),
since it may be theirs.  A hand-in keyed by the roster's own LMS id (a Canvas user id with a Canvas roster)
that matches nobody is someone else's, surely: it is named, and leaves every roster student as they are.
"""

import re
import unicodedata
from dataclasses import dataclass, field

from ..intake.identity import canvas_name

# Kinds of hand-in whose key and id an LMS (or `gh classroom`) made; a pattern is the instructor's own rule.
LMS_MADE = {"canvas", "moodle", "gradescope", "blackboard", "d2l", "drive", "teams", "classroom", "pattern"}
# Kinds whose `lms_id` is the LMS's own id of the student (not a name anyone chose).
LMS_IDS = {"canvas", "moodle", "gradescope", "blackboard", "pattern"}
# Kinds whose name the LMS wrote (Moodle's full name, D2L's, Teams' folder, Classroom's copy in Drive,
# Gradescope's metadata, Canvas's and Blackboard's receipts): only these are ever matched by name.
LMS_NAMED = {"canvas", "moodle", "gradescope", "blackboard", "d2l", "drive", "teams"}
# Key prefixes an LMS gives each person once: a hand-in keyed so that matches no roster student of the same
# LMS is someone else's (a roster made from that LMS has every student under such a key).
_PERSONAL_KEYS = {"canvas": re.compile(r"^canvas:\d+$"), "blackboard": re.compile(r"^blackboard:.+$"),
                  "gradescope": re.compile(r"^gradescope:.+$")}
# What Moodle writes for the name under blind marking (get_string('participant', 'mod_assign')).
_BLIND_NAME = "participant"


@dataclass
class Decision:
    """Whose one hand-in is."""
    students: list = field(default_factory=list)    # roster Students it is placed on (a team: each member)
    unplaced: str = ""      # why it may be a roster student's it is not placed on ("" when it is not)
    key: str = ""           # its own new key, when it keeps its own row under another key (a D2L namesake's)
    placed_by: str = ""     # the instructor's placement that decided it, for people


@dataclass
class Matching:
    decisions: list = field(default_factory=list)     # a Decision per hand-in, in the hand-ins' order
    keys: list = field(default_factory=list)          # each hand-in's key as intake gave it, in the same order
    by_name: list = field(default_factory=list)       # (hand-in name, Student): matched on the name alone
    unmatched: list = field(default_factory=list)     # hand-ins (their names) that match no roster student
    ambiguous: list = field(default_factory=list)     # (hand-in name, [Student]) the name fits several
    name_taken: list = field(default_factory=list)    # (hand-in name, Student) another hand-in is surely theirs
    repositories: list = field(default_factory=list)  # Classroom clones no roster GitHub username fits
    unplaced: list = field(default_factory=list)      # (hand-in as shown, its key, why) the roster cannot place
    placed: list = field(default_factory=list)        # (hand-in as shown, Decision) the instructor's placements
    others: list = field(default_factory=list)        # (hand-in as shown, its name, Student): an id beside a name
                                                      # not the student's

    @property
    def matched(self):
        """{hand-in key: Student} of the hand-ins placed on exactly one roster student."""
        return {key: decision.students[0] for key, decision in zip(self.keys, self.decisions)
                if len(decision.students) == 1}

    def notes(self, assignment_id="ID"):
        notes = []
        if self.placed:
            notes.append("placed as the teaching team said (`autograder roster place`): " + "; ".join(
                f"{shown} → {d.placed_by}" for shown, d in self.placed[:8]) + (" ..." if len(self.placed) > 8
                                                                               else ""))
        if self.by_name:
            notes.append("matched to the roster by the name the LMS wrote (no id in the download): "
                         + ", ".join(f"{name} → {student.who}" for name, student in self.by_name[:8])
                         + (" ..." if len(self.by_name) > 8 else ""))
        if self.name_taken:
            notes.append("these hand-ins' names fit a roster student whose hand-in came in under their id, so "
                         "they keep their own rows (a name never merges two hand-ins): "
                         + "; ".join(f"{name} ({student.who})" for name, student in self.name_taken[:8]))
        if self.others:
            notes.append("warning: " + "; ".join(f"{shown} is {s.who}'s by its id, but names {name!r}"
                                                 for shown, name, s in self.others[:6])
                         + (" ..." if len(self.others) > 6 else "") + ": a group's hand-in (the LMS names "
                         "its file after the group, under one member's id), whose other members the download "
                         "does not say")
        if self.repositories:
            notes.append(f"warning: {len(self.repositories)} GitHub Classroom repositor(ies) match no GitHub username "
                         "on the roster, so each keeps its own row under its own name (`not on the roster`), never "
                         f"a guessed part of it: {', '.join(sorted(set(self.repositories))[:8])}"
                         + (" ..." if len(set(self.repositories)) > 8 else ""))
        if self.unplaced:
            notes.append(f"warning: {len(self.unplaced)} hand-in(s) the roster cannot place, so nobody without a "
                         "hand-in is `missing` (they are `unresolved`, blank in every file, and `release` and "
                         f"`gradebook` refuse) until each is placed with `autograder roster place --assignment "
                         f"{assignment_id} KEY --student WHO` (or `--nobody`): " + by_reason(self.unplaced))
        surely = [name for name in self.unmatched if name not in {shown for shown, _, _ in self.unplaced}]
        if surely:
            notes.append(f"{len(surely)} hand-in(s) match nobody on the roster and keep their own rows "
                         f"(marked `not on the roster`): {', '.join(surely[:8])}" + (" ..." if len(surely) > 8
                                                                                      else ""))
        return notes


def by_reason(unplaced, limit=8):
    """[(shown, key, why)] as one text: the keys under each reason, so a class of anonymous hand-ins is one line."""
    reasons = {}
    for shown, _, why in unplaced:
        reasons.setdefault(why, []).append(shown)
    return "; ".join(f"{', '.join(shown[:limit])}{f' and {len(shown) - limit} more' if len(shown) > limit else ''}: "
                     f"{why}" for why, shown in reasons.items())


def _shown(handin):
    return handin.name if handin.name == handin.student else f"{handin.name} ({handin.student})"


def folded(name):
    """A name as Canvas writes it in a file name: letters and digits only, lower case, no accents."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", "", plain.lower())


def _words(name):
    """A full name's words, accents and case aside, in any order (Moodle's fullname format may put the last
    name first)."""
    plain = unicodedata.normalize("NFKD", str(name or "")).encode("ascii", "ignore").decode("ascii")
    return sorted(re.findall(r"[a-z0-9]+", plain.lower()))


def match(handins, students, aliases, placements=None):
    """Match each hand-in (intake.collect.Handin) to roster Students; returns a Matching.

    `placements`: {hand-in key: [student keys]} the teaching team decided (`roster place`; [] for nobody on
    the roster), for this assignment."""
    result = Matching()
    placements = placements or {}
    index = _index(students, aliases)
    roster = [s for s in students if s.on_roster and not s.test_student]
    github = {s.login.casefold(): s for s in students if s.lms == "classroom" and s.login}
    by_key = {s.key: s for s in students}
    hows = []
    for handin in handins:
        decision, how = _decide(handin, index, github, roster, result)
        if handin.student in placements:
            decision, how = _placed(handin, decision, placements[handin.student], by_key, result), "placed"
        result.decisions.append(decision)
        result.keys.append(handin.student)
        hows.append(how)
    _no_merging_by_name(result, hows, handins)
    taken = {name for name, _ in result.name_taken}
    for handin, decision in zip(handins, result.decisions):
        if decision.unplaced:
            result.unplaced.append((_shown(handin), handin.student, decision.unplaced))
        if decision.students or decision.placed_by or handin.name in taken:
            continue
        if getattr(handin, "lms", "") == "classroom" and getattr(handin, "repository", ""):
            result.repositories.append(handin.repository)
        elif not any(name == handin.name for name, _ in result.ambiguous):
            result.unmatched.append(_shown(handin))
    return result


def d2l_namesakes_without_roster(handins):
    """Without a class list: D2L's download names a student only by name, so several submissions under one name
    are one student's resubmissions or two namesakes' work, which nothing in it tells apart.  Never merged into
    one row (the last would count for both): each keeps a row of its own, under D2L's submission id, unplaced,
    so no number is released for it until the class list says whose it is.  Returns [(hand-in, why)] to re-key
    (the hand-ins are left as they are)."""
    uploads = {}
    for handin in handins:
        if getattr(handin, "lms", "") == "d2l" and getattr(handin, "upload", ""):
            uploads.setdefault(handin.student, set()).add(handin.upload)
    found = []
    for handin in handins:
        mine = uploads.get(handin.student, ())
        if len(mine) > 1 and handin.upload in mine:
            found.append((handin, f"{len(mine)} D2L submissions are under the name {handin.name!r}, and D2L's "
                                  "download names no user: one student's resubmissions, or students of one name? "
                                  "Import the class list (`autograder roster import`) and grade again"))
    return found


def _index(students, aliases):
    index = {}
    for student in students:
        for kind, value in (("key", student.key), ("id", student.lms_id), ("id", student.sis_id),
                            ("login", student.login.casefold()), ("email", student.email.casefold())):
            if value:
                index.setdefault((kind, value), []).append(student)
        for name in {student.name, student.sortable_name, _last_first(student.name)}:
            if folded(name):
                index.setdefault(("name", folded(name)), []).append(student)
    for alias, key in aliases.items():
        index.setdefault(("alias", alias), []).extend(s for s in students if s.key == key)
    return index


def _decide(handin, index, github, roster, result):
    """(Decision, how it matched) for one hand-in, by what the LMS wrote."""
    kind_of = getattr(handin, "lms", "")
    made = kind_of in LMS_MADE or ":" in handin.student
    tries = [("key", handin.student if made else ""), ("alias", handin.student),
             ("id", handin.lms_id if kind_of in LMS_IDS else ""),
             ("login", handin.lms_id.casefold() if kind_of == "blackboard" else ""),  # Blackboard's own
             ("email", handin.email.casefold()),
             ("github", getattr(handin, "repository", "") if kind_of == "classroom" else ""),
             ("name", folded(handin.name) if kind_of in LMS_NAMED else "")]
    for kind, value in tries:
        if not value:
            continue
        candidates = _by_github(value, github) if kind == "github" else _unique(index.get((kind, value), ()))
        if len(candidates) == 1:
            return _checked(handin, candidates[0], kind, roster, result), kind
        if len(candidates) > 1 and kind == "name":
            result.ambiguous.append((handin.name, candidates))
            return _namesakes(handin, candidates), ""
    return Decision(unplaced=_why_unplaced(handin, roster)), ""


def _checked(handin, student, how, roster, result):
    """The id the LMS wrote, held against the name it wrote beside it."""
    kind_of = getattr(handin, "lms", "")
    if how == "name":
        result.by_name.append((handin.name, student))
        return Decision([student])
    if kind_of == "canvas" and handin.name and not handin.student.startswith("canvas:anon_") and \
            handin.name not in {canvas_name(student.sortable_name), canvas_name(student.name),
                                canvas_name(_last_first(student.name))}:
        # The file names someone else than the roster's student of that id: a group assignment's file (the
        # group's name, under its representative's id), or a name changed since the roster was exported.
        result.others.append((_shown(handin), handin.name, student))
        return Decision([student], unplaced=f"a Canvas group's hand-in, or a name changed since? Canvas names it "
                                            f"{handin.name!r} under the id of {student.who}, who may be one "
                                            "member of a group (which others are in it, the download does not "
                                            "say), or was renamed in the class list: if it is theirs alone, "
                                            "place it on them")
    if kind_of == "moodle" and how in ("alias", "key", "id") and _words(handin.name) not in (
            _words(student.name), [_BLIND_NAME], []):
        return _moodle_team(handin, student, roster)
    return Decision([student])


def _moodle_team(handin, student, roster):
    """A Moodle folder whose id is a participant's but whose name is not theirs: a team submission (the
    folder is the group's, `<group name>_<group id>`), placed on the group's members when the roster's
    Moodle groups list them."""
    group = _words(handin.name)
    members = [s for s in roster if s.lms == "moodle" and any(_words(g) == group for g in _groups(s))]
    if members:
        return Decision(members)
    return Decision(unplaced=f"Moodle's folder names {handin.name!r} under id {handin.lms_id}, which the grading "
                             f"worksheet gives to {student.who}: a team submission's folder carries its group's "
                             "id, never a participant's, and no roster student is listed in that group (import "
                             "Moodle's participants list with its Groups column)")


def _groups(student):
    """A Moodle student's groups, as the participants list writes them ("Team A, Team B"; "No groups")."""
    return [g.strip() for g in (student.section or "").split(",") if g.strip() and g.strip() != "No groups"]


def _namesakes(handin, candidates):
    """A name several roster students share: never matched by it.  D2L names students only by name, so two
    namesakes' submissions are told apart by D2L's submission id: each keeps a row of its own."""
    who = ", ".join(s.who for s in candidates[:4])
    why = f"{len(candidates)} roster students are called {handin.name!r} ({who}): whose it is, the LMS's name alone " \
          "cannot tell"
    upload = getattr(handin, "upload", "")
    if getattr(handin, "lms", "") == "d2l" and upload:
        return Decision(unplaced=why, key=f"d2l:submission:{upload}")
    return Decision(unplaced=why)


def _why_unplaced(handin, roster):
    """Why a hand-in that matches nobody may still be a roster student's; "" when it surely is nobody's on the
    roster (the roster's own LMS gave it an id no roster student has)."""
    kind_of = getattr(handin, "lms", "")
    personal = _PERSONAL_KEYS.get(kind_of)
    known = kind_of != "gradescope" or handin.lms_id or handin.email     # Gradescope keys a nameless submitter
    if personal and known and personal.match(handin.student) and roster and \
            all(personal.match(s.key) for s in roster):                    # by the name alone
        return ""
    if handin.student.startswith("canvas:anon_"):
        return ("Canvas anonymous grading: the download names no student, only anon_<id> (download the "
                "submissions again once Canvas shows the students' names, or place each)")
    reasons = {
        "classroom": "a GitHub Classroom repository whose name holds no roster GitHub username (a team's "
                     "repository, or a user the roster does not list)",
        "path": "whose it is, its place in the download cannot tell",
        "file": "a file is named by whoever saved it, and a name decides no grade",
        "folder": "a folder is named by whoever made it, and a name decides no grade",
        "zip": "a zip is named by whoever saved it, and a name decides no grade",
        "pattern": "the name --student-pattern found in its path is no roster student's id",
        "d2l": f"D2L names students only by name, and no roster student is called {handin.name!r}",
        "drive": f"no roster student is called {handin.name!r}",
        "teams": f"no roster student is called {handin.name!r}",
    }
    if kind_of == "moodle":
        if not handin.lms_id:
            return (f"Moodle's {handin.name!r} folder of a team submission: the students in no group, whom the "
                    "download does not name")
        return (f"Moodle participant {handin.lms_id} ({handin.name!r}): no alias from the assignment's grading "
                "worksheet (`roster import` it) and no roster student of that name")
    return reasons.get(kind_of, "no roster student has its id, email or name")


def _placed(handin, decision, keys, by_key, result):
    """The teaching team's placement of a hand-in the roster could not place (or of a group's, whose other
    members it names): it is theirs, or, with no student, nobody's on the roster."""
    named = [by_key[key] for key in keys if key in by_key]
    students = list({s.key: s for s in [*decision.students, *named]}.values())
    placed = Decision(students, "", "" if students else decision.key,
                      ", ".join(s.who for s in named) or "nobody on the roster")
    result.placed.append((_shown(handin), placed))
    return placed


def _no_merging_by_name(result, hows, handins):
    """A name alone never merges two hand-ins' rows.  When several hand-ins (different keys) reach one
    roster student and any of them only by name, the name-matched ones give the student up and keep
    their own rows, unplaced: a hand-in matched by id or email is surely that student's, a name only perhaps
    (two Alice Smiths, or a second hand-in of hers that came some other way)."""
    claims = {}
    for number, decision in enumerate(result.decisions):
        if len(decision.students) == 1 and hows[number] != "placed":
            claims.setdefault(decision.students[0].key, []).append(number)
    for numbers in claims.values():
        if len({handins[n].student for n in numbers}) < 2:
            continue
        for number in numbers:
            if hows[number] != "name":
                continue
            handin, decision = handins[number], result.decisions[number]
            student = decision.students[0]
            decision.students = []
            decision.unplaced = (f"its name fits {student.who}, whose hand-in came in another way: a name never "
                                 "merges two hand-ins")
            if (handin.name, student) in result.by_name:
                result.by_name.remove((handin.name, student))
            result.name_taken.append((handin.name, student))


def _by_github(repository, github):
    """The roster student whose GitHub username the repository's name ends with (Classroom names a clone
    `<assignment slug>-<username>`), the longest such username winning; else one that sits anywhere in it
    as whole `-`-separated words.  [] when none does, or two fit equally."""
    name = repository.casefold()
    ending = sorted((len(u), u) for u in github if name == u or name.endswith("-" + u))
    if ending:
        longest = [u for size, u in ending if size == ending[-1][0]]
        return [github[longest[0]]] if len(longest) == 1 else []
    inside = [u for u in github if f"-{u}-" in f"-{name}-"]
    return [github[inside[0]]] if len(inside) == 1 else []


def _unique(students):
    return list({s.key: s for s in students}.values())


def _last_first(name):
    parts = name.split()
    return " ".join(parts[-1:] + parts[:-1]) if len(parts) > 1 else name
