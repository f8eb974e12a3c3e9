"""A Canvas course replayed offline: Canvas's answers (tests/canvas/*.json) served through requests-mock.

`CanvasCourse` holds a course's state (students, sections, submissions with their attachments, overrides,
the late policy, grades, excuses and comments sent) and answers every request canvasapi sends as Canvas's
REST API does: pages of at most `page_size` with `Link: rel="next"`, `X-Rate-Limit-Remaining` on every
answer, 404 for what does not exist, the file upload's two steps, a bulk update's Progress, GraphQL's
postAssignmentGrades.  A grade and an excuse go as Assignment#grade_student takes them: both at once are
refused ("Cannot simultaneously grade and excuse an assignment", 400), an excuse leaves no score, and a
grade ends an excuse.
`fail(...)` makes one request fail (a 500 on a student's edit, the throttle's 403), and `requests()` lists
every request sent as (method, path, parameters) for the tests to assert whole.

`course_of(30)` is the class the Canvas tests grade: 30 students and the Test Student, in two sections;
notebooks from examples/n-queens; one student late, one late by Canvas's due date but within their own
due-date override, a section with an override, one resubmitted (attempt 2), one missing, one excused, one
who handed in a PDF, one a text entry.
"""

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from conftest import ROOT

FIXTURES = Path(__file__).parent / "canvas"
URL = "https://canvas.test"
COURSE, ASSIGNMENT = 4200, 501
TOKEN = "7~Qx3kS9vLmT2wZr8YbN4pHc6JdF1gUe5aKo0iVsRtXyMn"      # what a Canvas token looks like: never written
SUBMISSIONS = ROOT / "examples" / "n-queens" / "submissions"
NOTEBOOKS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "judy", "mallory", "niaj",
             "olivia", "peggy"]
DUE = "2026-11-02T04:59:00Z"               # 23:59 in New York, 1 November 2026
DEADLINE = "2026-11-01T23:59:00-05:00"     # the same instant, as course.toml holds it


def fixture(name):
    return json.loads((FIXTURES / f"{name}.json").read_text())


@dataclass
class Student:
    user_id: int
    name: str
    sortable: str
    login: str
    section: int
    test: bool = False


@dataclass
class Handed:
    """One student's submission as Canvas holds it."""
    user_id: int
    attempt: int | None = None
    submitted_at: str | None = None
    files: list = field(default_factory=list)      # [(attachment id, display name, bytes)]
    late: bool = False
    seconds_late: int = 0
    missing: bool = False
    excused: bool = False
    kind: str | None = None                        # online_upload, online_text_entry
    cached_due_date: str = DUE


