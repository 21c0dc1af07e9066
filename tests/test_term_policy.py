"""One term policy, wherever the grading ran (issue 34, item 3): the due date, the late rule, the
students' own due dates (`--extensions`) and what an enrolled student without a submission gets
(`--missing zero|blank`) are given once and applied the same by a whole run (`kata grade DIR --out
OUT`), by shards (`--shard K/N`) and by the merge (`kata gradebook OUT`); they are stored in OUT's
batch.json, so every later `kata gradebook OUT` applies them; submission times without a due date
are never "safe to import".

Nothing is graded here: OUT holds the records a grading run stores (students/<name>/report.json,
batch.json or shards/K-of-N.json written by the run's own run._meta), and `kata grade` finds every
submission of the class folder already graded (same entry, same fingerprint), so it only writes the
files. The inputs are in the platforms' shapes: Canvas's gradebook export as the roster
(tests/test_roster_exports.py's CANVAS, keyed on SIS Login ID), the documented timestamp file
(`student,submitted_at`), an extensions file keyed like them (`login,due`).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import unicodedata
from pathlib import Path

import yaml

from grader.course import manifest
from grader.instructor.batch import run, store
from grader.instructor.batch.discover import fingerprint
from grader.instructor.batch.shards import part
from tests.conftest import ROOT, kata
from tests.test_roster_exports import CANVAS, NFC_JOSE, NFD_JOSE

COURSE = manifest.load(ROOT)
WEEK1 = COURSE.assignments[0]  # course.toml's week1: 10% a day, 0 after 7 days, no due date of its own
assert WEEK1.id == "week1" and WEEK1.due is None
FP = store.course_fingerprint(COURSE)
DUE = "2027-03-14T23:59:00+08:00"
# alice on time, bob 2 days late, carl 2 days late but extended by 3 days, dana on time
TIMES = (
    "student,submitted_at\nalice,2027-03-14T20:00:00+08:00\nbob,2027-03-16T10:00:00+08:00\n"
    "carl,2027-03-16T10:00:00+08:00\ndana,2027-03-14T08:00:00+08:00\n"
)
NAMES = ("alice", "bob", "carl", "dana")


def record(name: str, score: float = 100.0, fp: str = "0" * 64) -> dict:
    """A graded report as a run with -a week1 stores it (out of the assignment's 100 points)."""
    return {
        "schema": 1,
        "score": score,
        "max_score": 100.0,
        "submission": name,
        "sandbox": "bubblewrap",
        "lang": "en",
        "exercises": [{"id": WEEK1.exercises[0], "section": "1.1", "title": "x", "score": score, "max_score": 100.0}],
        "checks": [],
        "student": {
            "status": "graded",
            "reason": "",
            "source": name,
            "name": name,
            "fingerprint": fp,
            "course": FP,
            "mtime": "2027-03-16T02:00:00+00:00",
        },
    }


def run_meta(**given) -> dict:
    """batch.json as `kata grade ... -a week1` writes it (run._meta), before the class's own keys."""
    meta = run._meta(COURSE, run.Options(exercises=list(WEEK1.exercises), assignment=WEEK1), FP)
    meta.update(
        created="2027-03-20T00:00:00Z",
        jobs=1,
        skipped=[],
        renamed=[],
        roster_name=None,
        lms_assignment=None,
        submitted_at=None,
        **given,
    )
    return meta


def whole_run(tmp_path: Path, names=NAMES, **given) -> Path:
    """OUT as a whole run with -a week1 leaves it."""
    out = tmp_path / "out"
    for name in names:
        store.write_json(store.record_path(out, name), record(name))
    store.write_json(out / store.META, run_meta(class_dir=str(tmp_path / "class"), **given))
    return out


def sharded_run(tmp_path: Path, names=NAMES, n: int = 2, **given) -> Path:
    """OUT as N shards with -a week1 leave it (`kata grade ... --shard K/N`), before the merge."""
    out = tmp_path / "sharded"
    for name in names:
        store.write_json(store.record_path(out, name), record(name))
    for k in range(1, n + 1):
        meta = run_meta(
            class_dir=str(tmp_path / "class"), shard=[k, n], entries={x: x for x in names if part(x, n) == k}, **given
        )
        store.write_json(out / "shards" / f"{k}-of-{n}.json", meta)
    return out


def class_folder(tmp_path: Path, names=NAMES) -> Path:
    """A class folder whose every submission OUT (whole_run/sharded_run with class_graded) already
    graded: `kata grade` on it grades nothing and writes the files."""
    cls = tmp_path / "class"
    for name in names:
        (cls / name / "ch01").mkdir(parents=True)
        (cls / name / "ch01" / f"{WEEK1.exercises[0]}.py").write_text(f"# {name}\n")
    return cls


def class_graded(tmp_path: Path, out: Path, names=NAMES) -> Path:
    """The class folder, and OUT's records carrying its entries' fingerprints (graded already)."""
    cls = class_folder(tmp_path, names)
    for name in names:
        store.write_json(store.record_path(out, name), record(name, fp=fingerprint(cls / name)))
    return cls


def files(tmp_path: Path, **contents: str) -> dict[str, str]:
    paths = {}
    for name, text in contents.items():
        (tmp_path / f"{name}.csv").write_text(text, encoding="utf-8")
        paths[name] = str(tmp_path / f"{name}.csv")
    return paths


def grades(out: Path, name: str = "canvas.csv") -> dict[str, str]:
    """canvas.csv: login -> grade; moodle.csv: username -> grade."""
    rows = list(csv.reader(io.StringIO((out / name).read_text(encoding="utf-8"))))
    if name == "canvas.csv":
        return {unicodedata.normalize("NFC", r[3]): r[-1] for r in rows[2:]}
    return {unicodedata.normalize("NFC", r[1]): r[4] for r in rows[1:]}


# ------------------------------------------------------------------ 1. one due date, wherever given
def test_a_due_date_given_to_the_merge_of_shards_reaches_the_top_level_lms_files_and_stays(tmp_path):
    """The trial: `kata gradebook OUT --due` on shards graded with -a week1 was refused unless -a was
    given, and then only assignments/week1/ had the penalty; canvas.csv kept bob's 100."""
    f = files(tmp_path, times=TIMES)
    out = sharded_run(tmp_path)
    merge = kata("gradebook", str(out), "--due", DUE, "--submitted-at", f["times"])
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert (
        "Merged 2 shard(s) of 2" in merge.stdout
        and "late penalties applied to 2: bob (-20%), carl (-20%)" in merge.stdout
    )
    assert grades(out) == {"alice": "100", "bob": "80", "carl": "80", "dana": "100"}
    meta = json.loads((out / "batch.json").read_text())
    assert meta["late"]["due"] == DUE and meta["late"]["per_day"] == 10.0 and meta["term"]["due"] == DUE
    # every later `kata gradebook OUT` (a merge again) applies it: nothing given, nothing dropped
    again = kata("gradebook", str(out))
    assert again.returncode == 0, again.stdout + again.stderr
    assert grades(out) == {"alice": "100", "bob": "80", "carl": "80", "dana": "100"}
    # the same due date on one machine's run: the same LMS files, byte for byte
    one = whole_run(tmp_path)
    assert kata("gradebook", str(one), "--due", DUE, "--submitted-at", f["times"]).returncode == 0
    for name in ("canvas.csv", "moodle.csv", "gradebook.csv"):
        assert (one / name).read_bytes() == (out / name).read_bytes(), name
    # an extension of the deadline given with -a week1 (the run's own assignment): the assignment's
    # files and OUT's own carry it
    later = kata("gradebook", str(out), "-a", "week1", "--due", "2027-03-16T23:59:00+08:00")
    assert later.returncode == 0, later.stdout + later.stderr
    assert (
        grades(out / "assignments" / "week1")
        == grades(out)
        == {"alice": "100", "bob": "100", "carl": "100", "dana": "100"}
    )
    assert kata("gradebook", str(out)).returncode == 0 and grades(out)["bob"] == "100"


def test_shards_take_one_due_date_and_the_merge_applies_it(tmp_path):
    """--due on the shards (every shard the same, or the next one is refused), applied by the merge."""
    f = files(tmp_path, times=TIMES)
    out = tmp_path / "sharded"
    store.write_json(out / store.META, run_meta(class_dir=str(tmp_path / "class")))  # an earlier whole run's
    cls = class_graded(tmp_path, out)
    first = kata("grade", str(cls), "--out", str(out), "-a", "week1", "--shard", "1/2", "--due", DUE)
    assert first.returncode == 0, first.stdout + first.stderr
    other = kata(
        "grade", str(cls), "--out", str(out), "-a", "week1", "--shard", "2/2", "--due", "2027-03-15T23:59:00+08:00"
    )
    assert other.returncode == 2 and "late:" in other.stderr and "1-of-2" in other.stderr, other.stderr
    second = kata("grade", str(cls), "--out", str(out), "-a", "week1", "--shard", "2/2", "--due", DUE)
    assert second.returncode == 0, second.stdout + second.stderr
    merge = kata("gradebook", str(out), "--submitted-at", f["times"])
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert grades(out) == {"alice": "100", "bob": "80", "carl": "80", "dana": "100"}
    # files belong to the merge: a shard refuses them, before it grades anything
    files(tmp_path, ext="login,due\nbob,2027-03-20T00:00:00Z\n")
    refused = kata(
        "grade", str(cls), "--out", str(out), "-a", "week1", "--shard", "1/2", "--extensions", str(tmp_path / "ext.csv")
    )
    assert refused.returncode == 2 and "--extensions: a shard grades part of the class" in refused.stderr


def test_a_due_date_is_applied_or_refused_with_the_reason_never_dropped(tmp_path):
    cls = class_folder(tmp_path, ["zed"])
    # a whole-course run: course.toml has four assignments, each with its own late rule
    whole = kata("grade", str(cls), "--out", str(tmp_path / "o"), "-e", "s1_02_anatomy", "--due", DUE)
    assert whole.returncode == 2 and "--assignment" in whole.stderr
    assert "course.toml has 4 assignments (week1, week2, week3, week4)" in whole.stderr, whole.stderr
    assert not (tmp_path / "o").exists()
    # an OUT graded without an assignment has no late rule to measure a due date with
    out = tmp_path / "course"
    store.write_json(store.record_path(out, "zed"), record("zed"))
    store.write_json(
        out / store.META, {"kind": "kata-batch", "format": 1, "title": "kata", "exercises": [], "assignment": None}
    )
    merge = kata("gradebook", str(out), "--due", DUE)
    assert merge.returncode == 2 and "--assignment" in merge.stderr
    bad = kata("gradebook", str(out), "--due", "2027-03-14 23:59")
    assert bad.returncode == 2 and "give a date-time with its UTC offset" in bad.stderr


# ------------------------------------------------------------------ 2. the students' own due dates
def test_extensions_measure_a_students_penalty_from_their_own_due_date_and_list_what_matches_nobody(tmp_path):
    f = files(
        tmp_path,
        times=TIMES.replace("dana", NFC_JOSE),
        ext=f"login,due\nCARL,2027-03-17T00:00:00+08:00\n{NFD_JOSE},2027-03-20T00:00:00+08:00\n"
        "carol,2027-03-20T00:00:00+08:00\n",
    )
    out = whole_run(tmp_path, ("alice", "bob", "carl", NFC_JOSE))
    done = kata("gradebook", str(out), "--due", DUE, "--submitted-at", f["times"], "--extensions", f["ext"])
    assert done.returncode == 5, done.stdout + done.stderr
    # CARL is carl's row (matched as the timestamps are: loosely when only one entry is alike), josé's
    # (NFD in the file) is josé's; carol's matches no submission: listed, with the closest name
    assert grades(out) == {"alice": "100", "bob": "80", "carl": "100", NFC_JOSE: "100"}
    assert "Extensions that match no submission and no roster line" in done.stdout
    assert "- 'carol'; closest name carl" in done.stdout
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert summary.index("## Check before importing") < summary.index("'carol'")
    assert "due dates extended for 2: carl (2027-03-17T00:00:00+08:00)" in summary
    book = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
    assert book["carl"]["final"] == "100" and "due extended to 2027-03-17T00:00:00+08:00" in book["carl"]["reason"]
    assert (out / "extensions.csv").read_text(encoding="utf-8") == Path(f["ext"]).read_text(encoding="utf-8")
    # kept in OUT: a later `kata gradebook OUT` measures carl from his own due date still, and still
    # lists carol's row
    again = kata("gradebook", str(out))
    assert again.returncode == 5 and "'carol'" in again.stdout and grades(out)["carl"] == "100"
    assert json.loads((out / "batch.json").read_text())["term"]["extensions"] == "ext.csv"


def test_an_extension_for_an_enrolled_student_without_a_submission_is_no_problem(tmp_path):
    f = files(tmp_path, roster=CANVAS, ext="login,due\nmhatter,2027-03-20T00:00:00+08:00\nalice,2027-03-20T00:00Z\n")
    out = whole_run(tmp_path, ("alice", NFC_JOSE))
    done = kata(
        "gradebook",
        str(out),
        "--roster",
        f["roster"],
        "--extensions",
        f["ext"],
        "--due",
        DUE,
        "--lms-assignment",
        "Attention (48213)",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Extensions that match" not in done.stdout


def test_an_extension_reaches_the_students_page_and_an_unreadable_file_stops_the_command(tmp_path):
    f = files(tmp_path, times=TIMES, ext="student,due\nbob,2027-03-15T12:00:00+08:00\n")
    out = whole_run(tmp_path)
    done = kata("gradebook", str(out), "--due", DUE, "--submitted-at", f["times"], "--extensions", f["ext"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert grades(out)["bob"] == "90"  # 1 day after his own due date, not 2 after the class's
    page = (out / "students" / "bob" / "feedback.html").read_text(encoding="utf-8")
    assert "due 2027-03-15 12:00 UTC+08:00: 1 day(s) late" in page
    for text, why in (
        ("login,when\nbob,2027-03-15T12:00:00Z\n", "bad.csv:1: needs a student column"),
        ("login,due\nbob,2027-03-15 12:00\n", "bad.csv:2: '2027-03-15 12:00' is not a date-time"),
        (
            "login,due\nbob,2027-03-15T12:00:00Z\nbob,2027-03-16T12:00:00Z\n",
            "bad.csv:3: bob already has another due date on line 2",
        ),
    ):
        files(tmp_path, bad=text)
        proc = kata("gradebook", str(out), "--extensions", str(tmp_path / "bad.csv"))
        assert proc.returncode == 2 and why in proc.stderr, proc.stderr
    assert json.loads((out / "batch.json").read_text())["term"]["extensions"] == "ext.csv"


# ------------------------------------------------------------------ 3. missing: 0 or blank
def test_missing_blank_leaves_an_enrolled_student_without_a_submission_empty_in_both_lms_files(tmp_path):
    f = files(tmp_path, roster=CANVAS)
    out = whole_run(tmp_path, ("alice", NFC_JOSE))
    zero = kata("gradebook", str(out), "--roster", f["roster"], "--lms-assignment", "Attention (48213)")
    assert zero.returncode == 0, zero.stdout + zero.stderr
    assert grades(out)["mhatter"] == "0" and grades(out, "moodle.csv")["mhatter"] == "0"
    blank = kata("gradebook", str(out), "--missing", "blank")
    assert blank.returncode == 0, blank.stdout + blank.stderr
    assert grades(out) == {"alice": "100", NFC_JOSE: "100", "mhatter": ""}
    moodle = list(csv.reader(io.StringIO((out / "moodle.csv").read_text(encoding="utf-8"))))
    assert [r for r in moodle if r[1] == "mhatter"][0][4:] == ["", ""]  # no grade, no "no submission" note
    assert (
        "1 enrolled without a submission, blank in the LMS files (the LMS keeps the grade it has): mhatter"
        in blank.stdout
    )
    # stored: every later `kata gradebook OUT` keeps it
    assert kata("gradebook", str(out)).returncode == 0 and grades(out)["mhatter"] == ""
    assert json.loads((out / "batch.json").read_text())["term"]["missing"] == "blank"


def test_a_whole_run_takes_the_term_policy_once_and_copies_its_files(tmp_path):
    f = files(
        tmp_path,
        times=TIMES,
        ext="login,due\nbob,2027-03-20T00:00:00+08:00\n",
        roster="login,name\nalice,Alice\nbob,Bob\ncarl,Carl\ndana,Dana\nerin,Erin\n",
    )
    out = whole_run(tmp_path)
    cls = class_graded(tmp_path, out)
    proc = kata(
        "grade",
        str(cls),
        "--out",
        str(out),
        "-a",
        "week1",
        "--due",
        DUE,
        "--submitted-at",
        f["times"],
        "--extensions",
        f["ext"],
        "--roster",
        f["roster"],
        "--missing",
        "blank",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 of 4 submissions already graded" in proc.stdout
    assert grades(out) == {"alice": "100", "bob": "100", "carl": "80", "dana": "100", "erin": ""}
    assert (out / "extensions.csv").is_file() and (out / "roster.csv").is_file()
    term = json.loads((out / "batch.json").read_text())["term"]
    assert (term["due"], term["missing"], term["extensions"]) == (DUE, "blank", "ext.csv")
    # the same command again without them (a resumed run) keeps what OUT holds
    again = kata("grade", str(cls), "--out", str(out), "-a", "week1")
    assert again.returncode == 0, again.stdout + again.stderr
    assert grades(out) == {"alice": "100", "bob": "100", "carl": "80", "dana": "100", "erin": ""}


# ------------------------------------------------------------------ 4. times without a due date
def test_submission_times_without_a_due_date_are_never_safe_to_import(tmp_path):
    f = files(tmp_path, times=TIMES)
    stored = whole_run(tmp_path, late=None)
    proc = kata("gradebook", str(stored), "--submitted-at", f["times"])
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "Check before importing" in proc.stdout and "but no due date: no late policy applied" in proc.stdout
    assert grades(stored)["bob"] == "100"
    summary = (stored / "summary.md").read_text(encoding="utf-8")
    assert summary.index("## Check before importing") < summary.index("but no due date")
    # shards merged with the times and no due date (the trial's "safe to import", exit 0)
    out = sharded_run(tmp_path)
    merge = kata("gradebook", str(out), "--submitted-at", f["times"])
    assert merge.returncode == 5 and "but no due date" in merge.stdout, merge.stdout + merge.stderr
    assert "safe to import" not in merge.stdout
    # a whole run with --submitted-at mtime and no due date
    whole = tmp_path / "whole"
    whole.mkdir()
    w = whole_run(whole)
    cls = class_graded(whole, w)
    graded = kata("grade", str(cls), "--out", str(w), "-a", "week1", "--submitted-at", "mtime")
    assert graded.returncode == 5 and "but no due date" in graded.stdout, graded.stdout + graded.stderr
    # given the due date, the same OUT is safe (times from the platform's file)
    fixed = kata("gradebook", str(out), "--due", DUE)
    assert fixed.returncode == 0 and grades(out)["bob"] == "80", fixed.stdout + fixed.stderr


# ------------------------------------------------------------------ 5. the cluster recipes
SBATCH = ROOT / "recipes" / "slurm" / "grade-array.sbatch"
INDEXED_JOB = ROOT / "recipes" / "kubernetes" / "grade-indexed-job.yaml"


def _kata_args(command: str) -> list[str]:
    """The arguments after `kata` in a shell command line of a recipe's comment."""
    import shlex

    words = shlex.split(command)
    return words[next(i for i, w in enumerate(words) if w.endswith("kata")) + 1 :]


def _parses(args: list[str]):
    from grader.cli import build_parser

    return build_parser().parse_args(args)


def test_the_slurm_recipe_shows_a_term_with_its_due_date_end_to_end(tmp_path):
    """The script's header gives the two commands of a term: the array (the shards: -a), run here as
    Slurm runs each task, and the merge (--due, --submitted-at, --roster, --extensions): kata's own
    options, where kata takes them."""
    from tests.test_cluster_recipes import argv_of, array_task, fake_kata, run_script

    text = SBATCH.read_text()
    array = next(line for line in text.splitlines() if "sbatch --parsable --array" in line and "week2" in line)
    merge = next(line for line in text.splitlines() if "--dependency=afterany" in line and "--due" in line)
    script_args = array.split("grade-array.sbatch", 1)[1].rstrip(")").split()
    kata_bin = fake_kata(tmp_path / "bin")
    proc = run_script(SBATCH, script_args, {**array_task(2, 4), "KATA": str(kata_bin)}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    shard = _parses(argv_of(kata_bin))
    assert (shard.command, shard.shard, shard.assignment, shard.due) == ("grade", "3/4", "week2", None)
    got = _parses(_kata_args(re.search(r'--wrap "([^"]+)"', merge)[1]))
    assert (got.command, got.out, got.due) == ("gradebook", "grades/week2", DUE)
    assert got.submitted_at and got.roster and got.extensions
    # the header says where each of the term's options goes
    for option in ("--due", "--submitted-at", "--roster", "--extensions", "--missing"):
        assert option in text.split("set -euo pipefail")[0], option


def _configmap() -> dict:
    docs = [d for d in yaml.safe_load_all(INDEXED_JOB.read_text()) if d]
    return next(d for d in docs if d["kind"] == "ConfigMap")["data"]


def _env(container: dict, data: dict) -> dict:
    """A container's environment as the kubelet gives it: values, and the ConfigMap's keys."""
    env = {}
    for e in container.get("env", []):
        if "value" in e:
            env[e["name"]] = e["value"]
        elif "configMapKeyRef" in e.get("valueFrom", {}):
            ref = e["valueFrom"]["configMapKeyRef"]
            if ref["key"] in data:
                env[e["name"]] = data[ref["key"]]
    return env


def test_the_kubernetes_recipe_gives_the_term_once_to_the_shards_and_the_merge(tmp_path):
    """One ConfigMap, kata-term, holds the term: the pods grade its assignment, the merge applies its
    due date, submission times, roster and extensions ($(VAR) in args, as the kubelet expands it)."""
    docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(INDEXED_JOB.read_text()) if d}
    data = _configmap()
    assert data["due"] == DUE and data["assignment"] == "week2"
    grade = docs["Job", "kata-grade"]["spec"]["template"]["spec"]["containers"][0]
    env = _env(grade, data)
    kata_bin = tmp_path / "bin" / "kata"
    kata_bin.parent.mkdir()
    kata_bin.write_text('#!/usr/bin/env bash\nprintf \'%s\\n\' "$@" > "$(dirname "$0")/argv"\n')
    kata_bin.chmod(0o755)
    script = tmp_path / "pod.sh"
    script.write_text(grade["args"][0])
    base = {k: v for k, v in os.environ.items() if not k.startswith("KATA")}
    proc = subprocess.run(
        ["bash", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **env, "KATA": str(kata_bin), "JOBS": "4", "JOB_COMPLETION_INDEX": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    argv = (kata_bin.parent / "argv").read_text().splitlines()
    assert argv == [
        "grade",
        "/grading/class",
        "--out",
        "/grading/out",
        "--shard",
        f"2/{env['SHARDS']}",
        "--jobs",
        "4",
        "-a",
        "week2",
    ]
    assert _parses(argv).assignment == "week2"
    merge = docs["Job", "kata-gradebook"]["spec"]["template"]["spec"]["containers"][0]
    menv = _env(merge, data)
    args = [re.sub(r"\$\((\w+)\)", lambda m: menv[m[1]], a) for a in merge["command"][1:] + merge["args"]]
    got = _parses(args)
    assert (got.command, got.out, got.due) == ("gradebook", "/grading/out", DUE)
    assert got.submitted_at and got.roster and got.extensions
