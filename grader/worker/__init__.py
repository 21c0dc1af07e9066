"""Layer 3: the worker. The trusted side starts a sandboxed fork server (`sandbox`, `client`),
talks to it through proxies (`proxy`); `runtime/` is the code that runs inside."""
