"""Checks of §1.23, training the classifier (listings 1.37-1.38).

Nothing about training is taken on the student's word. One step is followed number by number
with plain SGD (the given `make_sgd`), so a step that is not taken or gradients that are not
cleared show up in the parameters, which come back through state_dict (gradients and
requires_grad do not cross the wire). And the student's training code must teach the model a
task it cannot solve without reading its input: a synthetic corpus made here, whose held-out
labels never leave this process. The given TinyBERT lives in the student's file, which can
rewrite it, so what training achieved is measured with the grader's own model: the trained
weights come back through state_dict, must load strictly into bert_reference.tiny_bert, and
its logits on the held-out set (or the overfitted batch) decide, computed here.

The book's printed "Train Loss" (1078.51 ... 285.67) is a sum over ~1,563 batches, and its
156,250 "updates per epoch" are the total of 100 epochs (ERRATA E-1.23-m to E-1.23-o).
"""

import torch
import torch.nn.functional as F

from grader.checking import Mistake, Msg, check, code, expect, expect_equal, expect_tensor, fixtures, from_input
from grader.checks import bert_reference as R

EXERCISE = "s1_23_training"
PAD_ID, CLS_ID, SEP_ID = 1000, 1001, 1002
SMALL = dict(dim=16, heads=2, ff_dim=32, layers=1, dropout=0.0)  # exact checks: no dropout
DEFAULTS = dict(vocab_size=1003, dim=32, max_len=64, layers=1, heads=2, ff_dim=64)  # the given TinyBERT's
LN2 = 0.6931  # cross-entropy of two equal logits, to the book's 4 decimals


# ----------------------------------------------------------------------------- the synthetic task
def synthetic_task(n: int, seed: int, cue_seed: int = 2323, min_len: int = 8, max_len: int = 24, n_cues: int = 6):
    """A labelled corpus of token-id sequences that only a model reading its input can classify.

    Each sequence is [CLS] w_1 ... w_L [SEP] followed by PAD up to max_len + 2, with L drawn from
    [min_len, max_len]. The words are fillers, except one or two cue words and one distractor at
    random places. Label 1 takes its cues from set A, label 0 from set B; the distractors come
    from a third set whatever the label. The three sets (drawn with cue_seed) are disjoint
    random word ids, so no fixed rule about particular ids solves the task: it must be learned
    from the labelled examples. Returns (ids, mask, labels), int64, shapes (n, max_len + 2) and (n,).
    """
    words = torch.randperm(1000, generator=torch.Generator().manual_seed(cue_seed))
    cues = (words[n_cues : 2 * n_cues], words[:n_cues])  # label 0: set B, label 1: set A
    distractors, fillers = words[2 * n_cues : 2 * n_cues + 6], words[2 * n_cues + 6 : 400]
    g = torch.Generator().manual_seed(seed)
    width = max_len + 2
    ids = torch.full((n, width), PAD_ID, dtype=torch.int64)
    labels = torch.arange(n) % 2
    labels = labels[torch.randperm(n, generator=g)]
    for i in range(n):
        length = int(torch.randint(min_len, max_len + 1, (1,), generator=g))
        seq = fillers[torch.randint(0, len(fillers), (length,), generator=g)]
        k = int(torch.randint(1, 3, (1,), generator=g))
        places = torch.randperm(length, generator=g)[: k + 1]
        seq[places[:k]] = cues[int(labels[i])][torch.randint(0, n_cues, (k,), generator=g)]
        seq[places[k]] = distractors[torch.randint(0, len(distractors), (1,), generator=g)]
        ids[i, 0], ids[i, 1 : length + 1], ids[i, length + 1] = CLS_ID, seq, SEP_ID
    return ids, (ids != PAD_ID).long(), labels


# ----------------------------------------------------------------------------- fixtures
def _sgd_step(model, batch, lr, zero=True):
    ids, mask, labels = batch
    if zero:
        model.zero_grad()
    loss = F.cross_entropy(model(ids, mask), labels)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p -= lr * p.grad
    return loss.item()


