"""The exercise beyond the book after §1.23, BERT's masking rule and the MLM head: real wrong
answers lose points with a message naming the mistake; a right answer that draws its random
numbers in another order (Hugging Face's DataCollatorForLanguageModeling) scores full marks; no
generic answer earns a point; the manifest marks it as going beyond the chapter."""

import importlib.util

import pytest
import torch

from grader.checks import test_s1_23_mlm as C
from grader.course import manifest as course
from tests import generic_answers
from tests.conftest import ROOT, SOLUTIONS, checks_of, grade, kata, score_of
from tests.mistakes import MISTAKES, V

EX = "s1_23_mlm"
MAX = 20


def _solution():
    spec = importlib.util.spec_from_file_location(EX, SOLUTIONS / "ch01" / f"{EX}.py")
    sol = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sol)
    return sol


def _mistake(name: str) -> str:
    return next(v for v in MISTAKES if v.exercise == EX and v.name == name).source()


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


# Each: the mistake of tests/mistakes.py, the public check that must name it, and words of that message.
NAMED = [
    ("[PAD], [CLS] and [SEP] chosen too", "test_listing_sample_exact", "[CLS], [SEP] and [PAD] were chosen too"),
    ("labels 0 instead of -100", "test_listing_sample_exact", "the labels are 0 where nothing is predicted"),
    ("decoder weight copied, not tied", "test_head_tied", "the decoder holds a copy"),
    ("every chosen token [MASK]", "test_rates_book_vocabulary", "of the chosen tokens became [MASK]; `80%` should"),
    ("input_ids changed in place", "test_input_not_changed", "mask_tokens changed input_ids in place"),
]


@pytest.mark.parametrize("name,check,words", NAMED, ids=[n[0] for n in NAMED])
def test_wrong_answers_are_named(submission, name, check, words):
    r = grade(submission({EX: _mistake(name)}), "-e", EX)
    failed = _failed(r)
    assert check in failed, (name, sorted(failed))
    assert words in failed[check]["message"], failed[check]["message"]
    assert score_of(r, EX) < MAX


