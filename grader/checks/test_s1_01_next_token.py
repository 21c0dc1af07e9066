"""Checks of §1.1, next-token prediction: a bigram model, the probability table, top-k, and
greedy and temperature sampling loops (figures 1.2 and 1.4).

The book's figure 1.4 comes from a hosted model (ERRATA E-1.1-a); here the mechanism is checked
on a bigram model of CORPUS. Sampling is checked by properties only (temperature 0 = greedy,
seeded reproducibility, empirical frequencies close to softmax(logits / T)), never by the
draws of one seed: correct implementations may use the random numbers differently.
"""

import math
import random

import torch

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
from grader.worker.proxy import StudentError

EXERCISE = "s1_01_next_token"

# A small corpus written for the kata (not from the book), shaped so that "you" is mostly
# followed by "to", like the book's prompt. Words and punctuation are separated by spaces.
CORPUS = """
after years of hard work your effort will take you to the top .
hard work will take you to places you never expected to see .
a good map will take you to the station before the rain .
the early train will take you to the city by noon .
this narrow road will take you to the river and back .
your effort will take you far , and your friends will help you .
the night bus will take you to the old market .
daily practice will take you to the next level .
patience will take you to the end of the road .
the guide will take you through the museum after lunch .
a little luck will take you home .
the stairs will take you up to the roof .
if you work hard you will reach the top .
thank you for the map and the tea .
the teacher told you to read the book again .
we will show you the way to the station .
the cat sat on the mat and looked at you .
a short walk will take you to the station .
"""
# Figure 1.3's prompt, without its comma (the corpus has no comma after "work").
PROMPT = "after years of hard work your effort will take you"
N_GREEDY = 8
ALPHA = 0.01  # the default alpha of BigramModel
FREQ_LOGITS = [2.0, 1.0, 0.5, 0.0, -1.0, -math.inf]
FREQ_DRAWS = 20000
CYCLE = [3, 5, 4, 1, 0, 2]  # the greedy successor of each token in the table model: 0 3 1 5 2 4 0


def fresh_corpus() -> str:
    """A random corpus over a fixed word list (deterministic: Python's seeded random)."""
    rng = random.Random(2024)
    words = ["Sun", "rain", "cloud", "wind", "snow", "storm", "fog", "sky", "sun", "ice", "."]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 9))) for _ in range(12)]
    return "\n".join(lines)


def corpus_ids(text: str) -> tuple[list[str], list[int]]:
    words = text.lower().split()
    vocab = sorted(set(words))
    return vocab, [vocab.index(w) for w in words]


def make_fixtures(sol):
    m = sol.BigramModel(CORPUS)
    ids = m.encode(PROMPT)
    logits = m(ids)
    out = {
        "counts": m.counts,
        "logits_prompt": logits,
        "probs_prompt": sol.probability_table(logits),
        "greedy": torch.tensor(sol.greedy_generate(m, ids, N_GREEDY)),
    }
    fresh = sol.BigramModel(fresh_corpus(), alpha=0.5)
    out["fresh_counts"] = fresh.counts
    out["fresh_logits"] = torch.stack([fresh([i]) for i in range(len(fresh.vocab))])
    g = torch.Generator().manual_seed(101)
    x = torch.randn(3, 7, generator=g) * 3
    out["x"] = x
    for name, t in (("T1", 1.0), ("T05", 0.5), ("T2", 2.0)):
        out[f"x_{name}"] = sol.probability_table(x, t)
    out["x64_T05"] = sol.probability_table(x.double(), 0.5)
    table = torch.randn(6, 6, generator=g)
    table[torch.arange(6), torch.tensor(CYCLE)] += 3.0  # greedy walks the cycle, never stays put
    assert (table.topk(2).values[:, 0] - table.topk(2).values[:, 1]).min() > 0.05  # a clear maximum per row
    out["table"] = table
    model = sol.LogitsTable(table)
    out["greedy_table_0"] = torch.tensor(sol.greedy_generate(model, [0], 7))
    out["greedy_table_35"] = torch.tensor(sol.greedy_generate(model, [3, 5], 7))
    out["flat_table"] = torch.randn(6, 6, generator=g) * 0.3
    allowed = torch.rand(6, 6, generator=g) < 0.5
    allowed[torch.arange(6), (torch.arange(6) + 1) % 6] = True  # every row has a way out
    out["sparse_table"] = torch.where(allowed, torch.randn(6, 6, generator=g), torch.tensor(-math.inf))
    return out


