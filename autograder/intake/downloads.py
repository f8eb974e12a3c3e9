"""Downloads whose layout names their students: Gradescope, Blackboard Learn, D2L Brightspace, Teams, Drive.

Each reader is rebuilt from its vendor's documented layout or from public
tools that read it (their sources are named at each reader and in docs/lms.md),
and recognises the download by what only that vendor writes:

  Gradescope  `submission_metadata.yml`, at the top or in the export's
              `assignment_<id>_export/` folder (zip or unzipped): ids, names,
              emails, times and group members from it.
  Blackboard  `<assignment>_<username>_attempt_<stamp>[_<file>|.txt]` files:
              each attempt's receipt gives the name and the LMS's time.
  D2L         `<submission>-<file id> - <name> - <date> - <file>` files, or a
              folder per submission, beside D2L's `index.html`.
  Teams       a `Submitted files` folder (the class's *Student Work* library):
              `<Student Name>/<assignment>/<files>`.
  Drive       a folder download `<folder>-<YYYYMMDD>T<HHMMSS>Z-<part>.zip`:
              Classroom's copies are `<Student Name> - <template>`; any other
              notebook there is named by whoever uploaded it, so it keys nothing.

Which reader reads a level is decided by the level's structure as a whole
(structure.py): a name, file or folder one student chose never makes a
download another LMS's.  A reader returns False when the layout is not its
own, and the walker reads the folder as a plain one.  What a reader cannot
place is said, never dropped: a notebook that does not fit the layout is a row
of its own, keyed by its path.
"""

import re
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import PurePosixPath

import yaml

from . import assemble, files, identity, receipts, structure
from .assemble import NOTE, Found
from .files import IntakeError, UnsafeFile
from .structure import D2L_INDEX, GRADESCOPE_METADATA, TEAMS_SUBMITTED, TEAMS_WORKING
from .zips import display

_SAFE_KEY = re.compile(r"^[^/\\\x00]{1,200}$")


