"""Which of a student's hand-ins counts: the later one, by what every one of them has (gradebook/store.py)."""

from datetime import timedelta, timezone

from autograder.gradebook.store import order_keys, order_note

EASTERN_SUMMER = timezone(timedelta(hours=-4))


def _later(rows, zone=None):
    keys = order_keys(rows, zone)
    return max(range(len(rows)), key=keys.__getitem__)


def test_two_times_with_different_offsets_are_compared_as_instants_never_as_text():
    # The night the clocks go back: 01:50 EDT (05:50 UTC) came before 01:10 EST (06:10 UTC); as text it sorts after.
    rows = [("2026-11-01T01:50:00-04:00", None, None, "run-1"), ("2026-11-01T01:10:00-05:00", None, None, "run-1")]
    assert _later(rows) == 1
    rows = [("2026-11-01T20:00:00Z", None, None, "b"), ("2026-11-01T16:30:00-05:00", None, None, "a")]
    assert _later(rows) == 1           # 21:30 UTC, given first
    assert order_note(rows[1], [rows[0]]) == ""       # a time decided, as one expects: nothing to say


def test_a_time_only_one_hand_in_has_orders_nothing():
    # An earlier run's --times gave the first upload a time; the re-upload, graded without, is later by Canvas.
    rows = [("2026-11-01T20:00:00-05:00", 7001, None, "run-1"), (None, 7101, None, "run-2")]
    assert _later(rows) == 1
    assert "the later upload counts, by the LMS's order" in order_note(rows[1], [rows[0]])
    # Nothing else both have: the download given later counts, and the row says the order is unknown.
    rows = [("2026-11-01T20:00:00-05:00", None, None, "run-2"), (None, None, None, "run-1")]
    assert _later(rows) == 0
    assert order_note(rows[0], [rows[1]]).startswith("order unknown")


def test_a_time_without_an_offset_is_read_in_the_deadline_s_zone_or_orders_nothing():
    rows = [("2026-10-20T22:30:00", None, None, "run-2"), ("2026-10-21T02:00:00Z", None, None, "run-1")]
    assert _later(rows, EASTERN_SUMMER) == 0          # 02:30 UTC after 02:00 UTC
    assert _later(rows, None) == 0 and order_note(rows[0], [rows[1]]).startswith("order unknown")
    naive = [("2026-10-20T22:30:00", None, None, "run-1"), ("2026-10-20T21:00:00", None, None, "run-2")]
    assert _later(naive) == 0                         # one clock: read alike
