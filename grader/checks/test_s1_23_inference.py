"""Checks of §1.23, saving, loading and predicting (listings 1.41-1.43).

The checkpoint never crosses the wire: the student's save_checkpoint writes it inside the
worker's own writable folder (a relative path: the worker runs in /tmp/work), and the
student's load_checkpoint reads it back into another model in a later call; the weights and
predictions are then compared here with what was put in. The predicting model is the given
TinyBERT with weights trained here on synthetic reviews (cue words such as "brilliant" or
"garbage" among neutral words); it labels the book's two example reviews of listing 1.43 as
the book does (ERRATA E-1.23-r, E-1.23-s).
"""

import torch
import torch.nn.functional as F

from grader.checking import Msg, check, expect, expect_equal, fixtures, from_input
from grader.worker.proxy import StudentError

EXERCISE = "s1_23_inference"
TOKENIZER_INFO = {"pad_id": 1000, "cls_id": 1001, "sep_id": 1002, "max_len": 64}

# listing 1.43's two texts and the book's predictions
BOOK_TEXTS = [
    "Bromwell High is a brilliantly conceived, executed and acted, but sadly overlooked sitcom. The writing is razor "
    "sharp, the characters are well drawn and the jokes are genuinely funny. The animation is also excellent, with a "
    "style that suits the material perfectly. It's a shame that it didn't get a proper chance in the UK, as it "
    "deserves to be up there with the likes of The Simpsons and South Park. Highly recommended for anyone who likes "
    "clever, witty humour.",
    "In fact I must confess, so bad was it I fast forwarded through most of the garbage... As for the title "
    "characters, they barely even have a footnote in the film.",
]
BOOK_PREDICTIONS = ["Positive", "Negative"]

# The synthetic reviews: cue words decide the label; distractors and fillers occur in both classes.
# (Cue words whose hash id collides with a common word were left out: funny/and, recommended/is, ...)
POSITIVE = (
    "brilliant brilliantly excellent superb wonderful great clever witty sharp perfectly enjoyable masterpiece "
    "beautiful delightful".split()
)
NEGATIVE = "bad garbage awful terrible dull waste worst cringe stupid mess poorly painful forgettable".split()
DISTRACTORS = "but sadly shame not barely although".split()
FILLERS = (
    "the a an this that it its is was were be and or of to in on at with as for by from so very really quite "
    "just movie film show sitcom series story plot characters character acting actors cast scene scenes ending "
    "script writing director dialogue music animation style material jokes humour title time minutes hour "
    "watch watched saw see seen i we you they he she me my our their one two first last most some all every "
    "made make makes about like through after before while who which what when had has have did does do can "
    "could would should will get got proper chance up there here then than more less much many other "
    "again"
).split()


def synthetic_reviews(n: int, seed: int):
    """n short reviews and their labels (1 = Positive): 6-20 fillers, 1-2 cue words of the label's
    class and sometimes a distractor, at random places. Returns (texts, labels tensor)."""
    g = torch.Generator().manual_seed(seed)
    labels = (torch.arange(n) % 2)[torch.randperm(n, generator=g)]

    def pick(words, k=1):
        return [words[int(i)] for i in torch.randint(0, len(words), (k,), generator=g)]

    texts = []
    for label in labels.tolist():
        words = pick(FILLERS, int(torch.randint(6, 21, (1,), generator=g)))
        extra = pick(POSITIVE if label else NEGATIVE, int(torch.randint(1, 3, (1,), generator=g)))
        if torch.rand(1, generator=g) < 0.5:
            extra += pick(DISTRACTORS)
        for word in extra:
            words.insert(int(torch.randint(0, len(words) + 1, (1,), generator=g)), word)
        texts.append(" ".join(words).capitalize() + ".")
    return texts, labels


def _encode_all(sol, texts):
    ids = torch.tensor([sol.encode(t) for t in texts])
    return ids, (ids != sol.PAD_ID).long()


def make_fixtures(sol):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the worker; a small model trains ten times slower on two busy cores
    try:
        return _make_fixtures(sol)
    finally:
        torch.set_num_threads(threads)


