"""Similarity triage (issue 34): a file handed in by many, near-identically, is one group line.

Two kinds of file a whole class hands in: a copy passed round (the reference with a syntax error
added, so it is compared as written) that some students re-indented, saved with Windows line
endings or touched in a name; and the untouched or syntax-error stub. Each is one line naming the
exercise, the count and the members, before the pairs (similarity.md, the console) and instead of
a pair per classmate (similarity.csv); the one student who wrote their own code is still compared
with the group, once.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from tests.conftest import EXERCISES, SOLUTIONS

EX = "s1_17_layer_norm"
BROKEN = "\ndef broken(:\n    mean = x.mean(dim=-1 keepdim=True\n"


def run(tmp_path: Path, files: dict[str, str], capsys) -> tuple[str, str, list[dict]]:
    """`kata similarity` on a class whose students hand in `files` (student -> EX's text):
    (console, similarity.md, similarity.csv's rows)."""
    from grader.cli import main

    cls = tmp_path / "class"
    for name, text in files.items():
        (cls / name / "ch01").mkdir(parents=True)
        (cls / name / "ch01" / f"{EX}.py").write_bytes(text.encode("utf-8"))
    out = tmp_path / "out"
    old = os.environ.get("KATA_LANG")
    os.environ["KATA_LANG"] = "en"
    try:
        assert main(["similarity", str(cls), "--out", str(out), "-e", EX]) == 0
    finally:
        os.environ.pop("KATA_LANG", None) if old is None else os.environ.__setitem__("KATA_LANG", old)
    console = capsys.readouterr().out
    rows = list(csv.DictReader(io.StringIO((out / "similarity.csv").read_text(encoding="utf-8"))))
    return console, (out / "similarity.md").read_text(encoding="utf-8"), rows


def test_a_near_identical_copy_handed_in_by_many_is_one_line(tmp_path, capsys):
    copy = (SOLUTIONS / "ch01" / f"{EX}.py").read_text(encoding="utf-8") + BROKEN  # does not parse
    files = {
        "s1": copy,
        "s2": copy,
        "s3": copy.replace("\n", "\r\n"),
        "s4": copy + "   \n",
        "s5": copy.replace("    ", "\t"),  # re-indented with tabs
        "s6": copy.replace("x.mean(dim=-1 keepdim", "y.mean(dim=-1 keepdim"),  # a name touched
        "s7": copy.replace("# BEGIN", "# begin"),
        "own": (SOLUTIONS / "ch01" / f"{EX}.py").read_text(encoding="utf-8"),
    }  # the reference, parsing
    console, md, rows = run(tmp_path, files, capsys)
    group = [f"s{i}" for i in range(1, 8)]
    assert f"the same code from 7 students on 1 exercise(s) ({EX}): {', '.join(group)}" in console, console
    assert console.count("s5") == 1 and console.count("s6") == 1, console  # no pair of s5 or s6 of their own
    assert f"{EX}  own ~ s1 (+6)" in console, console  # the one who differs: compared with the group once
    section = md.split("## The same code handed in by several students")[1].split("\n## ")[0]
    assert f"| 7 | {', '.join(group)} | {EX} |" in section, section
    flagged = [(r["student_a"], r["student_b"]) for r in rows if r["flagged"] == "yes"]
    assert flagged == [("own", "s1")], flagged  # not one pair per classmate
    same = [r for r in rows if r["flagged"] == "same code"]
    assert sorted(r["student_b"] for r in same) == group[1:] and {r["student_a"] for r in same} == {"s1"}


def test_the_untouched_or_broken_stub_handed_in_by_many_is_one_line_not_a_pair_per_classmate(tmp_path, capsys):
    stub = (EXERCISES / "ch01" / f"{EX}.py").read_text(encoding="utf-8")
    broken = stub.replace("raise NotImplementedError(", "raise NotImplementedError((", 1)  # a syntax error
    files = (
        {f"u{i}": stub for i in range(1, 6)}
        | {"u6": stub.replace("\n", "\r\n")}
        | {f"b{i}": broken for i in range(1, 4)}
    )
    console, md, rows = run(tmp_path, files, capsys)
    section = md.split("## The same file with too little code of its own")[1].split("\n## ")[0]
    assert f"| 6 | u1, u2, u3, u4, u5, u6 | {EX} |" in section, section
    assert f"| 3 | b1, b2, b3 | {EX} |" in section, section
    pairs = {(r["student_a"], r["student_b"]) for r in rows}
    assert len(rows) == 5 + 2 + 1, rows  # each group's members with its first student, and the two groups once
    assert pairs == {("u1", f"u{i}") for i in range(2, 7)} | {("b1", "b2"), ("b1", "b3"), ("b1", "u1")}, pairs
    assert all(r["flagged"] == "no" for r in rows), rows  # nothing of their own: never flagged
    grouped = [r for r in rows if r["reason"]]
    assert len(grouped) == 7 and all("too little code of its own to compare" in r["reason"] for r in grouped)
    assert "u2" not in console and "b2" not in console  # not suspicious: similarity.md has the line


def test_two_alike_students_are_still_a_pair(tmp_path, capsys):
    """Fewer than CLUSTER_MIN (3) alike: the pair is compared as before."""
    copy = (SOLUTIONS / "ch01" / f"{EX}.py").read_text(encoding="utf-8") + BROKEN
    console, md, rows = run(tmp_path, {"a": copy, "b": copy.replace("    ", "\t")}, capsys)
    assert [(r["student_a"], r["student_b"], r["flagged"]) for r in rows] == [("a", "b", "yes")]
    assert "## The same" not in md and f"{EX}  a ~ b" in console
