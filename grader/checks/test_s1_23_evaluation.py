"""Checks of §1.23, evaluating the classifier (listings 1.39-1.40).

The model is the given TinyBERT with weights trained here on the synthetic corpus of the
training checks (94.5% on its test set, with errors in both classes). The student's
predictions come back as lists; the classification report and the confusion matrix they should
give are computed here, with scikit-learn, from those same predictions.

The book's printed test accuracy (0.8074) and report need the book's trained model and cannot
be recomputed; the report is consistent with that accuracy: 10,050 true negatives and 10,135
true positives out of 12,500 each give exactly the printed table (ERRATA E-1.23-p, E-1.23-q).
"""

import torch
import torch.nn.functional as F
from sklearn.metrics import classification_report, confusion_matrix

from grader.checking import CheckFailure, Msg, check, expect, expect_equal, fixtures, from_input
from grader.checks import bert_reference as R
from grader.checks.test_s1_23_training import DEFAULTS, synthetic_task
from grader.worker.proxy import StudentError

EXERCISE = "s1_23_evaluation"
NAMES = ["Negative", "Positive"]
BOOK_REPORT = """              precision    recall  f1-score   support

    Negative       0.81      0.80      0.81     12500
    Positive       0.81      0.81      0.81     12500

    accuracy                           0.81     25000
   macro avg       0.81      0.81      0.81     25000
weighted avg       0.81      0.81      0.81     25000
"""  # listing 1.40's output, laid out as scikit-learn prints it (the book's text lost the spacing)
BOOK_TN, BOOK_TP = 10050, 10135  # one confusion matrix that gives the printed report and accuracy 0.8074


def make_fixtures(sol):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the worker; a small model trains ten times slower on two busy cores
    try:
        return _make_fixtures(sol)
    finally:
        torch.set_num_threads(threads)


def _make_fixtures(sol):
    ids, mask, labels = synthetic_task(512, seed=2311, cue_seed=2333)
    torch.manual_seed(2312)
    model = sol.TinyBERT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
    for _ in range(6):  # short training: about 93% correct, with mistakes in both classes
        model.train()
        for b_ids, b_mask, b_labels in sol.make_loader(ids, mask, labels, batch_size=32, shuffle=True, seed=2313):
            optimizer.zero_grad()
            F.cross_entropy(model(b_ids, b_mask), b_labels).backward()
            optimizer.step()
    model.eval()
    out = {f"w/{k}": v.detach().clone() for k, v in model.state_dict().items()}
    t_ids, t_mask, t_labels = synthetic_task(200, seed=2314, cue_seed=2333)
    with torch.no_grad():
        logits = model(t_ids, t_mask)
    preds = logits.argmax(dim=1)
    margin = (logits[:, 0] - logits[:, 1]).abs().min().item()
    assert margin > 1e-3, f"a near tie between the two logits ({margin}): argmax would depend on rounding"
    correct = (preds == t_labels).double()
    fp = int(((preds == 1) & (t_labels == 0)).sum())
    fn = int(((preds == 0) & (t_labels == 1)).sum())
    assert 0 < fp != fn > 0 and correct.mean() < 1, "the test set must have errors of both kinds, in unequal numbers"
    batch_means = torch.stack([c.mean() for c in correct.split(16)])
    out.update(
        t_ids=t_ids,
        t_mask=t_mask,
        t_labels=t_labels,
        preds=preds,
        accuracy=correct.mean(),
        mean_of_batches=batch_means.mean(),
    )
    return out


def fx():
    return fixtures.load(EXERCISE)


def _model(sub, f, dropout=0.1):
    model = sub.new("TinyBERT", dropout=dropout)
    model.load_state_dict({k[2:]: v for k, v in f.items() if k.startswith("w/")})
    return model


def _loader(sub, f):
    return sub.make_loader(f["t_ids"], f["t_mask"], f["t_labels"], batch_size=16)  # 12 batches of 16, then 8


def _int_list(value, what):
    if isinstance(value, torch.Tensor):
        value = value.tolist()
    expect(
        isinstance(value, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value),
        Msg(
            "{what} must be a list of Python ints (tensor.tolist() gives one)",
            "{what} 必须是 Python 整数的列表（tensor.tolist() 可以得到）",
            what=what,
        ),
    )
    return list(value)


