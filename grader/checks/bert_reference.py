"""The §1.23 model (listings 1.30–1.36) written out as plain functions, for the checks.

Trusted helper of the s1_23_* model checks (not a check module itself): expected values for
given weights, the common wrong answers (named in failure messages), random weights with the
book's parameter names, and the printed form of a module living in the worker.

Weights are state dicts with the names of the book's code: `token.weight`, `position.weight`,
`segment.weight`, `norm.*` (BERTEmbedding); `qkv.*`, `out.*` (MultiHeadSelfAttention);
`net.0.*`, `net.3.*` (FeedForward); `attn.*`, `ff.*`, `norm1.*`, `norm2.*` (TransformerBlock);
`embed.*`, `layers.<i>.*` (BERTEncoder); `bert.*`, `classifier.1.*` (BERTForClassification).
Masks are (B, T) int64: 1 for a real token, 0 for padding (listing 1.27).
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from grader.course.messages import Msg, from_input

NEG = -1e9  # what listing 1.31 writes into the scores of padding keys


def part(sd: dict, prefix: str) -> dict:
    """The entries of `sd` under `prefix` ("bert.embed."), with the prefix removed."""
    return {k[len(prefix) :]: v for k, v in sd.items() if k.startswith(prefix)}


# ----------------------------------------------------------------------------- names and shapes
def embedding_shapes(vocab_size, dim, max_len):
    return {
        "token.weight": (vocab_size, dim),
        "position.weight": (max_len, dim),
        "segment.weight": (2, dim),
        "norm.weight": (dim,),
        "norm.bias": (dim,),
    }


def attention_shapes(dim):
    return {"qkv.weight": (3 * dim, dim), "qkv.bias": (3 * dim,), "out.weight": (dim, dim), "out.bias": (dim,)}


def feed_forward_shapes(dim, hidden):
    return {"net.0.weight": (hidden, dim), "net.0.bias": (hidden,), "net.3.weight": (dim, hidden), "net.3.bias": (dim,)}


def block_shapes(dim, ff_dim):
    out = {f"attn.{k}": v for k, v in attention_shapes(dim).items()}
    out.update({f"ff.{k}": v for k, v in feed_forward_shapes(dim, ff_dim).items()})
    out.update({"norm1.weight": (dim,), "norm1.bias": (dim,), "norm2.weight": (dim,), "norm2.bias": (dim,)})
    return out


def encoder_shapes(vocab_size, dim, max_len, layers, ff_dim):
    out = {f"embed.{k}": v for k, v in embedding_shapes(vocab_size, dim, max_len).items()}
    for i in range(layers):
        out.update({f"layers.{i}.{k}": v for k, v in block_shapes(dim, ff_dim).items()})
    return out


def classifier_shapes(vocab_size, dim, max_len, layers, ff_dim):
    out = {f"bert.{k}": v for k, v in encoder_shapes(vocab_size, dim, max_len, layers, ff_dim).items()}
    out.update({"classifier.1.weight": (2, dim), "classifier.1.bias": (2,)})
    return out


def random_state(shapes: dict, seed: int) -> dict[str, torch.Tensor]:
    """Weights for `shapes` that keep every path of the model visible: linear weights of scale
    1/sqrt(fan_in) (moderate attention, neither uniform nor one-hot), small biases, layer-norm
    gains near 1 with small offsets (so that norm1 and norm2 differ), unit-variance embeddings."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape in shapes.items():
        w = torch.randn(*shape, generator=g)
        leaf = name.rsplit(".", 2)
        is_norm = any(p.startswith("norm") for p in leaf[:-1])
        if is_norm and name.endswith("weight"):
            w = 1.0 + 0.2 * w
        elif name.endswith("bias"):
            w = 0.2 * w
        elif len(shape) == 2 and not any(p in name for p in ("token.", "position.", "segment.")):
            w = w / math.sqrt(shape[1])
        out[name] = w
    return out


