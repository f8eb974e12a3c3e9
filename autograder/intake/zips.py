"""Unpack an LMS zip inside the output folder, refusing what is unsafe and naming nothing a student chose as is.

An entry whose name is absolute, climbs out with `..`, is a symbolic link or
is larger than the limits is not written; it is reported, so its student
still gets a row.  An entry name is data: control characters become `_`,
a component too long for the file system is shortened (with a hash, so two
long names stay two files), and a name that says it is UTF-8 but is not is
repaired in a private copy of the archive instead of making the whole zip
unreadable.  Only `/` separates folders (APPNOTE 4.4.17), but in an entry
marked as made by MS-DOS (Windows PowerShell's Compress-Archive) whose name
holds no `/`: there a backslash is the separator, as Info-ZIP's unzip and
libarchive read it.  Anywhere else a backslash is part of a name.  Entry times are not
kept: an LMS writes every entry with the time of the download, which says
nothing about when a student handed in.
"""

import hashlib
import os
import re
import shutil
import stat
import struct
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .budget import UnpackBudget, amount

MAX_ENTRY_BYTES = 50 * 1024 * 1024
MAX_DEPTH = 32                  # folders inside an archive; LMS downloads use one or two
MAX_COMPONENT_BYTES = 200       # below the file system's 255, leaving room for a hash suffix
_UTF8_FLAG = 0x800
_ESCAPED_BYTES = re.compile("[\udc80-\udcff]")


class UnusableZip(Exception):
    """The archive as a whole cannot be read; `status` is the gradebook's short reason."""

    def __init__(self, message, status="invalid-zip"):
        super().__init__(message)
        self.status = status


@dataclass
class Refused:
    name: str           # the entry's name, made printable
    status: str
    message: str


@dataclass
class Unpacked:
    files: dict         # relative path on disk -> the entry's name in the archive (printable)
    refused: list       # Refused
    renamed: dict       # relative path on disk -> the entry's name, where the two differ
    windows: int = 0    # entries made by MS-DOS whose `\` was read as a folder separator
    over: list = field(default_factory=list)   # Refused: entries past the upload's or the class's limits
    unread: int = 0     # entries not even looked at: the limit of entries read was reached first


def unpack(archive, target, scratch, allowance=None):
    """Extract `archive` into `target`; `scratch` is a private folder for a repaired copy if one is needed.

    `allowance` (budget.py) is what this archive may still cost; what is past it is not unpacked, and is in
    `over` (an LMS download's entries one by one, each its student's row) or counted in `unread`."""
    allowance = allowance or UnpackBudget().download()
    try:
        return _unpack(archive, target, scratch, allowance)
    except UnusableZip:
        raise
    except Exception as error:  # noqa: BLE001 - whatever else a zip's bytes make fail is that zip's row
        raise UnusableZip(f"it could not be read ({type(error).__name__}: {str(error)[:200]})") from None


def _unpack(archive, target, scratch, allowance):
    bundle = _open(archive, scratch)
    files, refused, renamed, over, unread = {}, [], {}, [], 0
    with bundle:
        entries = bundle.infolist()
        if allowance.whole_or_nothing and len(entries) > allowance.left("entries"):
            raise UnusableZip(f"it has {len(entries):,} entries; {allowance.rule('entries')}", "too-large")
        taken, made, windows = _Taken(), set(), 0
        for index, entry in enumerate(entries):
            if allowance.left("entries") <= 0:
                unread = len(entries) - index
                break
            allowance.spend("entries", 1)
            if not entry.filename:         # (zipfile's own is_dir fails on it: IndexError)
                refused.append(Refused("(no name)", "unsafe-path", "a zip entry with no name; it was not "
                                                                   "unpacked"))
                continue
            name = _entry_name(entry)
            if entry.is_dir() or name.endswith("/"):
                continue
            windows += name != _entry_name(entry, separators=False)
            shown = printable(name)
            problem = _problem(entry, name, shown)
            relative = None if problem else _disk_path(name, taken)
            if relative is None and problem is None:
                problem = ("unsafe-path", f"the zip entry {shown!r} is nested too deeply; it was not unpacked")
            if problem:
                refused.append(Refused(shown, *problem))
                continue
            folders = _new_folders(relative, made)
            limit = _over(allowance, entry, len(folders) + 1)
            if limit:
                taken.discard(relative)
                over.append(Refused(shown, "too-large", f"{shown!r} was not unpacked: {limit}"))
                continue
            destination = target.joinpath(*PurePosixPath(relative).parts)
            try:
                destination.parent.mkdir(parents=True, exist_ok=True)
                made.update(folders)
                allowance.spend("files", len(folders) + 1)
                written = _copy_capped(bundle, entry, destination, min(MAX_ENTRY_BYTES, allowance.left("bytes")))
            except Exception as error:  # noqa: BLE001 - BadZipFile, zlib.error, OSError ...: this entry's row
                refused.append(Refused(shown, "invalid-zip", f"this entry could not be unpacked: "
                                                             f"{str(error)[:200] or type(error).__name__}"))
                destination.unlink(missing_ok=True)
                continue
            allowance.spend("bytes", written)
            files[relative] = shown
            if relative != shown:
                renamed[relative] = shown
    return Unpacked(files, refused, renamed, windows, over, unread)


