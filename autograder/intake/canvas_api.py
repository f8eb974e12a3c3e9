"""Canvas's REST API, through canvasapi: the token, the connection, rate limits, and a failure in one line.

`autograder canvas pull` (intake/canvas_pull.py, roster/canvas_roster.py) and `release --to canvas`
(publish/canvas_push.py) talk to Canvas through a Connection made here.  What is Canvas's, as its API
documents it and canvasapi sends it:

* **The token** is a Canvas access token (Account → Settings → New access token), taken from the
  environment (`CANVAS_API_TOKEN`), else from the system keyring (the `keyring` package: service
  `autograder-canvas`, user the Canvas address).  It is sent only to the Canvas address in course.toml,
  never written to a file, a log, the gradebook or a message: every message made here has it scrubbed,
  and the query strings of URLs (file links carry a `verifier`) left out.
* **Rate limits.**  Canvas meters each token with a leaky bucket, tells what is left in
  `X-Rate-Limit-Remaining` on every answer, and refuses with `403 Forbidden (Rate Limit Exceeded)` (some
  proxies: 429) once it is empty.  A Connection slows down as the bucket runs low, and after a refusal
  waits (1, 2, 4 ... seconds, at most `MAX_BACKOFF` in all) and sends the same request again.
* **Pages.**  Lists come 100 to a page (canvasapi follows each page's `Link: rel="next"`).
* **Failures.**  401: the token; 404: the course or assignment (or the token's user cannot see it);
  422: Canvas refused what was sent (an unpublished course, a user who is not a student); 5xx and a
  connection that fails: Canvas's own trouble.  Each is a CanvasError of one line naming what was being
  done and what to do, with `status` kept for the caller that goes on with the next student.
"""

import os
import re
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import requests
from canvasapi import Canvas
from canvasapi.exceptions import CanvasException, Forbidden, RateLimitExceeded, ResourceDoesNotExist
from canvasapi.requester import Requester

from .canvas_errors import CanvasError

TOKEN_VARIABLE = "CANVAS_API_TOKEN"
KEYRING_SERVICE = "autograder-canvas"
NEW_TOKEN = "Canvas: Account → Settings → New access token"
# The leaky bucket holds 700 units; below this many left, each request first waits a little.
LOW_BUCKET = 150
MAX_BACKOFF = 120.0          # seconds of waiting for one request, in all, before its refusal stands
CONNECT_TIMEOUT, READ_TIMEOUT = 15, 120


def no_canvas_assignment(assignment_id):
    """The refusal when course.toml does not say which Canvas assignment `assignment_id` is."""
    return (f"{assignment_id} has no Canvas id: set canvas_assignment = <id> in course.toml's "
            f"[assignment.{assignment_id}] (the number in the assignment's address in Canvas), or its lms_column "
            "to Canvas's column name `Name (id)`")


def find_token(url, environ=None, keyring_module=None):
    """The access token for Canvas at `url`: CANVAS_API_TOKEN, else the keyring's; else CanvasError saying how
    to give one (and why the keyring could not: none installed, or no backend on this machine)."""
    environ = os.environ if environ is None else environ
    token = environ.get(TOKEN_VARIABLE, "").strip()
    if token:
        return token
    why = _keyring_token(url, keyring_module)
    if isinstance(why, tuple):
        return why[0]
    raise CanvasError(f"no Canvas token: set {TOKEN_VARIABLE} to an access token ({NEW_TOKEN}), or keep it in the "
                      f"system keyring with `keyring set {KEYRING_SERVICE} {url}` ({why})")


def _keyring_token(url, keyring_module):
    """(token,) from the keyring, or why there is none, in words."""
    if keyring_module is None:
        try:
            import keyring as keyring_module
        except ImportError:
            return "the keyring package is not installed here"
    try:
        token = keyring_module.get_password(KEYRING_SERVICE, url)
    except Exception as error:      # noqa: BLE001 - KeyringError, or a backend's own (D-Bus gone, a locked store)
        if type(error).__name__ == "NoKeyringError":
            return "this machine has no keyring backend, so use the environment variable"
        return f"the keyring cannot be read here ({type(error).__name__}), so use the environment variable"
    if token and token.strip():
        return (token.strip(),)
    return f"the keyring has no token for {url}"


