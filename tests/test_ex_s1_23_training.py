"""Graded submissions of s1_23_training: training mistakes cannot pass, and a differently written loop can.

Each grading trains TinyBERT twice (a few seconds each), so the wrong answers are graded on the
public checks only, where every one of these mistakes is caught.
"""

from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_23_training"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()
MAX = 18
HIDDEN = 3  # test_train_switches_to_training_mode (1) and test_learns_another_task (2)


def _replace(source, old, new):
    assert old in source, old
    return source.replace(old, new)


def _failed(report):
    return {c["name"]: c["message"] for c in checks_of(report, EX) if c["status"] != "passed"}


def test_no_zero_grad_summed_loss_and_whole_updates(submission):
    wrong = _replace(SOURCE, "    optimizer.zero_grad()\n    loss = loss_fn", "    loss = loss_fn")
    wrong = _replace(wrong, "        means.append(total / batches)", "        means.append(total)")
    wrong = _replace(
        wrong,
        "    per_epoch = n_examples // batch_size if drop_last else -(-n_examples // batch_size)",
        "    per_epoch = n_examples / batch_size",
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert "optimizer.zero_grad()" in failed["test_train_step_follows_sgd"]
    assert "sum of the 4 batch losses" in failed["test_train_returns_epoch_means"]
    assert "last batch of 8 is an update too" in failed["test_count_updates"]
    assert score_of(r, EX) <= MAX - HIDDEN - 7


def test_no_optimizer_step_cannot_learn(submission):
    wrong = _replace(SOURCE, "    loss.backward()\n    optimizer.step()\n", "    loss.backward()\n")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert "call optimizer.step()" in failed["test_train_step_follows_sgd"]
    assert "still" in failed["test_overfit_one_batch"]
    # A loop that never steps leaves the parameters as they were: said before any accuracy is measured.
    assert "parameters as they were" in failed["test_learns_synthetic_task"]
    assert "optimizer.step()" in failed["test_learns_synthetic_task"]
    assert score_of(r, EX) <= MAX - HIDDEN - 9


def test_model_that_ignores_its_input_fails_the_accuracy_check(submission):
    # the given model changed to look only at the [CLS] embedding: every sequence gets the same logits
    wrong = _replace(
        SOURCE,
        "        x = self.token(ids) + self.position(torch.arange(ids.shape[1], device=ids.device))",
        "        x = self.token(torch.full_like(ids, CLS_ID)) + self.position(torch.zeros_like(ids))",
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert set(failed) >= {"test_learns_synthetic_task", "test_overfit_one_batch"}
    # the grader's own TinyBERT measures what training achieved: a changed given model is named first
    assert "keep the given TinyBERT as it is" in failed["test_learns_synthetic_task"]


def test_other_correct_answer_scores_full_marks(submission):
    other = _replace(
        SOURCE,
        """    ids, mask, labels = batch
    optimizer.zero_grad()
    loss = loss_fn(model(ids, mask), labels)
    loss.backward()
    optimizer.step()
    return loss.item()""",
        """    logits = model(batch[0], batch[1])
    loss = loss_fn(logits, batch[2])
    loss.backward()
    optimizer.step()
    model.zero_grad(set_to_none=True)  # cleared after the step instead of before: just as good
    return float(loss.detach())""",
    )
    other = _replace(
        other,
        """    means = []
    for epoch in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for batch in loader:
            total += train_step(model, batch, optimizer, loss_fn)
            batches += 1
        means.append(total / batches)
        print(f"Epoch {epoch + 1} | Train Loss: {means[-1]:.4f}")
    return means""",
        """    history = []
    for _ in range(epochs):
        model.train(True)
        losses = [train_step(model, b, optimizer, loss_fn) for b in loader]
        history.append(sum(losses) / len(losses))
    return history""",
    )
    other = _replace(
        other,
        "    return torch.optim.AdamW(model.parameters(), lr=lr)",
        "    return torch.optim.AdamW([p for p in model.parameters()], lr=lr, weight_decay=0.01)",
    )
    other = _replace(other, "    return nn.CrossEntropyLoss()", "    return nn.CrossEntropyLoss(reduction='mean')")
    other = _replace(
        other,
        "    per_epoch = n_examples // batch_size if drop_last else -(-n_examples // batch_size)\n"
        "    return per_epoch * epochs",
        "    return epochs * (math.floor if drop_last else math.ceil)(n_examples / batch_size)",
    )
    r = grade(submission({EX: other}), "-e", EX)
    assert score_of(r, EX) == MAX, _failed(r)
