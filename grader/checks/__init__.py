"""Checks, one module per exercise (test_<id>.py), and the references they compare with.
Trusted code: never visible to the worker. Imports checking, worker.proxy, capstone (data, gpt2)
and course."""
