"""Checks of §1.21, loading pre-trained encoder weights and freezing layers for fine-tuning.

The section prints no numbers and has no listing. What is trainable is observed two ways:
the student's count_trainable, and which parameters one step of the given `sgd_step` changes
(frozen parameters get no gradient, so they must come back bit-for-bit unchanged).
"""
import torch

from grader.checking import check, expect, expect_equal, expect_tensor, fixtures
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
    expect(isinstance(res, (tuple, list)) and len(res) == 2 and all(isinstance(r, (list, tuple)) for r in res),
           f"{what} must return (missing, unexpected): two lists of key names, got {type(res).__name__}")
    return sorted(res[0]), sorted(res[1])


def _changed(sub, clf, f):
    """Names of the parameters that one SGD step changes."""
    before = clf.state_dict()
    sub.sgd_step(clf, f["tokens"], f["labels"], 0.1)
    after = clf.state_dict()
    return sorted(k for k in before if not torch.equal(before[k], after[k]))


def _block_keys(keys, blocks):
    return [k for k in keys for i in blocks if k.startswith(f"encoder.layers.{i}.")]


def _expect_trainable(sub, clf, f, expected: list[str], count: int, what: str, wrong=()):
    got = sub.count_trainable(clf)
    changed = _changed(sub, clf, f)
    for names, why in wrong:
        if changed == sorted(names) != sorted(expected):
            expect(False, f"{what}: {why}")
    expect_equal(changed, sorted(expected), what=f"{what}: the parameters that one SGD step changes")
    if got != count:
        if got == len(expected):
            expect(False, f"{what}: count_trainable returned {got}, the number of trainable tensors; "
                          "count their elements (numel)")
    expect_equal(got, count, what=f"{what}: count_trainable")


# ----------------------------------------------------------------------------- checks
@check(points=2)
def test_load_matching_checkpoint(sub):
    f = fx()
    pre = _take(f, "pre3")
    clf = _classifier(sub, f)
    missing, unexpected = _pair(sub.load_pretrained(clf, pre), "load_pretrained")
    if missing == sorted(HEAD + [f"encoder.{k}" for k in pre]):
        expect(False, "load_pretrained copied nothing: key k of the checkpoint is the classifier's 'encoder.' + k")
    expect_equal(missing, sorted(HEAD), what="missing keys after loading a 3-layer encoder into a 3-layer classifier")
    expect_equal(unexpected, [], what="unexpected keys after loading a 3-layer encoder into a 3-layer classifier")
    state = clf.state_dict()
    for k, v in pre.items():
        expect_tensor(state[f"encoder.{k}"], v, tol="exact", what=f"encoder.{k} after load_pretrained")
    for k in HEAD:
        expect_tensor(state[k], f[f"base/{k}"], tol="exact", what=f"{k} (not in the checkpoint: must not change)")
    expect_tensor(clf(f["tokens"]), f["logits_pre3"], tol="encoder", what="the classifier's logits after loading")


@check(points=2, hidden=True)
def test_load_other_depths(sub):
    f = fx()
    pre4 = _take(f, "pre4")
    clf = _classifier(sub, f)
    sub.freeze_encoder(clf)
    missing, unexpected = _pair(sub.load_pretrained(clf, pre4), "load_pretrained")
    expect_equal(missing, sorted(HEAD), what="missing keys after loading a 4-layer encoder into a 3-layer classifier")
    expect_equal(unexpected, sorted(k for k in pre4 if k.startswith("layers.3.")),
                 what="unexpected keys (as named in the checkpoint) after loading a 4-layer encoder into 3 layers")
    expect_tensor(clf(f["tokens"]), f["logits_pre4"], tol="encoder", what="logits after loading a 4-layer encoder")
    expect_equal(sub.count_trainable(clf), int(f["counts"][1]),
                 what="count_trainable of a frozen classifier after load_pretrained (copy in place: flags stay)")

    pre2 = _take(f, "pre2")
    clf = _classifier(sub, f)
    missing, unexpected = _pair(sub.load_pretrained(clf, pre2), "load_pretrained")
    keys = list(_take(f, "base"))
    expect_equal(missing, sorted(HEAD + _block_keys(keys, [2])),
                 what="missing keys after loading a 2-layer encoder into a 3-layer classifier")
    expect_equal(unexpected, [], what="unexpected keys after loading a 2-layer encoder into 3 layers")
    expect_tensor(clf(f["tokens"]), f["logits_pre2"], tol="encoder", what="logits after loading a 2-layer encoder")


