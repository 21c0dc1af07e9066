import torch
import torch.nn.functional as F


def one_hot(token_ids: torch.Tensor, vocab_size: int) -> torch.Tensor:
    if token_ids.numel() and (token_ids.min() < 0 or token_ids.max() >= vocab_size):
        raise ValueError("token id out of range")
    return (token_ids.unsqueeze(-1) == torch.arange(vocab_size)).float()


def embedding_lookup(token_ids: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    flat = token_ids.reshape(-1, 1)
    rows = F.embedding_bag(flat, weight, mode="sum")
    return rows.reshape(*token_ids.shape, weight.shape[1])


def one_hot_embedding(token_ids: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return one_hot(token_ids, weight.shape[0]).to(weight.dtype) @ weight


def cosine_similarity_matrix(vectors: torch.Tensor) -> torch.Tensor:
    n = vectors.shape[0]
    a = vectors.unsqueeze(1).expand(n, n, -1).reshape(n * n, -1)
    b = vectors.unsqueeze(0).expand(n, n, -1).reshape(n * n, -1)
    loss = F.cosine_embedding_loss(a, b, torch.ones(n * n, dtype=vectors.dtype), reduction="none")
    return (1 - loss).reshape(n, n)
