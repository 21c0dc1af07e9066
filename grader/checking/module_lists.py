"""A list of sub-modules must be an nn.ModuleList (§1.19 ShortcutNet.layers, §1.23 BERTEncoder.layers).

A plain Python list holds the blocks, and forward can run them, but nn.Module does not see them:
their parameters are missing from model.parameters() (the optimizer never trains them) and from
state_dict() (a checkpoint saves none of them), and .to(device) / .eval() do not reach them.
The checks would otherwise show this only as a difference of printed layouts or parameter names.
"""

from __future__ import annotations

from .compare import CheckFailure
from ..course.messages import Msg
from ..worker.proxy import StudentError


def expect_module_list(module, name: str, what: str) -> None:
    """Fail, naming the mistake, when `module.<name>` is a plain list or tuple of modules.
    `module` is a remote module; `what` is how the check names it (e.g. "BERTEncoder(...)")."""
    try:
        value = module.attr(name)
    except StudentError:
        return  # no such attribute: the check's own comparison says what is missing
    if isinstance(value, (list, tuple)):
        kind = type(value).__name__
        raise CheckFailure(
            Msg(
                f"{what}.{name} is a plain Python {kind}, not an nn.ModuleList: nn.Module does not register the "
                "blocks in it, so their parameters are missing from parameters() (the optimizer never trains "
                "them) and from state_dict(), and .to(device) and .eval() do not reach them. Wrap it: "
                f"self.{name} = nn.ModuleList([...])",
                f"{what}.{name} 是普通的 Python {kind}，而不是 nn.ModuleList：nn.Module 不会登记其中的块，"
                "所以它们的参数不在 parameters() 里（优化器永远不会训练它们），也不在 state_dict() 里，"
                f".to(device) 和 .eval() 也作用不到它们。应写成 self.{name} = nn.ModuleList([...])",
            ),
            mistake=Msg(
                "the blocks were kept in a plain list, not an nn.ModuleList: their parameters are not registered",
                "块放在了普通列表里，而不是 nn.ModuleList：它们的参数没有被登记",
            ),
        )
