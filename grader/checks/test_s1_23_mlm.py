"""Checks of the exercise beyond the book after §1.23: BERT's masking rule and the MLM head.

The masking rule draws at random, and a correct rule may draw in many orders, so no check
compares the positions one seed picks: the exact checks use mask_prob 1 and 0 (every real token
chosen, or none) and the relations every answer must keep (labels are the original id or -100,
an unchosen token never changes, specials are never chosen); the rates are checked on tens of
thousands of tokens with bounds of at least 5 standard deviations. The generator and the token
embedding are built in the worker by the runtime (grader/worker/runtime/given.py), which also
shows whether mask_tokens changed its input in place and whether a gradient reaches the
embedding the head is tied to.
"""

import math

import torch
import torch.nn.functional as F

from grader.checking import draws, grading
from grader.checking import (
    CheckFailure,
    Mistake,
    Msg,
    check,
    code,
    expect,
    expect_equal,
    expect_tensor,
    fixtures,
    from_input,
)

EXERCISE = "s1_23_mlm"
PAD, CLS, SEP, MASK = 50257, 50258, 50259, 50260  # listing 1.25's specials, then the kata's [MASK]
BASE, VOCAB, MLM_VOCAB = 50257, 50260, 50261
SPECIAL = (PAD, CLS, SEP)
IGNORE = -100
D, V = 16, 40  # the head's checks: a small width and vocabulary

# Listing 1.27's two reviews with GPT-2's ids: "This movie is slow, but the acting is excellent."
# and "Great film!" padded to 12.
BOOK_IDS = [
    [CLS, 1212, 3807, 318, 3105, 11, 475, 262, 7205, 318, 6275, SEP],
    [CLS, 13681, 2646, 0, SEP, PAD, PAD, PAD, PAD, PAD, PAD, PAD],
]


def make_fixtures(sol):
    sd = head_state(D, V, seed=2360)
    hidden = torch.randn(3, 5, D, generator=torch.Generator().manual_seed(2361))
    emb = torch.nn.Embedding(V, D)
    head = sol.MLMHead(emb, D)
    head.load_state_dict(sd)
    with torch.no_grad():
        logits = head(hidden)
    return {"hidden": hidden, "logits": logits, "book_ids": torch.tensor(BOOK_IDS)}


def fx():
    return fixtures.load(EXERCISE)


# ----------------------------------------------------------------------------- batches and the rule
def batch(rows: int, seq_len: int, vocab: int, specials, seed: int, min_len: int = 3) -> torch.Tensor:
    """Rows framed like listing 1.26's: [CLS] ordinary ids [SEP], then [PAD] up to seq_len; the
    lengths vary (min_len..seq_len), so about a quarter of a long batch is padding."""
    pad, cls, sep = specials
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (rows, seq_len), generator=g)
    lengths = torch.randint(min_len, seq_len + 1, (rows,), generator=g)
    for r, n in enumerate(lengths.tolist()):
        ids[r, 0], ids[r, n - 1] = cls, sep
        ids[r, n:] = pad
    return ids


def call_mask(sub, ids, seed, *, mask_id=MASK, vocab=BASE, specials=SPECIAL, p=None, label=None):
    """mask_tokens(ids, ...) with a generator seeded in the worker; (inputs, labels) checked to be
    two int64 tensors of ids' shape."""
    kw = {
        "mask_id": mask_id,
        "vocab_size": vocab,
        "special_ids": tuple(specials),
        "generator": sub.given("generator", seed),
    }
    if p is not None:
        kw["mask_prob"] = p
    out = sub.mask_tokens(ids, **kw)
    return pair_of(
        out, ids, label or code("mask_tokens(ids: {shape_ids}, ...)", shape_ids=from_input(tuple(ids.shape)))
    )


def pair_of(out, ids, what: Msg):
    expect(
        isinstance(out, (tuple, list)) and len(out) == 2,
        Msg("{what} must return a pair (inputs, labels)", "{what} 必须返回一对 (inputs, labels)", what=what),
    )
    for name, t in zip(("inputs", "labels"), out):
        expect(
            isinstance(t, torch.Tensor) and tuple(t.shape) == tuple(ids.shape) and t.dtype == ids.dtype,
            Msg(
                "{what}: {name} must be a tensor of input_ids' dtype {dtype} and shape {shape}",
                "{what}：{name} 必须是与 input_ids 的 dtype {dtype}、形状 {shape} 都相同的张量",
                what=what,
                name=code(name),
                dtype=from_input(str(ids.dtype).removeprefix("torch.")),
                shape=from_input(tuple(ids.shape)),
            ),
        )
    return out[0], out[1]


