import numpy as np
import pytest

from autograder.core.calls import CallError, parse_call
from autograder.engine.worker import decode


def test_call_text_becomes_function_and_values():
    call = parse_call("is_solved(list(range(4)))")
    assert call.function == "is_solved"
    assert call.args == ([0, 1, 2, 3],)


@pytest.mark.parametrize("text, value", [
    ("f((1, 3, 0, 2))", (1, 3, 0, 2)),
    ("f([0, -1, 2.5, 'x', None, True])", [0, -1, 2.5, "x", None, True]),
    ("f({'a': (1, 2)})", {"a": (1, 2)}),
    ("f({1, 2})", {1, 2}),
    ("f(range(2, 9, 3))", range(2, 9, 3)),
])
def test_arguments_survive_the_trip_to_the_worker(text, value):
    call = parse_call(text)
    assert decode(call.encoded()["args"][0]) == value
    assert type(decode(call.encoded()["args"][0])) is type(value)


def test_numpy_arrays_keep_their_dtype():
    call = parse_call("f(np.array([2, 0, 3, 1]))")
    array = decode(call.encoded()["args"][0])
    assert isinstance(array, np.ndarray)
    assert array.tolist() == [2, 0, 3, 1]
    assert array.dtype == np.array([2, 0, 3, 1]).dtype


def test_keyword_arguments():
    call = parse_call("f(3, strict=True)")
    assert call.kwargs == {"strict": True}


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')",
    "f(open('/etc/passwd'))",
    "f(x)",
    "obj.method(1)",
    "f(*args)",
    "f(**{'a': 1})",
    "1 + 2",
    "f(",
])
def test_unsafe_or_unclear_calls_are_refused(text):
    with pytest.raises(CallError):
        parse_call(text)
