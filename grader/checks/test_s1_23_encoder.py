"""Checks of §1.23, the BERT encoder stack (listing 1.34).

Given weights are loaded by the book's names (embed.*, layers.<i>.*) and the eval output is
compared with bert_reference.encoder. Padding invariance: appending [PAD] tokens, or changing
the ids at padded positions, changes no output at the real positions.
"""

import torch

from grader.checking import Mistake, Msg, check, expect, expect_equal, expect_tensor, fixtures, from_input
from grader.checks import bert_reference as R
from grader.checking import module_lists

EXERCISE = "s1_23_encoder"
V, PAD, CLS, SEP, MAX_LEN = 50260, 50257, 50258, 50259, 256  # listings 1.25-1.26: the book's vocabulary
D, L, NL, H, FF = 16, 24, 2, 4, 32  # a small model for the weight checks
SEED = 2370  # the given weights: bert_reference.random_state(shapes, SEED)


def make_fixtures(sol):
    sd = _given()
    ids, mask = R.padded_batch([9, 6, 3], 9, V, PAD, CLS, SEP, seed=2371)
    m = sol.BERTEncoder(V, D, L, NL, H, FF)
    m.load_state_dict(sd)
    m.eval()
    with torch.no_grad():
        out = m(ids, mask)
    return {"ids": ids, "mask": mask, "out": out}


def fx():
    return fixtures.load(EXERCISE)


def _given():
    return R.random_state(R.encoder_shapes(V, D, L, NL, FF), seed=SEED)


def _mistakes(ids, mask, sd, heads):
    return [
        Mistake(
            R.encoder(ids, mask, sd, heads, stack="last_only"),
            "every block read the embeddings and only the last block's output was kept: feed each block the "
            "previous block's output (`x = layer(x, mask)`)",
            "每个块都读了嵌入，只保留了最后一块的输出：每块要读上一块的输出",
        ),
        Mistake(
            R.encoder(ids, mask, sd, heads, stack="reversed"),
            "the blocks ran from the last to the first",
            "块的顺序反了：从最后一块跑到了第一块",
        ),
        Mistake(
            R.encoder(ids, mask, sd, heads, mask_mode="none"),
            "the padding mask did not reach the blocks",
            "填充掩码没有传给各个块",
        ),
    ]


def _expect_values(sub, seed: int):
    """Eval output with other given weights on a fresh padded batch: paired with the check of the
    layout, so that the right layout around a wrong forward earns nothing."""
    sd = R.random_state(R.encoder_shapes(V, D, L, NL, FF), seed=seed)
    ids, mask = R.padded_batch([5, 3], 5, V, PAD, CLS, SEP, seed=seed + 1)
    expect_tensor(
        _new(sub, sd)(ids, mask),
        R.encoder(ids, mask, sd, H),
        tol="encoder",
        what=Msg(
            "eval output of a {nl}-layer encoder for a padded (2, 5) batch with given weights",
            "给定权重时 {nl} 层编码器对填充后的 (2, 5) 批次在 eval 模式下的输出",
            nl=NL,
        ),
        mistakes=_mistakes(ids, mask, sd, H),
    )


def _new(sub, sd, vocab=V, dim=D, max_len=L, layers=NL, heads=H, ff_dim=FF):
    m = sub.new("BERTEncoder", vocab, dim, max_len, layers, heads, ff_dim)
    m.load_state_dict(sd)
    m.eval()
    return m


@check(points=2, listings=["1.34"], title="listing 1.34: the encoder's layout", title_zh="代码清单 1.34：编码器的结构")
def test_listing_1_34_structure(sub):
    m = sub.new("BERTEncoder", V, 256, MAX_LEN, 4, 4, 1024)
    module_lists.expect_module_list(m, "layers", "BERTEncoder(...)")
    diff = R.first_difference(R.remote_repr(m), repr(R.mirror_encoder(V, 256, MAX_LEN, 4, 1024, PAD)))
    expect(
        not diff,
        Msg(
            "print(BERTEncoder(VOCAB_SIZE, 256, MAX_LEN, layers=4, heads=4, ff_dim=1024)) differs from "
            "listing 1.36's printed encoder with 4 blocks (embed, then layers as an nn.ModuleList): {diff}",
            "print(BERTEncoder(VOCAB_SIZE, 256, MAX_LEN, layers=4, heads=4, ff_dim=1024)) 与代码清单 1.36 "
            "中打印的 4 个块的编码器不同（先 embed，再是 nn.ModuleList 形式的 layers）：{diff}",
            diff=diff,
        ),
    )
    small = sub.new("BERTEncoder", V, D, L, 3, H, FF).state_dict()
    shapes = R.encoder_shapes(V, D, L, 3, FF)
    expect_equal(
        sorted(small),
        sorted(shapes),
        what=Msg("parameter names of BERTEncoder with 3 layers", "3 层 BERTEncoder 的参数名"),
    )
    for name, shape in shapes.items():
        expect_equal(tuple(small[name].shape), shape, what=Msg("shape of {name}", "{name} 的形状", name=name))
    _expect_values(sub, seed=2381)