def _new_folders(relative, made):
    """The folders a file at `relative` makes that earlier files of this archive did not."""
    parents = PurePosixPath(relative).parents
    return [str(p) for p in parents if str(p) != "." and str(p) not in made]


def _over(allowance, entry, files):
    """Which limit unpacking `entry` (making `files` files and folders) would pass, in words; None if none."""
    if allowance.left("files") < files:
        return allowance.rule("files")
    if entry.file_size > allowance.left("bytes"):
        return f"{allowance.rule('bytes')} ({amount('bytes', entry.file_size)} more stated)" \
            if entry.file_size >= 2 ** 20 else allowance.rule("bytes")
    return None


def _entry_name(entry, separators=True):
    """The entry's name; one without the UTF-8 flag whose bytes are UTF-8 anyway (Windows, older tools) as such.
    With `separators`, an entry made by MS-DOS (create_system 0) whose name holds a backslash and no `/` has
    its backslashes as folder separators, as Info-ZIP's unzip and libarchive read it: Windows PowerShell's
    Compress-Archive writes `n-queens submissions` + backslash + `smithalice_1001_...` so.  A zip made anywhere
    else keeps a backslash as a character of the name."""
    name = entry.filename
    if not entry.flag_bits & _UTF8_FLAG:
        try:
            name = entry.filename.encode("cp437").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            pass
    if separators and entry.create_system == 0 and "\\" in name and "/" not in name:
        name = name.replace("\\", "/")
    return name


def _open(archive, scratch):
    try:
        return zipfile.ZipFile(archive)
    except UnicodeDecodeError:
        pass                    # an entry flagged UTF-8 whose name is not: repair a copy (below)
    except Exception as error:  # noqa: BLE001 - BadZipFile, struct.error, IndexError ...: the zip's own row
        raise UnusableZip(f"it is not a usable zip file ({str(error)[:200] or type(error).__name__})") from None
    copy = scratch / f"repaired-{hashlib.sha256(str(archive).encode()).hexdigest()[:12]}.zip"
    try:
        shutil.copyfile(archive, copy)
        _repair_names(copy)
        return zipfile.ZipFile(copy)
    except Exception as error:  # noqa: BLE001 - as above
        raise UnusableZip(f"it is not a usable zip file ({str(error)[:200] or type(error).__name__})") from None


def _repair_names(path):
    """In place: each name flagged UTF-8 that is not valid UTF-8 gets `_` for its bad bytes (same length).

    Both copies of the name change, the central directory's and the entry's
    local header's, so zipfile reads the archive and every entry as usual.
    """
    with open(path, "r+b") as handle:
        end = zipfile._EndRecData(handle)
        if not end:
            raise zipfile.BadZipFile("no end of central directory")
        size, offset = end[zipfile._ECD_SIZE], end[zipfile._ECD_OFFSET]
        concat = end[zipfile._ECD_LOCATION] - size - offset
        if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:
            concat -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator
        position = offset + concat
        stop = position + size
        while position < stop:
            handle.seek(position)
            header = handle.read(zipfile.sizeCentralDir)
            fields = struct.unpack(zipfile.structCentralDir, header)
            name_length = fields[zipfile._CD_FILENAME_LENGTH]
            extra_length, comment_length = fields[zipfile._CD_EXTRA_FIELD_LENGTH], fields[zipfile._CD_COMMENT_LENGTH]
            name = handle.read(name_length)
            extra = handle.read(extra_length)
            if fields[zipfile._CD_FLAG_BITS] & _UTF8_FLAG and not _is_utf8(name):
                fixed = _mend(name)
                handle.seek(position + zipfile.sizeCentralDir)
                handle.write(fixed)
                local = _local_header_offset(fields, extra) + concat
                handle.seek(local + zipfile.sizeFileHeader)
                if handle.read(name_length) == name:
                    handle.seek(local + zipfile.sizeFileHeader)
                    handle.write(fixed)
            position += zipfile.sizeCentralDir + name_length + extra_length + comment_length