# ----------------------------------------------------------------------------- the pieces
def embedding(ids, sd, position=True, segment=True, norm=True, position_from_ids=False, eps=1e-5):
    """Listing 1.30 in eval mode: LayerNorm(token + position + segment A)."""
    T = ids.shape[1]
    x = sd["token.weight"][ids]
    if position:
        x = x + (sd["position.weight"][ids] if position_from_ids else sd["position.weight"][:T])
    if segment:
        x = x + sd["segment.weight"][0]
    if norm:
        x = F.layer_norm(x, x.shape[-1:], sd["norm.weight"], sd["norm.bias"], eps)
    return x


def attention(x, mask, sd, heads, mask_mode="keys", fill=NEG, scale="head", split=True, merge=True, out=True):
    """Listing 1.31 in eval mode. mask_mode: "keys" (right), "queries", "both", "inverted", "none"."""
    B, T, C = x.shape
    d = C // heads
    q, k, v = F.linear(x, sd["qkv.weight"], sd["qkv.bias"]).chunk(3, dim=-1)

    def heads_of(t):
        return t.view(B, T, heads, d).transpose(1, 2) if split else t.reshape(B, heads, T, d)

    q, k, v = heads_of(q), heads_of(k), heads_of(v)
    div = {"head": math.sqrt(d), "dim": math.sqrt(C), "none": 1.0}[scale]
    scores = (q @ k.transpose(-2, -1)) / div
    pad = mask == 0
    hide = {
        "keys": pad[:, None, None, :],
        "queries": pad[:, None, :, None],
        "both": pad[:, None, None, :] | pad[:, None, :, None],
        "inverted": ~pad[:, None, None, :],
        "none": torch.zeros_like(pad)[:, None, None, :],
    }[mask_mode]
    scores = scores.masked_fill(hide, fill)
    ctx = torch.softmax(scores, dim=-1) @ v
    ctx = ctx.transpose(1, 2).reshape(B, T, C) if merge else ctx.reshape(B, T, C)
    return F.linear(ctx, sd["out.weight"], sd["out.bias"]) if out else ctx


def feed_forward(x, sd, act="gelu"):
    """Listing 1.32 in eval mode: Linear, GELU (exact), Linear."""
    f = {"gelu": F.gelu, "tanh": lambda h: F.gelu(h, approximate="tanh"), "relu": torch.relu, "none": lambda h: h}[act]
    return F.linear(f(F.linear(x, sd["net.0.weight"], sd["net.0.bias"])), sd["net.3.weight"], sd["net.3.bias"])


def _norm(x, sd, name):
    return F.layer_norm(x, x.shape[-1:], sd[f"{name}.weight"], sd[f"{name}.bias"], 1e-5)


def block(x, mask, sd, heads, order="pre", mask_mode="keys"):
    """Listing 1.33 in eval mode. order: "pre" (right: x + attn(norm1(x)), x + ff(norm2(x))),
    "post", "no_residual", "no_attn_residual", "no_ff_residual", "norm1_twice",
    "residual_from_normed" (x is replaced by norm(x) before the residual is added)."""
    attn = lambda h: attention(h, mask, part(sd, "attn."), heads, mask_mode=mask_mode)  # noqa: E731
    ff = lambda h: feed_forward(h, part(sd, "ff."))  # noqa: E731
    if order == "pre":
        x = x + attn(_norm(x, sd, "norm1"))
        return x + ff(_norm(x, sd, "norm2"))
    if order == "post":
        x = _norm(x + attn(x), sd, "norm1")
        return _norm(x + ff(x), sd, "norm2")
    if order == "no_residual":
        return ff(_norm(attn(_norm(x, sd, "norm1")), sd, "norm2"))
    if order == "no_attn_residual":
        x = attn(_norm(x, sd, "norm1"))
        return x + ff(_norm(x, sd, "norm2"))
    if order == "no_ff_residual":
        x = x + attn(_norm(x, sd, "norm1"))
        return ff(_norm(x, sd, "norm2"))
    if order == "norm1_twice":
        x = x + attn(_norm(x, sd, "norm1"))
        return x + ff(_norm(x, sd, "norm1"))
    if order == "residual_from_normed":
        x = _norm(x, sd, "norm1")
        x = x + attn(x)
        x = _norm(x, sd, "norm2")
        return x + ff(x)
    raise ValueError(order)