def test_untied_copy_gets_no_gradient_either(submission):
    r = grade(submission({EX: _mistake("decoder weight copied, not tied")}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == {"test_head_tied", "test_head_gradient", "test_head_other_sizes"}, set(failed)
    assert "no gradient reached the embedding's weight" in failed["test_head_gradient"]["message"]


# More wrong answers, held to tests/test_public_teaching.py's rule here (its rounds hold one variant
# of each exercise; five of this exercise are there): each loses points, and a public check names it.
MORE = [
    V(EX, "labels keep every id", ("    labels[~chosen] = IGNORE_INDEX\n", "")),
    V(
        EX,
        "random share 0.1 of the rest",
        (
            "to_random = chosen & (u >= 0.8) & (u < 0.9)",
            "to_random = chosen & ~to_mask & (torch.rand(input_ids.shape, generator=generator, device=device) < 0.1)",
        ),
    ),
    V(EX, "random ids from the whole vocabulary", ("torch.randint(0, vocab_size,", "torch.randint(0, mask_id,")),
    V(EX, "mask_prob ignored", ("device=device) < mask_prob)", "device=device) < 0.15)")),
    V(EX, "the global generator", ("generator=generator", "generator=None")),
    V(EX, "no LayerNorm in the head", ("self.decoder(self.norm(self.act(", "self.decoder((self.act(")),
    V(EX, "decoder bias left random", ("        nn.init.zeros_(self.decoder.bias)\n", "")),
    V(EX, "MLM loss summed", ("ignore_index=IGNORE_INDEX)", 'ignore_index=IGNORE_INDEX, reduction="sum")')),
]


@pytest.mark.slow
@pytest.mark.parametrize("variant", MORE, ids=[v.name for v in MORE])
def test_more_mistakes_fail_a_public_check(submission, variant):
    sub = submission({EX: variant.source()})
    full, public = checks_of(grade(sub, "-e", EX), EX), checks_of(grade(sub, "-e", EX, "--public-only"), EX)
    assert sum(c["score"] for c in full) < MAX
    failed = {c["name"] for c in public if c["status"] == "failed" and c["message"].strip()}
    assert failed and failed == {c["name"] for c in full if c["visibility"] == "public" and c["status"] == "failed"}


HUGGING_FACE = """import torch
import torch.nn as nn

PAD_ID, CLS_ID, SEP_ID = 50257, 50258, 50259
VOCAB_SIZE, MASK_ID, MLM_VOCAB_SIZE, BASE_VOCAB_SIZE = 50260, 50260, 50261, 50257
IGNORE_INDEX = -100


def mask_tokens(input_ids, *, mask_id, vocab_size, special_ids, generator, mask_prob=0.15):
    # transformers' DataCollatorForLanguageModeling.torch_mask_tokens, with the generator passed on
    labels = input_ids.clone()
    probability_matrix = torch.full(labels.shape, mask_prob)
    special = torch.zeros(labels.shape, dtype=torch.bool)
    for s in special_ids:
        special |= labels == s
    probability_matrix.masked_fill_(special, value=0.0)
    masked_indices = torch.bernoulli(probability_matrix, generator=generator).bool()
    labels[~masked_indices] = -100
    inputs = input_ids.clone()
    replaced = torch.bernoulli(torch.full(labels.shape, 0.8), generator=generator).bool() & masked_indices
    inputs[replaced] = mask_id
    random = torch.bernoulli(torch.full(labels.shape, 0.5), generator=generator).bool() & masked_indices & ~replaced
    words = torch.randint(vocab_size, labels.shape, dtype=torch.long, generator=generator)
    inputs[random] = words[random]
    return inputs, labels


class MLMHead(nn.Module):
    def __init__(self, embedding, dim):
        super().__init__()
        self.dense = nn.Linear(dim, dim)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(dim, eps=1e-5)
        self.decoder = nn.Linear(dim, embedding.weight.shape[0])
        self.decoder.weight = embedding.weight
        with torch.no_grad():
            self.decoder.bias.zero_()

    def forward(self, hidden):
        h = self.norm(self.act(self.dense(hidden)))
        return torch.nn.functional.linear(h, self.decoder.weight, self.decoder.bias)


def mlm_loss(logits, labels):
    keep = labels != IGNORE_INDEX
    return torch.nn.functional.cross_entropy(logits[keep], labels[keep])
"""


def test_a_right_answer_drawing_in_another_order_scores_full_marks(submission):
    r = grade(submission({EX: HUGGING_FACE}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_the_checks_reference_is_the_solution():
    """The trusted side's head (head_ref) is the reference MLMHead, and the rule's statistics
    read the reference's output as the module's docstring says (80/10/10 of 15%)."""
    sol = _solution()
    sd = C.head_state(8, 30, seed=1)
    emb = torch.nn.Embedding(30, 8)
    head = sol.MLMHead(emb, 8)
    head.load_state_dict(sd)
    assert head.decoder.weight is emb.weight
    hidden = torch.randn(2, 3, 8)
    with torch.no_grad():
        assert torch.allclose(head(hidden), C.head_ref(hidden, sd), atol=1e-6)
    ids = C.batch(64, 256, C.BASE, C.SPECIAL, seed=3, min_len=100)
    before = ids.clone()
    inputs, labels = sol.mask_tokens(
        ids, mask_id=C.MASK, vocab_size=C.BASE, special_ids=C.SPECIAL, generator=torch.Generator().manual_seed(0)
    )
    assert torch.equal(ids, before)
    s = C.shares(ids, inputs, labels, C.MASK)
    real = int((~torch.isin(ids, torch.tensor(C.SPECIAL))).sum())
    assert abs(s["chosen"] / real - 0.15) < 0.01
    assert abs(s["mask"] - 0.8) < 0.03 and abs(s["random"] - 0.1) < 0.03 and abs(s["kept"] - 0.1) < 0.03
    assert bool((s["random_ids"] < C.BASE).all())
    logits = torch.randn(4, 30)
    target = torch.tensor([3, -100, 7, -100])
    assert torch.isclose(
        sol.mlm_loss(logits, target), torch.nn.functional.cross_entropy(logits[[0, 2]], target[[0, 2]])
    )


def test_the_manifest_marks_it_beyond_the_book():
    c = course.load(ROOT)
    ex = c.get(EX)
    assert ex.beyond_book and ex.listings == ["1.23/mlm"]
    assert [e.id for e in c.exercises if e.beyond_book] == [EX]
    assert c.exercises[-1].id == EX  # after the whole chapter


@pytest.mark.slow
@pytest.mark.parametrize("variant", generic_answers.VARIANTS)
def test_generic_answers_score_zero(variant, tmp_path):
    r = grade(generic_answers.build(variant, tmp_path), "-e", EX)
    earned = [f"{c['name']}: {c['message'][:200]}" for c in checks_of(r, EX) if c["score"] > 0]
    assert not earned, earned


def test_kata_run_says_the_book_has_no_such_listing():
    proc = kata("run", "1.23/mlm", "--path", str(SOLUTIONS), "--book")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = " ".join(proc.stdout.split())
    assert "the book has no such listing" in out and "K-1.23-a" in out and "kata decision" in out
    assert "MLMHead(" in out and "(decoder): Linear(in_features=256, out_features=50261, bias=True)" in out
    assert "logits of (2, 12, 256) encoder outputs: (2, 12, 50261)" in out


def test_verify_holds_the_beyond_the_book_rules(tmp_course):
    from grader.authoring.verify import verify

    errata = tmp_course / "ERRATA.md"
    text = errata.read_text()
    errata.write_text(text.replace("`s1_23_mlm::", "`s1_23_tokenizer::"))
    problems = verify(tmp_course, grade=False).problems
    assert any("s1_23_mlm goes beyond the book but no K- entry" in p for p in problems), problems
    errata.write_text(text)
    toml = tmp_course / "course.toml"
    toml.write_text(
        toml.read_text().replace(
            'id = "s1_23_mlm"\nsection = "1.23"\nbeyond_book = true\n', 'id = "s1_23_mlm"\nsection = "1.23"\n'
        )
    )
    problems = verify(tmp_course, grade=False).problems
    assert any(
        p.startswith("listing 1.23/mlm: no printed book output (only an exercise marked beyond_book") for p in problems
    ), problems


# ----------------------------------------------------------------------------- the rule, not one consequence
# An outside attack: exactly round(0.15 n) tokens at a fixed stride from one random offset, with a
# fixed 80/10/10 cycle, passed every masking check (11 points). The checks of the rule now read the
# rule's distribution over several calls; each structured-but-wrong rule below scores 0 on them.
RULE_CHECKS = {"test_rates_book_vocabulary", "test_small_vocabulary", "test_other_shapes_and_ids"}
_BODY_START = "    device = input_ids.device\n    special = torch.tensor(list(special_ids)"
_HEAD = """    special = torch.tensor(list(special_ids), dtype=input_ids.dtype)
    real = ~torch.isin(input_ids, special)
    labels = torch.full_like(input_ids, IGNORE_INDEX)
    inputs = input_ids.clone()
"""
_CHOSEN_FAIR = "    chosen = (torch.rand(input_ids.shape, generator=generator) < mask_prob) & real\n"
_OUTCOME_FAIR = """    u = torch.rand(input_ids.shape, generator=generator)
    rnd = torch.randint(0, vocab_size, input_ids.shape, generator=generator)
    labels[chosen] = input_ids[chosen]
    inputs[chosen & (u < 0.8)] = mask_id
    inputs[chosen & (u >= 0.8) & (u < 0.9)] = rnd[chosen & (u >= 0.8) & (u < 0.9)]
"""
_STRIDE = """    idx = real.reshape(-1).nonzero().squeeze(1)
    n = round(mask_prob * len(idx))
    pick = idx[:0]
    if n:
        off = int(torch.randint(0, len(idx), (1,), generator=generator))
        pick = idx[(torch.arange(n) * len(idx) // n + off) % len(idx)].sort().values
    chosen = torch.zeros(input_ids.numel(), dtype=torch.bool)
    chosen[pick] = True
    chosen = chosen.reshape(input_ids.shape)
"""
_CYCLE = """    labels[chosen] = input_ids[chosen]
    fi, pos = inputs.reshape(-1), chosen.reshape(-1).nonzero().squeeze(1).tolist()
    for j, at in enumerate(pos):
        if j % 10 < 8:
            fi[at] = mask_id
        elif j % 10 == 8:
            fi[at] = int(torch.randint(0, vocab_size, (1,), generator=generator))
"""
STRUCTURED = {
    # the attack as reported: exact count, fixed stride, one random offset, fixed 80/10/10 cycle
    "stride, exact count and a fixed cycle": _STRIDE + _CYCLE,
    "exact count at random places": """    idx = real.reshape(-1).nonzero().squeeze(1)
    pick = idx[torch.randperm(len(idx), generator=generator)[:round(mask_prob * len(idx))]]
    chosen = torch.zeros(input_ids.numel(), dtype=torch.bool)
    chosen[pick] = True
    chosen = chosen.reshape(input_ids.shape)
"""
    + _OUTCOME_FAIR,
    "a drawn count at a fixed stride": _STRIDE.replace(
        "n = round(mask_prob * len(idx))",
        "n = int(torch.binomial(torch.tensor(float(len(idx))), torch.tensor(mask_prob), generator=generator))",
    )
    + _OUTCOME_FAIR,
    "fair choice, fixed 80/10/10 cycle": _CHOSEN_FAIR + _CYCLE,
    "chosen in neighbouring pairs": """    half = torch.rand(input_ids.shape, generator=generator) < mask_prob / 2
    chosen = (half | torch.roll(half, 1, -1)) & real
"""
    + _OUTCOME_FAIR,
    "the same mask in every row": """    row = torch.rand(input_ids.shape[-1:], generator=generator) < mask_prob
    chosen = row.expand(input_ids.shape) & real
"""
    + _OUTCOME_FAIR,
    "the same mask in every call": _CHOSEN_FAIR.replace(
        "generator=generator", "generator=torch.Generator().manual_seed(7)"
    )
    + _OUTCOME_FAIR,
    # rules correlated at distances the checks once did not read (each scored 20/20 when only lags
    # 1..12, neighbouring rows and consecutive calls were read, on random ids; docs/threat-log.md)
    "mlmA: a drawn count per row, chosen in pairs 13 apart": """    flat, fr = input_ids.reshape(-1, input_ids.shape[-1]), real.reshape(-1, input_ids.shape[-1])
    chosen = torch.zeros_like(fr)
    for r in range(flat.shape[0]):
        pos = fr[r].nonzero().flatten().tolist()
        n = len(pos)
        if n == 0:
            continue
        k = int((torch.rand(n, generator=generator) < mask_prob).sum())
        order = torch.randperm(n, generator=generator).tolist()
        if n < 28:
            for i in order[:k]:
                chosen[r, pos[i]] = True
            continue
        free, picked = [True] * n, 0
        for i in order:
            if picked + 2 > k:
                break
            j = (i + 13) % n
            if free[i] and free[j]:
                free[i] = free[j] = False
                picked += 2
        for i in order:
            if picked >= k:
                break
            if free[i]:
                free[i] = False
                picked += 1
        for i in range(n):
            if not free[i]:
                chosen[r, pos[i]] = True
    chosen = chosen.reshape(input_ids.shape)
"""
    + _OUTCOME_FAIR,
    "mlmC: rows 2 and 3 of every four copy the choice and outcome of rows 0 and 1": """    chosen = (torch.rand(input_ids.shape, generator=generator) < mask_prob) & real
    u = torch.rand(input_ids.shape, generator=generator)
    if input_ids.dim() >= 2:
        for r in range(input_ids.shape[-2]):
            if (r // 2) % 2 == 1:
                both = real[..., r, :] & real[..., r - 2, :]
                chosen[..., r, :] = torch.where(both, chosen[..., r - 2, :], chosen[..., r, :])
                u[..., r, :] = torch.where(both, u[..., r - 2, :], u[..., r, :])
    rnd = torch.randint(0, vocab_size, input_ids.shape, generator=generator)
    labels[chosen] = input_ids[chosen]
    inputs[chosen & (u < 0.8)] = mask_id
    inputs[chosen & (u >= 0.8) & (u < 0.9)] = rnd[chosen & (u >= 0.8) & (u < 0.9)]
""",
    "mlmD: calls 2 and 3 of every four reuse the draws of calls 0 and 1": """    seen, history = globals().setdefault("_SEEN", {}), globals().setdefault("_HISTORY", [])
    key = bytes(generator.get_state().tolist())
    r = torch.rand(input_ids.shape, generator=generator)
    u = torch.rand(input_ids.shape, generator=generator)
    rnd = torch.randint(0, vocab_size, input_ids.shape, generator=generator)
    if key in seen:  # a generator state seen before gives the result it gave before
        return seen[key][0].clone(), seen[key][1].clone()
    t = len(history)
    if (t // 2) % 2 == 1 and history[t - 2][0] == (tuple(input_ids.shape), mask_prob):
        r, u = history[t - 2][1]
    history.append(((tuple(input_ids.shape), mask_prob), (r, u)))
    chosen = (r < mask_prob) & real
    labels[chosen] = input_ids[chosen]
    inputs[chosen & (u < 0.8)] = mask_id
    inputs[chosen & (u >= 0.8) & (u < 0.9)] = rnd[chosen & (u >= 0.8) & (u < 0.9)]
    seen[key] = (inputs.clone(), labels.clone())
""",
    "mlmE: a low-discrepancy choice from the ids, the position and one salt per call": """    salt = int(torch.randint(1, 2 ** 20, (1,), generator=generator))
    torch.rand(input_ids.shape, generator=generator)
    pos = torch.arange(input_ids.numel()).reshape(input_ids.shape).double()
    h = ((input_ids.double() + 1) * 0.6180339887498949 * salt + pos * 0.7548776662466927
         + 0.5698402909980532 * salt) % 1.0
    chosen = (h < mask_prob) & real
"""
    + _OUTCOME_FAIR,
}


def _with_body(body: str) -> str:
    src = (SOLUTIONS / "ch01" / f"{EX}.py").read_text()
    start = src.index(_BODY_START)
    return src[:start] + _HEAD + body + src[src.index("    return inputs, labels\n", start) :]


@pytest.mark.parametrize("name", list(STRUCTURED))
def test_a_structured_rule_scores_zero_on_the_checks_of_the_rule(submission, name):
    r = grade(submission({EX: _with_body(STRUCTURED[name])}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    earned = {n: checks[n]["message"][:300] for n in RULE_CHECKS if checks[n]["score"] > 0}
    assert not earned, earned
    # the public checks say what is wrong with the rule (a rate, or a property of the draws)
    for n in ("test_rates_book_vocabulary", "test_small_vocabulary"):
        assert checks[n]["visibility"] == "public" and "mask_tokens(" in checks[n]["message"], checks[n]


def test_the_reported_attack_is_told_its_count_is_fixed(submission):
    r = grade(submission({EX: _with_body(STRUCTURED["stride, exact count and a fixed cycle"])}), "-e", EX)
    msg = {c["name"]: c["message"] for c in checks_of(r, EX)}["test_rates_book_vocabulary"]
    assert "the count is fixed, not drawn" in msg and "Binomial(n, p)" in msg, msg


def test_a_fixed_cycle_of_outcomes_is_told_so(submission):
    r = grade(submission({EX: _with_body(STRUCTURED["fair choice, fixed 80/10/10 cycle"])}), "-e", EX)
    msg = {c["name"]: c["message"] for c in checks_of(r, EX)}["test_rates_book_vocabulary"]
    assert "a fixed cycle is not the rule" in msg, msg


HONEST = {
    "the reference": None,
    "Bernoulli draws, outcome from one multinomial, random ids only where needed": """    chosen = torch.empty(input_ids.shape).bernoulli_(mask_prob, generator=generator).bool() & real
    labels[chosen] = input_ids[chosen]
    n = int(chosen.sum())
    fate = torch.multinomial(torch.tensor([0.8, 0.1, 0.1]), max(n, 1), replacement=True, generator=generator)[:n]
    where = chosen.nonzero(as_tuple=True)
    flat = inputs[where]
    flat[fate == 0] = mask_id
    flat[fate == 1] = torch.randint(0, vocab_size, (int((fate == 1).sum()),), generator=generator)
    inputs[where] = flat
""",
}


@pytest.mark.parametrize("name", list(HONEST))
def test_an_honest_rule_in_another_style_scores_full_marks(submission, name):
    src = _solution_source() if HONEST[name] is None else _with_body(HONEST[name])
    r = grade(submission({EX: src}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def _solution_source() -> str:
    return (SOLUTIONS / "ch01" / f"{EX}.py").read_text()


def _honest_styles():
    """mask_tokens written in several honest styles, run here on the trusted side."""
    sol = _solution()
    ns: dict = {}
    exec(HUGGING_FACE, ns)
    other: dict = {}
    exec(_with_body(HONEST["Bernoulli draws, outcome from one multinomial, random ids only where needed"]), other)
    return {"reference": sol.mask_tokens, "Hugging Face": ns["mask_tokens"], "multinomial": other["mask_tokens"]}


# The rule checks' own configurations: (ids, calls, mask_id, vocab, specials, p).
def _configs():
    g = torch.Generator().manual_seed(2370)
    three = torch.randint(0, 300, (6, 40, 90), generator=g)
    three[:, :, 0], three[:, :, 64], three[:, :, 65:] = 301, 302, 300
    return {
        "book": (C.batch(16, 512, C.BASE, C.SPECIAL, seed=2363, min_len=200), C.CALLS, C.MASK, C.BASE, C.SPECIAL, 0.15),
        "small": (C.batch(8, 256, 20, (20, 21, 22), seed=2364, min_len=100), C.CALLS, 23, 20, (20, 21, 22), 0.5),
        "hidden": (three, 8, 303, 300, (300, 301, 302), 0.3),
    }


def _all_configs():
    """_configs, and the inputs of every row alike and every token alike that each check adds
    (C.alike_inputs, the tokens the checks use), ALIKE_CALLS calls each."""
    out = dict(_configs())
    for name, token in (("book", 1212), ("small", 7), ("hidden", 42)):
        ids, _, mask_id, vocab, specials, p = out[name]
        for (x, _), how in zip(C.alike_inputs(ids, specials, token), ("every row the same ids", "one token")):
            out[f"{name}, {how}"] = (x, C.ALIKE_CALLS, mask_id, vocab, specials, p)
    return out


CONFIGS = [
    "book",
    "small",
    "hidden",
    "book, every row the same ids",
    "book, one token",
    "small, every row the same ids",
    "small, one token",
    "hidden, every row the same ids",
    "hidden, one token",
]


def test_the_configurations_are_the_checks():
    assert sorted(_all_configs()) == sorted(CONFIGS)


@pytest.mark.parametrize("config", CONFIGS)
def test_honest_rules_pass_the_rule_statistics_for_every_seed(config):
    """Every honest style x 20 generator seeds: the statistics the checks apply find nothing (the
    bounds are ~6.5 standard deviations, so a correct rule never loses points by chance)."""
    ids, calls, mask_id, vocab, specials, p = _all_configs()[config]
    for style, fn in _honest_styles().items():
        for seed in range(20):
            outs = [
                fn(
                    ids,
                    mask_id=mask_id,
                    vocab_size=vocab,
                    special_ids=specials,
                    generator=torch.Generator().manual_seed(1000 * seed + k),
                    mask_prob=p,
                )
                for k in range(calls)
            ]
            found = C.rule_findings(ids, outs, specials, mask_id, vocab, p)
            assert not found, (style, seed, found)


# ----------------------------------------------------------------------------- the course's pre-training batch
# A rule keyed on the batch size (docs/threat-log.md, 2026-12-04): in a batch of more than 16
# sequences, sequences 16.. never masked: 20/20, since every check's batch had 16 rows or fewer.
# The rule checks now also read mask_tokens on the pre-training batch (32 x 256 ids, public; 64 x
# 256, CUDA's, hidden): the chosen tokens and the [MASK] outcome at every sequence and position.
KEYED = {
    "a24: sequences past the first 16 never masked": _CHOSEN_FAIR
    + """    if chosen.dim() == 2 and chosen.shape[0] > 16:
        chosen[16:] = False
"""
    + _OUTCOME_FAIR,
    "tokens from 128 on never masked in long batches": _CHOSEN_FAIR
    + """    if chosen.dim() == 2 and chosen.shape[0] >= 32:
        chosen[:, 128:] = False
"""
    + _OUTCOME_FAIR,
    "sequences past the first 16 chosen but never [MASK]": _CHOSEN_FAIR
    + _OUTCOME_FAIR
    + """    if chosen.dim() == 2 and chosen.shape[0] > 16:
        inputs[16:] = torch.where(chosen[16:] & (inputs[16:] == mask_id), input_ids[16:], inputs[16:])
""",
}


@pytest.mark.parametrize("name", list(KEYED))
def test_a_rule_keyed_on_the_pretraining_batch_scores_zero_on_its_checks(submission, name):
    r = grade(submission({EX: _with_body(KEYED[name])}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    earned = {
        n: checks[n]["message"][:300]
        for n in ("test_rates_book_vocabulary", "test_other_shapes_and_ids")
        if checks[n]["score"] > 0
    }
    assert not earned, earned
    msg = checks["test_rates_book_vocabulary"]["message"]
    assert "the course's pre-training batch" in msg, msg


TRAIN_SEEDS = 5


def test_honest_rules_pass_the_pretraining_batch_reads_for_every_seed():
    """Every honest style x 5 seeds through the checks' own reads of the pre-training batch (32 and
    64 x 256 ids: the rates and the region, chosen and [MASK])."""

    class Honest:  # a stand-in for the proxy: the generators seeded apart for each seed
        def __init__(self, fn, seed):
            self.mask_tokens, self._seed = fn, seed

        def given(self, name, s):
            assert name == "generator"
            return torch.Generator().manual_seed(100_000 * self._seed + s)

    for style, fn in _honest_styles().items():
        for seed in range(TRAIN_SEEDS):
            sub = Honest(fn, seed)
            try:
                C.expect_rule_at_training_size(sub, 32, 1440)
                C.expect_rule_at_training_size(sub, 64, 1840)
            except Exception as e:
                raise AssertionError((style, seed, str(getattr(e, "msg", e))[:500])) from e