def _local_header_offset(fields, extra):
    offset = fields[zipfile._CD_LOCAL_HEADER_OFFSET]
    if offset != 0xFFFFFFFF:
        return offset
    # ZIP64: the real offset is in the extra field 0x0001, after the sizes that overflowed.
    index = 0
    while index + 4 <= len(extra):
        tag, length = struct.unpack("<HH", extra[index:index + 4])
        if tag == 1:
            values = extra[index + 4:index + 4 + length]
            skip = 8 * sum(1 for f in (zipfile._CD_UNCOMPRESSED_SIZE, zipfile._CD_COMPRESSED_SIZE)
                           if fields[f] == 0xFFFFFFFF)
            return struct.unpack("<Q", values[skip:skip + 8])[0]
        index += 4 + length
    raise zipfile.BadZipFile("a ZIP64 entry without its offset")


def _is_utf8(data):
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _mend(data):
    """Same length: every byte that is not part of valid UTF-8 becomes `_` (in one pass: decoding the rest again
    after each bad byte was quadratic in a name of them)."""
    text = data.decode("utf-8", "surrogateescape")      # each bad byte: one lone surrogate
    return _ESCAPED_BYTES.sub("_", text).encode("utf-8")


def display(text):
    """A file system name as people read it: bytes that are not UTF-8 read as Latin-1, then made printable."""
    text = str(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:          # undecodable bytes, kept by Python as lone surrogates
        raw = os.fsencode(text)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
    return printable(text)


def printable(text, limit=300):
    """A name as people may read it: no control characters, no lone surrogates, bounded."""
    text = "".join("_" if _unprintable(c) else c for c in text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _unprintable(char):
    return unicodedata.category(char) in ("Cc", "Cs", "Cf") and char not in "\u200d"


def _problem(entry, name, shown):
    # Only `/` separates folders in a zip (APPNOTE 4.4.17): a backslash is a character of the name, so
    # `x_502_assignsubmission_file_\n-queens.ipynb` is one file at the top, never a folder a classmate's id names
    # (but in an entry made by MS-DOS, `name` has its backslashes read as `/` already: _entry_name).
    path = PurePosixPath(name)
    # `C:...` names a Windows drive; any other `:` is a character of the name.
    if path.is_absolute() or ".." in path.parts or (path.parts and re.match(r"^[A-Za-z]:", path.parts[0])):
        return ("unsafe-path", f"the zip entry {shown!r} points outside the archive; it was not unpacked")
    if stat.S_ISLNK(entry.external_attr >> 16):
        return ("unsafe-path", f"the zip entry {shown!r} is a symbolic link; it was not unpacked")
    if entry.file_size > MAX_ENTRY_BYTES:
        return ("too-large", f"{shown!r} is {entry.file_size // 2**20} MB; the limit is "
                             f"{MAX_ENTRY_BYTES // 2**20} MB")
    return None


def _disk_path(name, taken):
    """Where an entry goes under the target: each component printable and short enough; None if too deep.
    `taken` (a _Taken) knows the paths given so far."""
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if not parts or len(parts) > MAX_DEPTH:
        return None
    parts = [_component(p) for p in parts]
    relative = "/".join(parts)
    stem = relative
    number = taken.numbers.get(stem, 1)
    while relative in taken.paths:       # two names made the same by the cleaning stay two files
        number += 1
        head, dot, suffix = stem.rpartition(".")
        relative = f"{head}-{number}.{suffix}" if dot and "/" not in suffix else f"{stem}-{number}"
    taken.numbers[stem] = number         # the next one with this name starts here: linear, not quadratic
    taken.paths.add(relative)
    return relative


class _Taken:
    def __init__(self):
        self.paths, self.numbers = set(), {}

    def discard(self, relative):
        self.paths.discard(relative)


def _component(part):
    clean = printable(part, limit=10_000).replace("/", "_")
    if clean in (".", ".."):
        clean = "_"
    if len(clean.encode("utf-8")) <= MAX_COMPONENT_BYTES:
        return clean
    digest = hashlib.sha256(part.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    suffix = PurePosixPath(clean).suffix[:16]
    head = clean.encode("utf-8")[:MAX_COMPONENT_BYTES - len(suffix) - 12].decode("utf-8", "ignore")
    return f"{head}-{digest}{suffix}"


def _copy_capped(bundle, entry, destination, cap):
    # The header's size can lie (a zip bomb); count what really comes out, and never write past `cap`.
    written = 0
    with bundle.open(entry) as source, open(destination, "wb") as sink:
        while chunk := source.read(1 << 20):
            written += len(chunk)
            if written > cap:
                raise zipfile.BadZipFile("it unpacks to more than its stated size" if written > entry.file_size
                                         else "it unpacks to more than the limit")
            sink.write(chunk)
    return written


def safe_name(text):
    """A folder name for an archive's contents."""
    keep = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
    return keep.strip("._")[:MAX_COMPONENT_BYTES] or "archive"