def _pair(sub, model, loader):
    result = sub.collect_predictions(model, loader)
    expect(
        isinstance(result, (list, tuple)) and len(result) == 2,
        Msg(
            "collect_predictions must return two lists: (labels, preds)",
            "collect_predictions 必须返回两个列表：(labels, preds)",
        ),
    )
    return _int_list(
        result[0], Msg("the labels collect_predictions returns", "collect_predictions 返回的标签")
    ), _int_list(result[1], Msg("the predictions collect_predictions returns", "collect_predictions 返回的预测结果"))


def _sk_report(labels, preds):
    return classification_report(labels, preds, labels=[0, 1], target_names=NAMES, zero_division=0)


def _expect_report(text, labels, preds, what):
    expect(
        isinstance(text, str),
        Msg(
            "report must return the text of the report (a str), got {type_text}",
            "report 必须返回报告的文本（str），实际返回了 {type_text}",
            type_text=from_input(type(text).__name__),
        ),
    )
    expected = _sk_report(labels, preds)
    if text == expected:
        return
    if text == _sk_report(preds, labels):
        expect(
            False,
            Msg(
                "{what}: the arguments are swapped; scikit-learn takes the true labels first (y_true, y_pred), "
                "so precision and recall trade places",
                "{what}：参数顺序反了；scikit-learn 先接收真实标签 (y_true, y_pred)，否则精确率和召回率会互换",
                what=what,
            ),
        )
    if "Negative" not in text:
        expect(
            False,
            Msg(
                "{what}: the rows must be named Negative and Positive (target_names)",
                "{what}：各行必须命名为 Negative 和 Positive（target_names）",
                what=what,
            ),
        )
    expect(
        False,
        Msg(
            "{what}: the report differs from scikit-learn's `classification_report(labels, preds, labels=[0, 1], "
            "target_names={names}, zero_division=0)`",
            "{what}：报告与 scikit-learn 的 `classification_report(labels, preds, labels=[0, 1], target_names={names}, "
            "zero_division=0)` 不同",
            what=what,
            names=NAMES,
        ),
    )


# ----------------------------------------------------------------------------- checks
@check(
    points=2,
    listings=["1.39"],
    title="listing 1.39: accuracy on the test set",
    title_zh="代码清单 1.39：测试集上的准确率",
)
def test_listing_1_39_accuracy(sub):
    f = fx()
    accuracy = sub.evaluate(_model(sub, f), _loader(sub, f))
    if isinstance(accuracy, torch.Tensor):
        expect(
            False,
            Msg(
                "evaluate returned a tensor; return a Python float (correct / total with .item() counts)",
                "evaluate 返回了张量；应返回 Python float（正确数 / 总数，用 .item() 取计数）",
            ),
        )
    expect(
        isinstance(accuracy, float),
        Msg(
            "evaluate must return a float, got {type_accuracy}",
            "evaluate 必须返回 float，实际返回了 {type_accuracy}",
            type_accuracy=from_input(type(accuracy).__name__),
        ),
    )
    expected = float(f["accuracy"])
    if abs(accuracy - float(f["mean_of_batches"])) < 1e-9 and abs(accuracy - expected) > 1e-9:
        expect(
            False,
            Msg(
                "{accuracy:.4f} is the mean of the per-batch accuracies; the last batch holds 8 examples, "
                "not 16: count correct answers and examples over the whole set",
                "{accuracy:.4f} 是各批次准确率的平均值；最后一个批次只有 8 个样本而不是 16 个：应在整个数据集上统计正确数和样本数",
                accuracy=from_input(accuracy),
            ),
        )
    expect(
        abs(accuracy - expected) < 1e-9,
        Msg(
            "evaluate returned {accuracy:.4f}; the model labels {expected:.4f} of these 200 examples correctly",
            "evaluate 返回了 {accuracy:.4f}；模型在这 200 个样本中正确标注了 {expected:.4f}",
            accuracy=from_input(accuracy),
            expected=from_input(expected),
        ),
    )


@check(
    points=2,
    listings=["1.40"],
    title="listing 1.40: collecting labels and predictions",
    title_zh="代码清单 1.40：收集标签和预测结果",
)
def test_listing_1_40_predictions(sub):
    f = fx()
    labels, preds = _pair(sub, _model(sub, f), _loader(sub, f))
    expect_equal(
        len(labels), 200, what=Msg("the number of labels collected from 13 batches", "从 13 个批次中收集到的标签数量")
    )
    expect_equal(
        labels,
        f["t_labels"].tolist(),
        what=Msg("the collected labels (in the loader's order)", "收集到的标签（按加载器的顺序）"),
    )
    expect_equal(len(preds), 200, what=Msg("the number of predictions", "预测结果的数量"))
    expected = f["preds"].tolist()
    wrong = sum(p != e for p, e in zip(preds, expected))
    expect(
        wrong == 0,
        Msg(
            "{wrong} of 200 predictions differ from the model's argmax class in evaluation mode",
            "200 个预测中有 {wrong} 个与模型在 eval 模式下 argmax 给出的类别不同",
            wrong=from_input(wrong),
        ),
    )