def rule_relations(ids, inputs, labels, specials, mask_id, vocab, what: Msg) -> torch.Tensor:
    """The relations every right answer keeps whatever it draws; returns the chosen positions."""
    special = torch.isin(ids, torch.tensor(list(specials)))
    if bool(((labels == 0) & (ids != 0)).float().mean() > 0.3):
        raise CheckFailure(
            Msg(
                "{what}: the labels are `0` where no token was chosen: use `-100` (IGNORE_INDEX), the "
                "label that cross-entropy skips; `0` is a real token id ('!' in `GPT-2`)",
                "{what}：没有被选中的位置标签为 `0`：应使用 `-100`（IGNORE_INDEX），交叉熵会跳过这个标签；`0` 是"
                "一个真实的词元 id（`GPT-2` 中的 '!'）",
                what=what,
            ),
            mistake=Msg("labels `0` instead of `-100`", "标签用了 `0` 而不是 `-100`"),
        )
    expect(
        bool(((labels == IGNORE) | (labels == ids)).all()),
        Msg(
            "{what}: every label must be the original id (at a chosen position) or `-100` (everywhere else)",
            "{what}：每个标签都必须是原来的 id（在被选中的位置）或 `-100`（其他所有位置）",
            what=what,
        ),
    )
    chosen = labels != IGNORE
    if bool((chosen & special).any()):
        raise CheckFailure(
            Msg(
                "{what}: a [PAD], [CLS] or [SEP] position was chosen (its label is not `-100`): only "
                "real tokens are chosen; leave out every id of special_ids",
                "{what}：选中了 [PAD]、[CLS] 或 [SEP] 的位置（其标签不是 `-100`）：只能选择真实词元；"
                "special_ids 中的每个 id 都不能选",
                what=what,
            ),
            mistake=Msg("special tokens chosen", "选中了特殊词元"),
        )
    expect(
        bool((inputs[~chosen] == ids[~chosen]).all()),
        Msg(
            "{what}: a token that was not chosen (label `-100`) changed in inputs: only chosen tokens change",
            "{what}：没有被选中的词元（标签为 `-100`）在 inputs 中被改变了：只有被选中的词元才能改变",
            what=what,
        ),
    )
    changed = chosen & (inputs != ids)
    new = inputs[changed]
    ok = (new == mask_id) | ((new >= 0) & (new < vocab))
    expect(
        bool(ok.all()),
        Msg(
            "{what}: a chosen token became an id that is neither [MASK] (mask_id) nor an ordinary token "
            "`0..vocab_size - 1`: random tokens come from `torch.randint(0, vocab_size, ...)`, never a special id",
            "{what}：一个被选中的词元变成了既不是 [MASK]（mask_id）也不是普通词元 `0..vocab_size - 1` 的 id：随机"
            "词元来自 `torch.randint(0, vocab_size, ...)`，绝不能是特殊 id",
            what=what,
        ),
    )
    return chosen


def shares(ids, inputs, labels, mask_id) -> dict:
    """How many real tokens were chosen, and how the chosen ones were replaced."""
    chosen = labels != IGNORE
    masked = chosen & (inputs == mask_id)
    kept = chosen & (inputs == ids)
    n = max(1, int(chosen.sum()))
    return {
        "chosen": int(chosen.sum()),
        "mask": int(masked.sum()) / n,
        "kept": int(kept.sum()) / n,
        "random": int((chosen & ~masked & ~kept).sum()) / n,
        "random_ids": inputs[chosen & ~masked & ~kept],
    }


def expect_rates(ids, inputs, labels, specials, mask_id, p: float, what: Msg) -> dict:
    """The chosen share of the real tokens and the 80/10/10 split, each within 5+ standard deviations."""
    real = int((~torch.isin(ids, torch.tensor(list(specials)))).sum())
    s = shares(ids, inputs, labels, mask_id)
    rate = s["chosen"] / real
    tol = max(0.005, 5.5 * math.sqrt(p * (1 - p) / real))
    expect(
        abs(rate - p) <= tol,
        Msg(
            "{what}: {rate:.4f} of the real tokens were chosen (label not `-100`); mask_prob {p} should "
            "choose {p} of them (±{tol:.3f}): one Bernoulli draw per real token, `torch.rand(...) < mask_prob`",
            "{what}：真实词元中有 {rate:.4f} 被选中（标签不是 `-100`）；mask_prob 为 {p} 时应选中其中的 {p}（±{tol:.3f}）："
            "对每个真实词元做一次伯努利抽样，`torch.rand(...) < mask_prob`",
            what=what,
            rate=from_input(rate),
            p=from_input(p),
            tol=from_input(tol),
        ),
    )
    n = s["chosen"]
    for key, share, name in (
        ("mask", 0.8, Msg("became [MASK]", "变成 [MASK]")),
        ("random", 0.1, Msg("became a random token", "变成随机词元")),
        ("kept", 0.1, Msg("stayed unchanged", "保持不变")),
    ):
        tol = 5.5 * math.sqrt(share * (1 - share) / max(1, n))
        got = s[key]
        if abs(got - share) <= tol:
            continue
        if key == "mask" and got > 0.97:
            raise CheckFailure(
                Msg(
                    "{what}: {got:.3f} of the chosen tokens became [MASK]; `80%` should, `10%` a random token and "
                    "`10%` stay as they are",
                    "{what}：被选中的词元中有 {got:.3f} 变成了 [MASK]；应有 `80%` 变成 [MASK]，`10%` 变成随机词元，`10%` 保持不变",
                    what=what,
                    got=from_input(got),
                ),
                mistake=Msg("every chosen token [MASK]", "每个被选中的词元都变成了 [MASK]"),
            )
        if key == "random" and abs(got - 0.02) < 0.015:
            raise CheckFailure(
                Msg(
                    "{what}: {got:.3f} of the chosen tokens became random tokens, about `0.1 x 0.2`: of the `20%` "
                    "not masked, half (`0.5`) become random and half stay",
                    "{what}：被选中的词元中有 {got:.3f} 变成了随机词元，约为 `0.1 x 0.2`：没有被掩码的 `20%` 中，"
                    "一半（`0.5`）变成随机词元，另一半保持不变",
                    what=what,
                    got=from_input(got),
                ),
                mistake=Msg("random share `0.1` of the rest", "随机替换的比例取成了其余部分的 `0.1`"),
            )
        raise CheckFailure(
            Msg(
                "{what}: {got} of the chosen tokens {name}; `{share}` should (±{tol}): `80%` [MASK], "
                "`10%` a random ordinary token, `10%` unchanged",
                "{what}：被选中的词元中有 {got} {name}；应为 `{share}`（±{tol}）：`80%` [MASK]，`10%` 随机普通词元，`10%` 不变",
                what=what,
                got=from_input(f"{got:.3f}"),
                name=name,
                share=share,
                tol=from_input(f"{tol:.3f}"),
            )
        )
    return s


