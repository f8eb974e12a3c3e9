"""`autograder build`: every generated file, from the reference notebooks and their cases."""
