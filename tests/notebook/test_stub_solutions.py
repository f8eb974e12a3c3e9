import pytest

from autograder.core.errors import BuildError
from autograder.notebook.preprocessors.stub_solutions import stub_source


def test_solution_regions_become_stubs_at_their_indentation():
    source = ("def f(x):\n"
              "    # keep this hint\n"
              "    ### BEGIN SOLUTION\n"
              "    secret = x * 42\n"
              "    return secret\n"
              "    ### END SOLUTION\n")
    stubbed = stub_source(source)
    assert "secret" not in stubbed and "42" not in stubbed
    assert stubbed.splitlines() == [
        "def f(x):",
        "    # keep this hint",
        "    ### BEGIN YOUR CODE",
        '    raise NotImplementedError("replace this line with your code")',
        "    ### END YOUR CODE",
    ]


@pytest.mark.parametrize("source, problem", [
    ("### BEGIN SOLUTION\nx = 1\n", "never closed"),
    ("x = 1\n### END SOLUTION\n", "without BEGIN"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n", "inside another"),
])
def test_unbalanced_regions_are_build_errors(source, problem):
    with pytest.raises(BuildError, match=problem):
        stub_source(source, "cell 3")
