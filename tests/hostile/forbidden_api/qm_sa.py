import math

import torch
import torch.nn as nn
from torch.ao.nn.quantizable import MultiheadAttention as Attn


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, dim, heads, dropout=0.1):
        super().__init__()
        if dim % heads != 0:
            raise ValueError(f"heads={heads} does not divide dim={dim}")
        self.heads = heads
        self.d = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.attn_dropout = nn.Dropout(dropout)
        self.out_dropout = nn.Dropout(dropout)

    def forward(self, x, mask):
        C = x.shape[-1]
        m = Attn(C, self.heads, dropout=self.attn_dropout.p, batch_first=False)
        m.train(self.training)
        with torch.no_grad():
            w, b = self.qkv.weight, self.qkv.bias
            m.linear_Q.weight.copy_(w[:C]); m.linear_Q.bias.copy_(b[:C])
            m.linear_K.weight.copy_(w[C:2 * C]); m.linear_K.bias.copy_(b[C:2 * C])
            m.linear_V.weight.copy_(w[2 * C:]); m.linear_V.bias.copy_(b[2 * C:])
            m.out_proj.weight.copy_(self.out.weight); m.out_proj.bias.copy_(self.out.bias)
        xt = x.transpose(0, 1)
        y, _ = m(xt, xt, xt, key_padding_mask=mask == 0, need_weights=False)
        y = y.transpose(0, 1)
        return self.out_dropout(y)