def fx():
    return fixtures.load(EXERCISE)


def _ints(values, what: Msg) -> list:
    inner = (
        Msg(" of {item}", "（元素为 {item}）", item=type(values[0]).__name__)
        if isinstance(values, list) and values
        else code("")
    )
    expect(
        isinstance(values, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in values),
        Msg(
            "{what}: expected a list of ints, got {kind}{inner}",
            "{what}：应返回整数列表，实际得到 {kind}{inner}",
            what=what,
            kind=type(values).__name__,
            inner=inner,
        ),
    )
    return values


def _check_top_k(sub, logits: torch.Tensor, k: int, what: Msg) -> None:
    out = sub.top_k(logits, k)
    expect(
        isinstance(out, (tuple, list)) and len(out) == 2,
        Msg(
            "{what}: top_k must return a pair (probs, ids)",
            "{what}：top_k 必须返回一对值 (probs, ids)",
            what=what,
        ),
    )
    probs, ids = out
    full = torch.softmax(logits.double(), dim=-1)
    best = torch.sort(full, descending=True).values[:k].to(logits.dtype)
    mistakes = [
        Mistake(
            torch.sort(logits, descending=True).values[:k], "the logits, not probabilities", "返回了 logits，而不是概率"
        ),
        Mistake(
            torch.sort(full).values[:k].to(logits.dtype),
            "the k least likely tokens (sort in descending order)",
            "k 个最不可能的词元（应降序排列）",
        ),
    ]
    expect_tensor(
        probs,
        best,
        tol="softmax",
        what=Msg("{what}: probabilities", "{what}：概率", what=what),
        mistakes=mistakes,
    )
    expect(
        isinstance(ids, torch.Tensor) and ids.dtype == torch.int64 and tuple(ids.shape) == (k,),
        Msg(
            "{what}: ids must be an `int64` tensor of shape ({k},)",
            "{what}：ids 必须是形状为 ({k},) 的 `int64` 张量",
            what=what,
            k=from_input(k),
        ),
    )
    expect(
        bool(((ids >= 0) & (ids < len(full))).all()) and len(set(ids.tolist())) == k,
        Msg(
            "{what}: ids must be {k} distinct token ids",
            "{what}：ids 必须是 {k} 个互不相同的词元 id",
            what=what,
            k=from_input(k),
        ),
    )
    expect_tensor(
        full[ids].to(logits.dtype),
        best,
        tol="softmax",
        what=Msg(
            "{what}: probabilities of the returned ids (each id must be the token whose probability sits next to it)",
            "{what}：返回的 id 对应的概率（每个 id 必须是与其并列的那个概率所属的词元）",
            what=what,
        ),
    )


def _temperature_mistakes(x, t):
    """probability_table(x, t)'s plausible wrong answers, x a batch of logits (2-D: dim 0 differs from -1)."""
    return [
        Mistake(
            torch.softmax(x * t, dim=-1),
            "multiplying the logits by the temperature instead of dividing",
            "把 logits 乘以了温度，而不是除以温度",
        ),
        Mistake(torch.softmax(x, dim=-1), "the temperature was ignored", "忽略了温度"),
        Mistake(
            torch.softmax(x / t, dim=0),
            "softmax over the first dimension instead of the last",
            "在第一维而不是最后一维上做了 softmax",
        ),
    ]