def encoder(ids, mask, sd, heads, stack="sequential", **block_kw):
    """Listing 1.34 in eval mode: embed, then every block in order. stack="last_only": each
    block applied to the embeddings and only the last one kept (a loop that never chains);
    "reversed": the blocks from the last to the first."""
    emb = embedding(ids, part(sd, "embed."))
    n = len({k.split(".")[1] for k in sd if k.startswith("layers.")})
    order = range(n - 1, -1, -1) if stack == "reversed" else range(n)
    x = emb
    for i in order:
        x = block(emb if stack == "last_only" else x, mask, part(sd, f"layers.{i}."), heads, **block_kw)
    return x


def pool(out, mask, how="cls"):
    """Sequence summary. "cls" (right: position 0), "mean", "masked_mean", "last", "last_real", "max"."""
    if how == "cls":
        return out[:, 0]
    if how == "mean":
        return out.mean(dim=1)
    if how == "masked_mean":
        m = mask.to(out.dtype).unsqueeze(-1)
        return (out * m).sum(dim=1) / m.sum(dim=1)
    if how == "last":
        return out[:, -1]
    if how == "last_real":
        return out[torch.arange(out.shape[0]), mask.sum(dim=1) - 1]
    if how == "max":
        return out.max(dim=1).values
    raise ValueError(how)


def classify(ids, mask, sd, heads, how="cls", **encoder_kw):
    """Listings 1.35: logits (B, 2) from the pooled encoder output."""
    out = encoder(ids, mask, part(sd, "bert."), heads, **encoder_kw)
    return F.linear(pool(out, mask, how), sd["classifier.1.weight"], sd["classifier.1.bias"])


# ----------------------------------------------------------------------------- §1.23's TinyBERT
def tiny_bert_shapes(vocab_size, dim, max_len, layers, ff_dim):
    """The state_dict names and shapes of the given TinyBERT of s1_23_training, s1_23_evaluation
    and s1_23_inference (token and position embeddings, a LayerNorm, `blocks.<i>.*` as listing
    1.33's block, a linear head `classifier.1.*`)."""
    out = {
        "token.weight": (vocab_size, dim),
        "position.weight": (max_len, dim),
        "norm.weight": (dim,),
        "norm.bias": (dim,),
    }
    for i in range(layers):
        out.update({f"blocks.{i}.{k}": v for k, v in block_shapes(dim, ff_dim).items()})
    out.update({"classifier.1.weight": (2, dim), "classifier.1.bias": (2,)})
    return out


def tiny_bert(ids, mask, sd, heads):
    """The given TinyBERT in eval mode: logits (B, 2) read at position 0 ([CLS])."""
    x = sd["token.weight"][ids] + sd["position.weight"][: ids.shape[1]]
    x = _norm(x, sd, "norm")
    n = len({k.split(".")[1] for k in sd if k.startswith("blocks.")})
    for i in range(n):
        x = block(x, mask, part(sd, f"blocks.{i}."), heads)
    return F.linear(x[:, 0], sd["classifier.1.weight"], sd["classifier.1.bias"])


def state_problem(state, shapes: dict) -> Msg | None:
    """Why `state` (a state_dict read from the worker) does not load strictly into a model of
    `shapes`, or None. Names only the grader's own key names (safe in a hidden check)."""
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        return Msg("its state_dict() is not a dict of tensors", "它的 state_dict() 不是张量的字典")
    for k, shape in shapes.items():
        if k not in state:
            return Msg("its state_dict has no {k}", "它的 state_dict 中没有 {k}", k=k)
        if tuple(state[k].shape) != tuple(shape) or not state[k].is_floating_point():
            return Msg(
                "{k} in its state_dict is not a float tensor of shape {shape}",
                "它的 state_dict 中的 {k} 不是形状为 {shape} 的浮点张量",
                k=k,
                shape=from_input(tuple(shape)),
            )
    extra = len(set(state) - set(shapes))
    if extra:
        return Msg(
            "its state_dict has {extra} entries that the given model does not have",
            "它的 state_dict 中有 {extra} 个给定模型没有的条目",
            extra=from_input(extra),
        )
    return None