class Downloads:
    """The LMS readers of intake/collect.py's walker (a mixin: `self` is the walker)."""

    def download(self, root, label, name):
        """Read `root` (an unpacked zip named `name`, or a folder given) as an LMS download whose layout names
        its students; False when it is none of those."""
        entries = [(c, k) for c, k in files.entries(root) if not self.skipped(c)]
        metadata = self.gradescope_folder(root, entries)
        if metadata is not None:
            self.gradescope(root, metadata, label)
            return True
        if structure.blackboard_level(entries, name):
            self.blackboard(root, entries, label)
            return True
        if structure.d2l_level(entries, name):
            self.d2l(root, entries, label)
            return True
        if identity.DRIVE_ZIP.match(name or ""):      # the zip's own name: before any folder inside it is read
            self.drive(root, entries, label, name)
            return True
        submitted = self.teams_folder(root, entries, label)
        if submitted is not None:
            self.teams(root, submitted, label)
            return True
        return False

    def unfitting(self, root, label, path, kind, layout):
        """An entry that does not fit the layout its level has: each notebook in it is a row of its own, keyed
        by its path (never dropped, never anyone else's), and a warning names it."""
        relative = display_path(path, root)
        self.warn(f"{self.source(label, relative)}{'/' if kind == 'dir' else ''} does not fit {layout}'s layout, "
                  "so whose it is cannot be told: each notebook in it has its own row, keyed by its path")
        for child in (self.files_in(path) if kind == "dir" else [path] if kind == "file" else []):
            inner = display_path(child, root)
            self.owned(child, inner, identity.path_identity(self.source(label, inner)), label, inner)
        if kind not in ("dir", "file"):
            self.intake.ignored.append(self.source(label, relative) + " (a link, not followed)")

    # --- Gradescope ----------------------------------------------------------------------------------

    def gradescope_folder(self, root, entries):
        """The folder holding submission_metadata.yml: `root`, or the export's one folder inside it (Gradescope's
        zip holds `assignment_<id>_export/`, as gradescopeapi's export reader opens it)."""
        if structure.gradescope_level(entries) and files.regular(root / GRADESCOPE_METADATA):
            return root
        folders = [c for c, k in entries if k == "dir"]
        if len(folders) == 1 and not [c for c, k in entries if k == "file"]:
            inside = [(c, k) for c, k in files.entries(folders[0]) if not self.skipped(c)]
            if structure.gradescope_level(inside) and files.regular(folders[0] / GRADESCOPE_METADATA):
                return folders[0]
        return None

    def gradescope(self, root, folder, label):
        """A Gradescope "Export submissions": submission_metadata.yml names the submitters of each folder."""
        where = display(folder / GRADESCOPE_METADATA)
        try:
            text = files.read_capped(folder / GRADESCOPE_METADATA, limit=10 * 1024 * 1024).decode("utf-8")
            metadata = yaml.load(text, Loader=_PlainYaml) or {}     # noqa: S506 - a SafeLoader, aliases refused
        except (yaml.YAMLError, UnicodeDecodeError, UnsafeFile, RecursionError, ValueError, OverflowError) as error:
            # (ValueError, OverflowError: a date YAML reads as one that is none, `2026-19-01`, or out of range.)
            raise IntakeError(f"{where}: unreadable ({str(error)[:200]})") from None
        if not isinstance(metadata, dict):
            raise IntakeError(f"{where}: not a Gradescope submission list")
        listed = set()
        for key in sorted(metadata, key=str):
            entry = metadata[key] if isinstance(metadata[key], dict) else {}
            shown = display(str(key)) or "''"
            submitters = entry.get(":submitters") if isinstance(entry.get(":submitters"), list) else []
            people = [_gradescope_identity(s) for s in submitters if isinstance(s, dict)]
            people = [p for p in people if p] or [identity.Identity(f"gradescope:{shown}", shown, "gradescope")]
            created = entry.get(":created_at")
            submitted_at = iso(created) if isinstance(created, datetime) else (str(created)[:40] if created else None)
            submission = folder / str(key)
            inside = bool(_SAFE_KEY.match(str(key))) and str(key) not in (".", "..") and files.real_dir(submission)
            if inside:
                listed.add(submission.name)
            relative = display(submission.relative_to(root).as_posix()) if inside else shown
            for person in people:
                self.saw(person, self.source(label, relative), None)
                if not inside:
                    continue
                group = f"{submission}:{person.key}"
                for path in self.files_in(submission):
                    inner = display(path.relative_to(root).as_posix())
                    self.owned(path, inner, person, label, group, submitted_at, "Gradescope's created_at",
                               where=display(path.parent.relative_to(submission).as_posix()))
                if not any(f.group == group for f in self.found):
                    self.no_notebook(person, self.source(label, relative), submitted_at, "Gradescope's created_at",
                                     f"Gradescope submission {shown} has no notebook")
        for child, kind in files.entries(folder):
            if child.name not in listed and child.name != GRADESCOPE_METADATA and not self.skipped(child):
                self.warn(f"{self.source(label, display(child.relative_to(root).as_posix()))}"
                          f"{'/' if kind == 'dir' else ''} is not in {GRADESCOPE_METADATA}, so whose it is "
                          "cannot be told: its notebooks each get a row keyed by their path")
                for path in self.files_in(child) if kind == "dir" else [child] if kind == "file" else []:
                    inner = display(path.relative_to(root).as_posix())
                    self.owned(path, inner, identity.path_identity(self.source(label, inner)), label, inner)

    # --- Blackboard Learn ----------------------------------------------------------------------------

    def blackboard(self, root, entries, label):
        """Blackboard's *Assignment File Download*: every file of every attempt at the top, named
        `<assignment>_<username>_attempt_<stamp>...`, each attempt with its receipt (receipts.py)."""
        named = {c: identity.blackboard_name(c.name) for c, k in entries if k == "file"}
        attempts = defaultdict(lambda: {"files": [], "receipt": None})
        for child, parsed in sorted(named.items()):
            if parsed is None:
                self.unfitting(root, label, child, "file", "Blackboard")
                continue
            head, stamp, original, is_receipt = parsed
            attempt = attempts[(head, stamp)]
            if is_receipt:
                attempt["receipt"] = receipts.read_receipt(_read_or_empty(child, receipts.MAX_RECEIPT_BYTES))
            else:
                attempt["files"].append((child, original))
        for child, kind in entries:
            if kind != "file":
                self.unfitting(root, label, child, kind, "Blackboard")
        users = _blackboard_users(attempts)
        by_user = defaultdict(list)
        for key, attempt in attempts.items():
            by_user[users[key]].append((key[1], key, attempt))
        for username, mine in sorted(by_user.items()):
            mine.sort()
            name = next((a["receipt"].name for _, _, a in reversed(mine) if a["receipt"] and a["receipt"].name), "")
            who = identity.blackboard_identity(username, name)
            for number, (stamp, key, attempt) in enumerate(mine, 1):
                self.blackboard_attempt(root, label, who, key, attempt, number, len(mine))
            self.name_later_attempts_without_a_notebook(root, mine)

    def name_later_attempts_without_a_notebook(self, root, mine):
        """The attempt that counts when the later ones hold no notebook says which they were and when: "attempt 1
        of 2 ... (the last one counts)" read as if attempt 1 were the last."""
        groups = {f.group for f in self.found}
        numbered = [(number, f"{root}:blackboard:{key[0]}:{key[1]}", stamp)
                    for number, (stamp, key, _) in enumerate(mine, 1)]
        with_notebook = [n for n, group, _ in numbered if group in groups]
        if not with_notebook or with_notebook[-1] == len(mine):
            return
        counted = with_notebook[-1]
        later = [f"attempt {n} ({receipts.blackboard_stamp(stamp) or stamp})" for n, _, stamp in numbered[counted:]]
        note = (f"{NOTE}attempt {counted} of {len(mine)} in the Blackboard download counts: the later "
                f"{' and '.join(later)} held no notebook")
        group = numbered[counted - 1][1]
        for found in self.found:
            if found.group == group:
                found.notes = tuple(n for n in found.notes if "the last one counts" not in n) + (note,)

    def blackboard_attempt(self, root, label, who, key, attempt, number, count):
        head, stamp = key
        receipt = attempt["receipt"]
        when, how = (receipt.submitted_at, "Blackboard's receipt (Date Submitted)") if receipt and \
            receipt.submitted_at else (receipts.blackboard_stamp(stamp), "Blackboard's attempt time (its file names)")
        if receipt and receipt.zone_note:
            how = f"{how}; {receipt.zone_note}"
        notes = (f"{NOTE}attempt {number} of {count} in the Blackboard download (the last one counts)",) \
            if count > 1 else ()
        group = f"{root}:blackboard:{head}:{stamp}"
        where = f"{head}_attempt_{stamp}"
        for child, original in attempt["files"]:
            self.owned(child, _name(child), who, label, group, when, how, original=original, notes=notes,
                       where=where)
        self.saw(who, self.source(label, f"{where}.txt"), "online text" if receipt and receipt.text_entry else None)
        if not any(f.group == group for f in self.found):
            # As every layout says it (assemble.nothing_to_grade): text alone is no notebook, files none of
            # which is a notebook are the wrong type.
            files = [original for _, original in attempt["files"]]
            status, message = assemble.nothing_to_grade(files + (["online text"] if receipt and receipt.text_entry else []))
            self.no_notebook(who, self.source(label, f"{where}.txt"), when, how,
                             f"attempt {number} of {count}: {message}", notes=notes, status=status)

    # --- D2L Brightspace -----------------------------------------------------------------------------

    def d2l(self, root, entries, label):
        """D2L's *Download* of an assignment's submissions: a file (or a folder) per submission, named
        `<submission id>-<file id> - <name> - <date>`, and D2L's own `index.html`."""
        named = {c: identity.d2l_name(c.name) for c, k in entries if k in ("file", "dir") and c.name != D2L_INDEX}
        for child, kind in entries:
            if kind not in ("file", "dir"):
                self.unfitting(root, label, child, kind, "D2L")
        submissions = defaultdict(list)      # (name, submission id) -> [(path, kind, original)]
        dates = {}
        kinds = dict(entries)
        for child, parsed in sorted(named.items()):
            if parsed is None:
                self.unfitting(root, label, child, kinds[child], "D2L")
                continue
            submission, name, date, original = parsed
            submissions[(name, submission)].append((child, original))
            dates[(name, submission)] = receipts.d2l_time(date)
        if (root / D2L_INDEX).exists():
            self.intake.ignored.append(self.source(label, D2L_INDEX) + " (D2L's list of the download)")
        by_name = defaultdict(list)
        for (name, submission), found in submissions.items():
            by_name[name].append((dates[(name, submission)] or "", submission, found))
        for name, mine in sorted(by_name.items()):
            mine.sort()
            for number, (when, submission, found) in enumerate(mine, 1):
                # One key per name (D2L's download has no user id), each submission's own id kept: with a
                # roster on which two students share the name, roster/match.py keys each by it.
                who = identity.d2l_identity(name, submission)
                notes = (f"{NOTE}submission {number} of {len(mine)} in the D2L download (the last one counts)",) \
                    if len(mine) > 1 else ()
                how = "D2L's file name (its time zone, no offset)" if when else ""
                group = f"{root}:d2l:{submission}"
                for child, original in found:
                    if child.is_dir():
                        for path in self.files_in(child):
                            inner = display_path(path, root)
                            self.owned(path, inner, who, label, group, when or None, how, notes=notes,
                                       where=display_path(path.parent, child))
                    else:
                        self.owned(child, _name(child), who, label, group, when or None, how, original=original,
                                   notes=notes, where=submission)
                self.saw(who, self.source(label, _name(found[0][0])), None)
                if not any(f.group == group for f in self.found):
                    self.no_notebook(who, self.source(label, _name(found[0][0])), when or None, how,
                                     f"submission {number} of {len(mine)} has no notebook "
                                     f"({', '.join(sorted(o or _name(c) for c, o in found)[:3])})", notes=notes)

    # --- Microsoft Teams -----------------------------------------------------------------------------

    def teams_folder(self, root, entries, label=None):
        """The `Submitted files` folder of a Teams class's *Student Work* library: at the top, or one level down
        (the library's own folder, or the folder SharePoint's download wraps it in)."""
        level = root
        if not structure.teams_level(entries):
            folders = [c for c, k in entries if k == "dir"]
            if len(folders) != 1 or any(k == "file" for _, k in entries):
                return None
            level, entries = folders[0], [(c, k) for c, k in files.entries(folders[0]) if not self.skipped(c)]
            if not structure.teams_level(entries):
                return None
        if (level / TEAMS_WORKING).exists():
            self.intake.ignored.append(self.source(label, display_path(level / TEAMS_WORKING, root)) +
                                       "/ (Teams' working copies: not turned in)")
        return level / TEAMS_SUBMITTED

    def teams(self, root, submitted, label):
        """`Submitted files/<Student Name>/<assignment>/<files>`: Teams names each student's folder."""
        students = [(c, k) for c, k in files.entries(submitted) if not self.skipped(c)]
        folders = [c for c, k in students if k == "dir"]
        # The other way round (`<assignment>/<Student Name>/`) when the only folder is this assignment's.
        if len(folders) == 1 and _same_words(folders[0].name, self.options.assignment_id) and \
                [c for c, k in files.entries(folders[0]) if k == "dir"]:
            submitted, students = folders[0], [(c, k) for c, k in files.entries(folders[0]) if not self.skipped(c)]
        for child, kind in students:
            relative = display_path(child, root)
            if kind != "dir":
                self.unfitting(root, label, child, kind, "Teams")      # not in a student's folder
                continue
            who = identity.teams_identity(_name(child))
            assignments = [(c, k) for c, k in files.entries(child) if not self.skipped(c)]
            chosen = [c for c, k in assignments if k == "dir" and _same_words(c.name, self.options.assignment_id)]
            if len(chosen) == 1:
                others = [display_path(c, root) for c, _ in assignments if c != chosen[0]]
                self.intake.ignored += [self.source(label, o) + " (another assignment's)" for o in others]
                folder = chosen[0]
            else:
                folder = child
            self.saw(who, self.source(label, relative), None)
            group = f"{folder}:teams"
            for path in self.files_in(folder):
                self.owned(path, display_path(path, root), who, label, group,
                           where=display_path(path.parent, folder))
            if not any(f.group == group for f in self.found):
                self.no_notebook(who, self.source(label, relative), None, "", "no notebook in the Teams folder")

    # --- Google Drive --------------------------------------------------------------------------------

    def drive(self, root, entries, label, name):
        """A Drive folder download: Classroom's copies `<Student Name> - <template>` name their student; any
        other notebook keeps the name its uploader gave it, and is a row of its own, keyed by its path."""
        folders = [c for c, k in entries if k == "dir"]
        folder = folders[0] if len(folders) == 1 and not any(k == "file" for _, k in entries) else root
        found = [p for p in self.files_in(folder)]
        # The name the zip gave each file, not the one it was unpacked as: three entries all named `Dan Diaz -
        # n-queens.ipynb` are three claims on Dan's row (assemble.py splits them), whichever came first.
        copies = {p: identity.CLASSROOM_COPY.match(self.entry_name(p)) for p in found if p.parent == folder}
        titles = defaultdict(int)
        for match in copies.values():
            if match:
                titles[match.group("original")] += 1
        templates = {t for t, n in titles.items() if n > 1 or t == self.options.notebook_name}
        unnamed, named = [], []
        for path in found:
            match = copies.get(path)
            inner = display_path(path, root)
            if match and match.group("original") in templates:
                who = identity.drive_identity(match.group("name").strip())
                named.append(inner)
                # One group per name: every file claiming it is put together, and split (assemble.py).
                self.owned(path, inner, who, label, f"{folder}:drive:{who.key}", original=match.group("original"))
            elif path.suffix.lower() in (".ipynb", ".py", ".zip") or structure.looks_like_notebook(path):
                unnamed.append(inner)
                self.owned(path, inner, identity.path_identity(self.source(label, inner)), label, inner)
            else:
                self.intake.ignored.append(self.source(label, inner))
        if unnamed:
            self.warn(f"{name} is a Google Drive folder download: {len(unnamed)} file(s) in it carry no student's "
                      f"name ({', '.join(unnamed[:4])}{' ...' if len(unnamed) > 4 else ''}); Drive keeps the name "
                      "an uploader gave a file, so each has its own row, keyed by its path")
        if named:
            # Nothing in a Drive download says who made a file: a student's own upload can carry a classmate's
            # name.  Two files claiming one name are split (assemble.py); one alone is keyed by it, and said.
            self.warn(f"{name}: {len(named)} notebook(s) are keyed by the student's name their file name carries, "
                      "as Classroom names its copies (<Student Name> - <title>); Drive keeps any name an "
                      "uploader gives a file, so check them against Classroom's list of who turned in "
                      f"({', '.join(named[:4])}{' ...' if len(named) > 4 else ''})")
        if not found:
            self.warn(f"{name} is a Google Drive folder download with no file in it")