def _make_fixtures(sol):
    texts, labels = synthetic_reviews(1024, seed=2341)
    ids, mask = _encode_all(sol, texts)
    width = int(mask.sum(dim=1).max())
    ids, mask = ids[:, :width], mask[:, :width]  # the columns after the longest review are all padding
    torch.manual_seed(2342)
    model = sol.TinyBERT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
    g = torch.Generator().manual_seed(2343)
    for _ in range(10):
        model.train()
        for batch in torch.randperm(len(texts), generator=g).split(32):
            optimizer.zero_grad()
            F.cross_entropy(model(ids[batch], mask[batch]), labels[batch]).backward()
            optimizer.step()
    model.eval()
    out = {f"w/{k}": v.detach().clone() for k, v in model.state_dict().items()}
    torch.manual_seed(2344)
    out.update({f"other/{k}": v.detach().clone() for k, v in sol.TinyBERT().state_dict().items()})
    test_texts, test_labels = synthetic_reviews(200, seed=2345)
    t_ids, t_mask = _encode_all(sol, test_texts)
    with torch.no_grad():
        logits = model(t_ids, t_mask)
        no_mask = model(t_ids, torch.ones_like(t_mask)).argmax(dim=1)
        book = model(*_encode_all(sol, BOOK_TEXTS)).argmax(dim=1)
    preds = logits.argmax(dim=1)
    assert (logits[:, 0] - logits[:, 1]).abs().min() > 1e-3, "a near tie: argmax would depend on rounding"
    assert [sol.CLASS_NAMES[p] for p in book.tolist()] == BOOK_PREDICTIONS, book
    assert (preds == test_labels).double().mean() >= 0.95
    assert not torch.equal(no_mask, preds), "forgetting the mask must change some predictions"
    out.update(t_ids=t_ids, t_mask=t_mask, t_labels=test_labels, preds=preds, logits=logits, no_mask=no_mask)
    return out


def fx():
    return fixtures.load(EXERCISE)


def _take(f, prefix):
    return {k.split("/", 1)[1]: v for k, v in f.items() if k.startswith(prefix + "/")}


def _model(sub, f, prefix="w", **kwargs):
    model = sub.new("TinyBERT", **kwargs)
    model.load_state_dict(_take(f, prefix))
    return model


def _same_state(actual, expected):
    return actual.keys() == expected.keys() and all(torch.equal(actual[k], expected[k]) for k in expected)


def _test_texts():
    return synthetic_reviews(200, seed=2345)[0]


def _predictions(sub, model, texts, what):
    preds = sub.predict(model, texts)
    expect(
        isinstance(preds, list) and all(isinstance(p, int) and not isinstance(p, bool) for p in preds),
        Msg(
            "predict must return a list of Python ints (.tolist()), got {type_preds}",
            "predict 必须返回 Python 整数的列表（.tolist()），实际返回了 {type_preds}",
            type_preds=from_input(type(preds).__name__),
        ),
    )
    expect_equal(
        len(preds),
        len(texts),
        what=Msg("the number of predictions for {what}", "{what}的预测数量", what=what),
    )
    return preds


def _expect_round_trip(sub, f, path: str):
    """Saving a model and loading it into one of the same configuration gives back its weights:
    paired with the checks of refused loads, so that refusing every load earns nothing."""
    sub.save_checkpoint(_model(sub, f), path)
    fresh = _model(sub, f, "other")
    sub.load_checkpoint(fresh, path)
    expect(
        _same_state(fresh.state_dict(), _take(f, "w")),
        Msg(
            "saving a model and loading the file into a model of the same configuration must give back the saved "
            "weights",
            "保存一个模型后，把文件加载到配置相同的模型中，必须得到保存时的权重",
        ),
    )


# ----------------------------------------------------------------------------- checks
@check(
    points=3,
    listings=["1.41", "1.42"],
    title="listings 1.41-1.42: saving and loading a checkpoint",
    title_zh="代码清单 1.41-1.42：保存和加载检查点",
)
def test_listing_1_41_1_42_save_and_load(sub):
    f = fx()
    trained = _take(f, "w")
    model = _model(sub, f)
    path = "checkpoints/run1/model.pt"  # relative: inside the worker's writable folder
    try:
        result = sub.save_checkpoint(model, path)
    except StudentError as e:
        if e.kind != "not_implemented" and "director" in e.detail:
            expect(
                False,
                Msg(
                    "{e}. The folders of the path may not exist yet: create them first, as listing 1.41 does "
                    "(os.makedirs(os.path.dirname(path), exist_ok=True))",
                    "{e}。路径中的文件夹可能还不存在：像代码清单 1.41 那样先创建它们（os.makedirs(os.path.dirname(path), exist_ok=True)）",
                    e=e,
                ),
            )
        raise
    expect(
        result is None,
        Msg("save_checkpoint returns nothing; it writes the file", "save_checkpoint 不返回任何值；它写入文件"),
    )
    model.load_state_dict(_take(f, "other"))  # the saved model changes afterwards: the file must keep the old weights
    fresh = _model(sub, f, "other")
    fresh.train()
    info = sub.load_checkpoint(fresh, path)
    state = fresh.state_dict()
    if _same_state(state, _take(f, "other")):
        expect(
            False,
            Msg(
                "load_checkpoint left the model's weights as they were: load the saved state_dict into it",
                "load_checkpoint 没有改变模型的权重：应把保存的 state_dict 加载到模型中",
            ),
        )
    expect(
        _same_state(state, trained),
        Msg(
            "after load_checkpoint the model's weights differ from the ones saved: save "
            "model.state_dict() when save_checkpoint is called and load it back as it is",
            "load_checkpoint 之后模型的权重与保存时不同：调用 save_checkpoint 时保存 model.state_dict()，再原样加载回来",
        ),
    )
    expect(
        fresh.attr("training") is False,
        Msg(
            "after loading, switch the model to evaluation mode (listing 1.42 calls "
            "model.eval(): dropout would change the predictions)",
            "加载之后要把模型切换到评估模式（代码清单 1.42 调用了 model.eval()：dropout 会改变预测结果）",
        ),
    )
    expect(
        isinstance(info, dict),
        Msg(
            "load_checkpoint must return the saved tokenizer information, a dict, got {type_info}",
            "load_checkpoint 必须返回保存的分词器信息，一个 dict，实际返回了 {type_info}",
            type_info=from_input(type(info).__name__),
        ),
    )
    expect_equal(
        {k: info.get(k) for k in TOKENIZER_INFO},
        TOKENIZER_INFO,
        what=Msg("the tokenizer information returned by load_checkpoint", "load_checkpoint 返回的分词器信息"),
    )
    logits = fresh(f["t_ids"], f["t_mask"])
    expect(
        torch.allclose(logits, f["logits"], atol=1e-4, rtol=1e-4),
        Msg("the loaded model's logits differ from the saved model's", "加载后的模型的 logits 与保存的模型不同"),
    )


