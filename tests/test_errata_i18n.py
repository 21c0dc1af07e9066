"""ERRATA.md in the reader's language: `kata --lang zh run LISTING --book` shows each entry under 勘误
in Chinese (locale/zh/errata.po: msgctxt the entry's id, msgid its English, msgstr the Chinese), and
`kata verify` refuses a catalog that lacks an entry a listing shows or translates English that has
since changed (grader/listings/errata.py)."""

import polib

from grader.authoring.verify import verify
from grader.course import manifest
from grader.listings import errata
from tests.conftest import ROOT, SOLUTIONS, kata


def errata_problems(root) -> list[str]:
    return [p for p in verify(root, grade=False).problems if p.startswith("errata: ")]


def test_kata_run_book_shows_the_errata_in_chinese():
    proc = kata("--lang", "zh", "run", "1.6", "--path", str(SOLUTIONS), "--book")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "勘误 E-1.12-d" in out and "书中的输出" in out
    assert "**位置：**代码清单 1.6" in out and "**分类：**不可复现" in out
    assert "0.1331" in out and "0.2133" in out  # the numbers as they are
    assert "Where:" not in out and "not reproducible" not in out and "Proved by" not in out
    english = kata("run", "1.6", "--path", str(SOLUTIONS), "--book").stdout
    assert "ERRATA E-1.12-d" in english and "- **Where:** listing 1.6" in english and "位置" not in english


def test_every_entry_is_translated_and_none_is_stale():
    course = manifest.load(ROOT)
    wanted = errata.wanted_ids(course)
    assert len(wanted) > len(errata.shown_ids(course)) > 100
    assert errata.problems(ROOT, "zh", wanted) == []
    for entry in errata.entries(ROOT, sorted(wanted), "zh"):
        assert "**Where:**" not in entry and "**Proved by:**" not in entry, entry.splitlines()[0]


def test_a_missing_translation_fails_verify_and_the_entry_is_shown_in_english(tmp_course):
    po_path = tmp_course / "locale/zh/errata.po"
    po = polib.pofile(str(po_path), wrapwidth=0)
    po.find("E-1.12-d", by="msgctxt").msgstr = ""
    po.save(str(po_path))
    line = next(e.linenum for e in polib.pofile(str(po_path), wrapwidth=0) if e.msgctxt == "E-1.12-d")
    assert errata_problems(tmp_course) == [f"errata: locale/zh/errata.po:{line}: E-1.12-d: not translated"]
    shown = errata.entries(tmp_course, ["E-1.12-d", "E-1.12-e"], "zh")
    assert shown[0].startswith("E-1.12-d\n- **Where:** listing 1.6") and "**位置：**" in shown[1]


def test_a_stale_translation_fails_verify_until_it_is_translated_again(tmp_course):
    path = tmp_course / "ERRATA.md"
    text = path.read_text(encoding="utf-8")
    assert text.count("first row [0.1331, 0.1401") == 1
    path.write_text(text.replace("first row [0.1331, 0.1401", "first row [0.1332, 0.1401"), encoding="utf-8")
    problems = errata_problems(tmp_course)
    assert len(problems) == 1 and "E-1.12-d: stale: its English in ERRATA.md changed" in problems[0]
    # the old Chinese says 0.1331: the reader gets the English that holds now
    assert "0.1332" in errata.entries(tmp_course, ["E-1.12-d"], "zh")[0]

    left = errata.update(tmp_course, "zh")  # `kata stubs --lang zh --update-catalogs`
    assert "E-1.12-d" in left
    po = polib.pofile(str(tmp_course / "locale/zh/errata.po"), wrapwidth=0)
    entry = po.find("E-1.12-d", by="msgctxt")
    assert "fuzzy" in entry.flags and "0.1331" in entry.previous_msgid and "0.1332" in entry.msgid
    assert "0.1331" in entry.msgstr  # kept for the translator, not shown
    assert [p.split(": ", 3)[2:] for p in errata_problems(tmp_course)] == [
        ["E-1.12-d", "marked fuzzy (its English changed: check the translation, then remove the fuzzy flag)"]
    ]
    assert "0.1332" in errata.entries(tmp_course, ["E-1.12-d"], "zh")[0]

    entry.msgstr = entry.msgstr.replace("0.1331", "0.1332")  # the translator's part, as in Poedit
    entry.flags.remove("fuzzy")
    entry.previous_msgid = None
    po.save(str(tmp_course / "locale/zh/errata.po"))
    assert errata_problems(tmp_course) == []
    shown = errata.entries(tmp_course, ["E-1.12-d"], "zh")[0]
    assert "**位置：**" in shown and "0.1332" in shown


def test_a_catalog_that_is_not_gettext_is_named_with_its_line_and_shows_english(tmp_course):
    po = tmp_course / "locale/zh/errata.po"
    lines = po.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, s in enumerate(lines) if s == 'msgctxt "E-1.12-d"\n')
    lines.insert(at, "<<<<<<< HEAD\n")  # a merge left half done
    po.write_text("".join(lines), encoding="utf-8")
    problems = errata_problems(tmp_course)
    assert len(problems) == 1
    assert problems[0].startswith(f"errata: locale/zh/errata.po:{at + 1}: cannot be read as a gettext catalog")
    assert errata.entries(tmp_course, ["E-1.12-d"], "zh")[0].startswith("E-1.12-d\n- **Where:**")


def test_the_student_edition_ships_each_translation_cut_as_its_english(tmp_path):
    """`kata release` cuts ERRATA.md for students (release.public_errata: an entry proved by hidden
    checks only keeps where, book and classification; a hidden check's name becomes "a hidden check
    of `<exercise>`") and ships locale/zh/errata.po cut the same way, so Chinese mode there shows
    every entry in Chinese and no more than the English says."""
    from grader.instructor.release import release

    course = manifest.load(ROOT)
    hidden = {(ex.id, c.name) for ex in course.exercises for c in ex.checks if c.hidden}
    public = {(ex.id, c.name) for ex in course.exercises for c in ex.checks if not c.hidden}
    text = release.public_errata((ROOT / "ERRATA.md").read_text(encoding="utf-8"), hidden)
    catalog = errata.public_catalog(ROOT, "zh", text, lambda t: release.public_errata(t, hidden, "zh"))
    (tmp_path / "ERRATA.md").write_text(text, encoding="utf-8")
    (tmp_path / "locale" / "zh").mkdir(parents=True)
    (tmp_path / "locale" / "zh" / "errata.po").write_text(catalog, encoding="utf-8")

    assert errata.problems(tmp_path, "zh", errata.wanted_ids(course)) == []  # every entry, for the cut English
    only_hidden = {name for _, name in hidden} - {name for _, name in public}
    assert [n for n in only_hidden if n in catalog] == []
    cut = errata.entries(tmp_path, ["E-1.14-e"], "zh")[0]  # proved by a hidden check only
    assert cut.splitlines()[1:] == [
        line
        for line in errata.entries(ROOT, ["E-1.14-e"], "zh")[0].splitlines()
        if line.startswith(("- **位置：**", "- **书中：**", "- **分类：**"))
    ] + ["- **真实值：**由隐藏检查给出并计分；本条目的完整内容在讲师版中。"]
    named = errata.entries(tmp_path, ["E-1.23-f"], "zh")[0]  # a public and a hidden check
    assert named.endswith("- **证明：**`s1_23_tokenizer::test_listing_1_26_encode`，`s1_23_tokenizer` 的一项隐藏检查")