def _state(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _put(out, prefix, state):
    out.update({f"{prefix}/{k}": v for k, v in state.items()})


def _take(f, prefix):
    return {k.split("/", 1)[1]: v for k, v in f.items() if k.startswith(prefix + "/")}


def make_fixtures(sol):
    out = {}
    torch.manual_seed(2301)
    model = sol.TinyBERT(**SMALL)
    _put(out, "w0", _state(model))
    ids, mask, labels = synthetic_task(8, seed=2302, max_len=18)
    out.update(ids=ids, mask=mask, labels=labels)
    batch = (ids, mask, labels)
    losses = [_sgd_step(model, batch, 0.1)]
    _put(out, "w1", _state(model))
    losses.append(_sgd_step(model, batch, 0.1))
    _put(out, "w2", _state(model))
    model.load_state_dict(_take(out, "w0"))
    _sgd_step(model, batch, 0.1)
    _sgd_step(model, batch, 0.1, zero=False)  # the gradients of both steps add up
    _put(out, "w2_no_zero_grad", _state(model))
    out["losses"] = torch.tensor(losses, dtype=torch.float64)
    # one epoch at lr = 0 over 64 examples in 4 batches of 16: every batch mean, whatever the order
    e_ids, e_mask, e_labels = synthetic_task(64, seed=2303, max_len=18)
    model.load_state_dict(_take(out, "w0"))
    with torch.no_grad():
        per_example = F.cross_entropy(model(e_ids, e_mask), e_labels, reduction="none")
    out.update(e_ids=e_ids, e_mask=e_mask, e_labels=e_labels, e_mean=per_example.mean().double())
    g = torch.Generator().manual_seed(2304)
    out["logits"] = torch.randn(6, 2, generator=g) * 2
    out["logit_labels"] = torch.tensor([0, 1, 1, 0, 1, 0])
    return out


def fx():
    return fixtures.load(EXERCISE)


# ----------------------------------------------------------------------------- helpers
def _small_model(sub, f):
    model = sub.new("TinyBERT", **SMALL)
    model.load_state_dict(_take(f, "w0"))
    return model


def _close_states(a: dict, b: dict, tol: float = 1e-4) -> bool:
    return a.keys() == b.keys() and all(torch.allclose(a[k], b[k], atol=tol, rtol=tol) for k in a)


def _as_float(value, what):
    if isinstance(value, torch.Tensor):
        expect(
            False,
            Msg(
                "{what} returned a tensor; return the loss as a Python float with loss.item() (a tensor keeps "
                "the whole graph of the step alive)",
                "{what} 返回了张量；应用 loss.item() 把损失作为 Python float 返回（张量会让这一步的整个计算图一直存活）",
                what=what,
            ),
        )
    expect(
        isinstance(value, float),
        Msg(
            "{what} must return a Python float, got {type_value}",
            "{what} 必须返回 Python float，实际返回了 {type_value}",
            what=what,
            type_value=from_input(type(value).__name__),
        ),
    )
    return value


def _expect_state(actual, expected, what, candidates=()):
    """Compare a state_dict with the expected one; name the first plausible mistake it matches."""
    if _close_states(actual, expected):
        return
    for state, why in candidates:
        if _close_states(actual, state):
            expect(False, Msg("{what}: {why}", "{what}：{why}", what=what, why=why))
    for k in expected:
        expect(
            k in actual,
            Msg(
                "{what}: the model has no parameter {k}",
                "{what}：模型没有参数 {k}",
                what=what,
                k=k,
            ),
        )
        expect_tensor(
            actual[k],
            expected[k],
            tol="encoder",
            what=Msg("{what}: {k}", "{what}：{k}", what=what, k=k),
        )


def _config(model_args: dict) -> dict:
    return {k: v for k, v in {**DEFAULTS, **model_args}.items() if k in DEFAULTS}


def _trusted_logits(state, config: dict, ids, mask, what: Msg, model=None):
    """The logits of the grader's own TinyBERT with the weights `state` read from the worker (in
    the student bundle, which has no reference model, those of the student's own `model`)."""
    shapes = R.tiny_bert_shapes(
        config["vocab_size"], config["dim"], config["max_len"], config["layers"], config["ff_dim"]
    )
    problem = R.state_problem(state, shapes)
    if problem is not None:
        expect(
            False,
            Msg(
                "{what}: {problem}; keep the given TinyBERT as it is",
                "{what}：{problem}；请保持给定的 TinyBERT 不变",
                what=what,
                problem=problem,
            ),
        )
    if not hasattr(R, "tiny_bert"):  # kata release's bundle
        model.eval()
        return model(ids, mask)
    sd = {k: state[k].float() for k in shapes}
    with torch.no_grad():
        return R.tiny_bert(ids, mask, sd, config["heads"])


def _expect_given_model(model, config: dict, ids, mask):
    """The student's TinyBERT must compute the given model (with their TransformerBlock) before training."""
    problem = R.tiny_bert_problem(model, config, ids, mask) if hasattr(R, "tiny_bert_problem") else None
    if problem is not None:
        expect(False, problem)
    model.train()


def _train_task(sub, seed: int, epochs: int, cue_seed: int, **model_args):
    """Train a fresh TinyBERT with the student's code; return (epoch losses, held-out accuracy).

    640 examples, 10 epochs of AdamW at lr 0.003: the reference reaches 94-100% on the held-out
    set over 16 seeds and cue sets, in 1-2 s of one CPU core. The accuracy is that of the
    grader's own model with the trained weights."""
    ids, mask, labels = synthetic_task(640, seed=seed, cue_seed=cue_seed)
    test_ids, test_mask, test_labels = synthetic_task(400, seed=seed + 1, cue_seed=cue_seed)
    config = _config(model_args)
    sub.seed(seed)
    model = sub.new("TinyBERT", **model_args)
    before = model.state_dict()
    _expect_given_model(model, config, ids[:8], mask[:8])
    optimizer = sub.make_optimizer(model, lr=3e-3)
    loader = sub.make_loader(ids, mask, labels, batch_size=32, shuffle=True, seed=seed)
    losses = sub.train(model, loader, optimizer, sub.make_criterion(), epochs)
    after = model.state_dict()
    expect(
        isinstance(after, dict)
        and after.keys() == before.keys()
        and any(not torch.equal(before[k], after[k]) for k in before),
        Msg(
            "train left the model's parameters as they were: it must update the model it is given (loss.backward() "
            "and optimizer.step() on that model)",
            "train 之后模型的参数没有任何变化：它必须更新传入的那个模型（对该模型调用 loss.backward() 和 optimizer.step()）",
        ),
    )
    # The grader predicts itself, with its own model and the trained weights: the held-out labels stay
    # here and no code of the submission (its prediction code, or the given model it may have rewritten)
    # decides the accuracy.
    logits = _trusted_logits(after, config, test_ids, test_mask, Msg("the trained model", "训练后的模型"), model)
    accuracy = (logits.argmax(dim=-1) == test_labels).double().mean().item()
    return losses, accuracy


# ----------------------------------------------------------------------------- checks
@check(
    points=2,
    listings=["1.37"],
    title="listing 1.37: the loss function and the optimizer",
    title_zh="代码清单 1.37：损失函数和优化器",
)
def test_listing_1_37_loss_and_optimizer(sub):
    f = fx()
    criterion = sub.make_criterion()
    even = criterion(torch.zeros(4, 2), torch.tensor([0, 1, 1, 0]))
    expect(
        isinstance(even, torch.Tensor) and even.dim() == 0,
        Msg(
            "make_criterion() must return a loss module: criterion(logits, labels) gives one number (the batch mean)",
            "make_criterion() 必须返回一个损失模块：criterion(logits, labels) 给出一个数（批次的平均值）",
        ),
    )
    expect_tensor(
        even,
        torch.tensor(LN2),
        tol="printed4",
        what=Msg("the loss of two equal logits (ln 2)", "两个相等 logits 的损失（ln 2）"),
    )
    logits, labels = f["logits"], f["logit_labels"]
    loss = criterion(logits, labels)
    expect_tensor(
        loss,
        F.cross_entropy(logits, labels),
        tol="softmax",
        what=Msg("the loss of six given logits", "六个给定 logits 的损失"),
        mistakes=[
            Mistake(
                F.nll_loss(logits, labels),
                "nn.NLLLoss on raw logits: it expects log-probabilities (CrossEntropyLoss applies log_softmax itself)",
                "对原始 logits 用了 NLLLoss：它需要对数概率（CrossEntropyLoss 自己会做 log_softmax）",
            ),
            Mistake(
                F.cross_entropy(logits, labels, reduction="sum"),
                "a sum over the batch, not the mean",
                "对批次求和而不是取平均",
            ),
        ],
    )

    model = _small_model(sub, f)
    optimizer = sub.make_optimizer(model)
    kind = optimizer.type_name
    if kind == "Adam":
        expect(
            False,
            Msg(
                "make_optimizer returned Adam; listing 1.37 uses AdamW (decoupled weight decay)",
                "make_optimizer 返回了 Adam；代码清单 1.37 使用的是 AdamW（解耦的权重衰减）",
            ),
        )
    expect_equal(kind, "AdamW", what=Msg("the type of the optimizer of listing 1.37", "代码清单 1.37 中优化器的类型"))
    groups = optimizer.attr("param_groups")
    expect_equal(
        float(groups[0]["lr"]),
        3e-4,
        what=Msg(
            "the default learning rate of make_optimizer (listing 1.37)", "make_optimizer 的默认学习率（代码清单 1.37）"
        ),
    )
    n_model = sum(v.numel() for v in _take(f, "w0").values())
    n_opt = sum(p.numel() for group in groups for p in group["params"])
    expect_equal(
        n_opt,
        n_model,
        what=Msg(
            "the number of parameter values the optimizer updates (all of the model's)",
            "优化器更新的参数值个数（模型的全部参数）",
        ),
    )
    other = sub.make_optimizer(model, lr=0.01)
    expect_equal(
        float(other.attr("param_groups")[0]["lr"]),
        0.01,
        what=Msg("the learning rate of make_optimizer(model, lr=0.01)", "make_optimizer(model, lr=0.01) 的学习率"),
    )


@check(
    points=3,
    listings=["1.38"],
    title="one training step: zero_grad, forward, loss, backward, step",
    title_zh="一个训练步：zero_grad、前向、损失、反向、step",
)
def test_train_step_follows_sgd(sub):
    f = fx()
    model = _small_model(sub, f)
    optimizer = sub.make_sgd(model, 0.1)
    batch = (f["ids"], f["mask"], f["labels"])
    w0, w1, w2 = _take(f, "w0"), _take(f, "w1"), _take(f, "w2")
    loss = _as_float(sub.train_step(model, batch, optimizer, sub.make_criterion()), code("train_step"))
    expect(
        abs(loss - float(f["losses"][0])) <= 1e-4,
        Msg(
            "train_step returned {loss:.6g}; the cross-entropy of this batch before the step is {losses:.6g}",
            "train_step 返回了 {loss:.6g}；这一批次在这一步之前的交叉熵是 {losses:.6g}",
            loss=from_input(loss),
            losses=from_input(float(f["losses"][0])),
        ),
    )
    _expect_state(
        model.state_dict(),
        w1,
        Msg(
            "the parameters after one train_step with SGD (lr = 0.1)",
            "用 SGD（lr = 0.1）执行一次 train_step 之后的参数",
        ),
        [
            (
                w0,
                Msg(
                    "nothing changed: call optimizer.step() after loss.backward()",
                    "什么都没有改变：在 loss.backward() 之后调用 optimizer.step()",
                ),
            )
        ],
    )
    loss = _as_float(sub.train_step(model, batch, optimizer, sub.make_criterion()), code("train_step"))
    expect(
        abs(loss - float(f["losses"][1])) <= 1e-4,
        Msg(
            "the second train_step returned {loss:.6g}, expected {losses:.6g}",
            "第二次 train_step 返回了 {loss:.6g}，应为 {losses:.6g}",
            loss=from_input(loss),
            losses=from_input(float(f["losses"][1])),
        ),
    )
    _expect_state(
        model.state_dict(),
        w2,
        Msg("the parameters after two train_steps on the same batch", "在同一批次上执行两次 train_step 之后的参数"),
        [
            (
                _take(f, "w2_no_zero_grad"),
                Msg(
                    "the second step used the sum of both steps' gradients: call "
                    "optimizer.zero_grad() before loss.backward() (PyTorch adds "
                    "new gradients to the old ones)",
                    "第二步用的是两步梯度之和：在 loss.backward() 之前调用 "
                    "optimizer.zero_grad()（PyTorch 会把新梯度累加到旧梯度上）",
                ),
            ),
            (
                w1,
                Msg(
                    "the second step changed nothing: step the optimizer on every call",
                    "第二步什么都没有改变：每次调用都要执行优化器的 step",
                ),
            ),
        ],
    )


@check(
    points=2,
    listings=["1.38"],
    title="listing 1.38: the model can overfit one batch",
    title_zh="代码清单 1.38：模型能过拟合一个批次",
)
def test_overfit_one_batch(sub):
    f = fx()
    ids, mask, labels = f["ids"], f["mask"], f["labels"]
    config = _config(SMALL)
    sub.seed(7)
    model = sub.new("TinyBERT", **SMALL)
    _expect_given_model(model, config, ids, mask)
    optimizer = sub.make_optimizer(model, lr=1e-2)
    criterion = sub.make_criterion()
    for _ in range(40):
        sub.train_step(model, (ids, mask, labels), optimizer, criterion)
    # recomputed here, by the grader's own model with the weights train_step left
    logits = _trusted_logits(
        model.state_dict(),
        config,
        ids,
        mask,
        Msg("the model after 40 train_steps", "40 次 train_step 之后的模型"),
        model,
    )
    loss = F.cross_entropy(logits, labels).item()
    expect(
        loss < 0.05,
        Msg(
            "after 40 steps of AdamW (lr = 0.01) on one batch of 8 the loss is still {loss:.4f}; a model "
            "that learns should bring it under 0.05 (ln 2 = 0.6931 is a coin toss). Does train_step call "
            "backward() and optimizer.step(), with the model's logits and the batch's labels?",
            "在一个大小为 8 的批次上用 AdamW（lr = 0.01）训练 40 步之后损失仍为 {loss:.4f}；能学习的模型应把它降到 0.05 以下（ln 2 = 0.6931 "
            "相当于抛硬币）。train_step 是否用模型的 logits 和批次的标签调用了 backward() 和 optimizer.step()？",
            loss=from_input(loss),
        ),
    )


@check(
    points=2,
    listings=["1.38"],
    title="train returns the mean loss of each epoch",
    title_zh="train 返回每个 epoch 的平均损失",
)
def test_train_returns_epoch_means(sub):
    f = fx()
    model = _small_model(sub, f)
    loader = sub.make_loader(f["e_ids"], f["e_mask"], f["e_labels"], batch_size=16, shuffle=True, seed=3)
    losses = sub.train(model, loader, sub.make_sgd(model, 0.0), sub.make_criterion(), 2)  # lr 0: nothing moves
    expect(
        isinstance(losses, (list, tuple)),
        Msg(
            "train must return a list of floats, got {type_losses}",
            "train 必须返回 float 的列表，实际返回了 {type_losses}",
            type_losses=from_input(type(losses).__name__),
        ),
    )
    if len(losses) == 8:
        expect(
            False,
            Msg(
                "train returned one loss per batch (8 = 2 epochs x 4 batches); return one per epoch",
                "train 每个批次返回了一个损失（8 = 2 个 epoch × 4 个批次）；应每个 epoch 返回一个",
            ),
        )
    expect_equal(
        len(losses), 2, what=Msg("the number of values train returns for epochs=2", "epochs=2 时 train 返回的值的个数")
    )
    mean = float(f["e_mean"])
    for i, value in enumerate(losses):
        value = float(value)
        if abs(value - 4 * mean) <= 1e-3:
            expect(
                False,
                Msg(
                    "epoch {i}: {value:.4f} is the sum of the 4 batch losses, as the book prints ('Train Loss: "
                    "1078.51' adds up ~1,563 batches); return the mean, which does not grow with the number of "
                    "batches",
                    "第 {i} 个 epoch：{value:.4f} 是 4 个批次损失之和，就像书中打印的那样（'Train Loss: 1078.51' 累加了约 1,563 个批次）；应返回平均值，它不会随批次数增长",
                    i=from_input(i + 1),
                    value=from_input(value),
                ),
            )
        expect(
            abs(value - mean) <= 1e-4,
            Msg(
                "epoch {i}: train returned {value:.6g}; the mean of its 4 batch losses (lr = 0, so every "
                "epoch is the same) is {mean:.6g}",
                "第 {i} 个 epoch：train 返回了 {value:.6g}；它的 4 个批次损失的平均值（lr = 0，所以每个 epoch 都一样）是 {mean:.6g}",
                i=from_input(i + 1),
                value=from_input(value),
                mean=from_input(mean),
            ),
        )


@check(points=1, hidden=True, title="train switches the model to training mode", title_zh="train 把模型切换到训练模式")
def test_train_switches_to_training_mode(sub):
    f = fx()
    model = _small_model(sub, f)
    model.eval()
    loader = sub.make_loader(f["e_ids"], f["e_mask"], f["e_labels"], batch_size=32)
    sub.train(model, loader, sub.make_sgd(model, 0.0), sub.make_criterion(), 1)
    expect(
        model.attr("training") is True,
        Msg(
            "after train() the model is still in evaluation mode: call model.train() "
            "at the start of each epoch (evaluation switches dropout off)",
            "train() 之后模型仍处于评估模式：在每个 epoch 开始时调用 model.train()（评估会关闭 dropout）",
        ),
    )


@check(
    points=4, listings=["1.38"], title="your loop learns a synthetic task", title_zh="你的训练循环能学会一个合成任务"
)
def test_learns_synthetic_task(sub):
    losses, accuracy = _train_task(sub, seed=11, epochs=10, cue_seed=2323)
    expect(
        isinstance(losses, (list, tuple)) and len(losses) == 10,
        Msg("train must return one loss per epoch", "train 必须每个 epoch 返回一个损失"),
    )
    expect(
        accuracy >= 0.90,
        Msg(
            "after 10 epochs of your training loop (AdamW, lr = 0.003, batches of 32) the model labels "
            "{accuracy:.1%} of 400 held-out sequences correctly; at least 90% is expected (50% is guessing). "
            "Check train_step: zero_grad, forward, loss, backward, step.",
            "用你的训练循环（AdamW，lr = 0.003，批次大小 32）训练 10 个 epoch 后，模型在 400 条留出序列中只正确标注了 {accuracy:.1%}；至少应达到 "
            "90%（50% 等于瞎猜）。请检查 train_step：zero_grad、前向、损失、反向、step。",
            accuracy=from_input(accuracy),
        ),
    )
    expect(
        float(losses[-1]) < float(losses[0]),
        Msg(
            "the epoch losses do not go down ({losses:.4f} -> {losses2:.4f})",
            "各 epoch 的损失没有下降（{losses:.4f} -> {losses2:.4f}）",
            losses=from_input(float(losses[0])),
            losses2=from_input(float(losses[-1])),
        ),
    )


@check(points=2, hidden=True, title="your loop learns another task", title_zh="你的训练循环能学会另一个任务")
def test_learns_another_task(sub):
    heads = 4
    _, accuracy = _train_task(sub, seed=23, epochs=10, cue_seed=4242, heads=heads)
    expect(
        accuracy >= 0.90,
        Msg(
            "a {heads}-head model trained by your loop on another task labels {accuracy:.1%} of its held-out "
            "set correctly; at least `90%` is expected",
            "用你的循环在另一个任务上训练的 {heads} 头模型在其留出集上只正确标注了 {accuracy:.1%}；至少应达到 `90%`",
            heads=from_input(heads),
            accuracy=from_input(accuracy),
        ),
    )


@check(points=2, listings=["1.38/updates"], title="counting optimizer steps", title_zh="统计优化器的步数")
def test_count_updates(sub):
    book = sub.count_updates(25000, 16, 100)
    if book == 156250:
        expect(
            False,
            Msg(
                "25,000 / 16 = 1,562.5 is not a whole number of batches: the last batch of 8 is an update too "
                "(round up)",
                "25,000 / 16 = 1,562.5 不是整数个批次：最后那个大小为 8 的批次也要更新一次（向上取整）",
            ),
        )
    if book == 1563:
        expect(
            False,
            Msg(
                "1,563 is one epoch's updates; multiply by the number of epochs",
                "1,563 是一个 epoch 的更新次数；还要乘以 epoch 数",
            ),
        )
    expect_equal(
        book,
        156300,
        what=Msg(
            "optimizer steps for 25,000 examples, batches of 16, 100 epochs",
            "25,000 个样本、批次大小 16、100 个 epoch 时的优化器步数",
        ),
    )
    expect_equal(
        sub.count_updates(25000, 16, 1),
        1563,
        what=Msg("optimizer steps of one epoch of listing 1.38", "代码清单 1.38 中一个 epoch 的优化器步数"),
    )
    expect_equal(
        sub.count_updates(25000, 16, 100, drop_last=True),
        156200,
        what=Msg(
            "optimizer steps with drop_last=True (25,000 // 16 = 1,562 per epoch)",
            "drop_last=True 时的优化器步数（每个 epoch 25,000 // 16 = 1,562 步）",
        ),
    )
    for args, expected in (((96, 32, 3), 9), ((100, 32, 3), 12), ((31, 32, 2), 2), ((5, 1, 0), 0)):
        expect_equal(sub.count_updates(*args), expected, what=code("count_updates{args}", args=from_input(args)))
    expect_equal(sub.count_updates(31, 32, 2, drop_last=True), 0, what=code("count_updates(31, 32, 2, drop_last=True)"))