@check(points=2, hidden=True, title="evaluation runs the model in eval mode", title_zh="评估时模型处于 eval 模式")
def test_evaluation_mode(sub):
    f = fx()
    p = 0.5
    model = _model(sub, f, dropout=p)
    # The given TinyBERT lives in the student's file: a copy that computes something else, or drops
    # nothing in training mode, would let an evaluation that never calls model.eval() pass.
    ids, mask = f["t_ids"][:16], f["t_mask"][:16]
    problem = R.tiny_bert_problem(model, DEFAULTS, ids, mask) if hasattr(R, "tiny_bert_problem") else None
    if problem is not None:
        expect(False, problem)
    model.train()
    expect(
        not torch.equal(model(ids, mask), model(ids, mask)),
        Msg(
            "the given TinyBERT with dropout {p} gives the same logits twice in training mode: keep it as it is "
            "(its dropout is what evaluation mode switches off)",
            "dropout 为 {p} 的给定 TinyBERT 在训练模式下两次给出相同的 logits：请保持它不变（评估模式关闭的正是它的 dropout）",
            p=from_input(p),
        ),
    )
    _, preds = _pair(sub, model, _loader(sub, f))
    expect(
        preds == f["preds"].tolist(),
        Msg(
            "with dropout {p} the predictions change from run to run: switch the model to "
            "evaluation mode (model.eval()) before predicting",
            "dropout 为 {p} 时每次运行的预测都不同：预测之前要把模型切换到评估模式（model.eval()）",
            p=from_input(p),
        ),
    )
    for _ in range(3):  # three runs: with dropout on, one of them would match only by chance
        model.train()
        accuracy = sub.evaluate(model, _loader(sub, f))
        expect(
            abs(accuracy - float(f["accuracy"])) < 1e-9,
            Msg(
                "evaluate must switch the model to evaluation mode: "
                "with dropout on, the accuracy changes from run to run",
                "evaluate 必须把模型切换到评估模式：开着 dropout 时每次运行的准确率都不同",
            ),
        )


@check(points=2, listings=["1.40"], title="listing 1.40: the classification report", title_zh="代码清单 1.40：分类报告")
def test_listing_1_40_report(sub):
    f = fx()
    labels, preds = f["t_labels"].tolist(), f["preds"].tolist()
    _expect_report(
        sub.report(labels, preds),
        labels,
        preds,
        Msg("the report of the model's 200 predictions", "模型 200 个预测的报告"),
    )
    # a class that never occurs: its row must still be there, its precision 0 / 0 read as 0 (zero_division=0)
    try:
        text = sub.report([1, 1, 1], [1, 1, 1])
    except StudentError as e:
        expect(e.kind != "not_implemented", Msg.of(e))
        raise CheckFailure(
            Msg(
                "report([1, 1, 1], [1, 1, 1]) (only Positive occurs) failed: {e}. Pass `labels=[0, 1]` so "
                "that both classes have a row",
                "report([1, 1, 1], [1, 1, 1])（只出现 Positive）失败了：{e}。传入 `labels=[0, 1]`，让两个类别都有一行",
                e=e,
            ),
            mistake=Msg(
                "labels=[0, 1] left out: the report fails when only one class occurs",
                "漏掉了 labels=[0, 1]：只出现一个类别时报告会失败",
            ),
        )
    _expect_report(text, [1, 1, 1], [1, 1, 1], Msg("the report when only Positive occurs", "只出现 Positive 时的报告"))


@check(points=2, listings=["1.40"], title="the report of your own predictions", title_zh="你自己的预测结果的报告")
def test_report_from_student_predictions(sub):
    f = fx()
    labels, preds = _pair(sub, _model(sub, f), _loader(sub, f))
    text = sub.report(labels, preds)
    _expect_report(
        text, f["t_labels"].tolist(), preds, Msg("the report of your collected predictions", "你收集到的预测结果的报告")
    )
    expect(
        text == _sk_report(f["t_labels"].tolist(), f["preds"].tolist()),
        Msg(
            "the report of your predictions is not the report of the model's predictions",
            "你的预测结果的报告不是模型预测结果的报告",
        ),
    )


