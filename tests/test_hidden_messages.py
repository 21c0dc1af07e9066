"""Hidden messages carry only the grader's facts; a student's exception never reads as the grader's text.

Graded for real (issue 24, part 5):
- code that has seen a hidden input chose which of Python's exceptions it raised and, through
  `exec(compile(src, "<another exercise's file>", "exec"))`, which file it was raised from: a hidden
  check then said "mlm_loss raised EOFError in ch01/s1_04_byte_bpe.py", about 11 bits of the input
  per check and a false attribution. Two gradings whose "hidden values" choose different classes
  and files must now give byte-identical hidden messages, while the public checks still name both;
- an exception of the student's with `code = "worker_gone"` and `fields` (or the runtime's own
  `_Missing`, or the guard's `ForbiddenAPI` carrying a code) read in a public check as the
  grader's own catalog text ("that object no longer exists in the worker"); it must show as the
  student's exception, its class and its own message, in English and in Chinese.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from grader.course.messages import t
from tests.conftest import checks_of, grade, kata, make_submission, solution_with

# ------------------------------------------------------------------ a hidden value chooses the class and file
CLASSES = ["EOFError", "KeyError", "BufferError", "LookupError", "UnicodeError", "ZeroDivisionError"]
FILES = ["s1_04_byte_bpe.py", "s1_01_next_token.py", "s1_10_qkv.py", "s1_05_embeddings.py", "s1_02_anatomy.py"]

CHOOSE = '''
import os
import torch

SALT = <<SALT>>
CLASSES = <<CLASSES>>
FILES = <<FILES>>


def _raise_chosen(*args):
    """Raise the builtin exception chosen by the input, from the exercise file chosen by the input."""
    seen = SALT + sum(int(a.double().abs().sum() * 1000) for a in args if isinstance(a, torch.Tensor))
    name, file = CLASSES[seen % len(CLASSES)], FILES[seen % len(FILES)]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), file)
    exec(compile(f"raise {name}('chosen')", path, "exec"), {})
'''

ANSWER_BY_RAISING = """

def _attack(*args, **kwargs):
    _raise_chosen(*args, *kwargs.values())


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _attack
"""

CHOSEN = ["s1_11_attention_scores", "s1_12_scaled_attention", "s1_23_bert_embedding"]


def _choosing(salt: int) -> dict[str, str]:
    head = CHOOSE.replace("<<SALT>>", str(salt)).replace("<<CLASSES>>", repr(CLASSES)).replace("<<FILES>>", repr(FILES))
    raising = head + ANSWER_BY_RAISING
    bert = solution_with(
        "s1_23_bert_embedding",
        '            raise ValueError(f"sequence of {T} tokens is longer than max_len={self.position.num_embeddings}")',
        "            _raise_chosen(x)",
    )
    return {"s1_11_attention_scores": raising, "s1_12_scaled_attention": raising, "s1_23_bert_embedding": bert + head}


def test_a_hidden_value_chooses_neither_the_exception_nor_the_file_a_hidden_check_names(tmp_path):
    """Two submissions whose code picks the exception class and the file it raises from by the input
    (plus a salt that differs between them): every hidden check's message is the same, byte for byte,
    and names none of the classes or files; the public checks name the class (the attack ran)."""
    reports = []
    for salt in (0, 1):
        sub = make_submission(tmp_path / f"salt{salt}", _choosing(salt))
        reports.append(grade(sub, *[arg for ex in CHOSEN for arg in ("-e", ex)]))
    hidden = [
        {(c["exercise"], c["name"]): c["message"] for c in r["checks"] if c["visibility"] == "hidden"} for r in reports
    ]
    assert hidden[0] and set(hidden[0]) == set(hidden[1])
    assert {ex for ex, _ in hidden[0]} == set(CHOSEN), hidden[0]
    for key, said in hidden[0].items():
        assert said == hidden[1][key], f"{key}: {said!r} != {hidden[1][key]!r}"
        for name in CLASSES + FILES + [f.removesuffix(".py") for f in FILES]:
            assert name not in said, f"{key}: {name} in {said!r}"
    refused = hidden[0][("s1_23_bert_embedding", "test_too_long_is_refused")]
    assert "must raise ValueError, not another exception" in refused, refused  # the check's own verdict, unnamed
    for r in reports:
        public = [
            c["message"]
            for ex in CHOSEN
            for c in checks_of(r, ex)
            if c["visibility"] == "public" and c["status"] == "failed"
        ]
        # ("raised EOFError", or s1_23_bert_embedding's public refusal check: "must raise ValueError, not EOFError")
        assert public and all(any(f"raised {name}" in m or f"not {name}" in m for name in CLASSES) for m in public), [
            m for m in public if not any(f"raised {name}" in m or f"not {name}" in m for name in CLASSES)
        ]


# ------------------------------------------------------------------ a code and fields of the student's own
FORGE = '''
import sys

KIND = "<<KIND>>"


def _runtime(name):
    """A module of the worker's runtime, found through the frame of its request loop."""
    f = sys._getframe()
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    serve = sys.modules[f.f_globals["__name__"]]
    return serve if name == "serve" else sys.modules[serve.Guard.__module__]


