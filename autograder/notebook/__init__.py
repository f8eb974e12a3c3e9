"""The student notebook, built from the reference one step (preprocessor) at a time."""
