"""Checks of §1.23, the encoder's feed-forward network (listing 1.32)."""
import torch

from grader.checking import Mistake, check, expect, expect_equal, expect_tensor, fixtures
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


def _new(sub, sd, dim=D, hidden=HID, **kw):
    m = sub.new("FeedForward", dim, hidden, **kw)
    m.load_state_dict(sd)
    m.eval()
    return m


@check(points=2, listings=["1.32"])
def test_listing_1_32_structure(sub):
    m = sub.new("FeedForward", 256, 1024)
    diff = R.first_difference(R.remote_repr(m), repr(R.mirror_feed_forward(256, 1024)))
    expect(not diff, "print(FeedForward(256, 1024)) differs from listing 1.36's printed feed-forward network "
                     f"(net = Sequential(Linear, GELU, Dropout, Linear, Dropout)): {diff}")
    small = sub.new("FeedForward", D, HID).state_dict()
    shapes = R.feed_forward_shapes(D, HID)
    expect_equal(sorted(small), sorted(shapes), what=f"parameter names of FeedForward({D}, {HID})")
    for name, shape in shapes.items():
        expect_equal(tuple(small[name].shape), shape, what=f"shape of {name}")


@check(points=2, listings=["1.32"])
def test_listing_1_32_given_weights(sub):
    f = fx()
    sd = _sd(f)
    expect_tensor(_new(sub, sd)(f["x"]), f["out"], tol="norm",
                  what=f"eval output of FeedForward({D}, {HID}) on a (2, 5, {D}) batch with given weights",
                  mistakes=_mistakes(f["x"], sd))


@check(points=2, hidden=True)
def test_fresh_sizes_and_shapes(sub):
    g = torch.Generator().manual_seed(2352)
    for dim, hidden, shape in ((12, 48, (3, 4)), (4, 7, (2, 3, 5)), (16, 64, (1, 1))):
        sd = R.random_state(R.feed_forward_shapes(dim, hidden), seed=2353 + dim)
        x = torch.randn(*shape, dim, generator=g)
        m = _new(sub, sd, dim, hidden)
        y = m(x)
        expect_tensor(y, R.feed_forward(x, sd), tol="norm", what=f"eval output of FeedForward({dim}, {hidden}) "
                      f"on a {tuple(x.shape)} input", mistakes=_mistakes(x, sd))
        # Position-wise: one vector alone gives what it gets inside the batch.
        flat = x.reshape(-1, dim)
        expect_tensor(m(flat[-1:]), y.reshape(-1, dim)[-1:], tol="norm", what="one token vector on its own")


@check(points=2, hidden=True)
def test_dropout_only_in_training(sub):
    sd = R.random_state(R.feed_forward_shapes(D, HID), seed=2354)
    x = torch.randn(4, 10, D, generator=torch.Generator().manual_seed(2355))
    sub.seed(5)
    m = _new(sub, sd, dropout=0.5)
    first = m(x)
    expect_tensor(m(x), first, tol="exact", what="two calls in eval mode (dropout must be off)")
    expect_tensor(first, R.feed_forward(x, sd), tol="norm", what="eval output with dropout=0.5")
    m.train()
    a, b = m(x), m(x)
    expect(isinstance(a, torch.Tensor) and not torch.equal(a, first) and not torch.equal(a, b),
           "with dropout=0.5 in train mode, outputs must change from call to call")
    frac = float((a == 0).float().mean())
    expect(0.35 < frac < 0.65, "with dropout=0.5 in train mode about half of the outputs must be 0 "
                               f"(the last Dropout comes after the second Linear; got {frac:.2f})")
    plain = _new(sub, sd, dropout=0.0)
    plain.train()
    expect_tensor(plain(x), first, tol="norm", what="train-mode output with dropout=0.0 (equal to eval mode)")