# ------------------------------------------------------------------------- public checks
@check(
    points=2,
    listings=["1.1/top-k"],
    title="bigram vocabulary and counts of the corpus",
    title_zh="语料的二元语法词表和计数",
)
def test_bigram_counts(sub):
    f = fx()
    m = sub.new("BigramModel", CORPUS)
    vocab, ids = corpus_ids(CORPUS)
    expect_equal(
        m.attr("vocab"),
        vocab,
        what=Msg(
            "BigramModel(CORPUS).vocab (sorted distinct lower-case words)",
            "BigramModel(CORPUS).vocab（排好序、互不相同的小写单词）",
        ),
    )
    expect_tensor(
        m.attr("counts"),
        f["counts"],
        tol="exact",
        what=code("BigramModel(CORPUS).counts"),
        mistakes=[
            Mistake(
                f["counts"].T,
                "rows and columns swapped: counts[a, b] counts b right after a",
                "行列颠倒：counts[a, b] 统计 b 紧跟在 a 之后的次数",
            )
        ],
    )
    prompt = [vocab.index(w) for w in PROMPT.split()]
    c = f["counts"][prompt[-1]].double()
    expect_tensor(
        m(prompt),
        f["logits_prompt"],
        tol="softmax",
        what=Msg("model(ids of {PROMPT!r})", "model（{PROMPT!r} 的 id）", PROMPT=from_input(PROMPT)),
        mistakes=[
            Mistake((c + ALPHA).float(), "counts + alpha without the log", "只加了 alpha，没有取对数"),
            Mistake(
                c.log().float(),
                "log(counts) without alpha (zeros give -inf)",
                "log(counts) 没有加 alpha（0 变成 -inf）",
            ),
            Mistake(
                torch.log(f["counts"][:, prompt[-1]].double() + ALPHA).float(),
                "a column of counts instead of the row of the last word",
                "取了列而不是最后一个词的行",
            ),
            Mistake(
                torch.log(f["counts"][prompt[0]].double() + ALPHA).float(),
                "the row of the first id instead of the last one",
                "用了第一个 id 的行而不是最后一个",
            ),
        ],
    )


@check(
    points=3,
    listings=["1.1/top-k"],
    title="figure 1.4: probability table and top 10 next tokens",
    title_zh="图 1.4：概率表和概率最高的 10 个下一个词元",
)
def test_listing_top_k(sub):
    f = fx()
    logits = f["logits_prompt"]
    probs = sub.probability_table(logits)
    expect_tensor(
        probs,
        f["probs_prompt"],
        tol="softmax",
        what=Msg("probability table of the next word after the prompt", "提示之后下一个单词的概率表"),
        mistakes=[
            Mistake(
                logits / logits.sum(),
                "dividing the logits by their sum instead of softmax",
                "用 logits 除以其和，而不是 softmax",
            ),
            Mistake(logits.exp(), "exp(logits) without dividing by the sum", "只取了 exp，没有除以总和"),
        ],
    )
    expect(abs(float(probs.sum()) - 1.0) < 1e-5, Msg("the probability table must sum to 1", "概率表之和必须为 1"))
    pair = torch.stack([logits, logits.flip(0)])  # a batch of two rows, at temperature 2
    expect_tensor(
        sub.probability_table(pair, 2.0),
        torch.softmax(pair / 2.0, dim=-1),
        tol="softmax",
        what=Msg(
            "probability_table(logits, temperature=2.0) of two rows", "两行 logits 在温度 2.0 下的 probability_table"
        ),
        mistakes=_temperature_mistakes(pair, 2.0),
    )
    # a small temperature scales the logits up to about 110: exp() of that overflows float32 (inf / inf = NaN)
    # unless the softmax subtracts each row's maximum first, as torch.softmax does
    hot = torch.exp(pair / 0.01)
    expect_tensor(
        sub.probability_table(pair, 0.01),
        torch.softmax(pair / 0.01, dim=-1),
        tol="softmax",
        what=Msg(
            "probability_table(logits, temperature=0.01) of two rows (every row still sums to 1)",
            "两行 logits 在温度 0.01 下的 probability_table（每行之和仍为 1）",
        ),
        mistakes=[
            Mistake(
                hot / hot.sum(dim=-1, keepdim=True),
                "exp() overflowed at a small temperature: subtract each row's maximum before "
                "exponentiating (torch.softmax does)",
                "温度很小时 exp() 溢出了：求指数前先减去每行的最大值（torch.softmax 就是这样做的）",
            )
        ],
    )
    _check_top_k(sub, logits, 10, Msg("top_k(logits after the prompt, 10)", "top_k（提示之后的 logits，10）"))
    vocab, _ = corpus_ids(CORPUS)
    _, ids = sub.top_k(logits, 1)
    expect_equal(
        vocab[int(ids[0])],
        "to",
        what=Msg("the most likely word after '... will take you'", "'... will take you' 之后最可能的单词"),
    )


