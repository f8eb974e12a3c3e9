"""Replies from a worker are untrusted: read in linear time, checked, and always renderable."""

import json
import os
import time

import pytest

from autograder import runtime
from autograder.grade import scoring
from autograder.engine import replies
from autograder.engine.runner import CallOutcome


def lines_from(data, max_bytes=1 << 20):
    read, write = os.pipe()
    os.set_blocking(write, False)
    written = 0
    try:
        written = os.write(write, data)
    except BlockingIOError:
        pass
    os.close(write)
    return replies.Lines(read, max_bytes), written


def test_lines_are_split_and_end_of_file_is_reported():
    lines, _ = lines_from(b'{"a": 1}\n\n{"b": 2}\npartial')
    assert lines.next(1) == b'{"a": 1}'
    assert lines.next(1) == b""
    assert lines.next(1) == b'{"b": 2}'
    with pytest.raises(replies.ChannelClosed):
        lines.next(1)


def test_reading_a_long_reply_in_small_chunks_is_linear():
    # 8 MB arriving 4 KB at a time: a reader that searched from the start each time would take minutes.
    read, write = os.pipe()
    lines = replies.Lines(read, 64 << 20)
    chunk = b"x" * 4096
    total = 8 << 20
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        for _ in range(total // len(chunk)):
            os.write(write, chunk)
        os.write(write, b"\n")
        os._exit(0)
    os.close(write)
    line = lines.next(60)
    os.waitpid(pid, 0)
    assert len(line) == total
    assert time.perf_counter() - started < 10


def test_a_line_over_the_cap_is_refused_and_the_next_one_still_read():
    lines, _ = lines_from(b"y" * 5000 + b'\n{"ok": 1}\n', max_bytes=1000)
    with pytest.raises(replies.ReplyTooLong):
        lines.next(1)
    assert lines.next(1) == b'{"ok": 1}'


@pytest.mark.parametrize("line, why", [
    (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
    (b"not json", "not valid JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b'{"id": 1, "x": NaN}', "not valid JSON"),
    (b'{"id": 1, "x": ' + b"9" * 5000 + b"}", "not valid JSON"),
    (b'{"id": 1, "x": "\xff"}', "not valid JSON"),
])
def test_unreadable_lines_are_bad_replies(line, why):
    with pytest.raises(replies.BadReply, match=why):
        replies.parse(line)


def call_reply(**fields):
    return {"id": 3, "ok": True, "seconds": 0.1, "value": 1, **fields}


@pytest.mark.parametrize("reply, why", [
    (call_reply(ok="yes"), "'ok' of type str"),
    (call_reply(seconds="fast"), "'seconds' of type str"),
    (call_reply(id="3"), "'id' of type str"),
    (call_reply(score=5), "unknown fields"),
    ({"id": 3, "ok": True, "seconds": 0.1}, "held no value"),
    (call_reply(ok=False, error=["x"]), "'error' of type list"),
    (call_reply(value={"__board__": "x"}), "unknown tag"),
    (call_reply(value={"__opaque__": 5}), "malformed opaque"),
    (call_reply(value={"__float__": "1e999"}), "malformed special float"),
    (call_reply(value={"__too_big__": 1}), "malformed too-big"),
    (call_reply(value={"__dict__": [[1, 2, 3]]}), "malformed dict"),
    (call_reply(value={"__set__": 5}), "malformed set"),
    (call_reply(value={"__set__": [], "__dict__": []}), "not one of the plain-value tags"),
    (call_reply(value="\ud800"), "lone surrogate"),
    (call_reply(value=float("inf")), "infinity or NaN"),
])
def test_replies_of_the_wrong_shape_are_refused(reply, why):
    with pytest.raises(replies.BadReply, match=why):
        replies.check("call", reply)


def test_nesting_deeper_than_a_plain_value_is_refused_without_recursion():
    value = 1
    for _ in range(replies.MAX_JSON_DEPTH + 1):
        value = [value]
    with pytest.raises(replies.BadReply, match="nested more deeply"):
        replies.check("call", call_reply(value=value))
    value = 1
    for _ in range(runtime.MAX_DEPTH):
        value = {runtime.DICT: [["k", value]]}
    replies.check("call", call_reply(value=value))  # as deep as to_plain goes: fine


def test_what_to_plain_produces_always_passes_and_renders():
    import numpy as np

    values = [None, True, 3, -2.5, "a\nb", [1, (2, 3)], {1: "x", (1, 2): [3]}, {1, 2}, frozenset("ab"),
              float("nan"), float("-inf"), np.int64(4), np.array([[1, 2], [3, 4]]), object(),
              (x for x in range(3)), list(range(5000)), "s" * 10000]
    for value in values:
        plain = json.loads(json.dumps(runtime.to_plain(value)))
        clean = replies.check("call", call_reply(value=plain))
        assert clean["value"] == plain
        assert isinstance(runtime.show(plain), str)


def test_messages_are_cut_and_made_storable():
    clean = replies.check("call", {"id": 1, "ok": False, "seconds": -5, "error": "\ud800" + "e" * 9000,
                                   "traceback": "t" * 9000})
    assert clean["error"].startswith("\\ud800") and len(clean["error"]) == replies.MAX_MESSAGE
    assert len(clean["traceback"]) == replies.MAX_TRACEBACK
    assert clean["seconds"] == 0.0
    clean["error"].encode("utf-8")


def test_show_is_bounded_in_time_and_never_raises():
    wide = [[[["x" * 50] * 20] * 20] * 20] * 20  # 160,000 strings: rendering all would take long
    started = time.perf_counter()
    text = runtime.show(wide)
    assert time.perf_counter() - started < 0.5
    assert len(text) <= 604 and text.endswith(" ...")
    big_dict = {runtime.DICT: [[i, i] for i in range(200000)]}
    assert runtime.show(big_dict).endswith(" ...")
    # Short values render exactly as before.
    assert runtime.show([1, "a", {runtime.SET: [1, 2]}, {runtime.DICT: [["k", None]]}]) == "[1, 'a', {1, 2}, {'k': None}]"
    assert runtime.show(list(range(30))) == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... (20 more)]"
    # Not a plain value at all: still a string.
    deep = []
    for _ in range(100000):
        deep = [deep]
    for odd in ({"a": 1, "b": 2}, object(), deep, 10 ** 5000):
        assert isinstance(runtime.show(odd), str)


def test_scoring_a_checked_value_never_raises(nqueens, nqueens_expected):
    case = nqueens.cases[0]
    for plain in ({runtime.OPAQUE: "x.Y"}, {runtime.TOO_BIG: True}, {runtime.FLOAT: "nan"},
                  {runtime.SET: [[1], "a"]}, [[[[]]]], "\n" * 1000):
        replies.check_plain(plain)
        result = scoring.score_case(case, nqueens_expected[case.name], CallOutcome("ok", value=plain))
        assert result.status == "failed" and isinstance(result.received, str)