CALLS = 16  # calls per rule check: the count of a call must vary across them as Binomial(n, p) does
OUTCOMES = {
    0: Msg("became [MASK]", "变成了 [MASK]"),
    1: Msg("became a random token", "变成了随机词元"),
    2: Msg("stayed unchanged", "保持不变"),
}
RULE_HINT = Msg(
    "BERT's rule is one independent draw per real token, `chosen = torch.rand(shape, "
    "generator=generator) < mask_prob`, then one more draw per chosen token for its `80/10/10` outcome",
    "BERT 的规则是对每个真实词元独立抽样一次，`chosen = torch.rand(shape, generator=generator) < mask_prob`，"
    "然后对每个被选中的词元再抽样一次，决定它的 `80/10/10` 结果",
)


def call_many(sub, ids, seed, calls=CALLS, **kw):
    """mask_tokens on the same ids with `calls` generators seeded seed, seed + 1, ..."""
    return [call_mask(sub, ids, seed + k, **kw) for k in range(calls)]


def pooled(ids, outs):
    """The calls' results stacked as one batch (the rates are read on all of them)."""
    return (torch.cat([ids] * len(outs)), torch.cat([i for i, _ in outs]), torch.cat([l for _, l in outs]))


def outcome_probs(vocab: int) -> dict:
    """A chosen token's outcome: 0 [MASK] (0.8), 1 a random id other than its own, 2 unchanged (0.1, and the
    random draws that hit the token's own id, 1 in vocab)."""
    return {0: 0.8, 1: 0.1 * (1 - 1 / vocab), 2: 0.1 + 0.1 / vocab}


def rule_findings(ids, outs, specials, mask_id, vocab, p) -> list:
    """What in the calls' results breaks BERT's rule: one independent draw per real token (the
    count varying across calls as Binomial(n, p) does, neighbours, rows and calls independent),
    then one independent 80/10/10 draw per chosen token (no cycle, no tie to the position)."""
    real = ~torch.isin(ids, torch.tensor(list(specials)))
    found = draws.bernoulli_findings([(labels != IGNORE, real) for _, labels in outs], p)
    if found:
        return found
    outcome = [torch.where(inputs == mask_id, 0, torch.where(inputs == ids, 2, 1)) for inputs, _ in outs]
    found = draws.category_findings(
        [(o, labels != IGNORE) for o, (_, labels) in zip(outcome, outs)], outcome_probs(vocab)
    )
    if found:
        return found
    return draws.uniform_findings(torch.cat([i[(o == 1) & (l != IGNORE)] for o, (i, l) in zip(outcome, outs)]), vocab)


def expect_rule(ids, outs, specials, mask_id, vocab, p, what: Msg):
    draws.expect_drawn(
        rule_findings(ids, outs, specials, mask_id, vocab, p),
        Msg(
            "{what}, {n} calls with generators of different seeds",
            "{what}，用不同种子的生成器调用 {n} 次",
            what=what,
            n=from_input(len(outs)),
        ),
        Msg("chosen", "选中"),
        RULE_HINT,
        OUTCOMES,
    )


ALIKE_CALLS = 8  # calls on each input below (the count test needs 8)


def alike_inputs(ids, specials, token: int) -> list:
    """Inputs on which a choice computed from the ids and the position instead of drawn shows:
    every row holds the same ids (the row of ids with the most real tokens; such a choice then
    repeats from row to row) and every real token is `token` (the choice is then one of the
    position alone, a stride or an evenly spread sequence). The framing ([CLS], [SEP], [PAD]) is
    kept."""
    special = torch.isin(ids, torch.tensor(list(specials)))
    flat, real = ids.reshape(-1, ids.shape[-1]), (~special).reshape(-1, ids.shape[-1])
    same = flat[int(real.sum(-1).argmax())].expand(ids.shape).clone()
    return [
        (same, Msg("every row the same ids", "每一行都是相同的 id")),
        # not the id itself: a hidden check's message would show its hidden input's id (seventh outside attack)
        (torch.where(special, ids, token), Msg("every real token one id", "每个真实词元都是同一个 id")),
    ]


def expect_rule_on_alike_inputs(
    sub, ids, seed, shape: str, token: int, p: float, *, mask_id=MASK, vocab=BASE, specials=SPECIAL, give_p: bool = True
):
    """The rule's statistics on alike_inputs, each called ALIKE_CALLS times with the same input."""
    for k, (x, how) in enumerate(alike_inputs(ids, specials, token)):
        what = Msg(
            "{call} ({how})",
            "{call}（{how}）",
            call=code("mask_tokens({shape} ids, ...)", shape=from_input(shape)),
            how=how,
        )
        outs = call_many(
            sub,
            x,
            seed + 100 * k,
            calls=ALIKE_CALLS,
            mask_id=mask_id,
            vocab=vocab,
            specials=specials,
            p=p if give_p else None,
            label=what,
        )
        for inputs, labels in outs:
            rule_relations(x, inputs, labels, specials, mask_id, vocab, what)
        expect_rates(*pooled(x, outs), specials, mask_id, p, what)
        expect_rule(x, outs, specials, mask_id, vocab, p, what)


# The course's pre-training configuration (`kata train`: batches of 32 x 256 ids, 64 on CUDA):
# a rule honest on the batches above and keyed on the batch's size (sequences past the first 16
# never masked) meets it here. Each call is read as chosen or not per real token, and each
# chosen token as [MASK] or not, held to the rate and to draws.region_findings (every index of
# every axis, sequence and token, drawn at the rule's rate); the full statistics stay above.
TRAIN_LEN, TRAIN_CALLS = 256, 4
TRAIN_AXES = [Msg("sequence", "序列"), Msg("token", "词元")]