@check(points=2, listings=["1.40"], title="the report the book prints", title_zh="书中打印的报告")
def test_book_report(sub):
    labels = [0] * 12500 + [1] * 12500
    preds = [0] * BOOK_TN + [1] * (12500 - BOOK_TN) + [0] * (12500 - BOOK_TP) + [1] * BOOK_TP
    text = sub.report(labels, preds)
    _expect_report(
        text,
        labels,
        preds,
        Msg(
            "the report of {book_tn} true negatives and {book_tp} true positives",
            "{book_tn} 个真负例和 {book_tp} 个真正例的报告",
            book_tn=BOOK_TN,
            book_tp=BOOK_TP,
        ),
    )
    expect(
        text == BOOK_REPORT,
        Msg("these counts give exactly the report listing 1.40 prints", "这些计数恰好给出代码清单 1.40 打印的报告"),
    )
    expect_equal(
        (BOOK_TN + BOOK_TP) / 25000,
        0.8074,
        what=Msg(
            "the accuracy of these counts (listing 1.39 prints 0.8074)",
            "这些计数对应的准确率（代码清单 1.39 打印的是 0.8074）",
        ),
    )


@check(points=1, hidden=True, title="the report when only one class occurs", title_zh="只出现一个类别时的报告")
def test_report_with_one_class(sub):
    labels = [0, 1, 1, 0, 1, 1, 0, 1]
    for preds, what in (
        ([1] * 8, Msg("a model that always says {name}", "一个总是判为 {name} 的模型", name=from_input(NAMES[1]))),
        (labels, Msg("a perfect model", "一个完美的模型")),
    ):
        try:
            text = sub.report(labels, preds)
        except StudentError as e:
            expect(e.kind != "not_implemented", Msg.of(e))
            expect(
                False,
                Msg(
                    "report failed for {what}: {e}. Pass `labels=[0, 1]` so that both classes have a row",
                    "对{what} report 失败了：{e}。传入 `labels=[0, 1]`，让两个类别都有一行",
                    what=what,
                    e=e,
                ),
            )
        _expect_report(text, labels, preds, Msg("the report of {what}", "{what}的报告", what=what))
    try:
        text = sub.report([1, 1, 1], [1, 1, 1])
    except StudentError as e:
        expect(
            False,
            Msg(
                "report failed when only {name} occurs: {e}. Pass `labels=[0, 1]` so that both classes have a row",
                "只出现 {name} 时 report 失败了：{e}。传入 `labels=[0, 1]`，让两个类别都有一行",
                e=e,
                name=from_input(NAMES[1]),
            ),
        )
    _expect_report(text, [1, 1, 1], [1, 1, 1], Msg("the report when only Positive occurs", "只出现 Positive 时的报告"))


@check(points=1, listings=["1.40"], title="the confusion matrix", title_zh="混淆矩阵")
def test_confusion_matrix(sub):
    f = fx()
    labels, preds = f["t_labels"].tolist(), f["preds"].tolist()
    got = sub.confusion(labels, preds)
    if isinstance(got, torch.Tensor):
        got = got.tolist()
    expect(
        isinstance(got, list),
        Msg(
            "confusion must return a list of lists of ints, got {type_got} (a numpy array: call .tolist())",
            "confusion 必须返回整数列表的列表，实际返回了 {type_got}（numpy 数组请调用 .tolist()）",
            type_got=from_input(type(got).__name__),
        ),
    )
    expected = confusion_matrix(labels, preds, labels=[0, 1]).tolist()
    if got == confusion_matrix(preds, labels, labels=[0, 1]).tolist():
        expect(
            False,
            Msg(
                "the matrix is transposed: rows are the true classes, columns the predicted ones "
                "(confusion_matrix(y_true, y_pred))",
                "矩阵转置了：行是真实类别，列是预测类别（confusion_matrix(y_true, y_pred)）",
            ),
        )
    expect_equal(
        got,
        expected,
        what=Msg(
            "the confusion matrix [[TN, FP], [FN, TP]] of the model's 200 predictions",
            "模型 200 个预测的混淆矩阵 [[TN, FP], [FN, TP]]",
        ),
    )
    expect_equal(
        sub.confusion([1, 1], [1, 1]),
        [[0, 0], [0, 2]],
        what=Msg("the confusion matrix when only Positive occurs", "只出现 Positive 时的混淆矩阵"),
    )