def tiny_bert_problem(model, config: dict, ids, mask) -> Msg | None:
    """Why the student's TinyBERT (a handle in the worker) does not compute the given model with
    its own weights, or None. The given TinyBERT lives in the student's file, which can rewrite
    it; checks that judge the student's code through it first hold it to this. Leaves it in eval mode."""
    model.eval()
    logits = model(ids, mask)
    shapes = tiny_bert_shapes(
        config["vocab_size"], config["dim"], config["max_len"], config["layers"], config["ff_dim"]
    )
    state = model.state_dict()
    problem = state_problem(state, shapes)
    if problem is not None:
        return Msg(
            "the given TinyBERT was changed: {problem}; keep it as it is",
            "给定的 TinyBERT 被改动了：{problem}；请保持它不变",
            problem=problem,
        )
    with torch.no_grad():
        expected = tiny_bert(ids, mask, {k: state[k].float() for k in shapes}, config["heads"])
    if not (
        isinstance(logits, torch.Tensor)
        and tuple(logits.shape) == tuple(expected.shape)
        and torch.allclose(logits.float(), expected, atol=1e-4, rtol=1e-4)
    ):
        return Msg(
            "TinyBERT's logits differ from those of the given model with the same weights: keep the given "
            "TinyBERT as it is, and check your TransformerBlock (s1_23_encoder_block, "
            "`kata check s1_23_encoder_block`) first",
            "TinyBERT 的 logits 与相同权重下给定模型的不一样：请保持给定的 TinyBERT 不变，并先检查你的 "
            "TransformerBlock（s1_23_encoder_block，`kata check s1_23_encoder_block`）",
        )
    return None


# ----------------------------------------------------------------------------- batches
def padded_batch(lengths, T, vocab_size, pad_id, cls_id, sep_id, seed):
    """Token ids (B, T) shaped like listing 1.26's: [CLS] words [SEP] then [PAD]s; and the mask.
    `lengths` counts the real tokens of each sequence, [CLS] and [SEP] included."""
    g = torch.Generator().manual_seed(seed)
    words = torch.randint(0, min(pad_id, cls_id, sep_id), (len(lengths), T), generator=g)
    ids = torch.full((len(lengths), T), pad_id, dtype=torch.int64)
    for b, n in enumerate(lengths):
        ids[b, :n] = words[b, :n]
        ids[b, 0] = cls_id
        ids[b, n - 1] = sep_id
    return ids, (ids != pad_id).long()


# ----------------------------------------------------------------------------- printing a remote module
def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


def remote_repr(obj) -> str:
    """What print(module) shows for a module living in the worker, rebuilt from its children and
    extra_repr() (the worker will not run __repr__ for us). Same layout as torch's, including
    ModuleList's "(0-3): 4 x Block(...)" for identical consecutive children."""
    children = [(name, child) for name, child in obj.named_children()]
    child_reprs = [(name, remote_repr(child)) for name, child in children]
    if obj.type_name == "ModuleList":
        if not child_reprs:
            return "ModuleList()"
        groups = []  # [start, end, repr]
        for i, (_, r) in enumerate(child_reprs):
            if groups and groups[-1][2] == r:
                groups[-1][1] = i
            else:
                groups.append([i, i, r])
        lines = []
        for start, end, r in groups:
            text = f"({start}): {r}" if start == end else f"({start}-{end}): {end - start + 1} x {r}"
            lines.append(_addindent(text, 2))
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"
    extra = obj.extra_repr()
    extra_lines = extra.split("\n") if extra else []
    child_lines = [f"({name}): {_addindent(r, 2)}" for name, r in child_reprs]
    lines = extra_lines + child_lines
    text = obj.type_name + "("
    if lines:
        if len(extra_lines) == 1 and not child_lines:
            text += extra_lines[0]
        else:
            text += "\n  " + "\n  ".join(lines) + "\n"
    return text + ")"