@check(
    points=2,
    listings=["1.1/generate"],
    title="figure 1.2: greedy generation from the prompt",
    title_zh="图 1.2：从提示开始的贪心生成",
)
def test_listing_greedy_generation(sub):
    f = fx()
    m = sub.new("BigramModel", CORPUS)
    vocab, _ = corpus_ids(CORPUS)
    prompt = [vocab.index(w) for w in PROMPT.split()]
    out = _ints(sub.greedy_generate(m, prompt, N_GREEDY), code("greedy_generate"))
    expected = f["greedy"].tolist()
    expect(
        len(out) != N_GREEDY or out != expected[len(prompt) :],
        Msg(
            "greedy_generate must return the prompt ids followed by the new ids, not the new ids alone",
            "greedy_generate 必须返回提示的 id 加上新生成的 id，而不是只返回新 id",
        ),
    )
    first = expected[len(prompt)]
    expect(
        out != prompt + [first] * N_GREEDY,
        Msg(
            "every step predicted from the prompt alone: append each new id and call the model on the longer list",
            "每一步都只根据提示做预测：应把每个新 id 接到末尾，再用更长的列表调用模型",
        ),
    )
    expect_equal(
        out,
        expected,
        what=Msg(
            "greedy_generate(model, ids of {PROMPT!r}, {N_GREEDY})",
            "greedy_generate(model, {PROMPT!r} 的 id, {N_GREEDY})",
            PROMPT=from_input(PROMPT),
            N_GREEDY=from_input(N_GREEDY),
        ),
    )


@check(points=2, title="temperature 0 is greedy, a negative one an error", title_zh="温度为 0 即贪心，温度为负则报错")
def test_temperature_zero_is_greedy(sub):
    f = fx()
    m = sub.new("BigramModel", CORPUS)
    vocab, _ = corpus_ids(CORPUS)
    prompt = [vocab.index(w) for w in PROMPT.split()]
    row = f["table"][2]
    try:
        draws = sub.sample_next(row, 0.0, 50)
    except StudentError as e:
        if e.kind == "not_implemented":
            raise
        # logits / 0 is inf (or NaN where a logit is 0): softmax then gives NaN and sampling fails
        raise CheckFailure(
            Msg(
                "sample_next(logits, temperature=0, num_samples=50) failed: {e}. Temperature 0 means "
                "greedy: return the argmax num_samples times instead of dividing by 0",
                "sample_next(logits, temperature=0, num_samples=50) 失败了：{e}。温度为 0 表示贪心："
                "应把 argmax 重复 num_samples 次，而不是除以 0",
                e=from_input(e),
            ),
            mistake=Msg(
                "temperature 0 not handled: the logits were divided by 0", "没有单独处理温度 0：logits 被除以了 0"
            ),
        )
    expect_tensor(
        draws,
        torch.full((50,), int(row.argmax()), dtype=torch.int64),
        tol="exact",
        what=Msg(
            "sample_next(logits, temperature=0, num_samples=50): every draw is the argmax",
            "sample_next(logits, temperature=0, num_samples=50)：每次抽取的都必须是 argmax",
        ),
    )
    out = _ints(sub.sample_generate(m, prompt, N_GREEDY, 0.0, 3), code("sample_generate(temperature=0)"))
    expect_equal(
        out,
        f["greedy"].tolist(),
        what=Msg(
            "sample_generate with temperature 0 (must equal greedy_generate)",
            "温度为 0 的 sample_generate（必须与 greedy_generate 相同）",
        ),
    )
    top2 = torch.topk(row, 2).values
    expect(
        float(top2[0] - top2[1]) > 0.05,
        Msg("internal: the check needs a clear maximum", "内部错误：该检查需要一个明确的最大值"),
    )
    sub.seed(0)
    draws = sub.sample_next(row, 1e-3, 200)
    expect_tensor(
        draws,
        torch.full((200,), int(row.argmax()), dtype=torch.int64),
        tol="exact",
        what=Msg(
            "sample_next(logits, temperature=0.001, num_samples=200): a tiny temperature is almost greedy "
            "(divide the logits by the temperature)",
            "sample_next(logits, temperature=0.001, num_samples=200)：极小的温度几乎就是贪心（把 logits 除以温度）",
        ),
    )
    model = sub.given("LogitsTable", f["table"])
    out = _ints(sub.sample_generate(model, [0], 7, 1e-3, 1), code("sample_generate(temperature=0.001)"))
    expect_equal(
        out,
        f["greedy_table_0"].tolist(),
        what=Msg(
            "sample_generate with temperature 0.001 (almost greedy)", "温度为 0.001 的 sample_generate（几乎是贪心）"
        ),
    )
    try:
        sub.sample_next(row, -1.0, 1)
    except StudentError as e:
        expect(e.kind != "not_implemented", Msg.of(e))
        expect(
            e.type == "ValueError",
            Msg(
                "a negative temperature must raise ValueError, not {error}",
                "温度为负时必须抛出 ValueError，而不是 {error}",
                error=from_input(e.type or e),
            ),
        )
        return
    raise CheckFailure(
        Msg("sample_next with temperature -1 must raise ValueError", "温度为 -1 时 sample_next 必须抛出 ValueError")
    )