class CanvasCourse:
    def __init__(self, students, sections, handed, overrides=(), page_size=100, late_policy=None,
                 post_manually=False, points=5.0, workflow="available"):
        self.students = {s.user_id: s for s in students}
        self.sections = sections                    # {id: name}
        self.handed = {h.user_id: h for h in handed}
        self.overrides = list(overrides)
        self.page_size = page_size
        self.late_policy = late_policy
        self.post_manually, self.points, self.workflow = post_manually, points, workflow
        self.grades, self.comments, self.uploads, self.posted = {}, {}, {}, False
        self.failures = []                         # [(method, path regex, status, times, applied)]
        self.remaining = 700.0
        self.mocker = None

    # --- what it holds ---------------------------------------------------------------------------------

    def fail(self, method, path, status, times=1, applied=False, template=None):
        """The next `times` requests `method` to a path matching `path` get `status` (errors.json's answer);
        `applied`: the request is carried out all the same (the answer is lost, not the change)."""
        self.failures.append([method, re.compile(path), status, times, applied, template or str(status)])

    def requests(self):
        """Every request sent: (method, path, {parameter: value or [values]})."""
        found = []
        for request in self.mocker.request_history:
            parts = urlsplit(request.url)
            pairs = parse_qsl(parts.query, keep_blank_values=True)
            if request.method in ("POST", "PUT") and request.body and "multipart" not in \
                    (request.headers.get("Content-Type") or ""):
                body = request.body.decode() if isinstance(request.body, bytes) else request.body
                pairs += [] if body.startswith("{") else parse_qsl(body, keep_blank_values=True)
                if body.startswith("{"):
                    pairs.append(("json", json.loads(body)["variables"]))
            if "multipart" in (request.headers.get("Content-Type") or ""):
                pairs.append(("multipart", "file"))
            params = {}
            for key, value in pairs:
                params.setdefault(key, []).append(value)
            found.append((request.method, parts.path, {k: v[0] if len(v) == 1 else v for k, v in params.items()}))
        return found

    # --- serving it -----------------------------------------------------------------------------------

    def serve(self, mocker):
        self.mocker = mocker
        api = f"{URL}/api/v1/courses/{COURSE}"
        routes = [
            ("GET", rf"^{api}$", self._course),
            ("GET", rf"^{api}/assignments/(\d+)$", self._assignment),
            ("GET", rf"^{api}/sections$", self._sections),
            ("GET", rf"^{api}/enrollments$", self._enrollments),
            ("GET", rf"^{api}/assignments/(\d+)/submissions$", self._submissions),
            ("GET", rf"^{api}/assignments/(\d+)/submissions/(\d+)$", self._submission),
            ("GET", rf"^{api}/assignments/(\d+)/overrides$", self._overrides),
            ("GET", rf"^{api}/late_policy$", self._late_policy),
            ("GET", rf"^{URL}/files/(\d+)/download$", self._download),
            ("POST", rf"^{api}/assignments/(\d+)/submissions/(\d+)/comments/files$", self._upload_token),
            ("POST", r"^https://inst-fs-iad-prod\.test/files$", self._upload),
            ("PUT", rf"^{api}/assignments/(\d+)/submissions/(\d+)$", self._edit),
            ("POST", rf"^{api}/assignments/(\d+)/submissions/update_grades$", self._bulk),
            ("GET", rf"^{URL}/api/v1/progress/(\d+)$", self._progress),
            ("POST", rf"^{URL}/api/graphql$", self._graphql),
        ]
        for method, pattern, handler in routes:
            full = re.compile(pattern.rstrip("$") + r"(?:\?.*)?$")
            mocker.register_uri(method, full, content=self._answer(handler, full))
        return self

    def _answer(self, handler, pattern):
        def respond(request, context):
            self.remaining = max(0.0, self.remaining - 1.0)
            context.headers["X-Rate-Limit-Remaining"] = f"{self.remaining:.1f}"
            context.headers["Content-Type"] = "application/json; charset=utf-8"
            match = pattern.match(request.url)
            failure = self._failure(request)
            if failure is not None and not failure[4]:
                return self._error(context, failure[5])
            status, body = handler(request, context, *match.groups())
            context.status_code = status
            if failure is not None:                 # applied, and then the answer is lost
                return self._error(context, failure[5])
            if isinstance(body, bytes):
                context.headers["Content-Type"] = "application/octet-stream"
                return body
            return json.dumps(body).encode()
        return respond

    def _failure(self, request):
        path = urlsplit(request.url).path
        for failure in self.failures:
            method, pattern, _, times, _, _ = failure
            if times and request.method == method and pattern.search(path):
                failure[3] -= 1
                return failure
        return None

    def _error(self, context, name):
        answer = fixture("errors")[name]
        context.status_code = answer["status"]
        context.headers.update(answer.get("headers", {}))
        if "text" in answer:
            context.headers["Content-Type"] = "text/plain"
            return answer["text"].encode()
        return json.dumps(answer["json"]).encode()

    def _page(self, request, context, items):
        query = dict(parse_qsl(urlsplit(request.url).query))
        size = min(int(query.get("per_page", 10)), self.page_size)
        page = int(query.get("page", 1))
        chunk = items[(page - 1) * size: page * size]
        if page * size < len(items):
            base = request.url.split("?")[0]
            rest = "&".join(f"{k}={v}" for k, v in parse_qsl(urlsplit(request.url).query) if k != "page")
            context.headers["Link"] = f'<{base}?{rest}&page={page + 1}>; rel="next", <{base}?{rest}&page=1>; rel="first"'
        return 200, chunk

    def _course(self, request, context):
        return 200, {**fixture("course"), "workflow_state": self.workflow}

    def _assignment(self, request, context, assignment):
        if int(assignment) != ASSIGNMENT:
            return 404, fixture("errors")["404"]["json"]
        return 200, {**fixture("assignment"), "points_possible": self.points, "post_manually": self.post_manually}

    def _sections(self, request, context):
        return self._page(request, context, [{**fixture("section"), "id": i, "name": n} for i, n in self.sections.items()])

    def _enrollments(self, request, context):
        wanted = {v for k, v in parse_qsl(urlsplit(request.url).query) if k == "type[]"}
        items = []
        for number, student in enumerate(sorted(self.students.values(), key=lambda s: s.user_id)):
            kind = "StudentViewEnrollment" if student.test else "StudentEnrollment"
            if wanted and kind not in wanted:
                continue
            item = copy.deepcopy(fixture("enrollment"))
            item.update(id=9001 + number, user_id=student.user_id, type=kind, role=kind,
                        course_section_id=student.section, sis_user_id=None if student.test else f"S{student.user_id}")
            item["user"].update(id=student.user_id, name=student.name, sortable_name=student.sortable,
                                short_name=student.name, sis_user_id=None if student.test else f"S{student.user_id}",
                                login_id=student.login)
            items.append(item)
        return self._page(request, context, items)

    def _submission_json(self, user_id):
        handed = self.handed.get(user_id) or Handed(user_id, missing=True)
        item = copy.deepcopy(fixture("submission"))
        graded = self.grades.get(user_id)
        item.update(id=80000 + user_id, user_id=user_id, attempt=handed.attempt, submitted_at=handed.submitted_at,
                    late=handed.late, seconds_late=handed.seconds_late, missing=handed.missing,
                    excused=handed.excused, submission_type=handed.kind, cached_due_date=handed.cached_due_date,
                    workflow_state="graded" if graded is not None or handed.excused else (
                        "submitted" if handed.submitted_at else "unsubmitted"),
                    score=graded, grade=None if graded is None else f"{graded:g}",
                    body="<p>my answer</p>" if handed.kind == "online_text_entry" else None)
        item["attachments"] = []
        for attachment_id, name, data in handed.files:
            attachment = copy.deepcopy(fixture("attachment"))
            attachment.update(id=attachment_id, display_name=name, filename=name, size=len(data),
                              url=f"{URL}/files/{attachment_id}/download?download_frd=1&verifier=v{attachment_id}")
            item["attachments"].append(attachment)
        if not handed.files:
            del item["attachments"]
        return item

    def _submissions(self, request, context, assignment):
        users = sorted(u for u in self.students)
        return self._page(request, context, [self._submission_json(u) for u in users])

    def _submission(self, request, context, assignment, user):
        item = self._submission_json(int(user))
        if "submission_comments" in request.url:
            item["submission_comments"] = [{"id": 5000 + n, "author_id": 1, "author_name": "Teacher",
                                            "comment": text, "created_at": "2026-11-10T12:00:00Z",
                                            "attachments": [{"id": f}] if f else []}
                                           for n, (text, f) in enumerate(self.comments.get(int(user), []))]
        return 200, item

    def _overrides(self, request, context, assignment):
        return self._page(request, context, self.overrides)

    def _late_policy(self, request, context):
        if self.late_policy is None:
            return 404, fixture("errors")["404"]["json"]
        return 200, {"late_policy": {**fixture("late_policy")["late_policy"], **self.late_policy}}

    def _download(self, request, context, attachment):
        for handed in self.handed.values():
            for attachment_id, _, data in handed.files:
                if attachment_id == int(attachment):
                    return 200, data
        return 404, fixture("errors")["404"]["json"]

    def _upload_token(self, request, context, assignment, user):
        token = copy.deepcopy(fixture("file_upload")["token"])
        body = request.body.decode() if isinstance(request.body, bytes) else request.body
        token["upload_params"]["filename"] = dict(parse_qsl(body))["name"]
        return 200, token

    def _upload(self, request, context):
        done = copy.deepcopy(fixture("file_upload")["done"])
        done["id"] = 990001 + len(self.uploads)
        self.uploads[done["id"]] = request.body
        return 201, done

    def _edit(self, request, context, assignment, user):
        form = parse_qsl(request.body.decode() if isinstance(request.body, bytes) else request.body,
                         keep_blank_values=True)
        values = dict(form)
        user = int(user)
        excuse = values.get("submission[excuse]", "").lower() in ("true", "1", "yes", "on")
        if excuse and "submission[posted_grade]" in values:
            return 400, {"error": "Cannot simultaneously grade and excuse an assignment"}
        self._grade(user, values.get("submission[posted_grade]"), excuse)
        if "comment[text_comment]" in values:
            files = [int(v) for k, v in form if k == "comment[file_ids][]"]
            self.comments.setdefault(user, []).append((values["comment[text_comment]"], files[0] if files else None))
        return 200, self._submission_json(user)

    def _grade(self, user, posted_grade, excuse):
        if excuse:                       # excused: no score (save_grade_to_submission)
            handed = self.handed.setdefault(user, Handed(user))
            handed.excused, handed.missing = True, False
            self.grades.pop(user, None)
        elif posted_grade is not None:   # a grade ends an excuse
            self.grades[user] = float(posted_grade)
            if user in self.handed:
                self.handed[user].excused = False

    def _bulk(self, request, context, assignment):
        data = {}
        for key, value in parse_qsl(request.body.decode() if isinstance(request.body, bytes) else request.body):
            found = re.fullmatch(r"grade_data\[(\d+)\]\[(posted_grade|excuse)\]", key)
            if found:
                data.setdefault(int(found.group(1)), {})[found.group(2)] = value
        for user, values in data.items():
            self._grade(user, values.get("posted_grade"), values.get("excuse", "").lower() in ("true", "1"))
        return 200, fixture("progress")

    def _progress(self, request, context, progress):
        return 200, {**fixture("progress"), "workflow_state": "completed", "completion": 100}

    def _graphql(self, request, context):
        self.posted = True
        return 200, {"data": {"postAssignmentGrades": {"progress": {"_id": "3302", "state": "queued"},
                                                       "errors": None}}}


