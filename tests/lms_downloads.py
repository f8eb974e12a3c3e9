"""Downloads of one class rebuilt as each LMS ships them, for the intake tests.

Each builder writes a download of the class `CLASS` (name, notebook) and
returns its path and how many students handed something in.  The layouts are
rebuilt from the vendors' documentation and from public tools that read them:

  Canvas      canvas-lms lib/content_zipper.rb (`<name>[_LATE]_<user id>_<attachment id>_<file>`)
  Moodle      mod/assign/classes/downloader.php (`<Full Name>_<participant>_assignsubmission_file/`)
  Gradescope  "Export Submissions": `assignment_<id>_export/submission_metadata.yml` and `submission_<id>/`,
              as gradescopeapi's export reader opens it and as tools reading the export build their fixtures
  Blackboard  "Assignment File Download": `gradebook_<course>_<assignment>_<date>.zip` of
              `<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file>` and a `.txt` receipt per attempt
              (BBGradebookOrganiser, gradex-cli's README, a Rust gradebook reader's datafile parser)
  D2L         "Download": `<Assignment> Download <Mon D, YYYY HMM AM>.zip` of
              `<submission id>-<file id> - <First Last> - <Mon D, YYYY HMM AM> - <file>` and `index.html`
              (lab-format.sh, which splits the names on ` - `; UL grader-helper's folder names)
  Drive       Google Drive's folder download `<folder>-<YYYYMMDD>T<HHMMSS>Z-<part>.zip` of `<folder>/...`;
              Classroom's "Make a copy for each student" names each copy `<Student Name> - <title>`
  Teams       the class team's *Student Work* library: `Submitted files/<Student Name>/<assignment>/<files>`
              (Microsoft's Assignments admin documentation), as SharePoint's folder download zips it
"""

import io
import shutil
import zipfile
from pathlib import Path

from conftest import ROOT

SUBMISSIONS = ROOT / "examples" / "n-queens" / "submissions"
ALICE, BOB = SUBMISSIONS / "alice.ipynb", SUBMISSIONS / "dave.ipynb"     # 5 and 2.9 points (a score no rule gives)
# The class: (display name, username, notebook).  Two of them share a name (a real class has namesakes).
CLASS = [("Alice Smith", "asmith", ALICE), ("Bob Jones", "bjones", BOB), ("Carol King", "cking", ALICE),
         ("Dave Lee", "dlee", BOB)]


def add(bundle, name, data, when=(2026, 3, 5, 10, 0, 0)):
    """An entry written with the download's own time, as every LMS writes them (never a hand-in time)."""
    bundle.writestr(zipfile.ZipInfo(name, date_time=when), data.read_bytes() if hasattr(data, "read_bytes")
                    else data)


def canvas(tmp):
    path = tmp / "submissions.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for number, (name, _, notebook) in enumerate(CLASS):
            sortable = "".join(reversed(name.lower().split()))
            add(bundle, f"{sortable}_{1001 + number}_{5001 + number}_n-queens.ipynb", notebook)
    return path, len(CLASS)


def canvas_of_course(course, path):
    """The Download Submissions zip of a replayed Canvas course (tests/canvas_course.py), as content_zipper.rb
    writes it: each student's latest attempt (the Test Student's too), `_LATE` where Canvas says late, a text
    entry as `<name>_<user id>_text.html`, every entry stamped with the download's time."""
    from autograder.intake.identity import canvas_name
    with zipfile.ZipFile(path, "w") as bundle:
        for user_id, handed in sorted(course.handed.items()):
            stem = canvas_name(course.students[user_id].sortable) + ("_LATE" if handed.late else "")
            for attachment_id, name, data in handed.files:
                add(bundle, f"{stem}_{user_id}_{attachment_id}_{name}", data, (2026, 11, 9, 8, 0, 0))
            if handed.kind == "online_text_entry":
                add(bundle, f"{stem}_{user_id}_text.html", b"<p>my answer</p>", (2026, 11, 9, 8, 0, 0))
    return path