@check(
    points=3,
    listings=["1.34"],
    title="listing 1.34: output with given weights",
    title_zh="代码清单 1.34：给定权重时的输出",
)
def test_listing_1_34_given_weights(sub):
    f = fx()
    sd = _given()
    out = _new(sub, sd)(f["ids"], f["mask"])
    expect_tensor(
        out,
        f["out"],
        tol="encoder",
        what=Msg(
            "eval output of a {nl}-layer encoder (dim {d}, heads {h}) for a padded (3, 9) batch with given weights",
            "给定权重时 {nl} 层编码器（dim {d}，heads {h}）对填充后的 (3, 9) 批次在 eval 模式下的输出",
            nl=NL,
            d=D,
            h=H,
        ),
        mistakes=_mistakes(f["ids"], f["mask"], sd, H),
    )


@check(points=2, hidden=True, title="other sizes and lengths", title_zh="其他尺寸和长度")
def test_fresh_sizes(sub):
    for layers, lengths, T, seed in ((1, [4, 2], 4, 1), (3, [L, 5], L, 2), (2, [2], 2, 3)):
        sd = R.random_state(R.encoder_shapes(V, D, L, layers, FF), seed=2372 + seed)
        ids, mask = R.padded_batch(lengths, T, V, PAD, CLS, SEP, seed=2375 + seed)
        out = _new(sub, sd, layers=layers)(ids, mask)
        expect_tensor(
            out,
            R.encoder(ids, mask, sd, H),
            tol="encoder",
            what=Msg(
                "eval output of a {layers}-layer encoder, real lengths {lengths} of {t}",
                "{layers} 层编码器在 eval 模式下的输出，真实长度 {lengths}，共 {t}",
                layers=from_input(layers),
                lengths=from_input(lengths),
                t=from_input(T),
            ),
            mistakes=_mistakes(ids, mask, sd, H),
        )


@check(points=2, hidden=True, title="padding does not change the real positions", title_zh="填充不改变真实位置的输出")
def test_padding_is_hidden(sub):
    sd = R.random_state(R.encoder_shapes(V, D, L, NL, FF), seed=2378)
    m = _new(sub, sd)
    lengths, T, extra = [7, 4, 2], 8, 5
    ids, mask = R.padded_batch(lengths, T, V, PAD, CLS, SEP, seed=2379)
    y = m(ids, mask)
    expect_tensor(
        y,
        R.encoder(ids, mask, sd, H),
        tol="encoder",
        what=Msg(  # the property alone: a constant has it
            "eval output for real lengths {lengths} of {t}",
            "真实长度为 {lengths}（共 {t}）时 eval 模式下的输出",
            lengths=from_input(lengths),
            t=from_input(T),
        ),
    )
    real = mask.bool()
    g = torch.Generator().manual_seed(2380)
    other = torch.where(real, ids, torch.randint(0, PAD, ids.shape, generator=g))
    expect_tensor(
        m(other, mask)[real],
        y[real],
        tol="encoder",
        what=Msg(
            "outputs at real positions after changing the token ids at padded positions (mask still `0`)",
            "改变填充位置的词元 id（掩码仍为 `0`）之后真实位置的输出",
        ),
    )
    longer = torch.cat([ids, torch.full((len(lengths), extra), PAD)], dim=1)
    expect_tensor(
        m(longer, (longer != PAD).long())[:, :T],
        y,
        tol="encoder",
        what=Msg(
            "outputs after appending {extra} more [PAD] tokens",
            "再追加 {extra} 个 [PAD] 词元之后的输出",
            extra=from_input(extra),
        ),
    )


@check(points=1, hidden=True, title="dropout only in training", title_zh="只在训练时做 dropout")
def test_dropout_only_in_training(sub):
    sd = R.random_state(R.encoder_shapes(V, D, L, NL, FF), seed=2381)
    ids, mask = R.padded_batch([6, 3], 6, V, PAD, CLS, SEP, seed=2382)
    sub.seed(13)
    m = _new(sub, sd)
    first = m(ids, mask)
    expect_tensor(
        m(ids, mask),
        first,
        tol="exact",
        what=Msg("two calls in eval mode (dropout must be off)", "eval 模式下的两次调用（dropout 必须关闭）"),
    )
    m.train()
    a, b = m(ids, mask), m(ids, mask)
    expect(
        isinstance(a, torch.Tensor) and not torch.equal(a, first) and not torch.equal(a, b),
        Msg(
            "in train mode the encoder's dropout (the default `p = 0.1`) must make outputs change from call to call",
            "训练模式下编码器的 dropout（默认 `p = 0.1`）必须让每次调用的输出都不同",
        ),
    )
