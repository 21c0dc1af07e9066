"""Winnowing fingerprints of a student's own code (copydetect), and how much two students share.

What is fingerprinted is each file's canonical form (canonical.py), the stub's too.
copydetect tokenises a file with Pygments and keeps its shape, not its names: every variable,
attribute and function name becomes V/F, a class name O, a string S, and comments and
whitespace go (so renamed variables and added comments change nothing). It then hashes every
K-character window of that text (K = 25, copydetect's default noise threshold; every window is
kept, copydetect's default when the guarantee threshold equals it).

The stub a student was given must never count. copydetect drops a window that also occurs in
the boilerplate (the stub), but a window that straddles the stub's last characters and the
student's first ones survives: `...-> V.V: S V = V` after every signature, shared by any two
solutions that start with an assignment; so does a short given piece between two answers (a
method's signature, `defF(V,V:V.V)->V.V:`, shorter than a window). On this course's short
exercises those windows alone gave independent solutions 20-45 % "similarity". So `own` also
drops every window that overlaps a piece of the stub: GIVEN_PIECE or more tokenised characters
that the stub has too. What is left is made of the student's own characters only. Code shorter
than one window (a one-line answer) is left with nothing to compare, on purpose: too short to
tell a copy from the obvious answer.

`similarity` A->B is the share of A's own code (tokens covered by its remaining windows) that
B also has; B->A the other way. Nothing here runs or imports a student's code: it is text.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

K = 25  # characters of tokenised code per fingerprint (copydetect's default noise threshold)
GIVEN_PIECE = 16  # a run this long that the stub has too is the stub's (a signature between two answers)


@dataclass
class Match:
    a_to_b: float  # share of A's own code found in B
    b_to_a: float
    tokens: int  # tokens of A's own code found in B
    slices: tuple  # (A's, B's): 2xN arrays of [start, end) character ranges in each file as compared


@dataclass
class Stub:
    """What a student was given, as fingerprints: `hashes`, every window of the stub
    (copydetect's boilerplate); `pieces`, every GIVEN_PIECE-character run of it."""

    hashes: np.ndarray
    pieces: np.ndarray


def boilerplate(stub: str, filename: str) -> Stub:
    """The stub's fingerprints (an empty stub: none, so nothing counts as given)."""
    from copydetect.detector import CodeFingerprint
    from copydetect.utils import hashed_kgrams

    fp = CodeFingerprint(filename, K, 1, fp=io.StringIO(stub))
    pieces = hashed_kgrams(fp.filtered_code, GIVEN_PIECE) if len(fp.filtered_code) >= GIVEN_PIECE else []
    return Stub(np.unique(np.array(sorted(fp.hashes), dtype=np.int64)), np.unique(np.array(pieces, dtype=np.int64)))


def own(code: str, stub: Stub, filename: str):
    """copydetect's fingerprint of `code` (the stub as its boilerplate), keeping only the windows
    made of the student's own characters: none that overlaps a piece of the stub (module doc)."""
    from copydetect.detector import CodeFingerprint
    from copydetect.utils import get_token_coverage, hashed_kgrams

    fp = CodeFingerprint(filename, K, 1, boilerplate=stub.hashes, fp=io.StringIO(code))
    text = fp.filtered_code
    if len(stub.pieces) and len(text) >= K:
        given = np.zeros(len(text) + K, dtype=bool)
        for i in np.nonzero(np.isin(hashed_kgrams(text, GIVEN_PIECE), stub.pieces))[0]:
            given[i : i + GIVEN_PIECE] = True
        starts = np.concatenate([[0], np.cumsum(given)])  # given[i:i+K].any() <=> starts[i+K] > starts[i]
        kept = {}
        for h, idx in fp.hash_idx.items():
            mine = [i for i in idx if starts[i + K] == starts[i]]
            if mine:
                kept[h] = mine
        fp.hash_idx, fp.hashes = kept, set(kept)
        fp.token_coverage = get_token_coverage(kept, K, len(text))
    return fp


def own_tokens(fp) -> int:
    return int(fp.token_coverage)


def similarity(a, b) -> Match:
    """How much of A's own code is in B's and the other way (copydetect's compare_files)."""
    from copydetect.detector import compare_files

    if not a.hashes or not b.hashes or not (a.hashes & b.hashes):
        return Match(0.0, 0.0, 0, (np.zeros((2, 0), int), np.zeros((2, 0), int)))
    tokens, (ab, ba), slices = compare_files(a, b)
    return Match(float(ab), float(ba), int(tokens), tuple(_ordered(s) for s in slices))


def _ordered(s: np.ndarray) -> np.ndarray:
    """Character ranges sorted, clipped so none starts before the previous one ends (copydetect
    maps a range starting at a class name from a wrong offset), empty ones dropped: highlighted,
    every character of the file is shown exactly once."""
    s = np.asarray(s, dtype=np.int64).reshape(2, -1)
    out, end = [], 0
    for start, stop in sorted(zip(s[0].tolist(), s[1].tolist())):
        start = max(start, end)
        if stop > start:
            out.append((start, stop))
            end = stop
    return np.array(out, dtype=np.int64).T.reshape(2, -1)