def notebook(number):
    return (SUBMISSIONS / f"{NOTEBOOKS[number % len(NOTEBOOKS)]}.ipynb").read_bytes()


FIRST, LAST = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy"], \
    ["Smith", "Jones", "King"]


def course_of(n=30, **options):
    """The replayed class of `n` students (and the Test Student); see the module's docstring."""
    students, handed = [], []
    for number in range(n):
        user = 1001 + number
        first, last = FIRST[number % len(FIRST)], f"{LAST[number % len(LAST)]}{number:02d}"
        students.append(Student(user, f"{first} {last}", f"{last}, {first}", f"{first[0].lower()}{last.lower()}"
                                                                              "@uni.example", 31 + number % 2))
        handed.append(Handed(user, 1, "2026-11-01T20:10:00Z", [(7001 + number, "n-queens.ipynb", notebook(number))],
                             kind="online_upload"))
    students.append(Student(1099, "Test Student", "Student, Test", "a3" * 20, 31, test=True))
    handed.append(Handed(1099, 1, "2026-11-01T18:00:00Z", [(7099, "n-queens.ipynb", notebook(0))], kind="online_upload"))
    special = {h.user_id: h for h in handed}
    if n >= 5:                                          # late by a day and a bit
        special[1005].submitted_at, special[1005].late, special[1005].seconds_late = "2026-11-03T06:00:00Z", True, 90060
    if n >= 6:                                          # after the due date, before their own (an override)
        special[1006].submitted_at, special[1006].cached_due_date = "2026-11-03T12:00:00Z", "2026-11-05T04:59:00Z"
    if n >= 7:                                          # handed in twice: the zip and the API hold the second
        again = special[1007]
        again.attempt, again.submitted_at = 2, "2026-11-01T22:30:00Z"
        again.files = [(7200, "n-queens.ipynb", notebook(3))]
    if n >= 12:
        special[1012].files, special[1012].kind = [], "online_text_entry"
    if n >= 20:
        special[1020].files = [(7020, "report.pdf", b"%PDF-1.4 a report\n")]
    if n >= 29:
        special[1028].attempt, special[1028].submitted_at, special[1028].files = None, None, []
        special[1028].kind, special[1028].missing = None, True
        special[1029].excused = True
    overrides = [{**fixture("override"), "id": 61, "title": "1 student", "student_ids": [1006],
                  "due_at": "2026-11-05T04:59:00Z"}]
    return CanvasCourse(students, {31: "Section A", 32: "Section B"}, handed, overrides, **options)