def moodle(tmp, flat=False):
    """Moodle's download, with "Download submissions in folders" (the default) or without (`flat`)."""
    path = tmp / f"CS101-N-Queens-42{'-flat' if flat else ''}.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for number, (name, _, notebook) in enumerate(CLASS):
            add(bundle, f"{name}_{501 + number}_assignsubmission_file{'_' if flat else '/'}n-queens.ipynb", notebook)
    return path, len(CLASS)


def moodle_flat(tmp):
    return moodle(tmp, flat=True)


GRADESCOPE_METADATA = "".join(
    f"submission_{3000 + n}:\n  :submitters:\n  - :name: {name}\n    :sid: '{900 + n}'\n"
    f"    :email: {user}@uni.example\n  :created_at: 2026-03-0{1 + n % 2} 1{n}:00:00.000000000 -08:00\n"
    f"  :score: 0.0\n  :status: processed\n" for n, (name, user, _) in enumerate(CLASS))


def gradescope_zip(tmp):
    path = tmp / "submissions_export.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        add(bundle, "assignment_7023745_export/submission_metadata.yml", GRADESCOPE_METADATA.encode())
        for number, (_, _, notebook) in enumerate(CLASS):
            add(bundle, f"assignment_7023745_export/submission_{3000 + number}/n-queens.ipynb", notebook)
    return path, len(CLASS)


def gradescope_unzipped(tmp):
    path, count = gradescope_zip(tmp)
    with zipfile.ZipFile(path) as bundle:
        bundle.extractall(tmp / "unzipped")
    return tmp / "unzipped", count


def blackboard_receipt(name, user, when, files, text=""):
    listed = "\n".join(f"\tOriginal filename: {original}\n\tFilename: {stored}" for original, stored in files)
    return (f"Name: {name} ({user})\nAssignment: N-Queens\nDate Submitted: {when}\nCurrent Grade: Needs Grading\n\n"
            f"Submission Field:\n{text or 'There is no student submission text data for this assignment.'}\n\n"
            "Comments:\nThere are no student comments for this assignment.\n\n"
            f"Files:\n{listed or 'No files were attached to this submission.'}\n").encode()


def blackboard(tmp):
    """Every student's attempt; Bob's first attempt, earlier, is a blank copy."""
    path = tmp / "gradebook_CS101-2026_N-Queens_2026-03-05-10-00-00.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for number, (name, user, notebook) in enumerate(CLASS):
            stamps = [f"2026-03-0{2 + number % 2}-15-15-0{number}"]
            if user == "bjones":
                stamps.insert(0, "2026-03-01-09-00-00")
            for stamp in stamps:
                stored = f"N-Queens_{user}_attempt_{stamp}_n-queens.ipynb"
                day, clock = stamp[:10], stamp[11:].replace("-", ":")
                hour = int(clock[:2])
                when = (f"{_weekday(day)}, {_month(day)} {int(day[8:])}, 2026 {hour % 12 or 12}{clock[2:]} "
                        f"{'PM' if hour >= 12 else 'AM'} EST")
                add(bundle, f"N-Queens_{user}_attempt_{stamp}.txt",
                    blackboard_receipt(name, user, when, [("n-queens.ipynb", stored)]))
                add(bundle, stored, notebook if stamp == stamps[-1] else _blank())
    return path, len(CLASS)


def d2l(tmp):
    path = tmp / "N-Queens Download Mar 5, 2026 1000 AM.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        add(bundle, "index.html", b"<html><body><h1>N-Queens</h1></body></html>")
        for number, (name, _, notebook) in enumerate(CLASS):
            add(bundle, f"{154320 + number}-{98760 + number} - {name} - Mar {2 + number % 2}, 2026 315 PM - "
                        "n-queens.ipynb", notebook)
    return path, len(CLASS)


def drive(tmp):
    """Classroom's copies carry names; Zoe uploaded her own file, whose name is hers to choose."""
    path = tmp / "N-Queens-20260302T151500Z-001.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for name, _, notebook in CLASS:
            add(bundle, f"N-Queens/{name} - n-queens.ipynb", notebook)
        add(bundle, "N-Queens/n-queens.ipynb", ALICE)
    return path, len(CLASS) + 1