@check(
    points=2,
    listings=["1.42"],
    title="loading refuses a checkpoint of another configuration",
    title_zh="加载时拒绝配置不同的检查点",
)
def test_load_refuses_another_configuration(sub):
    _expect_round_trip(sub, fx(), "checkpoints/same_config.pt")  # a matching configuration must load
    for saved, other, key in (
        (dict(heads=2), dict(heads=4), "heads"),
        (dict(), dict(dim=48, heads=2), "dim"),
        (dict(layers=1), dict(layers=2), "layers"),
    ):
        path = f"checkpoints/config_{key}.pt"
        sub.seed(5)
        sub.save_checkpoint(sub.new("TinyBERT", **saved), path)
        sub.seed(6)
        target = sub.new("TinyBERT", **other)
        before = target.state_dict()
        saved_value = {"heads": 2, "dim": 32, "layers": 1, **saved}[key]
        what = Msg(
            "loading a checkpoint saved with {key}={saved_value} into a model with {key}={other}",
            "把 {key}={saved_value} 时保存的检查点加载到 {key}={other} 的模型中",
            key=key,
            saved_value=from_input(saved_value),
            other=from_input(other[key]),
        )
        try:
            sub.load_checkpoint(target, path)
        except StudentError as e:
            expect(e.kind != "not_implemented", Msg.of(e))
            expect(
                e.type == "ValueError",
                Msg(
                    "{what} must raise ValueError, not {raised}: compare the saved config with model.config before "
                    "loading any weights",
                    "{what}必须抛出 ValueError，而不是 {raised}：在加载任何权重之前先比较保存的 config 与 model.config",
                    what=what,
                    raised=e.type or e,
                ),
            )
            expect(
                key in e.detail,
                Msg(
                    "{what}: the error message must name the setting that differs ({key})",
                    "{what}：错误信息必须写出不同的那个设置（{key}）",
                    what=what,
                    key=key,
                ),
            )
            expect(
                _same_state(target.state_dict(), before),
                Msg(
                    "{what} raised, but the model's weights had changed",
                    "{what}抛出了异常，但模型的权重已经被改变了",
                    what=what,
                ),
            )
            continue
        if key == "heads":
            expect(
                False,
                Msg(
                    "{what} succeeded: the tensors have the same shapes, but 4 heads split the 32 features differently "
                    "than 2; compare the saved config with model.config",
                    "{what}成功了：张量的形状相同，但 4 个头与 2 个头对 32 个特征的划分不同；应比较保存的 config 与 model.config",
                    what=what,
                ),
            )
        expect(False, Msg("{what} must raise ValueError", "{what} 必须抛出 ValueError", what=what))


@check(
    points=1,
    hidden=True,
    title="loading a missing file raises FileNotFoundError",
    title_zh="加载不存在的文件时抛出 FileNotFoundError",
)
def test_load_missing_file(sub):
    f = fx()
    _expect_round_trip(sub, f, "checkpoints/present.pt")  # a file that exists must load
    try:
        sub.load_checkpoint(_model(sub, f), "checkpoints/no_such_file.pt")
    except StudentError as e:
        expect(e.kind != "not_implemented", Msg.of(e))
        expect(
            e.type == "FileNotFoundError",
            Msg(
                "loading a file that does not exist must raise FileNotFoundError, not {raised}",
                "加载不存在的文件必须抛出 FileNotFoundError，而不是 {raised}",
                raised=e.type or e,
            ),
        )
        return
    expect(
        False,
        Msg(
            "loading a file that does not exist must raise FileNotFoundError",
            "加载不存在的文件必须抛出 FileNotFoundError",
        ),
    )


