"""Checks of §1.21, loading pre-trained encoder weights and freezing layers for fine-tuning.

The section prints no numbers and has no listing. What is trainable is read by the grader
itself: each parameter's requires_grad, taken from the worker by the runtime's own code
(`sub.trainable_of`), never from the given `sgd_step` or the student's count_trainable, which
the submission's file can rewrite. The student's count_trainable is then checked against the
count made here from those flags and the known shapes.
"""

import torch

from grader.checking import Msg, check, code, expect, expect_equal, expect_tensor, fixtures, from_input
from grader.worker.proxy import StudentError

EXERCISE = "s1_21_transfer"
CFG = dict(vocab_size=40, dim=16, n_layers=3, heads=2, max_len=12, n_classes=3)
HEAD = ["head.weight", "head.bias"]


def _encoder(sol, n_layers, seed, vocab_size=CFG["vocab_size"]):
    torch.manual_seed(seed)
    enc = sol.TinyEncoder(vocab_size, CFG["dim"], n_layers, CFG["heads"], CFG["max_len"])
    return {k: v.detach().clone() for k, v in enc.state_dict().items()}


def make_fixtures(sol):
    out = {}
    torch.manual_seed(2101)
    base = sol.Classifier(**CFG)
    out.update({f"base/{k}": v.detach().clone() for k, v in base.state_dict().items()})
    for name, layers, seed in (("pre3", 3, 2103), ("pre4", 4, 2104), ("pre2", 2, 2102)):
        out.update({f"{name}/{k}": v for k, v in _encoder(sol, layers, seed).items()})
    out.update({f"bad/{k}": v for k, v in _encoder(sol, 3, 2105, vocab_size=50).items()})
    g = torch.Generator().manual_seed(21)
    out["tokens"] = torch.randint(0, CFG["vocab_size"], (4, 10), generator=g)
    out["labels"] = torch.randint(0, CFG["n_classes"], (4,), generator=g)
    for name in ("pre3", "pre4", "pre2"):
        clf = sol.Classifier(**CFG)
        clf.load_state_dict(_take(out, "base"))
        sol.load_pretrained(clf, _take(out, name))
        with torch.no_grad():
            out[f"logits_{name}"] = clf(out["tokens"])
    counts = []
    clf = sol.Classifier(**CFG)
    counts.append(sol.count_trainable(clf))
    sol.freeze_encoder(clf)
    counts.append(sol.count_trainable(clf))
    for n in range(CFG["n_layers"] + 1):
        sol.unfreeze_top(clf, n)
        counts.append(sol.count_trainable(clf))
    out["counts"] = torch.tensor(counts, dtype=torch.int64)  # all, frozen, top 0, 1, 2, 3
    return out


def _take(f, prefix):
    return {k.split("/", 1)[1]: v for k, v in f.items() if k.startswith(prefix + "/")}


def fx():
    return fixtures.load(EXERCISE)


# ----------------------------------------------------------------------------- helpers
def _classifier(sub, f):
    clf = sub.new("Classifier", **CFG)
    clf.load_state_dict(_take(f, "base"))
    return clf


def _pair(res, what):
    expect(
        isinstance(res, (tuple, list)) and len(res) == 2 and all(isinstance(r, (list, tuple)) for r in res),
        Msg(
            "{what} must return (missing, unexpected): two lists of key names, got {type_res}",
            "{what} 必须返回 (missing, unexpected)：两个键名列表，实际得到 {type_res}",
            what=what,
            type_res=from_input(type(res).__name__),
        ),
    )
    return sorted(res[0]), sorted(res[1])


def _trainable(sub, clf):
    """Names of the parameters with requires_grad, as the worker's runtime reads them."""
    return sorted(name for name, flag in sub.trainable_of(clf).items() if flag)


def _depth(checkpoint) -> int:
    """The number of blocks of an encoder checkpoint (its keys layers.<i>.*)."""
    return len({k.split(".")[1] for k in checkpoint if k.startswith("layers.")})


def _block_keys(keys, blocks):
    return [k for k in keys for i in blocks if k.startswith(f"encoder.layers.{i}.")]


def _expect_trainable(sub, clf, f, expected: list[str], count: int, what: Msg, wrong=()):
    trainable = _trainable(sub, clf)
    for names, why in wrong:
        if trainable == sorted(names) != sorted(expected):
            expect(False, Msg("{what}: {why}", "{what}：{why}", what=what, why=why))
    expect_equal(
        trainable,
        sorted(expected),
        what=Msg(
            "{what}: the parameters with `requires_grad = True`",
            "{what}：`requires_grad = True` 的参数",
            what=what,
        ),
    )
    base = _take(f, "base")
    expect_equal(
        count,
        sum(base[k].numel() for k in expected),
        what=Msg("{what}: trainable numbers", "{what}：可训练的数值个数", what=what),
    )
    got = sub.count_trainable(clf)
    if got != count:
        if got == len(expected):
            expect(
                False,
                Msg(
                    "{what}: count_trainable returned {got}, the number of trainable tensors; count their elements "
                    "(numel)",
                    "{what}：count_trainable 返回了 {got}，这是可训练张量的个数；应统计它们的元素个数（numel）",
                    what=what,
                    got=from_input(got),
                ),
            )
    expect_equal(got, count, what=Msg("{what}: count_trainable", "{what}：count_trainable 的结果", what=what))