def teams(tmp):
    path = tmp / "OneDrive_1_3-5-2026.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for name, _, notebook in CLASS:
            add(bundle, f"Student Work/Submitted files/{name}/N-Queens/n-queens.ipynb", notebook)
            add(bundle, f"Student Work/Submitted files/{name}/Bitwise Queens/bitwise-queens.ipynb", BOB)
    return path, len(CLASS)


def per_student_zips(tmp):
    folder = tmp / "zips"
    folder.mkdir()
    for _, user, notebook in CLASS:
        with zipfile.ZipFile(folder / f"{user}.zip", "w") as bundle:
            add(bundle, "n-queens.ipynb", notebook)
    return folder, len(CLASS)


def files_by_student(tmp):
    folder = tmp / "files"
    folder.mkdir()
    for _, user, notebook in CLASS:
        shutil.copy(notebook, folder / f"{user}.ipynb")
    return folder, len(CLASS)


def folder_per_student(tmp):
    folder = tmp / "folders"
    for _, user, notebook in CLASS:
        (folder / user).mkdir(parents=True)
        shutil.copy(notebook, folder / user / "n-queens.ipynb")
    return folder, len(CLASS)


# --- layouts nobody documents ---------------------------------------------------------------------------

def zipped_class_folder(tmp):
    """A class folder zipped by hand: one folder on top, the students' folders inside."""
    path = tmp / "class.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for _, user, notebook in CLASS:
            add(bundle, f"class/{user}/n-queens.ipynb", notebook)
    return path, len(CLASS)


def zip_of_assignment_named_files(tmp):
    """Notebooks named after the assignment, not their students (a browser's `(1)`s): owners unknown."""
    path = tmp / "notebooks.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for number, (_, _, notebook) in enumerate(CLASS):
            add(bundle, "n-queens.ipynb" if number == 0 else f"n-queens ({number}).ipynb", notebook)
    return path, len(CLASS)


def sections(tmp):
    """`section-2/<student>/...` given as a class: one folder holding several students' folders."""
    folder = tmp / "sections"
    for _, user, notebook in CLASS:
        (folder / "section-2" / user).mkdir(parents=True)
        shutil.copy(notebook, folder / "section-2" / user / "n-queens.ipynb")
    return folder, len(CLASS)


def unknown_lms(tmp):
    """A zip of one wrapper folder with every notebook at one level, each named by nobody."""
    path = tmp / "export-2026.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for number, (_, _, notebook) in enumerate(CLASS):
            add(bundle, f"export/{number:04d}/submission.ipynb", notebook)
    return path, len(CLASS)


# --- one student's names, a stray folder or file: the layout stays what its structure says (issue 38) ------------

BLACKBOARD_LOOKALIKE = "N-Queens_mallory_attempt_2026-11-20-10-00-0{}_n-queens.ipynb"


def canvas_with_blackboard_named_uploads(tmp):
    """Mallory uploads five files named like Blackboard attempts (more than her classmates' four): every
    classmate keeps their Canvas row."""
    path, count = canvas(tmp)
    with zipfile.ZipFile(path, "a") as bundle:
        for n in range(5):
            add(bundle, f"evansmallory_1099_{5090 + n}_{BLACKBOARD_LOOKALIKE.format(n)}", _blank())
    return path, count + 1


def moodle_flat_with_blackboard_named_uploads(tmp):
    path, count = moodle_flat(tmp)
    with zipfile.ZipFile(path, "a") as bundle:
        for n in range(5):
            add(bundle, f"Mallory Evans_599_assignsubmission_file_{BLACKBOARD_LOOKALIKE.format(n)}", _blank())
    return path, count + 1


def class_folder_with_lms_named_files(tmp):
    """A plain class folder where one student named four files like Blackboard attempts, as many as the class."""
    folder, count = files_by_student(tmp)
    for n in range(4):
        shutil.copy(BOB, folder / BLACKBOARD_LOOKALIKE.format(n))
    return folder, count + 4