@check(
    points=2,
    listings=["1.43"],
    title="listing 1.43: the sentiment of the book's texts",
    title_zh="代码清单 1.43：书中文本的情感",
)
def test_listing_1_43_book_texts(sub):
    f = fx()
    model = _model(sub, f)
    for text, expected in zip(BOOK_TEXTS, BOOK_PREDICTIONS):
        got = sub.predict_sentiment(model, text)
        expect_equal(
            got,
            expected,
            what=Msg(
                "the prediction for listing 1.43's text {text!r}...",
                "代码清单 1.43 的文本 {text!r}... 的预测",
                text=from_input(text[:30]),
            ),
        )
    expect_equal(
        _predictions(sub, model, BOOK_TEXTS, Msg("the two texts", "这两条文本")),
        [1, 0],
        what=Msg("predict on listing 1.43's texts", "对代码清单 1.43 的文本做 predict"),
    )


@check(points=2, listings=["1.43"], title="predicting new reviews", title_zh="预测新的评论")
def test_predict_new_reviews(sub):
    f = fx()
    preds = _predictions(sub, _model(sub, f), _test_texts(), Msg("200 reviews", "200 条评论"))
    expected = f["preds"].tolist()
    if preds == f["no_mask"].tolist() and preds != expected:
        expect(
            False,
            Msg(
                "these are the predictions without a padding mask: the mask is 1 for real tokens and 0 for "
                "PAD, (ids != PAD_ID).long()",
                "这些是没有填充掩码时的预测：掩码在真实词元处为 1，在 PAD 处为 0，即 (ids != PAD_ID).long()",
            ),
        )
    wrong = sum(p != e for p, e in zip(preds, expected))
    expect(
        wrong == 0,
        Msg(
            "{wrong} of 200 predictions differ from the model's argmax class in evaluation mode",
            "200 个预测中有 {wrong} 个与模型在 eval 模式下 argmax 给出的类别不同",
            wrong=from_input(wrong),
        ),
    )


@check(points=1, hidden=True, title="predicting in evaluation mode", title_zh="在评估模式下预测")
def test_predict_in_evaluation_mode(sub):
    f = fx()
    p = 0.5
    model = _model(sub, f, dropout=p)
    model.train()
    texts = _test_texts()
    preds = _predictions(sub, model, texts, Msg("{n} reviews", "{n} 条评论", n=from_input(len(texts))))
    expect(
        preds == f["preds"].tolist(),
        Msg(
            "with dropout {p} the predictions change from run to run: switch the model "
            "to evaluation mode (model.eval()) before predicting",
            "dropout 为 {p} 时每次运行的预测都不同：预测之前要把模型切换到评估模式（model.eval()）",
            p=from_input(p),
        ),
    )


@check(points=1, hidden=True, title="empty, very long and wordless texts", title_zh="空的、很长的和没有单词的文本")
def test_predict_odd_input(sub):
    f = fx()
    model = _model(sub, f)
    for text in ("", "   \n"):
        try:
            sub.predict(model, ["A brilliant film.", text])
        except StudentError as e:
            expect(e.kind != "not_implemented", Msg.of(e))
            expect(
                e.type == "ValueError",
                Msg(
                    "predict on {text!r} must raise ValueError, not {raised}",
                    "对 {text!r} 做 predict 必须抛出 ValueError，而不是 {raised}",
                    text=from_input(text),
                    raised=e.type or e,
                ),
            )
            continue
        expect(
            False,
            Msg(
                "predict on a text with no words ({text!r}) must raise ValueError",
                "对没有单词的文本（{text!r}）做 predict 必须抛出 ValueError",
                text=from_input(text),
            ),
        )
    expect_equal(sub.predict(model, []), [], what=Msg("predict on an empty list", "对空列表做 predict"))
    filler = "the plot of the story " * 2000
    texts = ["A brilliant and clever film. " + filler, "So bad: garbage. " + filler]
    got = sub.predict(model, texts)
    expect_equal(
        got,
        [1, 0],
        what=Msg(
            "predict on {n} texts of over {words:,} words (encode keeps the first {kept} tokens)",
            "对 {n} 条超过 {words:,} 个单词的文本做 predict（encode 只保留前 {kept} 个词元）",
            n=from_input(len(texts)),
            words=from_input(len(filler.split())),
            kept=from_input(TOKENIZER_INFO["max_len"] - 2),
        ),
    )