def first_difference(actual: str, expected: str) -> Msg | None:
    """None when the texts are equal, else where the first differing line is and both versions."""
    if actual == expected:
        return None
    a, e = actual.split("\n"), expected.split("\n")
    nothing = Msg("'(nothing)'", "（空）")
    for i in range(max(len(a), len(e))):
        got = a[i] if i < len(a) else None
        want = e[i] if i < len(e) else None
        if got != want:
            return Msg(
                "line {line}: expected {want}, got {got}",
                "第 {line} 行：应为 {want}，实际为 {got}",
                line=i + 1,
                want=nothing if want is None else repr(want.strip()),
                got=nothing if got is None else repr(got.strip()),
            )
    return Msg("the texts differ", "两段文本不同")


# ----------------------------------------------------------------------------- what print(model) shows
def _named(name: str, **children) -> nn.Module:
    """A module whose class is called `name`, holding `children` in the given order."""
    module = type(name, (nn.Module,), {})()
    for key, child in children.items():
        setattr(module, key, child)
    return module


def _embedding(rows, dim, padding_idx=None):
    # Given storage, nn.Embedding skips its random init: on the meta device that init would pull
    # in torch._dynamo (seconds of imports) for a module that is only printed.
    return nn.Embedding(rows, dim, padding_idx=padding_idx, _weight=torch.empty(rows, dim, device="meta"))


def mirror_embedding(vocab_size, dim, max_len, pad_id, dropout=0.1):
    """An empty (meta-device) module laid out like listing 1.30's, only for its printed form."""
    with torch.device("meta"):
        return _named(
            "BERTEmbedding",
            token=_embedding(vocab_size, dim, pad_id),
            position=_embedding(max_len, dim),
            segment=_embedding(2, dim),
            norm=nn.LayerNorm(dim),
            dropout=nn.Dropout(dropout),
        )


def mirror_attention(dim, dropout=0.1):
    with torch.device("meta"):
        return _named(
            "MultiHeadSelfAttention",
            qkv=nn.Linear(dim, 3 * dim),
            out=nn.Linear(dim, dim),
            attn_dropout=nn.Dropout(dropout),
            out_dropout=nn.Dropout(dropout),
        )


def mirror_feed_forward(dim, hidden, dropout=0.1):
    with torch.device("meta"):
        net = nn.Sequential(
            nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, dim), nn.Dropout(dropout)
        )
        return _named("FeedForward", net=net)


def mirror_block(dim, ff_dim, dropout=0.1):
    with torch.device("meta"):
        return _named(
            "TransformerBlock",
            attn=mirror_attention(dim, dropout),
            ff=mirror_feed_forward(dim, ff_dim, dropout),
            norm1=nn.LayerNorm(dim),
            norm2=nn.LayerNorm(dim),
        )


def mirror_encoder(vocab_size, dim, max_len, layers, ff_dim, pad_id):
    return _named(
        "BERTEncoder",
        embed=mirror_embedding(vocab_size, dim, max_len, pad_id),
        layers=nn.ModuleList([mirror_block(dim, ff_dim) for _ in range(layers)]),
    )


def mirror_classifier(vocab_size, dim, max_len, layers, ff_dim, pad_id):
    with torch.device("meta"):
        head = nn.Sequential(nn.Dropout(0.1), nn.Linear(dim, 2))
    return _named(
        "BERTForClassification", bert=mirror_encoder(vocab_size, dim, max_len, layers, ff_dim, pad_id), classifier=head
    )


def read_levels(y, levels, tol: float):
    """Which of `levels` (tensors broadcast to y's shape, tried in order) each element of y is,
    within tol: a long tensor of level indices, or None when some element is none of them.
    The dropout checks read train-mode outputs this way under weights that make each possible
    outcome (dropped here, kept there) a value of its own."""
    y = torch.as_tensor(y).double()
    idx = torch.full(y.shape, -1, dtype=torch.long)
    for i, v in enumerate(levels):
        hit = (idx < 0) & ((y - torch.as_tensor(v).double()).abs() <= tol)
        idx[hit] = i
    return None if bool((idx < 0).any()) else idx
