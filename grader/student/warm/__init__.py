"""The warm grader: one trusted process per course that keeps torch, pytest, the checks and a
sandboxed fork server loaded between gradings, so that `kata check` and a save in `kata watch`
pay only for the checks themselves.

    address.py  where a course's server listens (a private folder), its stamp, the wire format
    server.py   the server (`python -m grader.student.warm.server ROOT`, started by the client
                from the grader package it imported); grades exercises/ only
    client.py   what `kata check`, `watch` and `list` call: starts the server on demand, sends
                a request, builds the result back; imports no torch

The server grades exactly as `kata check` did in its own process (grader/checking/runner.py, the
public checks, the same sandbox): every check still runs in a fresh worker forked from a fork
server that never ran student code. It is a student's convenience, never the grade: `kata
grade`, the batch and the exports do not use it. It stops after KATA_WARM_IDLE seconds (600)
without a request; KATA_WARM=0 turns it off (each command then grades in its own process).
"""