def training_findings(pairs, p: float) -> list:
    """The rate over every eligible element of every call, then draws.region_findings."""
    return draws.rate_findings(pairs, p) or draws.region_findings(pairs, p, TRAIN_AXES)


def expect_rule_at_training_size(sub, rows: int, seed: int, p: float = 0.15):
    """mask_tokens on `rows` x 256 ids with the book's vocabulary and specials, TRAIN_CALLS calls:
    the tokens chosen at rate p, and the chosen ones made [MASK] at 0.8, at every sequence and
    every token position."""
    ids = batch(rows, TRAIN_LEN, BASE, SPECIAL, seed=seed, min_len=TRAIN_LEN // 4)
    what = code(
        "mask_tokens({rows} x {train_len} ids, mask_id={mask_id}, vocab_size={vocab}, special_ids={specials})",
        rows=from_input(rows),
        train_len=from_input(TRAIN_LEN),
        mask_id=from_input(MASK),
        vocab=from_input(BASE),
        specials=from_input(SPECIAL),
    )
    outs = call_many(sub, ids, seed, calls=TRAIN_CALLS, label=what)
    for inputs, labels in outs:
        rule_relations(ids, inputs, labels, SPECIAL, MASK, BASE, what)
    real = ~torch.isin(ids, torch.tensor(SPECIAL))
    chosen = [labels != IGNORE for _, labels in outs]
    where = Msg(
        "{what}, {n} calls with generators of different seeds (the course's pre-training batch)",
        "{what}，用不同种子的生成器调用 {n} 次（课程预训练时的批次）",
        what=what,
        n=from_input(TRAIN_CALLS),
    )
    draws.expect_drawn(training_findings([(c, real) for c in chosen], p), where, Msg("chosen", "选中"), RULE_HINT)
    masked = [(inputs == MASK) & c for (inputs, _), c in zip(outs, chosen)]
    draws.expect_drawn(
        training_findings(list(zip(masked, chosen)), 0.8),
        Msg("{where}: the chosen tokens that became [MASK]", "{where}：被选中后变成 [MASK] 的词元", where=where),
        Msg("made [MASK]", "变成 [MASK]"),
        RULE_HINT,
    )


# ----------------------------------------------------------------------------- the head
def head_state(dim: int, vocab: int, seed: int) -> dict[str, torch.Tensor]:
    """Given weights with the exercise's names; the decoder's weight is the tied embedding's."""
    g = torch.Generator().manual_seed(seed)
    return {
        "dense.weight": torch.randn(dim, dim, generator=g) / math.sqrt(dim),
        "dense.bias": 0.2 * torch.randn(dim, generator=g),
        "norm.weight": 1 + 0.2 * torch.randn(dim, generator=g),
        "norm.bias": 0.2 * torch.randn(dim, generator=g),
        "decoder.weight": torch.randn(vocab, dim, generator=g),
        "decoder.bias": 0.2 * torch.randn(vocab, generator=g),
    }


def head_ref(hidden, sd, embedding=None, act=True, norm=True, dense=True, bias=True):
    """norm(gelu(dense(hidden))) @ embedding.T + bias, with parts left out for the named mistakes."""
    x = F.linear(hidden, sd["dense.weight"], sd["dense.bias"]) if dense else hidden
    x = F.gelu(x) if act else x
    x = F.layer_norm(x, x.shape[-1:], sd["norm.weight"], sd["norm.bias"]) if norm else x
    w = sd["decoder.weight"] if embedding is None else embedding
    return F.linear(x, w, sd["decoder.bias"] if bias else None)


def head_mistakes(hidden, sd):
    return [
        Mistake(head_ref(hidden, sd, norm=False), "the LayerNorm after the GELU is missing", "GELU 之后缺少 LayerNorm"),
        Mistake(
            head_ref(hidden, sd, act=False), "the GELU between dense and norm is missing", "dense 和 norm 之间缺少 GELU"
        ),
        Mistake(
            head_ref(hidden, sd, dense=False, act=False),
            "the dense layer and its GELU are missing: norm(act(dense(hidden))) comes before the decoder",
            "缺少 dense 层和它的 GELU：在 decoder 之前要先算 norm(act(dense(hidden)))",
        ),
        Mistake(head_ref(hidden, sd, bias=False), "the decoder's bias is missing", "缺少 decoder 的偏置"),
    ]


def gradient_reference(hidden, sd, upstream):
    """The gradient that reaches the tied weight when the head's logits get the gradient `upstream`."""
    weight = sd["decoder.weight"].clone().requires_grad_(True)
    (head_ref(hidden, sd, embedding=weight) * upstream).sum().backward()  # backward(upstream), without its sympy import
    return weight.grad


def loss_reference(logits, labels):
    """Cross-entropy averaged over the positions whose label is not -100."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE)


def loss_mistakes(logits, labels):
    each = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), reduction="none")
    return [
        Mistake(
            each.sum(),
            "the losses were summed: take the mean over the chosen positions",
            "把损失求和了：应在被选中的位置上取平均",
        ),
        Mistake(
            each.sum() / labels.numel(),
            "the mean counts the -100 positions too: average over the chosen positions only (ignore_index=-100)",
            "平均值把 -100 的位置也算进去了：只在被选中的位置上取平均（ignore_index=-100）",
        ),
    ]


def new_head(sub, dim, vocab, weight, sd=None):
    """A token embedding built by the runtime, holding `weight`, and the student's head tied to it."""
    emb = sub.given("embedding", vocab, dim, weight=weight)
    head = sub.new("MLMHead", emb, dim)
    if sd is not None:
        head.load_state_dict(sd)
    return emb, head


def expect_tied(sub, emb, head, sd, hidden, what: Msg):
    """Both ways: loading the head's decoder.weight changes the embedding, and a new embedding
    weight changes the head's logits."""
    emb_weight = emb.state_dict().get("weight")
    if not (
        isinstance(emb_weight, torch.Tensor)
        and tuple(emb_weight.shape) == tuple(sd["decoder.weight"].shape)
        and torch.equal(emb_weight, sd["decoder.weight"])
    ):
        raise CheckFailure(
            Msg(
                "{what}: loading the head's decoder.weight left the embedding's weight unchanged: the "
                "decoder holds a copy. Tie them: `self.decoder.weight = embedding.weight` (the same "
                "nn.Parameter, not a clone)",
                "{what}：加载头部的 decoder.weight 后嵌入的权重没有变：decoder 持有的是一份副本。要绑定它们："
                "`self.decoder.weight = embedding.weight`（同一个 nn.Parameter，而不是克隆）",
                what=what,
            ),
            mistake=Msg("decoder weight copied, not tied", "decoder 的权重是复制的，没有绑定"),
        )
    other = torch.randn(sd["decoder.weight"].shape, generator=torch.Generator().manual_seed(len(hidden) + 7))
    emb.load_state_dict({"weight": other})
    expect_tensor(
        head(hidden),
        head_ref(hidden, sd, embedding=other),
        tol="norm",
        what=Msg(
            "{what}: logits after the embedding's weight was changed (the decoder must use it)",
            "{what}：改变嵌入的权重之后的 logits（decoder 必须使用它）",
            what=what,
        ),
        mistakes=[
            Mistake(
                head_ref(hidden, sd),
                "the logits still use the old weights: the decoder holds a "
                "copy of the embedding's weight; assign the Parameter itself "
                "(`self.decoder.weight = embedding.weight`)",
                "logits 仍在使用旧的权重：decoder 持有嵌入权重的副本；应直接赋值这个 Parameter "
                "（`self.decoder.weight = embedding.weight`）",
            )
        ],
    )


# ============================================================================= the checks
@check(
    points=2,
    listings=["1.23/mlm"],
    title="the sample review: every real token chosen with mask_prob=1, none with 0; [MASK] = 50260",
    title_zh="示例评论：mask_prob=1 时选中每个真实词元，为 0 时一个也不选；[MASK] = 50260",
)
def test_listing_sample_exact(sub):
    for name, want in (
        ("MASK_ID", MASK),
        ("VOCAB_SIZE", VOCAB),
        ("MLM_VOCAB_SIZE", MLM_VOCAB),
        ("BASE_VOCAB_SIZE", BASE),
    ):
        expect_equal(
            sub.get(name),
            want,
            what=Msg(
                "the module's {name} (the kata's [MASK] is the next free id after listing 1.25's vocabulary)",
                "模块中的 {name}（本练习的 [MASK] 是代码清单 1.25 的词表之后的下一个空闲 id）",
                name=name,
            ),
        )
    ids = fx()["book_ids"]
    special = torch.isin(ids, torch.tensor(SPECIAL))
    what = code(
        "mask_tokens(BOOK_IDS, mask_id=50260, vocab_size=50257, special_ids=(50257, 50258, 50259), mask_prob=0.0)"
    )
    inputs, labels = call_mask(sub, ids, 12, p=0.0, label=what)
    expect_tensor(
        labels,
        torch.full_like(ids, IGNORE),
        tol="exact",
        what=Msg(
            "{what}: labels (nothing is chosen: all -100)", "{what}：标签（什么都没有选中：全为 -100）", what=what
        ),
        mistakes=[
            Mistake(
                ids,
                "the labels hold every id: only chosen positions get their id, -100 elsewhere",
                "标签保留了所有 id：只有被选中的位置才是它的 id，其他位置是 -100",
            ),
            Mistake(
                torch.zeros_like(ids),
                "the labels are 0 where nothing is predicted: use -100 "
                "(IGNORE_INDEX), which cross-entropy skips; 0 is a real token id",
                "不预测的位置标签为 0：应使用 -100（IGNORE_INDEX），交叉熵会跳过它；0 是一个真实的词元 id",
            ),
        ],
    )
    expect_tensor(
        inputs,
        ids,
        tol="exact",
        specials={PAD: "[PAD]", CLS: "[CLS]", SEP: "[SEP]", MASK: "[MASK]"},
        what=Msg(
            "{what}: inputs (nothing is chosen: unchanged)", "{what}：inputs（什么都没有选中：保持不变）", what=what
        ),
    )
    what = code("mask_tokens(BOOK_IDS, ..., mask_prob=1.0)")
    inputs, labels = call_mask(sub, ids, 11, p=1.0, label=what)
    expect_tensor(
        labels,
        torch.where(special, IGNORE, ids),
        tol="exact",
        what=Msg(
            "{what}: the labels (every real token chosen: its own id; [CLS], [SEP] and [PAD]: -100)",
            "{what}：标签（每个真实词元都被选中：标签是它自己的 id；[CLS]、[SEP] 和 [PAD]：-100）",
            what=what,
        ),
        mistakes=[
            Mistake(
                torch.where(special, 0, ids),
                "the labels are 0 where nothing is predicted: use -100 "
                "(IGNORE_INDEX), which cross-entropy skips; 0 is a real token id",
                "不预测的位置标签为 0：应使用 -100（IGNORE_INDEX），交叉熵会跳过它；0 是一个真实的词元 id",
            ),
            Mistake(
                ids,
                "[CLS], [SEP] and [PAD] were chosen too: leave out every id of special_ids",
                "[CLS]、[SEP] 和 [PAD] 也被选中了：special_ids 中的每个 id 都不能选",
            ),
            Mistake(
                torch.where(special, ids, IGNORE),
                "the labels are inverted: the original id goes where a token was chosen, -100 everywhere else",
                "标签反了：被选中的位置放原来的 id，其他位置放 -100",
            ),
        ],
    )
    rule_relations(ids, inputs, labels, SPECIAL, MASK, BASE, what)
    expect(
        bool((inputs[~special] != ids[~special]).any()),
        Msg(
            "{what}: no chosen token changed: 80% of them must become [MASK]",
            "{what}：被选中的词元一个也没有改变：其中 80% 必须变成 [MASK]",
            what=what,
        ),
    )


@check(points=1, title="input_ids is not changed in place", title_zh="不会就地修改 input_ids")
def test_input_not_changed(sub):
    ids = batch(4, 16, BASE, SPECIAL, seed=2362)
    fn = sub.get("mask_tokens")
    out = sub.given(
        "after_call",
        fn,
        ids,
        mask_id=MASK,
        vocab_size=BASE,
        special_ids=SPECIAL,
        generator=sub.given("generator", 13),
        mask_prob=1.0,
    )
    expect(
        isinstance(out, (tuple, list)) and len(out) == 2 and isinstance(out[1], list) and len(out[1]) == 1,
        Msg("mask_tokens could not be called", "无法调用 mask_tokens"),
    )
    result, (after,) = out
    what = code("mask_tokens(ids, ..., mask_prob=1.0)")
    inputs, labels = pair_of(result, ids, what)
    expect_tensor(
        after,
        ids,
        tol="exact",
        what=Msg(
            "input_ids after {what} (it must stay as it was)", "调用 {what} 之后的 input_ids（必须保持原样）", what=what
        ),
        mistakes=[
            Mistake(
                inputs,
                "mask_tokens changed input_ids in place: work on a copy, inputs = input_ids.clone()",
                "mask_tokens 就地修改了 input_ids：应在副本上操作，inputs = input_ids.clone()",
            )
        ],
    )
    chosen = rule_relations(ids, inputs, labels, SPECIAL, MASK, BASE, what)
    expect_tensor(
        chosen,
        ~torch.isin(ids, torch.tensor(SPECIAL)),
        tol="exact",
        what=Msg(
            "{what}: the chosen positions (label not -100): every real token",
            "{what}：被选中的位置（标签不是 -100）：每个真实词元",
            what=what,
        ),
    )


@check(
    points=3,
    title="15% of the real tokens chosen; of those 80% [MASK], 10% random, 10% unchanged",
    title_zh="选中 15% 的真实词元；其中 80% 变为 [MASK]，10% 变为随机词元，10% 不变",
)
def test_rates_book_vocabulary(sub):
    ids = batch(16, 512, BASE, SPECIAL, seed=2363, min_len=200)
    what = code("mask_tokens(16 x 512 ids, mask_id=50260, vocab_size=50257, special_ids=(50257, 50258, 50259))")
    outs = call_many(sub, ids, 1400, label=what)
    for inputs, labels in outs:
        rule_relations(ids, inputs, labels, SPECIAL, MASK, BASE, what)
    s = expect_rates(*pooled(ids, outs), SPECIAL, MASK, 0.15, what)
    rnd = s["random_ids"].double()
    mean = float(rnd.mean()) / BASE if len(rnd) else 0.0
    expect(
        len(rnd) > 0 and abs(mean - 0.5) < 0.06 and len(torch.unique(rnd)) > 0.9 * len(rnd),
        Msg(
            "{what}: the {n_rnd} random replacements are not spread over 0..vocab_size - 1 (mean {mean:.3f} "
            "x vocab_size): draw each one uniformly, torch.randint(0, vocab_size, ...)",
            "{what}：{n_rnd} 个随机替换词元没有分布在 0..vocab_size - 1 上（均值为 vocab_size 的 {mean:.3f} 倍）：每个都要均匀抽取，torch.randint(0, "
            "vocab_size, ...)",
            what=what,
            n_rnd=from_input(len(rnd)),
            mean=from_input(mean),
        ),
    )
    expect_rule(ids, outs, SPECIAL, MASK, BASE, 0.15, what)
    if grading():  # not in `kata check`: reads that only a choice computed from the ids or keyed on the size fails
        expect_rule_on_alike_inputs(sub, ids, 1420, "16 x 512", 1212, 0.15, give_p=False)
        expect_rule_at_training_size(sub, 32, 1440)


@check(
    points=2,
    title="mask_prob is honoured; random tokens come from the ordinary vocabulary only",
    title_zh="遵循 mask_prob；随机词元只来自普通词表",
)
def test_small_vocabulary(sub):
    specials = (20, 21, 22)  # 20 ordinary tokens, then [PAD], [CLS], [SEP]; [MASK] = 23
    ids = batch(8, 256, 20, specials, seed=2364, min_len=100)
    what = code("mask_tokens(8 x 256 ids, mask_id=23, vocab_size=20, special_ids=(20, 21, 22), mask_prob=0.5)")
    outs = call_many(sub, ids, 1500, mask_id=23, vocab=20, specials=specials, p=0.5, label=what)
    for inputs, labels in outs:
        rule_relations(ids, inputs, labels, specials, 23, 20, what)
    ids_all, inputs, labels = pooled(ids, outs)
    expect_rates(ids_all, inputs, labels, specials, 23, 0.5, what)
    expect_rule(ids, outs, specials, 23, 20, 0.5, what)
    if grading():  # not in `kata check`: reads that only a choice computed from the ids fails
        expect_rule_on_alike_inputs(sub, ids, 1520, "8 x 256", 7, 0.5, mask_id=23, vocab=20, specials=specials)
    ids = ids_all
    chosen = labels != IGNORE
    rnd = inputs[chosen & (inputs != 23) & (inputs != ids)]
    counts = torch.bincount(rnd, minlength=20)[:20] if len(rnd) else torch.zeros(20, dtype=torch.long)
    expect(
        int(counts.min()) >= 5,
        Msg(
            "{what}: some ordinary ids never (or hardly ever) appear among the {n_rnd} random replacements "
            "(fewest: {fewest}): every id 0..vocab_size - 1 must be equally likely",
            "{what}：有些普通 id 在 {n_rnd} 个随机替换中从未（或几乎没有）出现（最少的出现 {fewest} 次）：0..vocab_size - 1 中的每个 id 都必须有相同的概率",
            what=what,
            n_rnd=from_input(len(rnd)),
            fewest=from_input(int(counts.min())),
        ),
    )


@check(points=1, title="every draw comes from the generator given", title_zh="每次抽样都来自给定的生成器")
def test_generator(sub):
    ids = batch(8, 64, BASE, SPECIAL, seed=2365)
    sub.seed(1)
    first = call_mask(sub, ids, 16)
    sub.seed(2)
    again = call_mask(sub, ids, 16)
    other = call_mask(sub, ids, 17)
    for t in first + again + other:
        expect(isinstance(t, torch.Tensor), Msg("mask_tokens must return tensors", "mask_tokens 必须返回张量"))
    rule_relations(
        ids, *first, SPECIAL, MASK, BASE, code("mask_tokens(ids, ..., generator=torch.Generator().manual_seed(16))")
    )
    same = all(torch.equal(a, b) for a, b in zip(first, again))
    expect(
        same,
        Msg(
            "mask_tokens with two generators seeded alike gave different results after torch.manual_seed "
            "changed: draw every random number with generator=generator (torch.rand(..., "
            "generator=generator), torch.randint(..., generator=generator)), not from the global generator",
            "用相同种子初始化的两个生成器调用 mask_tokens，在 torch.manual_seed 改变之后得到了不同的结果：每个随机数都要用 "
            "generator=generator 抽取（torch.rand(..., generator=generator)、torch.randint(..., "
            "generator=generator)），而不是从全局生成器抽取",
        ),
    )
    expect(
        not torch.equal(first[1], other[1]),
        Msg(
            "mask_tokens chose the same positions with generators of two different seeds: the choice must be "
            "drawn at random",
            "用两个不同种子的生成器调用 mask_tokens，选中的位置完全相同：位置必须随机抽取",
        ),
    )


@check(
    points=3,
    listings=["1.23/mlm"],
    title="the MLM head: dense, GELU, LayerNorm, and a decoder tied to the token embedding",
    title_zh="MLM 头：dense、GELU、LayerNorm，以及与词元嵌入绑定的 decoder",
)
def test_head_tied(sub):
    f = fx()
    sd = head_state(D, V, seed=2360)
    start = torch.randn(V, D, generator=torch.Generator().manual_seed(2366))
    emb, head = new_head(sub, D, V, start)
    state = head.state_dict()
    expect_equal(
        sorted(state),
        sorted(sd),
        what=Msg(
            "the parameter names of MLMHead(embedding of {v} x {d}, {d})",
            "MLMHead({v} x {d} 的嵌入, {d}) 的参数名",
            v=V,
            d=D,
        ),
    )
    for name, value in sd.items():
        expect_equal(
            tuple(state[name].shape),
            tuple(value.shape),
            what=Msg("the shape of {name}", "{name} 的形状", name=name),
        )
    expect_tensor(
        state["decoder.weight"],
        start,
        tol="exact",
        what=Msg(
            "a new head's decoder.weight (it must be the embedding's weight)",
            "新建的头的 decoder.weight（它必须就是嵌入的权重）",
        ),
    )
    expect_tensor(
        state["decoder.bias"],
        torch.zeros(V),
        tol="exact",
        what=Msg("a new head's decoder.bias (it starts at zeros)", "新建的头的 decoder.bias（初始为零）"),
    )
    head.load_state_dict(sd)
    what = Msg(
        "MLMHead(embedding of {v} x {d}, {d}) with given weights", "给定权重的 MLMHead({v} x {d} 的嵌入, {d})", v=V, d=D
    )
    expect_tensor(
        head(f["hidden"]),
        f["logits"],
        tol="norm",
        what=Msg("{what}: logits of (3, 5, 16) hidden states", "{what}：(3, 5, 16) 隐藏状态的 logits", what=what),
        mistakes=head_mistakes(f["hidden"], sd),
    )
    expect_tied(sub, emb, head, sd, f["hidden"], what)


@check(
    points=2,
    title="the gradient of the decoder's weight trains the embedding",
    title_zh="decoder 权重的梯度训练的是嵌入",
)
def test_head_gradient(sub):
    sd = head_state(D, V, seed=2367)
    emb, head = new_head(sub, D, V, sd["decoder.weight"], sd)
    g = torch.Generator().manual_seed(2368)
    hidden = torch.randn(2, 6, D, generator=g)
    upstream = torch.randn(2, 6, V, generator=g)  # a gradient with respect to the logits, as a loss gives one
    out = sub.given("tied_gradient", head, emb, hidden, upstream)
    grad, logits = out
    what = Msg("one backward pass through the head's logits", "对头部的 logits 做一次反向传播")
    expect_tensor(
        logits,
        head_ref(hidden, sd),
        tol="norm",
        what=Msg("{what}: the logits", "{what}：输出的 logits", what=what),
        mistakes=head_mistakes(hidden, sd),
    )
    if grad is None:
        raise CheckFailure(
            Msg(
                "{what}: no gradient reached the embedding's weight: the decoder must use the "
                "embedding's own nn.Parameter (self.decoder.weight = embedding.weight), not a copy",
                "{what}：没有梯度到达嵌入的权重：decoder 必须使用嵌入自己的 nn.Parameter"
                "（self.decoder.weight = embedding.weight），而不是副本",
                what=what,
            ),
            mistake=Msg("decoder weight copied, not tied", "decoder 的权重是复制的，没有绑定"),
        )
    expect_tensor(
        grad,
        gradient_reference(hidden, sd, upstream),
        tol="norm",
        what=Msg("{what}: the gradient of the embedding's weight", "{what}：嵌入权重的梯度", what=what),
    )


@check(points=1, title="the MLM loss counts only the chosen positions", title_zh="MLM 损失只计算被选中的位置")
def test_mlm_loss(sub):
    g = torch.Generator().manual_seed(2369)
    logits = torch.randn(3, 7, V, generator=g) * 2
    labels = torch.randint(0, V, (3, 7), generator=g)
    labels[torch.rand(3, 7, generator=g) < 0.6] = IGNORE
    labels[0, 0] = 5
    out = sub.mlm_loss(logits, labels)
    expect_tensor(
        out,
        loss_reference(logits, labels),
        tol="norm",
        what=code("mlm_loss(logits (3, 7, 40), labels (3, 7) with -100)"),
        dtype=False,
        mistakes=loss_mistakes(logits, labels),
    )


# ----------------------------------------------------------------------------- hidden checks
@check(points=2, hidden=True, title="other shapes, probabilities and special ids", title_zh="其他形状、概率和特殊 id")
def test_other_shapes_and_ids(sub):
    specials = (300, 301, 302)  # 300 ordinary ids, then [PAD], [CLS], [SEP]; [MASK] = 303
    mask_id, vocab, p = 303, 300, 0.3
    g = torch.Generator().manual_seed(2370)
    ids = torch.randint(0, vocab, (6, 40, 90), generator=g)
    ids[:, :, 0] = 301
    ids[:, :, 64] = 302
    ids[:, :, 65:] = 300
    what = code(
        "mask_tokens(ids: {shape}, mask_id={mask_id}, vocab_size={vocab}, special_ids={specials}, mask_prob={p})",
        shape=from_input(tuple(ids.shape)),
        mask_id=from_input(mask_id),
        vocab=from_input(vocab),
        specials=from_input(specials),
        p=from_input(p),
    )
    outs = call_many(sub, ids, 1800, calls=8, mask_id=mask_id, vocab=vocab, specials=specials, p=p, label=what)
    for inputs, labels in outs:
        rule_relations(ids, inputs, labels, specials, mask_id, vocab, what)
    expect_rates(*pooled(ids, outs), specials, mask_id, p, what)
    expect_rule(ids, outs, specials, mask_id, vocab, p, what)
    expect_rule_on_alike_inputs(
        sub, ids, 1820, str(tuple(ids.shape)), 42, p, mask_id=mask_id, vocab=vocab, specials=specials
    )
    expect_rule_at_training_size(sub, 64, 1840)
    flat, p_all = ids[0, 0], 1.0
    one = code(
        "mask_tokens(ids: {shape}, ..., mask_prob={p})", shape=from_input(tuple(flat.shape)), p=from_input(p_all)
    )
    inputs, labels = call_mask(sub, flat, 19, mask_id=mask_id, vocab=vocab, specials=specials, p=p_all, label=one)
    special = torch.isin(flat, torch.tensor(specials))
    expect_tensor(
        labels, torch.where(special, IGNORE, flat), tol="exact", what=Msg("{what}: labels", "{what}：标签", what=one)
    )
    rule_relations(flat, inputs, labels, specials, mask_id, vocab, one)


@check(points=2, hidden=True, title="the head with other sizes, tied both ways", title_zh="其他尺寸的头，双向绑定")
def test_head_other_sizes(sub):
    dim, vocab = 24, 57
    sd = head_state(dim, vocab, seed=2371)
    emb, head = new_head(sub, dim, vocab, sd["decoder.weight"] * 0.5, sd)
    what = Msg(
        "MLMHead(embedding of {vocab} x {dim}, {dim}) with given weights",
        "给定权重的 MLMHead({vocab} x {dim} 的嵌入, {dim})",
        vocab=from_input(vocab),
        dim=from_input(dim),
    )
    g = torch.Generator().manual_seed(2372)
    for shape in ((9, dim), (2, 3, 4, dim)):
        hidden = torch.randn(*shape, generator=g)
        expect_tensor(
            head(hidden),
            head_ref(hidden, sd),
            tol="norm",
            what=Msg("{what}: logits", "{what}：输出的 logits", what=what),
            mistakes=head_mistakes(hidden, sd),
        )
    expect_tied(sub, emb, head, sd, torch.randn(4, 5, dim, generator=g), what)


@check(points=1, hidden=True, title="the MLM loss on flat logits", title_zh="展平的 logits 上的 MLM 损失")
def test_mlm_loss_flat(sub):
    g = torch.Generator().manual_seed(2373)
    logits = torch.randn(11, 13, generator=g)
    labels = torch.full((11,), IGNORE)
    labels[3], labels[8] = 4, 12
    out = sub.mlm_loss(logits, labels)
    expect_tensor(
        out,
        loss_reference(logits, labels),
        tol="norm",
        what=code(
            "mlm_loss(logits {shape_logits}, labels {shape_labels})",
            shape_logits=from_input(tuple(logits.shape)),
            shape_labels=from_input(tuple(labels.shape)),
        ),
        dtype=False,
    )
