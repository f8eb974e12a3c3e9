"""Lists of people for one line of output: the first few, then how many more."""


def names(students, limit=12):
    """`Ann, Bob and 3 more`: a list of students for one line, the first `limit` of them named."""
    return ", ".join(students[:limit]) + (f" and {len(students) - limit} more" if len(students) > limit else "")