def _forged():
    if KIND == "attributes":  # a class of the student's own that carries a catalog code and fields
        return type("Gone", (Exception,), {"code": "worker_gone", "fields": {}})("FORGED-by-the-student")
    if KIND == "runtime-class":  # the runtime's own error class, raised from the student's code
        return _runtime("serve")._Missing("FORGED-by-the-student", "worker_no_attribute_module",
                                          module="FORGED", name="FORGED")
    forbidden = _runtime("guard").ForbiddenAPI("FORGED-by-the-student")  # the guard's class, no refusal of its
    forbidden.code, forbidden.fields = "worker_forbidden", {"name": "torch.softmax", "exercise": "x", "hint": ""}
    return forbidden


def _attack(*args, **kwargs):
    raise _forged()


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _attack
'''

FORGED = {
    "s1_12_context": ("attributes", "Gone"),
    "s1_10_qkv": ("runtime-class", "_Missing"),
    "s1_09_input_embeddings": ("guard-class", "ForbiddenAPI"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_exception_carrying_a_catalog_code_shows_as_the_students_own(tmp_path, lang):
    """Public checks show a forged code's exception as what it is: the student's class and message,
    never the catalog's wording of that code (in either language)."""
    sub = make_submission(tmp_path, {ex: FORGE.replace("<<KIND>>", kind) for ex, (kind, _) in FORGED.items()})
    args = ["--public-only", *[arg for ex in FORGED for arg in ("-e", ex)]]
    if lang == "zh":  # grade() reports in English
        out = tmp_path / "report.json"
        proc = kata("--lang", "zh", "grade", str(sub), "--json", str(out), "-q", *args)
        assert proc.returncode == 0, proc.stderr
        report = json.loads(out.read_text(encoding="utf-8"))
    else:
        report = grade(sub, *args)
    catalog = [
        t(key, lang=lang, module="FORGED", name="FORGED", exercise="x", hint="")
        for key in ("worker_gone", "worker_no_attribute_module", "worker_forbidden")
    ]
    raised = {"en": "raised {cls}: FORGED-by-the-student", "zh": "抛出了 {cls}：FORGED-by-the-student"}[lang]
    for ex, (_, cls) in FORGED.items():
        checks = checks_of(report, ex)
        assert checks and all(c["status"] == "failed" for c in checks), checks
        for c in checks:
            assert raised.format(cls=cls) in c["message"], (ex, c["message"])
            for text in catalog:
                assert text not in c["message"], (ex, text, c["message"])
            assert c["kind"] != "forbidden", c


def test_the_hidden_mlm_check_does_not_name_its_inputs_token_id(submission):
    """Seventh outside attack (F2): an honest masking rule but a fixed stride when every real token
    is one id lost the hidden check on s1_23_mlm's other shapes, whose message read "(every real
    token 42)": the hidden input's id, beside masked numbers. It now says "one id", and no number."""
    source = (Path(__file__).parent / "hostile" / "mlm_stride_on_one_id" / "s1_23_mlm.py").read_text()
    report = grade(submission({"s1_23_mlm": source}), "-e", "s1_23_mlm")
    hidden = [c for c in checks_of(report, "s1_23_mlm") if c["visibility"] == "hidden" and c["status"] == "failed"]
    assert hidden, "the attack's file loses a hidden check"
    for c in hidden:
        assert "42" not in c["message"] and "every real token one id" in c["message"], c["message"]


# ------------------------------------------------------------------ masking follows the data
def test_a_field_from_the_input_is_concealed_in_a_hidden_check_whatever_its_shape():
    """A `from_input` field renders as "…" in a hidden check, in both languages, however the
    template formats it; the same message in a public check shows the value; other fields stay."""
    import torch

    from grader.checking import Msg, code, from_input
    from grader.checking.compare import HIDDEN

    m = Msg(
        "softmax({x}) over {n:.2f} rows ({x!r}, shape {t.shape}, first {t[0]}), dim {d}",
        "softmax（{x}）共 {n:.2f} 行（{x!r}，形状 {t.shape}，第一个 {t[0]}），dim {d}",
        x=from_input([2, 3]),
        n=from_input(3.14159),
        t=from_input(torch.zeros(2, 3)),
        d=0,
    )
    outer = code("{what}; id {i}", what=m, i=from_input(42))
    assert outer.render("en") == "softmax([2, 3]) over 3.14 rows ([2, 3], shape torch.Size([2, 3]), " + (
        "first tensor([0., 0., 0.])), dim 0; id 42"
    )
    for lang in ("en", "zh"):
        concealed = outer.render(lang, conceal=True)
        assert not any(ch.isdigit() for ch in concealed.replace("dim 0", "")), concealed
        assert concealed.endswith("dim 0; id …") and concealed.count("…") == 6, concealed
        token = HIDDEN.set(True)  # the runner sets it while a hidden check runs
        try:
            assert outer.render(lang) == concealed
        finally:
            HIDDEN.reset(token)
    assert outer.render("en", conceal=False) == outer.render("en")
    marked_text = Msg("{what}", "{what}", what=from_input(Msg("a row", "一行")))  # a Msg marked: in the asked language
    assert (marked_text.render("zh"), marked_text.render("en"), marked_text.render("zh", conceal=True)) == (
        "一行",
        "a row",
        "…",
    )


def test_a_hidden_check_conceals_its_marked_fields_before_any_pattern(monkeypatch):
    """The runner renders a hidden check's failure with its `from_input` fields concealed: a token
    id of two digits, which no pattern over the text would take for an input (the net of
    runner.conceal_values keeps small numbers), never shows; the public twin shows it."""
    from grader.checking import CheckFailure, Msg, from_input, runner

    monkeypatch.setattr(runner, "conceal_values", lambda text: text)  # the net off: the marks alone
    failure = CheckFailure(Msg("[CLS] missing (id {i})", "缺少 [CLS]（id {i}）", i=from_input(42)))
    for lang, hidden, public in (
        ("en", "[CLS] missing (id …)", "[CLS] missing (id 42)"),
        ("zh", "缺少 [CLS]（id …）", "缺少 [CLS]（id 42）"),
    ):
        monkeypatch.setenv("KATA_LANG", lang)
        assert runner._message(failure, hidden=True) == (hidden, "check")
        assert runner._message(failure, hidden=False) == (public, "check")


# ------------------------------------------------------------------ a hidden check states no size
# What a hidden check's message may hold besides its own words: code in backticks (the course's
# constants, `-inf`, `1 / (1 - p)`), the book's references, an exercise's id, a file:line of the
# student's code, and "…" where a value of the input was. A digit anywhere else is a fact about
# the hidden input (its size, shape, dtype or an option) that code could be keyed to.
COURSE_TEXT = re.compile(r"`[^`\n]*`|(?:§|listings? )[\d.]+|\bGPT-2\b|\bUTF-8\b|\bs\d+_\d+\w*|[\w./-]+\.py:\d+")


def stated_numbers(message: str) -> list[str]:
    """The words of a hidden check's message that state a number outside the course's own text."""
    return re.findall(r"\S*\d\S*", COURSE_TEXT.sub("", message))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_hidden_check_does_not_state_its_inputs_size(tmp_path, lang, monkeypatch):
    """The eighth outside attack passed three hidden checks of s1_07 with code right only for 9
    encoder states, a batch of 4 and d_s, d_h, d_a = 5, 6, 7: the hidden checks' own texts said so
    ("scores of 9 encoder states (d_s 5, d_h 6, d_a 7)"). Sizes, dtypes and options of a hidden
    input are now fields marked from_input, and `kata verify` refuses one written as text."""
    monkeypatch.setenv("KATA_LANG", lang)
    wrong = {
        "tanh missing": ("return torch.tanh(projected_s + projected_h) @ v", "return (projected_s + projected_h) @ v"),
        "softmax over the batch": ("v), dim=-1)\n", "v), dim=0)\n"),
    }
    failed = set()
    for n, (old, new) in enumerate(wrong.values()):
        source = solution_with("s1_07_additive_attention", old, new)
        sub = make_submission(tmp_path / str(n), {"s1_07_additive_attention": source})
        report = grade(sub, "-e", "s1_07_additive_attention")
        for c in checks_of(report, "s1_07_additive_attention"):
            if c["visibility"] == "hidden" and c["status"] == "failed":
                failed.add(c["name"])
                assert not stated_numbers(c["message"]), c["message"]
    assert {"test_scores_fresh", "test_attention_fresh", "test_batch"} <= failed, failed
