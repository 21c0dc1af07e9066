# Exercise s1_19_shortcuts (§1.19): replace each `raise NotImplementedError` with your code.
"""§1.19 Shortcut (residual) connections and the gradients they keep alive (figure 1.123).

A stack of Linear + GELU layers, with or without a shortcut around each layer. With a
shortcut a layer returns x + layer(x) instead of layer(x), so the backward pass has a path
around every non-linearity. The gradients of the first layers show the difference: without
shortcuts they shrink layer after layer, with them they stay close to those of the last layer.
"""
import torch
import torch.nn as nn


class ShortcutNet(nn.Module):
    """Linear + GELU layers, optionally with shortcuts (figure 1.123).

    layer_sizes: [n_0, n_1, ..., n_L] gives L layers; layer i maps n_i features to n_(i+1).
    The figure's network takes the 4-vector [1, 0, 0, -1] through layers of 4 units:
    layer_sizes = [4, 4, 4] (two layers); the kata's deeper version uses [4] * 6 (five layers).

    Attributes (names are part of the exercise: checks load weights by these keys):
      layers: nn.ModuleList of L nn.Sequential(nn.Linear(n_i, n_(i+1)), nn.GELU()), so the
      state_dict keys are "layers.<i>.0.weight" (n_(i+1), n_i) and "layers.<i>.0.bias".
      Use the exact GELU, nn.GELU() (not approximate="tanh").
    forward(x): x is (..., n_0); returns (..., n_L). Each layer computes y = layer(x); with
      use_shortcut the next x is x + y (input added to the layer's output, after the GELU),
      but only where y has the same shape as x; otherwise, and without shortcuts, it is y.
    """

    def __init__(self, layer_sizes: list[int], use_shortcut: bool):
        super().__init__()
        raise NotImplementedError('s1_19_shortcuts: keep use_shortcut; build one nn.Sequential(nn.Linear, nn.GELU()) per pair of sizes (in ShortcutNet.__init__)')

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("s1_19_shortcuts: run the layers in order, adding x to a layer's output when shortcuts are on and shapes match (in ShortcutNet.forward)")


def layer_gradients(model: nn.Module, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean absolute gradient of each layer's weight matrix after one backward pass (§1.19).

    model: a ShortcutNet; x: its input (batch, n_0); target: (batch, n_L).
    Loss: the mean squared error between model(x) and target (torch.nn.functional.mse_loss,
    reduction "mean"). Clear old gradients first, so that calling this twice gives the same
    answer. Returns a float tensor of shape (L,): entry i is the mean of |dLoss/dW_i| over the
    weight matrix of layer i (layers.<i>.0.weight; biases are not included).
    """
    raise NotImplementedError("s1_19_shortcuts: zero the gradients, forward, MSE loss, backward, then mean |grad| of each layer's weight (in layer_gradients)")
