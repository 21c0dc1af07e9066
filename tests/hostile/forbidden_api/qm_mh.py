import math

import torch
import torch.nn as nn
from torch.ao.nn.quantizable import MultiheadAttention as Attn


def head_dim(d_out, num_heads):
    if d_out % num_heads:
        raise ValueError(f"{num_heads} heads do not divide d_out={d_out}")
    return d_out // num_heads


def view_heads(x, num_heads):
    b, n, d = x.shape
    return x.view(b, n, num_heads, d // num_heads)


def split_heads(x, num_heads):
    return view_heads(x, num_heads).transpose(1, 2)


def head_attention(q, k, v, causal=False):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[-2]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    w = torch.softmax(s, dim=-1)
    return w, w @ v


def merge_heads(context):
    b, h, n, d = context.shape
    return context.transpose(1, 2).reshape(b, n, h * d)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, num_heads, qkv_bias=False, causal=False):
        super().__init__()
        self.head_dim = head_dim(d_out, num_heads)
        self.d_out = d_out
        self.num_heads = num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x):
        n = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        m = Attn(self.d_out, self.num_heads, bias=False, kdim=self.d_out, vdim=self.d_out)
        m.eval()
        with torch.no_grad():
            for lin in (m.linear_Q, m.linear_K, m.linear_V):
                lin.weight.copy_(torch.eye(self.d_out))
            m.out_proj.weight.copy_(self.out_proj.weight)
        mask = torch.ones(n, n, dtype=torch.bool).triu(1) if self.causal else None
        y, _ = m(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), attn_mask=mask, need_weights=False)
        return y.transpose(0, 1) + self.out_proj.bias