# ------------------------------------------------------------------------- hidden checks
@check(points=2, hidden=True, title="bigram model of another corpus", title_zh="另一份语料的二元语法模型")
def test_bigram_fresh_corpus(sub):
    f = fx()
    text = fresh_corpus()
    vocab, _ = corpus_ids(text)
    alpha = 0.5
    m = sub.new("BigramModel", text, alpha=alpha)
    expect_equal(
        m.attr("vocab"),
        vocab,
        what=Msg(
            "vocab of another corpus (lower-cased, sorted, distinct)", "另一份语料的 vocab（小写、排序、互不相同）"
        ),
    )
    expect_tensor(
        m.attr("counts"),
        f["fresh_counts"],
        tol="exact",
        what=Msg("counts of another corpus", "另一份语料的 counts"),
        mistakes=[
            Mistake(
                f["fresh_counts"].T,
                "rows and columns swapped: counts[a, b] counts b right after a",
                "行列颠倒：counts[a, b] 统计 b 紧跟在 a 之后的次数",
            )
        ],
    )
    for i in range(len(vocab)):
        expect_tensor(
            m([len(vocab) - 1, i]),
            f["fresh_logits"][i],
            tol="softmax",
            what=Msg(
                "logits after a context ending in word {i} with alpha = {alpha}",
                "上下文以单词 {i} 结尾、alpha 为 {alpha} 时的 logits",
                i=from_input(i),
                alpha=from_input(alpha),
            ),
        )


@check(
    points=2,
    hidden=True,
    title="probability table of fresh logits and temperatures",
    title_zh="新 logits 和不同温度下的概率表",
)
def test_probability_table_fresh(sub):
    f = fx()
    x = f["x"]
    wrong = lambda t: _temperature_mistakes(x, t)
    expect_tensor(
        sub.probability_table(x),
        f["x_T1"],
        tol="softmax",
        what=Msg(
            "probability_table of a {shape} batch",
            "形状为 {shape} 的批次的 probability_table",
            shape=from_input(tuple(x.shape)),
        ),
    )
    for name, t in (("T05", 0.5), ("T2", 2.0)):
        expect_tensor(
            sub.probability_table(x, t),
            f[f"x_{name}"],
            tol="softmax",
            what=Msg(
                "probability_table of a {shape} batch at temperature {t}",
                "温度为 {t} 时形状为 {shape} 的批次的 probability_table",
                shape=from_input(tuple(x.shape)),
                t=from_input(t),
            ),
            mistakes=wrong(t),
        )
    expect_tensor(
        sub.probability_table(x.double(), 0.5),
        f["x64_T05"],
        tol="softmax",
        what=Msg(
            "probability_table of a {dtype} batch (keep the dtype)",
            "{dtype} 批次的 probability_table（保持数据类型）",
            dtype=from_input("float64"),
        ),
    )


@check(points=2, hidden=True, title="top-k with ties and other dtypes", title_zh="有并列值和其他数据类型时的 top-k")
def test_top_k_fresh(sub):
    f = fx()
    tied = torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0, 0.0, 3.0, -1.0])
    for k in (2, 5, 8):  # k = 2 cuts through a group of four equal logits
        _check_top_k(
            sub, tied, k, Msg("top_k of logits with ties, k={k}", "有并列值的 logits 的 top_k，k={k}", k=from_input(k))
        )
    k = 3
    _check_top_k(
        sub, f["x"][1], k, Msg("top_k of random logits, k={k}", "随机 logits 的 top_k，k={k}", k=from_input(k))
    )
    k = 7
    _check_top_k(
        sub,
        f["x"][2].double(),
        k,
        Msg(
            "top_k of {dtype} logits, k={k}",
            "{dtype} logits 的 top_k，k={k}",
            dtype=from_input("float64"),
            k=from_input(k),
        ),
    )


