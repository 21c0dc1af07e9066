"""Checks, one module per exercise (test_<id>.py). Trusted code: never visible to the worker."""