# ----------------------------------------------------------------------------- checks
@check(points=2, title="loading a pre-trained encoder of the same depth", title_zh="加载同样深度的预训练编码器")
def test_load_matching_checkpoint(sub):
    _expect_loads_matching(sub, fx())


def _expect_loads_matching(sub, f):
    pre = _take(f, "pre3")
    clf = _classifier(sub, f)
    missing, unexpected = _pair(sub.load_pretrained(clf, pre), code("load_pretrained"))
    if missing == sorted(HEAD + [f"encoder.{k}" for k in pre]):
        expect(
            False,
            Msg(
                "load_pretrained copied nothing: key k of the checkpoint is the classifier's 'encoder.' + k",
                "load_pretrained 什么也没复制：检查点中的键 k 对应分类器中的 'encoder.' + k",
            ),
        )
    expect_equal(
        missing,
        sorted(HEAD),
        what=Msg(
            "missing keys after loading a {depth}-layer encoder into a {layers}-layer classifier",
            "把 {depth} 层编码器加载到 {layers} 层分类器之后缺失的键",
            depth=from_input(_depth(pre)),
            layers=from_input(CFG["n_layers"]),
        ),
    )
    expect_equal(
        unexpected,
        [],
        what=Msg(
            "unexpected keys after loading a {depth}-layer encoder into a {layers}-layer classifier",
            "把 {depth} 层编码器加载到 {layers} 层分类器之后多余的键",
            depth=from_input(_depth(pre)),
            layers=from_input(CFG["n_layers"]),
        ),
    )
    state = clf.state_dict()
    for k, v in pre.items():
        expect_tensor(
            state[f"encoder.{k}"],
            v,
            tol="exact",
            what=Msg("encoder.{k} after load_pretrained", "load_pretrained 之后的 encoder.{k}", k=from_input(k)),
        )
    for k in HEAD:
        expect_tensor(
            state[k],
            f[f"base/{k}"],
            tol="exact",
            what=Msg("{k} (not in the checkpoint: must not change)", "{k}（不在检查点中：不应改变）", k=from_input(k)),
        )
    expect_tensor(
        clf(f["tokens"]),
        f["logits_pre3"],
        tol="encoder",
        what=Msg("the classifier's logits after loading", "加载之后分类器的 logits"),
    )


@check(points=2, hidden=True, title="loading encoders of other depths", title_zh="加载其他深度的编码器")
def test_load_other_depths(sub):
    f = fx()
    pre4 = _take(f, "pre4")
    clf = _classifier(sub, f)
    sub.freeze_encoder(clf)
    missing, unexpected = _pair(sub.load_pretrained(clf, pre4), code("load_pretrained"))
    expect_equal(
        missing,
        sorted(HEAD),
        what=Msg(
            "missing keys after loading a {depth}-layer encoder into a {layers}-layer classifier",
            "把 {depth} 层编码器加载到 {layers} 层分类器之后缺失的键",
            depth=from_input(_depth(pre4)),
            layers=from_input(CFG["n_layers"]),
        ),
    )
    expect_equal(
        unexpected,
        sorted(k for k in pre4 if k.startswith("layers.3.")),
        what=Msg(
            "unexpected keys (as named in the checkpoint) after loading a {depth}-layer encoder into {layers} layers",
            "把 {depth} 层编码器加载到 {layers} 层之后多余的键（按检查点中的名字）",
            depth=from_input(_depth(pre4)),
            layers=from_input(CFG["n_layers"]),
        ),
    )
    expect_tensor(
        clf(f["tokens"]),
        f["logits_pre4"],
        tol="encoder",
        what=Msg(
            "logits after loading a {depth}-layer encoder",
            "加载 {depth} 层编码器之后的 logits",
            depth=from_input(_depth(pre4)),
        ),
    )
    expect_equal(
        _trainable(sub, clf),
        sorted(HEAD),
        what=Msg(
            "the parameters with requires_grad of a frozen classifier after load_pretrained (copy in "
            "place: flags stay)",
            "load_pretrained 之后已冻结分类器中 requires_grad 为 `True` 的参数（就地复制：标志保持不变）",
        ),
    )
    expect_equal(
        sub.count_trainable(clf),
        int(f["counts"][1]),
        what=Msg(
            "count_trainable of a frozen classifier after load_pretrained (copy in place: flags stay)",
            "load_pretrained 之后已冻结分类器的 count_trainable（就地复制：标志保持不变）",
        ),
    )

    pre2 = _take(f, "pre2")
    clf = _classifier(sub, f)
    missing, unexpected = _pair(sub.load_pretrained(clf, pre2), code("load_pretrained"))
    keys = list(_take(f, "base"))
    expect_equal(
        missing,
        sorted(HEAD + _block_keys(keys, [2])),
        what=Msg(
            "missing keys after loading a {depth}-layer encoder into a {layers}-layer classifier",
            "把 {depth} 层编码器加载到 {layers} 层分类器之后缺失的键",
            depth=from_input(_depth(pre2)),
            layers=from_input(CFG["n_layers"]),
        ),
    )
    expect_equal(
        unexpected,
        [],
        what=Msg(
            "unexpected keys after loading a {depth}-layer encoder into {layers} layers",
            "把 {depth} 层编码器加载到 {layers} 层之后多余的键",
            depth=from_input(_depth(pre2)),
            layers=from_input(CFG["n_layers"]),
        ),
    )
    expect_tensor(
        clf(f["tokens"]),
        f["logits_pre2"],
        tol="encoder",
        what=Msg(
            "logits after loading a {depth}-layer encoder",
            "加载 {depth} 层编码器之后的 logits",
            depth=from_input(_depth(pre2)),
        ),
    )