@check(points=1, hidden=True)
def test_load_shape_mismatch(sub):
    f = fx()
    clf = _classifier(sub, f)
    try:
        sub.load_pretrained(clf, _take(f, "bad"))
    except StudentError as e:
        expect(e.kind != "not_implemented", str(e))
        expect(e.type in ("ValueError", "RuntimeError"),
               f"a checkpoint with another vocabulary size must raise ValueError or RuntimeError, not {e.type or e}")
        expect("tok.weight" in str(e), "the error must name the key whose shape differs (tok.weight)")
        return
    expect(False, "loading tok.weight of shape (50, 16) into an embedding of shape (40, 16) must raise an error")


@check(points=2)
def test_freeze_encoder(sub):
    f = fx()
    clf = _classifier(sub, f)
    keys = list(_take(f, "base"))
    sub.freeze_encoder(clf)
    _expect_trainable(sub, clf, f, HEAD, int(f["counts"][1]), "after freeze_encoder",
                      wrong=[([], "nothing is trainable any more: the head must stay trainable"),
                             (keys, "nothing was frozen: set requires_grad to False on model.encoder's parameters")])


@check(points=2)
def test_unfreeze_top(sub):
    f = fx()
    keys = list(_take(f, "base"))
    n_layers = CFG["n_layers"]
    for n in (0, 1, 2, 3):
        clf = _classifier(sub, f)
        sub.freeze_encoder(clf)
        sub.unfreeze_top(clf, n)
        top = list(range(n_layers - n, n_layers))
        wrong = [(HEAD + _block_keys(keys, range(n)), "the first n blocks were unfrozen; the top ones are the last "
                                                      "n, nearest the head")]
        if n == 0:
            wrong.append((HEAD + _block_keys(keys, range(n_layers)),
                          "n = 0 unfroze every block: layers[-0:] is the whole list, use layers[len(layers) - n:]"))
        _expect_trainable(sub, clf, f, HEAD + _block_keys(keys, top), int(f["counts"][2 + n]),
                          f"after freeze_encoder and unfreeze_top(model, {n})", wrong=wrong)


@check(points=1, hidden=True)
def test_unfreeze_top_from_trainable(sub):
    f = fx()
    keys = list(_take(f, "base"))
    clf = _classifier(sub, f)
    sub.unfreeze_top(clf, 2)  # on a fresh model: everything below the top 2 blocks must be frozen
    _expect_trainable(sub, clf, f, HEAD + _block_keys(keys, [1, 2]), int(f["counts"][4]),
                      "unfreeze_top(model, 2) on a fully trainable model",
                      wrong=[(keys, "unfreeze_top must also freeze the embeddings and the lower blocks")])
    for n in (4, -1):
        try:
            sub.unfreeze_top(clf, n)
        except StudentError as e:
            expect(e.kind != "not_implemented", str(e))
            expect(e.type == "ValueError", f"unfreeze_top(model, {n}) with 3 blocks must raise ValueError, not {e.type}")
            continue
        expect(False, f"unfreeze_top(model, {n}) with 3 blocks must raise ValueError")


@check(points=1, hidden=True)
def test_count_trainable(sub):
    f = fx()
    base = _take(f, "base")
    clf = _classifier(sub, f)
    got = sub.count_trainable(clf)
    if got == len(base):
        expect(False, "count_trainable returned the number of parameter tensors; count their elements (numel)")
    expect_equal(got, sum(v.numel() for v in base.values()), what="count_trainable of a fresh classifier")
    expect_equal(got, int(f["counts"][0]), what="count_trainable of a fresh classifier")
    sub.freeze_encoder(clf)
    expect_equal(sub.count_trainable(clf), CFG["dim"] * CFG["n_classes"] + CFG["n_classes"],
                 what="count_trainable with only the head trainable")