def class_folder_with_a_lone_zip(tmp):
    """Mallory's own zip beside her classmates' notebooks, holding files named as Canvas names Bob's."""
    folder, count = files_by_student(tmp)
    with zipfile.ZipFile(folder / "mallory.zip", "w") as bundle:
        add(bundle, "jonesbob_1002_5002_n-queens.ipynb", _blank())
    return folder, count + 1


def class_folder_with_submitted_files(tmp):
    """A folder named like Teams' `Submitted files` beside the class."""
    folder, count = files_by_student(tmp)
    (folder / "Submitted files" / "Zoe Park" / "N-Queens").mkdir(parents=True)
    shutil.copy(ALICE, folder / "Submitted files" / "Zoe Park" / "N-Queens" / "n-queens.ipynb")
    return folder, count + 1


def class_folder_with_gradescope_metadata(tmp):
    folder, count = files_by_student(tmp)
    (folder / "submission_metadata.yml").write_text("{}\n")
    return folder, count


def drive_with_three_claims_on_one_name(tmp):
    """Two uploads named like Dave's Classroom copy: three entries of one name, none his by entry order."""
    path, count = drive(tmp)
    with zipfile.ZipFile(path, "a") as bundle:
        for _ in range(2):
            add(bundle, "N-Queens/Dave Lee - n-queens.ipynb", _blank())
    return path, count + 2


def class_folder_of_odd_files(tmp):
    """Bob's is a Quarto document, Carol's Safari's save of GitHub's Raw page (issue 41)."""
    folder, count = files_by_student(tmp)
    (folder / "bjones.ipynb").rename(folder / "bjones.qmd")
    (folder / "cking.ipynb").rename(folder / "cking.ipynb.txt")
    return folder, count


def canvas_remade_by_compress_archive(tmp):
    """Canvas's zip unzipped and zipped again by Windows PowerShell: `\\` separates, entries made by MS-DOS."""
    path = tmp / "submissions.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for number, (name, _, notebook) in enumerate(CLASS):
            sortable = "".join(reversed(name.lower().split()))
            info = zipfile.ZipInfo(f"n-queens submissions\\{sortable}_{1001 + number}_{5001 + number}_n-queens.ipynb",
                                   date_time=(2026, 3, 5, 10, 0, 0))
            info.create_system = 0
            bundle.writestr(info, notebook.read_bytes())
    return path, len(CLASS)


def moodle_unzipped_with_a_git_folder(tmp):
    """Moodle's download unzipped, one student's folder holding their own `.git`."""
    path, count = moodle(tmp)
    with zipfile.ZipFile(path) as bundle:
        bundle.extractall(tmp / "unzipped")
    (tmp / "unzipped" / "Alice Smith_501_assignsubmission_file" / ".git").mkdir()
    return tmp / "unzipped", count


LAYOUTS = [canvas, moodle, moodle_flat, gradescope_zip, gradescope_unzipped, blackboard, d2l, drive, teams,
           per_student_zips, files_by_student, folder_per_student, zipped_class_folder, zip_of_assignment_named_files,
           sections, unknown_lms, canvas_with_blackboard_named_uploads, moodle_flat_with_blackboard_named_uploads,
           class_folder_with_lms_named_files, class_folder_with_a_lone_zip, class_folder_with_submitted_files,
           class_folder_with_gradescope_metadata, drive_with_three_claims_on_one_name, class_folder_of_odd_files,
           canvas_remade_by_compress_archive, moodle_unzipped_with_a_git_folder]


def _blank():
    """The student notebook as handed out: every function a stub (0 points)."""
    return (ROOT / "assignments" / "n-queens" / "n-queens.ipynb").read_bytes()


def _weekday(day):
    from datetime import date
    return date.fromisoformat(day).strftime("%A")


def _month(day):
    from datetime import date
    return date.fromisoformat(day).strftime("%B")


__all__ = ["LAYOUTS", "CLASS", "add", "io", "Path"]
