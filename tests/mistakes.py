"""A corpus of realistic wrong answers, one edit of a reference solution each.

Each entry names the exercise, the mistake in a few words, and the edit that makes it: every
`old` text must be in the solution (all its occurrences are replaced by `new`). Most come from
the wrong answers the tests/test_ex_*.py files grade; the rest are slips the book's own listings
invite (`keys.T`, `ids[-tail:]`, a softmax summed over the whole tensor).

tests/test_public_teaching.py grades every entry and holds the rule it serves: a mistake that
costs points must fail at least one public check of its exercise, with a message, so that a
student who runs `kata check` sees it before the hidden checks count it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.conftest import SOLUTIONS


@dataclass(frozen=True)
class Variant:
    exercise: str
    name: str
    edits: tuple[tuple[str, str], ...]

    def source(self) -> str:
        """The reference solution with the edits applied (each must apply)."""
        text = (SOLUTIONS / "ch01" / f"{self.exercise}.py").read_text()
        for old, new in self.edits:
            assert old in text, f"{self.exercise} / {self.name}: {old!r} is not in the solution"
            text = text.replace(old, new)
        return text


def V(exercise: str, name: str, *edits: tuple[str, str]) -> Variant:
    return Variant(exercise, name, tuple(edits))


SOFTMAX_BODY = (
    "    shifted = x - x.amax(dim=dim, keepdim=True)\n    e = torch.exp(shifted)\n"
    "    return e / e.sum(dim=dim, keepdim=True)"
)
TRUNCATE_TAIL = "return list(ids[:self.head_len]) + list(ids[len(ids) - tail:])"
MLM_CHOSEN = "chosen = (torch.rand(input_ids.shape, generator=generator, device=device) < mask_prob) & real"

MISTAKES: list[Variant] = [
    # §1.1 next-token prediction
    V(
        "s1_01_next_token",
        "logits multiplied by the temperature",
        ("torch.softmax(logits / temperature, dim=-1)", "torch.softmax(logits * temperature, dim=-1)"),
        (
            "torch.softmax(logits.to(torch.float64) / temperature, dim=-1)",
            "torch.softmax(logits.to(torch.float64) * temperature, dim=-1)",
        ),
    ),
    V(
        "s1_01_next_token",
        "softmax written without subtracting the maximum",  # issue 36: input classes
        (
            "    return torch.softmax(logits / temperature, dim=-1)",
            "    e = torch.exp(logits / temperature)\n    return e / e.sum(dim=-1, keepdim=True)",
        ),
    ),
    V(
        "s1_01_next_token",
        "temperature 0 divides by 0",
        ("    if temperature == 0:\n        return torch.argmax(logits).repeat(num_samples)\n", ""),
    ),
    V(
        "s1_01_next_token",
        "sampling from the global generator",
        ("generator = torch.Generator().manual_seed(seed) if seed is not None else None", "generator = None"),
    ),
    V(
        "s1_01_next_token",
        "bigram counts with rows and columns swapped",
        ("(ids[:-1], ids[1:])", "(ids[1:], ids[:-1])"),
    ),
    V(
        "s1_01_next_token",
        "top-k of the logits, not probabilities",
        ("probs = torch.softmax(logits, dim=-1)\n    values", "probs = logits\n    values"),
    ),
    V(
        "s1_01_next_token",
        "greedy predicts from the prompt only",
        ("out.append(int(torch.argmax(model(out))))", "out.append(int(torch.argmax(model(list(ids)))))"),
    ),
    # §1.2 anatomy
    V("s1_02_anatomy", "blocks numbered from 0", ("for i in range(1, n_layers + 1):", "for i in range(n_layers):")),
    V(
        "s1_02_anatomy",
        "probabilities for every position",
        (
            'shapes["next_token_probs"] = (batch, vocab_size)',
            'shapes["next_token_probs"] = (batch, seq_len, vocab_size)',
        ),
    ),
    V(
        "s1_02_anatomy",
        "output from the first position",
        ("logits = hidden[:, -1, :] @ W_out", "logits = hidden[:, 0, :] @ W_out"),
    ),
    # §1.3 tokenizers
    V(
        "s1_03_tokenizers",
        "decode keeps spaces before punctuation",
        ('        return re.sub(r" ([,.!?;:])", r"\\1", text)', "        return text"),
    ),
    V(
        "s1_03_tokenizers",
        "unknown word raises instead of <unk>",
        (
            "return [self.stoi.get(tok, 0) for tok in split_words(text)]",
            "return [self.stoi[tok] for tok in split_words(text)]",
        ),
    ),
    V(
        "s1_03_tokenizers",
        "character vocabulary in order of appearance",
        ("self.vocab = [UNK] + sorted(set(text))", "self.vocab = [UNK] + list(dict.fromkeys(text))"),
    ),
    V("s1_03_tokenizers", "bytes counted as characters", ('"bytes": len(text.encode("utf-8"))', '"bytes": len(text)')),
    # §1.4 BPE training
    V(
        "s1_04_bpe_train",
        "ties broken by corpus order",
        ("    return min(pairs, key=lambda pair: (-pairs[pair], pair))", "    return max(pairs, key=pairs.get)"),
    ),
    V(
        "s1_04_bpe_train",
        "pair counts not weighted by word frequency",
        ("            pairs[pair] += count", "            pairs[pair] += 1"),
    ),
    V(
        "s1_04_bpe_train",
        "end-of-word marker glued to the last character",
        (
            '    return {" ".join([*word, END_OF_WORD]): count for word, count in word_counts.items()}',
            '    return {" ".join(word) + END_OF_WORD: count for word, count in word_counts.items()}',
        ),
    ),
    # §1.4 byte-level BPE
    V(
        "s1_04_byte_bpe",
        "vocabulary size hard-coded for GPT-2",
        ("        return len(self.ranks) + 1\n", "        return 50257\n"),
    ),
    V(
        "s1_04_byte_bpe",
        "strict UTF-8 decode",
        ('.decode("utf-8", errors="replace")\n        # END SOLUTION', '.decode("utf-8")\n        # END SOLUTION'),
    ),
    # §1.5 embeddings
    V("s1_05_embeddings", "integer one-hot vectors", (".to(torch.float32)\n", ".long()\n")),
    V(
        "s1_05_embeddings",
        "cosine similarity without dividing by the lengths",
        (
            "    unit = vectors / vectors.norm(dim=-1, keepdim=True)\n    return unit @ unit.transpose(-2, -1)",
            "    return vectors @ vectors.T",
        ),
    ),
    V(
        "s1_05_embeddings",
        "one-hot ids counted from 1",
        (
            "(token_ids.unsqueeze(-1) == torch.arange(vocab_size))",
            "(token_ids.unsqueeze(-1) - 1 == torch.arange(vocab_size))",
        ),
    ),
    # §1.5 positions
    V(
        "s1_05_positions",
        "sin and cos swapped",
        (
            "    pe[:, 0::2] = torch.sin(angles)\n    pe[:, 1::2] = torch.cos(angles)",
            "    pe[:, 0::2] = torch.cos(angles)\n    pe[:, 1::2] = torch.sin(angles)",
        ),
    ),
    V("s1_05_positions", "bits in reverse order", ("torch.arange(n_bits - 1, -1, -1)", "torch.arange(n_bits)")),
    V(
        "s1_05_positions",
        "base 1000 instead of 10000",
        ("angles = pos / 10000 ** (two_i / d_model)", "angles = pos / 1000 ** (two_i / d_model)"),
    ),
    V(
        "s1_05_positions",
        "positions counted from 1",
        ("torch.arange(seq_len, dtype=torch.float32)", "torch.arange(1, seq_len + 1, dtype=torch.float32)"),
    ),
    # §1.7 additive attention
    V(
        "s1_07_additive_attention",
        "tanh missing",
        ("return torch.tanh(projected_s + projected_h) @ v", "return (projected_s + projected_h) @ v"),
    ),
    V(
        "s1_07_additive_attention",
        "context from the scores, not the weights",
        (
            "    weights = torch.softmax(additive_scores(decoder_state, encoder_states, W_s, W_h, v), dim=-1)\n"
            "    context = (weights.unsqueeze(-1) * encoder_states).sum(dim=-2)",
            "    scores = additive_scores(decoder_state, encoder_states, W_s, W_h, v)\n"
            "    weights = torch.softmax(scores, dim=-1)\n"
            "    context = (scores.unsqueeze(-1) * encoder_states).sum(dim=-2)",
        ),
    ),
    V(
        "s1_07_additive_attention",
        "attention matrix shape transposed",
        ("return (len(query_tokens), len(keys))", "return (len(keys), len(query_tokens))"),
    ),
    V(
        "s1_07_additive_attention",
        "softmax over dim 0: the batch, once there is one",  # issue 28: once hidden-only
        (
            "    weights = torch.softmax(additive_scores(decoder_state, encoder_states, W_s, W_h, v), dim=-1)\n",
            "    weights = torch.softmax(additive_scores(decoder_state, encoder_states, W_s, W_h, v), dim=0)\n",
        ),
    ),
    # §1.9 input embeddings
    V(
        "s1_09_input_embeddings",
        "positions not added",
        ("    return token_table[token_ids] + position_table[:seq_len]", "    return token_table[token_ids]"),
    ),
    V(
        "s1_09_input_embeddings",
        "positions looked up by token id",
        (
            "    return token_table[token_ids] + position_table[:seq_len]",
            "    return token_table[token_ids] + position_table[token_ids % position_table.shape[0]]",
        ),
    ),
    V(
        "s1_09_input_embeddings",
        "seq_len = len(token_ids), the batch size with a batch",
        ("    seq_len = token_ids.shape[-1]\n", "    seq_len = len(token_ids)\n"),
    ),
    # §1.10 queries, keys, values
    V(
        "s1_10_qkv",
        "matrices drawn in another order",
        (
            "    W_query = torch.randn(d_in, d_out)\n    W_key = torch.randn(d_in, d_out)\n",
            "    W_key = torch.randn(d_in, d_out)\n    W_query = torch.randn(d_in, d_out)\n",
        ),
    ),
    V(
        "s1_10_qkv",
        "keys projected with W_query",
        (
            "    return inputs @ W_query, inputs @ W_key, inputs @ W_value",
            "    return inputs @ W_query, inputs @ W_query, inputs @ W_value",
        ),
    ),
    # §1.11 matrix multiplication, scores, softmax
    V(
        "s1_11_matmul",
        "the @ operator",
        ("            out[i, j] = (A[i, :] * B[:, j]).sum()", "            out[i, j] = A[i, :] @ B[:, j]"),
    ),
    V(
        "s1_11_matmul",
        "row times row",
        ("            out[i, j] = (A[i, :] * B[:, j]).sum()", "            out[i, j] = (A[i, :] * B[j, :]).sum()"),
    ),
    V(
        "s1_11_matmul",
        "mismatched shapes not refused",  # issue 28: once caught by a hidden check only
        (
            '        raise ValueError(f"cannot multiply',
            '        return None\n        raise ValueError(f"cannot multiply',
        ),
    ),
    V(
        "s1_11_attention_scores",
        "keys times queries",
        ("    return queries @ keys.transpose(-2, -1)", "    return keys @ queries.transpose(-2, -1)"),
    ),
    V(
        "s1_11_attention_scores",
        "keys.T (the book's listing 1.5)",
        ("    return queries @ keys.transpose(-2, -1)", "    return queries @ keys.T"),
    ),
    V(
        "s1_11_softmax",
        "softmax over dim 0 whatever dim says",
        (SOFTMAX_BODY, SOFTMAX_BODY.replace("dim=dim", "dim=0")),
    ),
    V(
        "s1_11_softmax",
        "summed over the whole tensor",
        ("    return e / e.sum(dim=dim, keepdim=True)", "    return e / e.sum()"),
    ),
    V(
        "s1_11_softmax",
        "maximum not subtracted",
        ("    shifted = x - x.amax(dim=dim, keepdim=True)\n", "    shifted = x\n"),
    ),
    V(
        "s1_11_softmax",
        "maximum of the whole tensor, not along dim",  # issue 36: passed every check
        ("    shifted = x - x.amax(dim=dim, keepdim=True)\n", "    shifted = x - x.max()\n"),
    ),
    V(
        "s1_11_softmax",
        "minimum subtracted, not the maximum",  # issue 36: a -inf entry was in hidden checks only
        ("    shifted = x - x.amax(dim=dim, keepdim=True)\n", "    shifted = x - x.amin(dim=dim, keepdim=True)\n"),
    ),
    V(
        "s1_23_padding_mask",
        "padded keys filled with -inf, not NEG_INF",  # issue 36: a hidden check only
        (
            "scores = scores.masked_fill(~key_mask(mask), NEG_INF)",
            'scores = scores.masked_fill(~key_mask(mask), float("-inf"))',
        ),
    ),
    # §1.12 scaled weights, context, the module
    V(
        "s1_12_scaled_attention",
        "softmax over the queries",
        (
            "    return torch.softmax(scale_scores(scores, d_k), dim=-1)",
            "    return torch.softmax(scale_scores(scores, d_k), dim=0)",
        ),
    ),
    V(
        "s1_12_scaled_attention",
        "softmax over dim 1 (right only without a batch)",
        (
            "    return torch.softmax(scale_scores(scores, d_k), dim=-1)",
            "    return torch.softmax(scale_scores(scores, d_k), dim=1 if scores.dim() > 1 else 0)",
        ),
    ),
    V(
        "s1_12_scaled_attention",
        "softmax by hand, summed over the whole tensor",
        (
            "    return torch.softmax(scale_scores(scores, d_k), dim=-1)",
            "    e = torch.exp(scale_scores(scores, d_k))\n    return e / e.sum()",
        ),
    ),
    V("s1_12_scaled_attention", "divided by d_k", ("    return scores / d_k**0.5", "    return scores / d_k")),
    V(
        "s1_12_context",
        "weights transposed",
        (
            "    return attn_weights @ values",
            "    return attn_weights.transpose(-2, -1) @ values if attn_weights.dim() > 1 else attn_weights @ values",
        ),
    ),
    V(
        "s1_12_context",
        "divided by the number of tokens",
        ("    return attn_weights @ values", "    return (attn_weights @ values) / values.shape[-2]"),
    ),
    V(
        "s1_12_self_attention",
        "not scaled by sqrt(d_k)",
        ("torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)", "torch.softmax(scores, dim=-1)"),
    ),
    V(
        "s1_12_self_attention",
        "parameters created in another order",
        (
            "        self.W_query = nn.Parameter(torch.randn(d_in, d_out))\n        self.W_key = nn.Parameter(torch.randn(d_in, d_out))\n",
            "        self.W_key = nn.Parameter(torch.randn(d_in, d_out))\n        self.W_query = nn.Parameter(torch.randn(d_in, d_out))\n",
        ),
    ),
    V(
        "s1_12_self_attention",
        "keys.T (the book's listing 1.8)",
        ("scores = queries @ keys.transpose(-2, -1)", "scores = queries @ keys.T"),
    ),
    # §1.13 causal mask
    V(
        "s1_13_causal_mask",
        "masked with 0 instead of -inf",
        ('scores.masked_fill(~mask, float("-inf"))', "scores.masked_fill(~mask, 0.0)"),
    ),
    V(
        "s1_13_causal_mask",
        "upper triangle",
        (
            "torch.tril(torch.ones(seq_len, seq_len, dtype=dtype))",
            "torch.triu(torch.ones(seq_len, seq_len, dtype=dtype))",
        ),
    ),
    V(
        "s1_13_causal_mask",
        "mask after softmax without renormalising",
        (
            "return torch.softmax(mask_future(scaled_scores), dim=-1)",
            "return torch.softmax(scaled_scores, dim=-1) * causal_mask(scaled_scores.shape[-1])",
        ),
    ),
    V(
        "s1_13_causal_mask",
        "diagonal masked too (torch.triu without diagonal=1)",  # issue 36: named nothing
        (
            'return scores.masked_fill(~mask, float("-inf"))',
            'return scores.masked_fill(torch.triu(torch.ones_like(mask)), float("-inf"))',
        ),
    ),
    V(
        "s1_13_causal_mask",
        "causal attention divided by d_k",  # issue 28: once caught by hidden checks only
        ("/ keys.shape[-1] ** 0.5", "/ keys.shape[-1]"),
    ),
    # §1.14 dropout
    V(
        "s1_14_dropout",
        "p = 1 not handled",  # issue 36: p = 1 was in a hidden check only
        ("    if p == 1:\n        return torch.zeros_like(x)\n", ""),
    ),
    V("s1_14_dropout", "survivors not rescaled", ("return x * keep / (1 - p)", "return x * keep")),
    V(
        "s1_14_dropout",
        "kept with probability p",
        ("keep = torch.rand(x.shape, device=x.device) >= p", "keep = torch.rand(x.shape, device=x.device) < p"),
    ),
    V("s1_14_dropout", "survivors multiplied by 1 - p", ("return x * keep / (1 - p)", "return x * keep * (1 - p)")),
    # §1.15 one attention function
    V(
        "s1_15_attention",
        "scores not scaled",
        ("scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5", "scores = q @ k.transpose(-2, -1)"),
    ),
    V(
        "s1_15_attention",
        "padding mask read the wrong way round",
        ("pad = padding_mask.to(torch.bool)", "pad = ~padding_mask.to(torch.bool)"),
    ),
    V(
        "s1_15_attention",
        "NaN for a query that sees no key",
        (
            "        weights = weights.masked_fill(~keep, 0.0)  # rows with every key masked: NaN -> 0\n",
            "        pass\n",
        ),
    ),
    V(
        "s1_15_attention",
        "attention dropout not rescaled",  # issue 28: once caught by hidden checks only
        ("weights = weights * survive / (1 - dropout_p)", "weights = weights * survive"),
    ),
    V("s1_15_attention", "attention dropout left out", ("if training and dropout_p > 0:", "if False:")),
    # §1.16 multi-head attention
    V(
        "s1_16_multihead",
        "heads merged without transposing back",
        (
            "return context.transpose(1, 2).contiguous().view(b, n, h * d)",
            "return context.contiguous().view(b, n, h * d)",
        ),
    ),
    V(
        "s1_16_multihead",
        "view after transpose without contiguous",
        (
            "return context.transpose(1, 2).contiguous().view(b, n, h * d)",
            "return context.transpose(1, 2).view(b, n, h * d)",
        ),
    ),
    V(
        "s1_16_multihead",
        "heads split without transposing",
        (
            "return view_heads(x, num_heads).transpose(1, 2)",
            "b, n, d = x.shape\n    return x.view(b, num_heads, n, d // num_heads)",
        ),
    ),
    V(
        "s1_16_multihead",
        "scores scaled by sqrt(d_out)",
        (
            "_, context = head_attention(q, k, v, causal=self.causal)",
            "scores = q @ k.transpose(-2, -1)\n"
            "        if self.causal:\n"
            "            n = scores.shape[-1]\n"
            "            scores = scores.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float('-inf'))\n"
            "        context = torch.softmax(scores / math.sqrt(self.W_query.out_features), dim=-1) @ v",
        ),
    ),
    # §1.17 layer norm
    V(
        "s1_17_layer_norm",
        "eps left out",  # issue 36: a constant row was in a hidden check only
        ("return (x - mean) / torch.sqrt(var + eps)", "return (x - mean) / torch.sqrt(var)"),
    ),
    V(
        "s1_17_layer_norm",
        "unbiased variance",
        ("var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)", "var = x.var(dim=-1, keepdim=True)"),
    ),
    V(
        "s1_17_layer_norm",
        "eps outside the square root",
        ("return (x - mean) / torch.sqrt(var + eps)", "return (x - mean) / (torch.sqrt(var) + eps)"),
    ),
    V(
        "s1_17_layer_norm",
        "normalised over dim 0",
        (
            "mean = x.mean(dim=-1, keepdim=True)\n    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)",
            "mean = x.mean(dim=0, keepdim=True)\n    var = ((x - mean) ** 2).mean(dim=0, keepdim=True)",
        ),
    ),
    V(
        "s1_17_layer_norm",
        "LayerNorm.forward ignores self.eps",  # issue 28: once caught by hidden checks only
        ("normalize(x, self.eps)", "normalize(x)"),
    ),
    # §1.18 GELU and the feed-forward network
    V(
        "s1_18_feed_forward",
        "ReLU between the layers",
        ("return self.fc2(gelu(self.fc1(x)))", "return self.fc2(torch.relu(self.fc1(x)))"),
    ),
    V(
        "s1_18_feed_forward",
        "tanh approximation for the exact GELU",
        (
            "return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))",
            "return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))",
        ),
    ),
    V(
        "s1_18_feed_forward",
        "erf(x) without the sqrt(2)",
        ("return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))", "return 0.5 * x * (1.0 + torch.erf(x))"),
    ),
    # §1.19 shortcuts
    V(
        "s1_19_shortcuts",
        "shortcut added before the GELU",
        (
            "            y = layer(x)\n            x = x + y if self.use_shortcut and y.shape == x.shape else y",
            "            z = layer[0](x)\n"
            "            x = layer[1](x + z) if self.use_shortcut and z.shape == x.shape else layer[1](z)",
        ),
    ),
    V(
        "s1_19_shortcuts",
        "loss summed",
        (
            "loss = nn.functional.mse_loss(model(x), target)",
            "loss = nn.functional.mse_loss(model(x), target, reduction='sum')",
        ),
    ),
    V("s1_19_shortcuts", "gradients not zeroed", ("    model.zero_grad()\n", "")),
    V(
        "s1_19_shortcuts",
        "use_shortcut inverted",  # issue 28: once named by a hidden check only
        (
            "x = x + y if self.use_shortcut and y.shape == x.shape else y",
            "x = x + y if not self.use_shortcut and y.shape == x.shape else y",
        ),
    ),
    V(
        "s1_19_shortcuts",
        "shortcut broadcast onto a resized layer",
        ("x = x + y if self.use_shortcut and y.shape == x.shape else y", "x = x + y if self.use_shortcut else y"),
    ),
    V(
        "s1_19_shortcuts",
        "layers in a plain list",  # issue 36: shown as a difference of names only
        ("self.layers = nn.ModuleList(\n", "self.layers = list(\n"),
    ),
    # §1.20 the cost of attention
    V(
        "s1_20_scaling",
        "float square root",
        (
            "return math.isqrt(memory_bytes // (batch * heads * bytes_per_element))",
            "return int(math.sqrt(memory_bytes / (batch * heads * bytes_per_element)))",
        ),
    ),
    V(
        "s1_20_scaling",
        "one product's FLOPs",
        (
            "return 4 * batch * heads * seq_len * seq_len * head_dim",
            "return 2 * batch * heads * seq_len * seq_len * head_dim",
        ),
    ),
    V(
        "s1_20_scaling",
        "receptive field grows by k per layer",
        ("return max(1, -(-(seq_len - 1) // (kernel_size - 1)))", "return -(-seq_len // kernel_size)"),
    ),
    # §1.21 transfer learning
    V(
        "s1_21_transfer",
        "layers[-n:] with n = 0",
        ("for block in layers[len(layers) - n:]:", "for block in layers[-n:]:"),
    ),
    V(
        "s1_21_transfer",
        "tensors counted instead of numbers",
        (
            "return sum(p.numel() for p in model.parameters() if p.requires_grad)",
            "return sum(1 for p in model.parameters() if p.requires_grad)",
        ),
    ),
    V(
        "s1_21_transfer",
        "the whole model frozen",
        (
            "    model.encoder.requires_grad_(False)\n    model.head.requires_grad_(True)",
            "    model.requires_grad_(False)",
        ),
    ),
    V("s1_21_transfer", "checkpoint keys without the encoder prefix", ('name = "encoder." + key', "name = key")),
    V(
        "s1_21_transfer",
        "unfrozen without freezing first",
        ("    freeze_encoder(model)\n    for block", "    for block"),
    ),
    # §1.23 the tokenizer
    V(
        "s1_23_encoder",
        "blocks in a plain list",  # issue 36: shown as a difference of printed layouts only
        (
            "self.layers = nn.ModuleList([TransformerBlock(dim, heads, ff_dim) for _ in range(layers)])",
            "self.layers = [TransformerBlock(dim, heads, ff_dim) for _ in range(layers)]",
        ),
    ),
    V(
        "s1_23_tokenizer",
        "ids[-tail:] with tail = 0",
        (TRUNCATE_TAIL, "return list(ids[:self.head_len]) + list(ids[-tail:])"),
    ),
    V(
        "s1_23_tokenizer",
        "head and tail lengths swapped",
        (TRUNCATE_TAIL, "return list(ids[:tail]) + (list(ids[len(ids) - self.head_len:]) if self.head_len else [])"),
    ),
    V(
        "s1_23_tokenizer",
        "cut after [SEP] was added",
        (
            "        ids = [self.cls_id] + self.truncate(self.text_ids(text)) + [self.sep_id]\n",
            "        ids = ([self.cls_id] + self.text_ids(text) + [self.sep_id])[:self.max_len]\n",
        ),
    ),
    V(
        "s1_23_tokenizer",
        "tiktoken's encode instead of encode_ordinary",
        ("return self.base.encode_ordinary(text)", "return self.base.encode(text)"),
    ),
    V(
        "s1_23_tokenizer",
        "special ids typed in as GPT-2's numbers",
        (
            "        self.pad_id = self.base_vocab_size\n        self.cls_id = self.base_vocab_size + 1\n"
            "        self.sep_id = self.base_vocab_size + 2\n",
            "        self.pad_id = 50257\n        self.cls_id = 50258\n        self.sep_id = 50259\n",
        ),
    ),
    # §1.23 the dataset (issue 28: its docstring's validations were read by hidden checks only)
    V(
        "s1_23_dataset",
        "labels other than 0 and 1 accepted",
        ("            if label not in (0, 1):\n", "            if False:\n"),
    ),
    V(
        "s1_23_dataset",
        "texts and labels of different lengths accepted",
        ("        if len(texts) != len(labels):\n", "        if False:\n"),
    ),
    # §1.23 the embedding layer (listing 1.30)
    V(
        "s1_23_bert_embedding",
        "a sequence longer than max_len accepted",
        ("        if T > self.position.num_embeddings:\n", "        if False:\n"),
    ),
    # §1.23 multi-head self-attention (listing 1.31); issue 28: once 14/14 with the hidden checks
    V(
        "s1_23_self_attention",
        "attention dropout left out",
        ("attn = self.attn_dropout(torch.softmax(scores, dim=-1))", "attn = torch.softmax(scores, dim=-1)"),
    ),
    # §1.23 the encoder block (listing 1.33); issue 28: its dropout was read by a hidden check only
    V(
        "s1_23_encoder_block",
        "dropout not passed on to attn and ff",
        (
            "        self.attn = MultiHeadSelfAttention(dim, heads, dropout)\n        self.ff = FeedForward(dim, ff_dim, dropout)\n",
            "        self.attn = MultiHeadSelfAttention(dim, heads)\n        self.ff = FeedForward(dim, ff_dim)\n",
        ),
    ),
    V(
        "s1_23_encoder_block",
        "a dropout of the block's own on each branch (the original transformer's)",
        (
            "        self.norm2 = nn.LayerNorm(dim)\n",
            "        self.norm2 = nn.LayerNorm(dim)\n        self.drop = nn.Dropout(dropout)\n",
        ),
        (
            "        x = x + self.attn(self.norm1(x), mask)\n        x = x + self.ff(self.norm2(x))\n",
            "        x = x + self.drop(self.attn(self.norm1(x), mask))\n        x = x + self.drop(self.ff(self.norm2(x)))\n",
        ),
    ),
    V(
        "s1_23_encoder_block",
        "torch.manual_seed in forward: the same dropout masks on every call",
        (
            "        x = x + self.attn(self.norm1(x), mask)\n",
            "        torch.manual_seed(0)  # reproducible\n        x = x + self.attn(self.norm1(x), mask)\n",
        ),
    ),
    # beyond the book: BERT's masking rule and the MLM head (more in tests/test_ex_s1_23_mlm.py)
    V(
        "s1_23_evaluation",
        "report without labels=[0, 1]",  # issue 36: one class was in a hidden check only
        ("labels=[0, 1], target_names=CLASS_NAMES", "target_names=CLASS_NAMES"),
    ),
    V("s1_23_mlm", "[PAD], [CLS] and [SEP] chosen too", (MLM_CHOSEN, MLM_CHOSEN.replace(" & real", ""))),
    V("s1_23_mlm", "labels 0 instead of -100", ("labels[~chosen] = IGNORE_INDEX", "labels[~chosen] = 0")),
    V(
        "s1_23_mlm",
        "every chosen token [MASK]",
        ("inputs[to_mask] = mask_id\n    inputs[to_random] = random_ids[to_random]", "inputs[chosen] = mask_id"),
    ),
    V("s1_23_mlm", "input_ids changed in place", ("inputs = input_ids.clone()", "inputs = input_ids")),
    V(
        "s1_23_mlm",
        "decoder weight copied, not tied",
        (
            "self.decoder.weight = embedding.weight",
            "self.decoder.weight = nn.Parameter(embedding.weight.detach().clone())",
        ),
    ),
]


def rounds(variants: list[Variant] = MISTAKES) -> list[dict[str, Variant]]:
    """The variants in rounds of at most one per exercise: one submission folder per round."""
    out: list[dict[str, Variant]] = []
    for v in variants:
        for r in out:
            if v.exercise not in r:
                r[v.exercise] = v
                break
        else:
            out.append({v.exercise: v})
    return out


def variant(exercise: str, name: str) -> Variant:
    """The corpus entry of `exercise` called `name`."""
    found = [v for v in MISTAKES if v.exercise == exercise and v.name == name]
    assert len(found) == 1, (exercise, name)
    return found[0]


def expect_named_publicly(report: dict, exercise: str, says: str) -> None:
    """Issue 28's rule, read from a real (full) grade of one planted mistake: a public check fails
    naming it (its message and the mistake the summary counts both say `says`), and every mistake
    a hidden check names in that grade is one a public check named too, in the same words up to
    their numbers (a dim, a bit count: the census reads an f-string's fields as {…} alike), so
    that `kata check` showed the student what the grade counts."""
    failed = [c for c in report["checks"] if c["exercise"] == exercise and c["status"] == "failed"]
    public = [c for c in failed if c["visibility"] == "public"]
    assert any(says in c["message"] and says in c["mistake"] for c in public), (
        says,
        [(c["name"], c["mistake"], c["message"][:200]) for c in failed],
    )
    shown = {_words(c["mistake"]) for c in public if c["mistake"]}
    for c in failed:
        if c["visibility"] == "hidden" and c["mistake"]:
            assert _words(c["mistake"]) in shown, (c["name"], c["mistake"], sorted(shown))


def _words(name: str) -> str:
    return re.sub(r"-?\d+", "#", name)