def configure(course_root, deadline=DEADLINE, late="none", extra=""):
    """course.toml of a Canvas course: its address and id, n-queens due at `deadline`, Canvas's assignment id."""
    path = Path(course_root) / "course.toml"
    text = path.read_text()
    text = text.replace('lms = "other"', f'lms = "canvas"\ncanvas_url = "{URL}"\ncanvas_course = {COURSE}')
    table = (f'[assignment.n-queens]\ndeadline = "{deadline}"\nlate_policy = "{late}"\n'
             f'lms_column = "N-Queens ({ASSIGNMENT})"\n{extra}')
    text = text.replace('[assignment.n-queens]\n# deadline = "2026-12-01T23:59:00-05:00"\nlate_policy = "none"\n',
                        table)
    assert f"({ASSIGNMENT})" in text
    path.write_text(text)


class _NoSandbox:
    """The sandbox, when no hand-in runs (push tests grade with `score_by` instead)."""
    isolation, cpu_groups, protected, lacks = "none", (), (), ()

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def grade_by_scores(monkeypatch, score_by):
    """`grade` gives each hand-in `score_by(handin)` instead of running it: for tests of what comes after
    grading (release), whose scores are their own.  Everything else of the class run is the real one."""
    from autograder.grade import class_run
    from autograder.grade.handin import SubmissionResult

    def grade_all(assignment, expected, handins, sandbox, jobs, settings, cancel=None, started=None):
        for handin in handins:
            if handin.status is not None:
                yield handin, SubmissionResult(handin.student, assignment.id, handin.source, 0.0, assignment.max_score,
                                               handin.status, handin.message)
            else:
                yield handin, SubmissionResult(handin.student, assignment.id, handin.source, score_by(handin),
                                               assignment.max_score, "graded")

    monkeypatch.setattr(class_run, "grade_all", grade_all)
    monkeypatch.setattr(class_run, "Sandbox", _NoSandbox)


def made_up_score(handin):
    """A score of its own for each student: 5, 4.5, 4, 3.5, 3, 5, ..."""
    return 5.0 - (int(handin.lms_id or 0) % 5) * 0.5