@dataclass
class Pacing:
    """What the answers said of the rate limit, and the waits it asked for (`sleep`: time.sleep when None)."""
    sleeper: object = None
    remaining: float | None = None
    requests: int = 0
    waited: float = 0.0
    backoffs: list = field(default_factory=list)

    def sleep(self, seconds):
        (self.sleeper or time.sleep)(seconds)

    def before(self):
        """Wait a little while the bucket is low: the lower, the longer (at most 2 s)."""
        if self.remaining is not None and self.remaining < LOW_BUCKET:
            pause = round(2.0 * (LOW_BUCKET - max(self.remaining, 0.0)) / LOW_BUCKET, 3)
            self.sleep(pause)
            self.waited += pause

    def after(self, response):
        self.requests += 1
        header = response.headers.get("X-Rate-Limit-Remaining") if response is not None else None
        try:
            self.remaining = float(header) if header is not None else self.remaining
        except ValueError:
            pass


class _TimedSession(requests.Session):
    """canvasapi sends with no timeout: a Canvas that never answers would hang the command."""

    def request(self, method, url, **kwargs):
        kwargs.setdefault("timeout", (CONNECT_TIMEOUT, READ_TIMEOUT))
        return super().request(method, url, **kwargs)


def _rate_limited(response):
    return response is not None and (response.status_code == 429 or (
        response.status_code == 403 and "rate limit exceeded" in (response.text or "").lower()))


class _Requester(Requester):
    """canvasapi's Requester, paced by the rate limit, and sending a refused request again after a back-off."""

    def __init__(self, base_url, token, pacing):
        super().__init__(base_url, token)
        self._session = _TimedSession()
        self.pacing = pacing

    def request(self, method, endpoint=None, headers=None, use_auth=True, _url=None, _kwargs=None, json=False,
                **kwargs):
        delay, waited = 1.0, 0.0
        while True:
            self.pacing.before()
            self._cache.insert(0, None)        # the answer canvasapi keeps, if there is one, goes before it
            del self._cache[5:]
            try:
                response = super().request(method, endpoint, headers=dict(headers or {}), use_auth=use_auth,
                                           _url=_url, _kwargs=list(_kwargs or []), json=json, **kwargs)
            except (Forbidden, RateLimitExceeded):
                answer = self._cache[0]
                self.pacing.after(answer)
                if not _rate_limited(answer) or waited + delay > MAX_BACKOFF:
                    raise
                self.pacing.backoffs.append(delay)
                self.pacing.sleep(delay)
                waited += delay
                delay = min(delay * 2, 30.0)
                _rewind(_kwargs)
                continue
            except CanvasException:
                self.pacing.after(self._cache[0])
                raise
            self.pacing.after(response)
            return response


def _rewind(pairs):
    """A file sent with a refused request is sent again from its start."""
    for _, value in pairs or []:
        if hasattr(value, "seek"):
            value.seek(0)


