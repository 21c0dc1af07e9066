"""A full disk where a report goes (issue 7, item 3): `kata grade SUB --json FILE`, `--html FILE`
and `kata check --html FILE` say which file and "no space left on device" in plain words, exit
with status 3, and never leave a half-written file: FILE keeps what it held before, and no
temporary file stays beside it. Freed space and the same command again: the file is written.

The full disk is real: a small tmpfs (root only), filled up but for what the test leaves free.
`kata grade DIR --out OUT` on a full disk: tests/test_batch_resume.py. The helper that writes
every file: grader/course/atomic.py."""

import json
import subprocess

from tests.conftest import fill, make_submission
from tests.test_student_commands import kata_in

EX = ["-e", "s1_11_matmul"]
OLD = '{"an earlier report": true}\n'


def _only(disk, *names):
    """The disk holds exactly these files (and the filler): nothing half written, no temp file."""
    assert sorted(p.name for p in disk.iterdir()) == sorted(["filler", *names])


def _says_disk_full(proc, path, command="grade"):
    assert proc.returncode == 3, (proc.returncode, proc.stdout, proc.stderr)
    assert f"kata {command}: cannot write {path}: no space left on device" in proc.stderr, proc.stderr
    assert (
        f"Nothing was half written: {path} is as it was before. Free some space there and run the same "
        "command again." in proc.stderr
    ), proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_grade_json_on_a_full_disk_keeps_the_earlier_report_and_says_so(tmp_path, small_disk, monkeypatch, capfd):
    sub = make_submission(tmp_path)
    disk = small_disk("disk", 256)
    report = disk / "report.json"
    report.write_text(OLD)
    filler = fill(disk, 0)

    proc = kata_in(tmp_path, "grade", str(sub), "--json", str(report), "--quiet", *EX, here=(monkeypatch, capfd))
    _says_disk_full(proc, report)
    assert report.read_text() == OLD
    _only(disk, "report.json")

    filler.unlink()  # space again: the same command writes the report
    proc = kata_in(tmp_path, "grade", str(sub), "--json", str(report), "--quiet", *EX, here=(monkeypatch, capfd))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(report.read_text())["score"] == 5


def test_grade_and_check_html_on_a_full_disk_write_no_half_page(tmp_course, small_disk, monkeypatch, capfd):
    disk = small_disk("disk", 256)
    page = disk / "feedback.html"
    page.write_text("<p>an earlier page</p>\n")
    fill(disk, 4096)  # one page: the new page (over 4 KB) fails mid-write, the old one still holds its own

    proc = kata_in(tmp_course, "grade", "solutions", "--html", str(page), "--quiet", *EX, here=(monkeypatch, capfd))
    _says_disk_full(proc, page)
    assert page.read_text() == "<p>an earlier page</p>\n"
    _only(disk, "feedback.html")

    proc = kata_in(tmp_course, "check", "s1_11_matmul", "--html", str(page), here=(monkeypatch, capfd))
    _says_disk_full(proc, page, command="check")
    assert "✘" in proc.stdout  # the checks ran and were shown (the stubs fail them); only the page is missing
    assert page.read_text() == "<p>an earlier page</p>\n"
    _only(disk, "feedback.html")


def test_a_read_only_folder_or_a_folder_named_as_the_file_is_said_plainly(tmp_path, small_disk, monkeypatch, capfd):
    sub = make_submission(tmp_path)
    disk = small_disk("disk", 64)
    (disk / "report.json").write_text(OLD)
    assert subprocess.run(["mount", "-o", "remount,ro", str(disk)]).returncode == 0
    for target, reason in ((disk / "report.json", "read-only file system"), (tmp_path, "it is a folder")):
        proc = kata_in(tmp_path, "grade", str(sub), "--json", str(target), "--quiet", *EX, here=(monkeypatch, capfd))
        assert proc.returncode == 3, (proc.stdout, proc.stderr)
        assert f"kata grade: cannot write {target}: {reason}" in proc.stderr
        assert (
            f"Nothing was half written: {target} is as it was before. Choose a place you can write to (or fix "
            "its permissions) and run the command again." in proc.stderr
        )
        assert "Traceback" not in proc.stderr
    assert (disk / "report.json").read_text() == OLD
    assert not list(tmp_path.parent.glob(f".{tmp_path.name}.*")), "the temporary file stayed beside the folder"


def test_assets_unpack_on_a_full_disk_blames_the_disk_not_the_archive(tmp_path, small_disk, monkeypatch, capsys):
    from tests.test_assets import _archive, _file, _listed, kata as kata_assets, use_cache

    disk = small_disk("lab", 128)
    assets, data = use_cache(monkeypatch, disk)
    assets.mkdir(parents=True)
    (assets / "gpt2.tiktoken").write_bytes(b"the copy already here")
    big = ("data/big.bin", bytes(range(256)) * 1024)  # 256 KB: more than the disk holds (assets/: only pinned files)
    archive = _archive(tmp_path / "workshop.tar.gz", [_file(*big)], _listed(big))
    code, out, err = kata_assets(capsys, "unpack", str(archive))
    assert code == 3, out + err
    assert f"kata assets: cannot write {data / 'big.bin'}: no space left on device" in err, err
    assert "archive refused" not in err
    assert sorted(p.name for p in assets.iterdir()) == ["gpt2.tiktoken"] and not (data / "big.bin").exists()
    assert not list((disk / ".kata").glob(".unpack-*"))  # no staging folder left behind