@check(points=1, hidden=True, title="a checkpoint of another shape is refused", title_zh="拒绝形状不同的检查点")
def test_load_shape_mismatch(sub):
    f = fx()
    clf = _classifier(sub, f)
    try:
        sub.load_pretrained(clf, _take(f, "bad"))
    except StudentError as e:
        expect(e.kind != "not_implemented", Msg.of(e))
        expect(
            e.type in ("ValueError", "RuntimeError"),
            Msg(
                "a checkpoint with another vocabulary size must raise ValueError or RuntimeError, not {raised}",
                "词表大小不同的检查点必须抛出 ValueError 或 RuntimeError，而不是 {raised}",
                raised=e.type or e,
            ),
        )
        expect(
            "tok.weight" in e.detail,
            Msg(
                "the error must name the key whose shape differs (tok.weight)",
                "错误信息必须写出形状不同的那个键（tok.weight）",
            ),
        )
    else:
        expect(
            False,
            Msg(
                "loading tok.weight of shape {bad} into an embedding of shape {shape} must raise an error",
                "把形状为 {bad} 的 tok.weight 加载到形状为 {shape} 的嵌入中必须报错",
                bad=from_input(tuple(f["bad/tok.weight"].shape)),
                shape=from_input((CFG["vocab_size"], CFG["dim"])),
            ),
        )
    _expect_loads_matching(sub, f)  # a checkpoint that fits must load: refusing everything is not the answer


@check(points=2, title="freezing the encoder", title_zh="冻结编码器")
def test_freeze_encoder(sub):
    f = fx()
    clf = _classifier(sub, f)
    keys = list(_take(f, "base"))
    sub.freeze_encoder(clf)
    _expect_trainable(
        sub,
        clf,
        f,
        HEAD,
        int(f["counts"][1]),
        Msg("after freeze_encoder", "freeze_encoder 之后"),
        wrong=[
            (
                [],
                Msg(
                    "nothing is trainable any more: the head must stay trainable",
                    "没有任何可训练的参数了：分类头必须保持可训练",
                ),
            ),
            (
                keys,
                Msg(
                    "nothing was frozen: set requires_grad to False on model.encoder's parameters",
                    "什么都没有冻结：应把 model.encoder 的参数的 requires_grad 设为 False",
                ),
            ),
        ],
    )