class Connection:
    """Canvas at `url` (course.toml's canvas_url), for course `course_id`, with `token`."""

    def __init__(self, url, course_id, token, sleep=None):
        self.url, self.course_id, self._token = url, str(course_id), token
        self.pacing = Pacing(sleeper=sleep)
        self.canvas = Canvas(url, token)
        self.requester = _Requester(url, token, self.pacing)
        self.canvas._Canvas__requester = self.requester       # every object canvasapi makes shares it

    @classmethod
    def of(cls, course, environ=None, keyring_module=None, sleep=None):
        """The course's Connection: its canvas_url and canvas_course from course.toml, the token from the
        environment or the keyring; CanvasError naming the setting or the token that is missing."""
        missing = [name for name, value in (("canvas_url", course.canvas_url), ("canvas_course", course.canvas_course))
                   if not value]
        if missing:
            raise CanvasError(f"course.toml's [course] has no {' and no '.join(missing)}: run `autograder init` "
                              "(it asks for Canvas's address and the course's id), or add "
                              "canvas_url = \"https://canvas.uni.edu\" and canvas_course = 12345")
        return cls(course.canvas_url, course.canvas_course, find_token(course.canvas_url, environ, keyring_module),
                   sleep)

    def call(self, doing, function, *args, **kwargs):
        """`function(*args, **kwargs)`, a canvasapi call; any failure a CanvasError of one line saying `doing`."""
        try:
            return function(*args, **kwargs)
        except CanvasException as error:
            raise CanvasError(self.scrub(self.explain(error, doing)), _status(error, self.requester)) from None
        except requests.RequestException as error:
            raise CanvasError(self.scrub(f"cannot reach Canvas at {self.url} while {doing}: "
                                         f"{type(error).__name__}"), 0) from None

    def pages(self, doing, paginated):
        """Every item of a canvasapi PaginatedList, each page fetched as it is reached."""
        return self.call(doing, list, paginated)

    def explain(self, error, doing):
        status = _status(error, self.requester)
        if status == 401:
            return (f"Canvas refused the token (401 Unauthorized) while {doing}: it is wrong, expired or revoked. "
                    f"Make a new one ({NEW_TOKEN}) and put it in {TOKEN_VARIABLE} or the keyring")
        if status == 404 or isinstance(error, ResourceDoesNotExist):
            return (f"Canvas found nothing (404 Not Found) while {doing}: check canvas_course (and the assignment's "
                    f"Canvas id) in course.toml against the address of its page in {self.url}, and that the token's "
                    "user is a teacher or TA of the course")
        if status in (403, 429):
            if _rate_limited(self.requester._cache[0] if self.requester._cache else None):
                return (f"Canvas's rate limit held for over {MAX_BACKOFF:g} s while {doing} (403 Rate Limit "
                        "Exceeded): wait a few minutes and run the same command again; what was sent is recorded")
            return (f"Canvas forbids it (403 Forbidden) while {doing}: the token's user must be a teacher or TA "
                    "of the course, allowed to grade")
        if status == 422:
            return f"Canvas refused it (422 Unprocessable Entity) while {doing}: {_said(error)}"
        if status >= 500:
            return f"Canvas failed (HTTP {status}, its own error) while {doing}: run the same command again later"
        return f"Canvas answered HTTP {status or '?'} while {doing}: {_said(error)}"

    def scrub(self, text):
        """`text` without the token or any URL's query string, on one line, bounded."""
        text = str(text)
        if self._token:
            text = text.replace(self._token, "[token]")
        text = re.sub(r"(https?://[^\s?#'\"]+)\?[^\s'\"]*", r"\1", text)
        return " ".join(text.split())[:600]

    # --- requests canvasapi has no method for ---------------------------------------------------------

    def download(self, url, destination, limit, doing):
        """Stream the file at `url` into `destination`, at most `limit` bytes; the token goes only to Canvas's
        own host (a file's link may lead to its storage, which the link's own `verifier` opens).  Returns the
        bytes written; CanvasError when it fails or is larger than `limit` (nothing is left then)."""
        same_host = urlsplit(url).hostname == urlsplit(self.url).hostname
        headers = {"Authorization": f"Bearer {self._token}"} if same_host else {}
        delay, waited = 1.0, 0.0
        while True:
            self.pacing.before()
            try:
                response = self.requester._session.get(url, headers=headers, stream=True)
            except requests.RequestException as error:
                raise CanvasError(self.scrub(f"cannot reach Canvas at {self.url} while {doing}: "
                                             f"{type(error).__name__}"), 0) from None
            self.pacing.after(response)
            if _rate_limited(response) and waited + delay <= MAX_BACKOFF:
                response.close()
                self.pacing.backoffs.append(delay)
                self.pacing.sleep(delay)
                waited, delay = waited + delay, min(delay * 2, 30.0)
                continue
            break
        with response:
            if response.status_code != 200:
                raise CanvasError(self.scrub(f"Canvas answered HTTP {response.status_code} while {doing}"),
                                  response.status_code)
            written = 0
            try:
                with open(destination, "wb") as handle:
                    for chunk in response.iter_content(64 * 1024):
                        written += len(chunk)
                        if written > limit:
                            raise CanvasError(f"{doing}: the file is larger than {limit // (1024 * 1024)} MB, the "
                                              "most a hand-in's file may be", 413)
                        handle.write(chunk)
            except requests.RequestException as error:
                os.unlink(destination)
                raise CanvasError(self.scrub(f"the connection to Canvas failed while {doing}: "
                                             f"{type(error).__name__}"), 0) from None
            except CanvasError:
                os.unlink(destination)
                raise
        return written


def _status(error, requester):
    answer = requester._cache[0] if requester._cache else None
    if answer is not None:
        return answer.status_code
    return {"InvalidAccessToken": 401, "Unauthorized": 401, "ResourceDoesNotExist": 404,
            "UnprocessableEntity": 422, "Forbidden": 403, "RateLimitExceeded": 429}.get(type(error).__name__, 0)


def _said(error):
    """What Canvas's answer says, from its JSON `errors` (or its text), in a few words."""
    text = str(getattr(error, "message", "") or error)
    found = re.findall(r"""['"]message['"]\s*:\s*['"]([^'"]{1,200})""", text)
    return "; ".join(dict.fromkeys(found))[:300] if found else text[:300]