@check(points=2, hidden=True, title="greedy generation on a table model", title_zh="在查表模型上的贪心生成")
def test_greedy_fresh(sub):
    f = fx()
    model = sub.given("LogitsTable", f["table"])
    out = _ints(sub.greedy_generate(model, [0], 7), code("greedy_generate"))
    argmin = [0]
    for _ in range(7):
        argmin.append(int(f["table"][argmin[-1]].argmin()))
    expect(
        out != argmin,
        Msg("greedy_generate picked the smallest logit: use argmax", "greedy_generate 选了最小的 logit：应使用 argmax"),
    )
    expect_equal(
        out,
        f["greedy_table_0"].tolist(),
        what=Msg(
            "greedy_generate on a table model from {prompt}",
            "在查表模型上从 {prompt} 开始的 greedy_generate",
            prompt=from_input([0]),
        ),
    )
    expect_equal(
        _ints(sub.greedy_generate(model, [3, 5], 7), code("greedy_generate")),
        f["greedy_table_35"].tolist(),
        what=Msg(
            "greedy_generate on a table model from {prompt}",
            "在查表模型上从 {prompt} 开始的 greedy_generate",
            prompt=from_input([3, 5]),
        ),
    )
    expect_equal(
        _ints(sub.greedy_generate(model, [4, 1], 0), code("greedy_generate")),
        [4, 1],
        what=Msg("greedy_generate with n_new = {n}", "n_new 为 {n} 时的 greedy_generate", n=from_input(0)),
    )


def _frequency_bound(p: torch.Tensor, n: int) -> torch.Tensor:
    """Six binomial standard errors plus one draw: a correct sampler fails with probability
    below 1e-8 per token, whatever random numbers it uses."""
    return 6 * torch.sqrt(p * (1 - p) / n) + 1 / n


@check(
    points=3,
    hidden=True,
    title="sampled frequencies follow softmax(logits / temperature)",
    title_zh="采样频率符合 softmax(logits / temperature)",
)
def test_sampling_frequencies(sub):
    logits = torch.tensor(FREQ_LOGITS, dtype=torch.float32)
    finite = logits[:-1].double()
    for t in (0.5, 1.0, 2.0):
        sub.seed(7)
        draws = sub.sample_next(logits, t, FREQ_DRAWS)
        expect(
            isinstance(draws, torch.Tensor) and draws.dtype == torch.int64 and tuple(draws.shape) == (FREQ_DRAWS,),
            Msg(
                "sample_next(logits, {t}, {FREQ_DRAWS}) must return an `int64` tensor of shape ({FREQ_DRAWS},)",
                "sample_next(logits, {t}, {FREQ_DRAWS}) 必须返回形状为 ({FREQ_DRAWS},) 的 `int64` 张量",
                t=from_input(t),
                FREQ_DRAWS=from_input(FREQ_DRAWS),
            ),
        )
        expect(
            bool(((draws >= 0) & (draws < len(logits))).all()),
            Msg("sample_next returned ids outside the vocabulary", "sample_next 返回了词表之外的 id"),
        )
        expect(
            int((draws == len(logits) - 1).sum()) == 0,
            Msg("a token with logit `-inf` (probability zero) was drawn", "抽到了 logit 为 `-inf`（概率为零）的词元"),
        )
        freq = torch.bincount(draws, minlength=len(logits))[:-1].double() / FREQ_DRAWS
        target = torch.softmax(finite / t, dim=-1)
        if bool(((freq - target).abs() <= _frequency_bound(target, FREQ_DRAWS)).all()):
            continue
        named = [
            (
                Msg(
                    "the logits were multiplied by the temperature instead of divided",
                    "logits 乘以了温度，而不是除以温度",
                ),
                torch.softmax(finite * t, -1),
            ),
            (Msg("the temperature was ignored", "忽略了温度"), torch.softmax(finite, -1)),
            (
                Msg("tokens were drawn uniformly, not by their probabilities", "按均匀分布而不是按概率抽取了词元"),
                torch.full_like(finite, 1 / len(finite)),
            ),
        ]
        guess = [why for why, p in named if bool(((freq - p).abs() <= _frequency_bound(p, FREQ_DRAWS)).all())]
        raise CheckFailure(
            Msg(
                "over {n} draws at temperature {t}, the frequencies of the tokens are not "
                "those of softmax(logits / temperature){guess}",
                "在温度 {t} 下抽取 {n} 次，各词元出现的频率与 softmax(logits / temperature) 不符{guess}",
                n=from_input(FREQ_DRAWS),
                t=from_input(t),
                guess=Msg(". This looks like: {why}.", "。这看起来像是：{why}。", why=guess[0]) if guess else code(""),
            )
        )
    model = sub.given("LogitsTable", fx()["sparse_table"])
    path = _ints(sub.sample_generate(model, [0], 60, 1.5, 11), code("sample_generate"))
    table = fx()["sparse_table"]
    expect(
        all(bool(torch.isfinite(table[a, b])) for a, b in zip(path, path[1:])),
        Msg(
            "sample_generate made a transition whose logit is `-inf` (probability zero)",
            "sample_generate 走了一步 logit 为 `-inf`（概率为零）的转移",
        ),
    )