@check(points=2, title="unfreezing the top n blocks", title_zh="解冻最上面的 n 个块")
def test_unfreeze_top(sub):
    f = fx()
    keys = list(_take(f, "base"))
    n_layers = CFG["n_layers"]
    for n in (0, 1, 2, 3):
        clf = _classifier(sub, f)
        sub.freeze_encoder(clf)
        sub.unfreeze_top(clf, n)
        top = list(range(n_layers - n, n_layers))
        wrong = [
            (
                HEAD + _block_keys(keys, range(n)),
                Msg(
                    "the first n blocks were unfrozen; the top ones are the last n, nearest the head",
                    "解冻的是前 n 个块；最上面的块是最后 n 个，离分类头最近",
                ),
            )
        ]
        if n == 0:
            wrong.append(
                (
                    HEAD + _block_keys(keys, range(n_layers)),
                    Msg(
                        "n = 0 unfroze every block: layers[-0:] is the whole list, use layers[len(layers) - n:]",
                        "n = 0 时解冻了所有块：layers[-0:] 是整个列表，应使用 layers[len(layers) - n:]",
                    ),
                )
            )
        _expect_trainable(
            sub,
            clf,
            f,
            HEAD + _block_keys(keys, top),
            int(f["counts"][2 + n]),
            Msg(
                "after freeze_encoder and unfreeze_top(model, {n})",
                "freeze_encoder 和 unfreeze_top(model, {n}) 之后",
                n=from_input(n),
            ),
            wrong=wrong,
        )
    clf = _classifier(sub, f)
    sub.unfreeze_top(clf, 1)  # no freeze_encoder before: unfreeze_top freezes everything below the top itself
    _expect_trainable(
        sub,
        clf,
        f,
        HEAD + _block_keys(keys, [n_layers - 1]),
        int(f["counts"][3]),
        Msg(
            "unfreeze_top(model, 1) on a fully trainable model (no freeze_encoder before it)",
            "在完全可训练的模型上调用 unfreeze_top(model, 1)（之前没有调用 freeze_encoder）",
        ),
        wrong=[
            (
                keys,
                Msg(
                    "unfreeze_top must also freeze the embeddings and the lower blocks: call "
                    "freeze_encoder(model) first, then unfreeze the top n",
                    "unfreeze_top 还必须冻结嵌入层和下面的块：先调用 freeze_encoder(model)，再解冻最上面的 n 个块",
                ),
            )
        ],
    )


@check(
    points=1,
    hidden=True,
    title="unfreeze_top on a trainable model, and bad n",
    title_zh="在可训练模型上调用 unfreeze_top，以及非法的 n",
)
def test_unfreeze_top_from_trainable(sub):
    f = fx()
    keys = list(_take(f, "base"))
    clf = _classifier(sub, f)
    top = 2
    sub.unfreeze_top(clf, top)  # on a fresh model: everything below the top 2 blocks must be frozen
    _expect_trainable(
        sub,
        clf,
        f,
        HEAD + _block_keys(keys, [1, 2]),
        int(f["counts"][4]),
        Msg(
            "unfreeze_top(model, {n}) on a fully trainable model",
            "在完全可训练的模型上调用 unfreeze_top(model, {n})",
            n=from_input(top),
        ),
        wrong=[
            (
                keys,
                Msg(
                    "unfreeze_top must also freeze the embeddings and the lower blocks",
                    "unfreeze_top 还必须冻结嵌入层和下面的块",
                ),
            )
        ],
    )
    for n in (4, -1):
        try:
            sub.unfreeze_top(clf, n)
        except StudentError as e:
            expect(e.kind != "not_implemented", Msg.of(e))
            expect(
                e.type == "ValueError",
                Msg(
                    "unfreeze_top(model, {n}) with {blocks} blocks must raise ValueError, not {raised}",
                    "只有 {blocks} 个块时 unfreeze_top(model, {n}) 必须抛出 ValueError，而不是 {raised}",
                    n=from_input(n),
                    blocks=from_input(CFG["n_layers"]),
                    raised=e.type,
                ),
            )
            continue
        expect(
            False,
            Msg(
                "unfreeze_top(model, {n}) with {blocks} blocks must raise ValueError",
                "只有 {blocks} 个块时 unfreeze_top(model, {n}) 必须抛出 ValueError",
                n=from_input(n),
                blocks=from_input(CFG["n_layers"]),
            ),
        )


@check(points=1, hidden=True, title="counting trainable parameters", title_zh="统计可训练参数的数量")
def test_count_trainable(sub):
    f = fx()
    base = _take(f, "base")
    clf = _classifier(sub, f)
    got = sub.count_trainable(clf)
    if got == len(base):
        expect(
            False,
            Msg(
                "count_trainable returned the number of parameter tensors; count their elements (numel)",
                "count_trainable 返回的是参数张量的个数；应统计它们的元素个数（numel）",
            ),
        )
    expect_equal(
        got,
        sum(v.numel() for v in base.values()),
        what=Msg("count_trainable of a fresh classifier", "新建分类器的 count_trainable"),
    )
    expect_equal(
        got, int(f["counts"][0]), what=Msg("count_trainable of a fresh classifier", "新建分类器的 count_trainable")
    )
    sub.freeze_encoder(clf)
    expect_equal(
        _trainable(sub, clf),
        sorted(HEAD),
        what=Msg(
            "the parameters with requires_grad after freeze_encoder",
            "freeze_encoder 之后 requires_grad 为 `True` 的参数",
        ),
    )
    expect_equal(
        sub.count_trainable(clf),
        CFG["dim"] * CFG["n_classes"] + CFG["n_classes"],
        what=Msg("count_trainable with only the head trainable", "只有分类头可训练时的 count_trainable"),
    )
