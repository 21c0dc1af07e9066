"""Checks of §1.23, the encoder's feed-forward network (listing 1.32)."""
import torch

from grader.checking import Mistake, Msg, check, expect, expect_equal, expect_tensor, fixtures
from grader.checks import bert_reference as R

EXERCISE = "s1_23_feed_forward"
D, HID = 8, 20


def make_fixtures(sol):
    sd = R.random_state(R.feed_forward_shapes(D, HID), seed=2350)
    x = torch.randn(2, 5, D, generator=torch.Generator().manual_seed(2351))
    m = sol.FeedForward(D, HID)
    m.load_state_dict(sd)
    m.eval()
    with torch.no_grad():
        out = m(x)
    return {"x": x, "out": out, **{f"sd/{k}": v for k, v in sd.items()}}


def fx():
    return fixtures.load(EXERCISE)


def _sd(f):
    return {k.split("/", 1)[1]: v for k, v in f.items() if k.startswith("sd/")}


def _mistakes(x, sd):
    return [Mistake(R.feed_forward(x, sd, "relu"), "ReLU instead of GELU between the linear layers",
                    "两个线性层之间用了 ReLU 而不是 GELU"),
            Mistake(R.feed_forward(x, sd, "tanh"), "the tanh approximation of GELU instead of nn.GELU()'s exact form",
                    "用了 tanh 近似的 GELU，而不是 nn.GELU() 的精确形式"),
            Mistake(R.feed_forward(x, sd, "none"), "no activation between the two linear layers",
                    "两个线性层之间没有激活函数")]


def _expect_values(sub, seed: int):
    """Eval output with other given weights on a fresh batch: paired with the check of the
    layout, so that the right layout around a wrong forward earns nothing."""
    sd = R.random_state(R.feed_forward_shapes(D, HID), seed=seed)
    x = torch.randn(2, 3, D, generator=torch.Generator().manual_seed(seed + 1))
    expect_tensor(_new(sub, sd)(x), R.feed_forward(x, sd), tol="norm",
                  what=Msg(f"eval output of FeedForward({D}, {HID}) on a (2, 3, {D}) batch with given weights",
                           f"给定权重时 FeedForward({D}, {HID}) 在 (2, 3, {D}) 批次上 eval 模式下的输出"),
                  mistakes=_mistakes(x, sd))


def _new(sub, sd, dim=D, hidden=HID, **kw):
    m = sub.new("FeedForward", dim, hidden, **kw)
    m.load_state_dict(sd)
    m.eval()
    return m


@check(points=2, listings=["1.32"],
       title="listing 1.32: the network's layout", title_zh="代码清单 1.32：网络的结构")
def test_listing_1_32_structure(sub):
    m = sub.new("FeedForward", 256, 1024)
    diff = R.first_difference(R.remote_repr(m), repr(R.mirror_feed_forward(256, 1024)))
    expect(not diff, Msg("print(FeedForward(256, 1024)) differs from listing 1.36's printed feed-forward network "
                     f"(net = Sequential(Linear, GELU, Dropout, Linear, Dropout)): {diff}",
                         f"print(FeedForward(256, 1024)) 与代码清单 1.36 中打印的前馈网络不同（net = Sequential(Linear, GELU, Dropout, Linear, Dropout)）：{diff}"))
    small = sub.new("FeedForward", D, HID).state_dict()
    shapes = R.feed_forward_shapes(D, HID)
    expect_equal(sorted(small), sorted(shapes), what=Msg(f"parameter names of FeedForward({D}, {HID})",
                                                         f"FeedForward({D}, {HID}) 的参数名"))
    for name, shape in shapes.items():
        expect_equal(tuple(small[name].shape), shape, what=Msg(f"shape of {name}", f"{name} 的形状"))
    _expect_values(sub, seed=2356)


@check(points=2, listings=["1.32"],
       title="listing 1.32: output with given weights", title_zh="代码清单 1.32：给定权重时的输出")
def test_listing_1_32_given_weights(sub):
    f = fx()
    sd = _sd(f)
    expect_tensor(_new(sub, sd)(f["x"]), f["out"], tol="norm",
                  what=Msg(f"eval output of FeedForward({D}, {HID}) on a (2, 5, {D}) batch with given weights",
                           f"给定权重时 FeedForward({D}, {HID}) 在 (2, 5, {D}) 批次上 eval 模式下的输出"),
                  mistakes=_mistakes(f["x"], sd))


@check(points=2, hidden=True,
       title="other sizes and input shapes", title_zh="其他尺寸和输入形状")
def test_fresh_sizes_and_shapes(sub):
    g = torch.Generator().manual_seed(2352)
    for dim, hidden, shape in ((12, 48, (3, 4)), (4, 7, (2, 3, 5)), (16, 64, (1, 1))):
        sd = R.random_state(R.feed_forward_shapes(dim, hidden), seed=2353 + dim)
        x = torch.randn(*shape, dim, generator=g)
        m = _new(sub, sd, dim, hidden)
        y = m(x)
        expect_tensor(y, R.feed_forward(x, sd), tol="norm", what=Msg(f"eval output of FeedForward({dim}, {hidden}) "
                      f"on a {tuple(x.shape)} input",
                                                                     f"FeedForward({dim}, {hidden}) 在 {tuple(x.shape)} 输入上 eval 模式下的输出"), mistakes=_mistakes(x, sd))
        # Position-wise: one vector alone gives what it gets inside the batch.
        flat = x.reshape(-1, dim)
        expect_tensor(m(flat[-1:]), y.reshape(-1, dim)[-1:], tol="norm", what=Msg(
                "one token vector on its own", "单独一个词元向量"))


@check(points=2, hidden=True,
       title="dropout only in training", title_zh="只在训练时做 dropout")
def test_dropout_only_in_training(sub):
    sd = R.random_state(R.feed_forward_shapes(D, HID), seed=2354)
    x = torch.randn(4, 10, D, generator=torch.Generator().manual_seed(2355))
    sub.seed(5)
    m = _new(sub, sd, dropout=0.5)
    first = m(x)
    expect_tensor(m(x), first, tol="exact", what=Msg("two calls in eval mode (dropout must be off)",
                                                     "eval 模式下的两次调用（dropout 必须关闭）"))
    expect_tensor(first, R.feed_forward(x, sd), tol="norm", what=Msg(
            "eval output with dropout=0.5", "dropout=0.5 时 eval 模式下的输出"))
    m.train()
    a, b = m(x), m(x)
    expect(isinstance(a, torch.Tensor) and not torch.equal(a, first) and not torch.equal(a, b),
           Msg("with dropout=0.5 in train mode, outputs must change from call to call",
               "dropout=0.5 时训练模式下每次调用的输出都必须不同"))
    frac = float((a == 0).float().mean())
    expect(0.35 < frac < 0.65, Msg("with dropout=0.5 in train mode about half of the outputs must be 0 "
                               f"(the last Dropout comes after the second Linear; got {frac:.2f})",
                                   f"dropout=0.5 时训练模式下大约一半的输出必须为 0（最后一个 Dropout 在第二个 Linear 之后；实际为 {frac:.2f}）"))
    plain = _new(sub, sd, dropout=0.0)
    plain.train()
    expect_tensor(plain(x), first, tol="norm", what=Msg("train-mode output with dropout=0.0 (equal to eval mode)",
                                                        "dropout=0.0 时训练模式下的输出（与 eval 模式相同）"))