class _PlainYaml(yaml.SafeLoader):
    """YAML without anchors and aliases: Gradescope writes none, and a few aliases can stand for billions of
    nodes (the "billion laughs") that the grader would then walk."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("it uses YAML aliases, which Gradescope never writes")
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        """A key twice in one mapping is refused: YAML would keep the last silently, and a submission listed
        twice lost its first submitters without a word.  Gradescope writes each key once."""
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    twice = key in seen
                except TypeError:
                    continue                  # an unhashable key: the constructor below refuses it
                if twice:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {display(str(key))[:80]!r} appears twice in one mapping, which "
                        "Gradescope never writes: which of the two is meant cannot be told, and YAML would drop the "
                        "first without a word", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node):
        """An integer of at most 100 characters (an id, a count): a longer one's text is refused before Python
        reads it, as no number Gradescope writes is so long (and `str` of a 5,000-digit one raises)."""
        if len(str(node.value)) > 100:
            raise yaml.constructor.ConstructorError(None, None, "it holds an integer more than 100 characters long",
                                                    node.start_mark)
        return super().construct_yaml_int(node)


_PlainYaml.add_constructor("tag:yaml.org,2002:int", _PlainYaml.construct_yaml_int)


def _blackboard_users(attempts):
    """{attempt key: username}: the receipt's `(username)` where the file names end with it, else what
    follows the assignment's name, which every file of the download starts with."""
    users, heads = {}, {key[0] for key in attempts}
    for key, attempt in attempts.items():
        receipt = attempt["receipt"]
        if receipt and receipt.username and key[0].endswith("_" + receipt.username):
            users[key] = receipt.username
    prefixes = {key[0][:-len(user) - 1] for key, user in users.items()}
    if len(prefixes) != 1:
        common = _common_prefix(sorted(heads)) if len(heads) > 1 else ""
        prefixes = {common[:common.rfind("_")]} if "_" in common else set()
    assignment = next(iter(prefixes)) if len(prefixes) == 1 else ""
    for key in attempts:
        if key not in users:
            head = key[0]
            users[key] = head[len(assignment) + 1:] if assignment and head.startswith(assignment + "_") \
                else head.rsplit("_", 1)[-1]
    return users


def _common_prefix(texts):
    first, last = texts[0], texts[-1]
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    return first[:size]


def _gradescope_identity(submitter):
    name = display(str(submitter.get(":name") or "").strip())[:200]
    email = display(str(submitter.get(":email") or "").strip())[:200]
    sid = display(str(submitter.get(":sid") or "").strip())[:100]
    key = sid or email or name
    if not key:
        return None
    return identity.Identity(f"gradescope:{key}", name or email or sid, "gradescope", sid, email=email)


def _same_words(text, other):
    words = lambda value: re.findall(r"[a-z0-9]+", value.lower())  # noqa: E731
    return words(text) == words(other)


def _name(path):
    return display(path.name)


def display_path(path, root):
    return display(path.relative_to(root).as_posix())


def _read_or_empty(path, limit):
    try:
        return files.read_capped(path, limit=limit)
    except UnsafeFile:
        return b""


def iso(moment):
    """ISO 8601; a time with a zone is given in UTC, a time without one is kept as it is."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.isoformat()


__all__ = ["Downloads", "Found", "GRADESCOPE_METADATA", "PurePosixPath"]
