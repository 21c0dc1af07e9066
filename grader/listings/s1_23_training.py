"""§1.23 listings 1.37-1.38 and the training-time note, run with the student's training code."""

from grader.checks.test_s1_23_training import synthetic_task
from grader.listings import listing

N, EPOCHS, BATCH = 640, 10, 32


@listing(
    "1.37",
    book="""(the listing prints nothing: it creates criterion = nn.CrossEntropyLoss() and
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4))""",
)
def listing_1_37(sub, show):
    """Create the loss and the optimizer."""
    model = sub.new("TinyBERT")
    criterion = sub.make_criterion()
    optimizer = sub.make_optimizer(model)
    group = optimizer.attr("param_groups")[0]
    show("criterion:", criterion.type_name)
    show(
        "optimizer:",
        optimizer.type_name,
        f"(lr={group['lr']:g}, weight_decay={group['weight_decay']:g}),",
        sum(p.numel() for p in group["params"]),
        "parameter values of TinyBERT",
    )


@listing(
    "1.38",
    book="""Epoch 1 | Train Loss: 1078.51
Epoch 2 | Train Loss: 1040.23
Epoch 3 | Train Loss: 1009.87
...
Epoch 50 | Train Loss: 512.34
...
Epoch 98 | Train Loss: 289.45
Epoch 99 | Train Loss: 287.12
Epoch 100 | Train Loss: 285.67""",
    errata=["E-1.23-m", "E-1.23-n"],
)
def listing_1_38(sub, show):
    """Train TinyBERT on 640 synthetic sequences (the IMDb run of the book takes hours on a GPU)."""
    ids, mask, labels = synthetic_task(N, seed=11)
    batches = -(-len(ids) // BATCH)
    sub.seed(11)
    model = sub.new("TinyBERT")
    loader = sub.make_loader(ids, mask, labels, batch_size=BATCH, shuffle=True, seed=11)
    losses = sub.train(model, loader, sub.make_optimizer(model, lr=3e-3), sub.make_criterion(), EPOCHS)
    show(f"Synthetic corpus: {N} sequences, {batches} batches of {BATCH}, AdamW lr = 0.003, {EPOCHS} epochs")
    for epoch, loss in enumerate(losses, 1):
        show(f"Epoch {epoch} | Train Loss: {loss:.4f} (mean; the sum the book prints would be {loss * batches:.2f})")


@listing(
    "1.38/updates",
    book="""在批量大小为 16 的 25,000 个样本上训练 100 个 epoch，每个 epoch 大约有 156,250 个参数更新。""",
    errata=["E-1.23-o"],
)
def listing_1_38_updates(sub, show):
    """Count the optimizer steps of the book's training run."""
    show("25,000 examples, batches of 16:")
    show("  updates per epoch:", sub.count_updates(25000, 16, 1), "(1,562 full batches and one of 8)")
    show("  updates in 100 epochs:", sub.count_updates(25000, 16, 100))
    show("  updates in 100 epochs with drop_last=True:", sub.count_updates(25000, 16, 100, drop_last=True))