@check(points=1, title="the same seed gives the same tokens", title_zh="相同的种子给出相同的词元")
def test_same_seed_same_tokens(sub):
    model = sub.given("LogitsTable", torch.zeros(6, 6))  # every next token equally likely
    what = code("sample_generate(model, [0], 12, temperature=1.0, seed=7)")
    sub.seed(0)
    a = _ints(sub.sample_generate(model, [0], 12, 1.0, 7), what)
    sub.seed(1)  # whatever else used torch's global generator in between
    b = _ints(sub.sample_generate(model, [0], 12, 1.0, 7), what)
    expect(
        a == b,
        Msg(
            "{what} gave {a} and then {b} after torch.manual_seed changed: draw from a torch.Generator "
            "seeded with `seed` (torch.Generator().manual_seed(seed)), not from the global generator",
            "torch.manual_seed 改变后，{what} 先给出 {a}，后给出 {b}：应从用 `seed` 初始化的 torch.Generator"
            "（torch.Generator().manual_seed(seed)）中抽取，而不是从全局生成器中抽取",
            what=what,
            a=from_input(a),
            b=from_input(b),
        ),
    )


@check(points=2, hidden=True, title="seeded sampling is reproducible", title_zh="设定种子的采样可以复现")
def test_seeded_reproducibility(sub):
    model = sub.given("LogitsTable", fx()["flat_table"])
    sub.seed(0)
    a = _ints(sub.sample_generate(model, [1], 20, 1.0, 42), code("sample_generate"))
    expect(
        len(a) == 21 and a[0] == 1,
        Msg(
            "sample_generate must return the prompt followed by n_new ids",
            "sample_generate 必须返回提示加上 n_new 个 id",
        ),
    )
    sub.seed(1)
    b = sub.sample_generate(model, [1], 20, 1.0, 42)
    expect(
        a == b,
        Msg(
            "sample_generate with the same seed gave different tokens after torch.manual_seed changed: "
            "draw from a torch.Generator seeded with `seed`, not from the global generator",
            "torch.manual_seed 改变后，相同种子的 sample_generate 给出了不同的词元：应从用 `seed` 初始化的 torch.Generator 中抽取，而不是从全局生成器中抽取",
        ),
    )
    seeds = range(8)
    runs = {tuple(sub.sample_generate(model, [1], 20, 1.0, s)) for s in seeds}
    expect(
        len(runs) > 1,
        Msg(
            "{n} different seeds all gave the same tokens: the seed must change the draws",
            "{n} 个不同的种子给出的词元完全相同：种子必须改变抽取结果",
            n=from_input(len(seeds)),
        ),
    )
    prompt, n_new = [1, 2], 5
    unseeded = _ints(
        sub.sample_generate(model, prompt, n_new, 0.8),
        Msg("sample_generate without a seed", "不设种子的 sample_generate"),
    )
    expect(
        len(unseeded) == len(prompt) + n_new and unseeded[: len(prompt)] == prompt,
        Msg(
            "sample_generate without a seed must still return {n_prompt} + {n_new} ids",
            "不设种子时 sample_generate 仍必须返回 {n_prompt} + {n_new} 个 id",
            n_prompt=from_input(len(prompt)),
            n_new=from_input(n_new),
        ),
    )
