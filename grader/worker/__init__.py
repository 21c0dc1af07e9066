"""The worker: the only place student code runs. The trusted side starts a sandboxed fork server
(`sandbox`, `client`) and talks to it through proxies (`proxy`); `runtime/` is the code that runs
inside, and imports nothing outside runtime/. The trusted side imports only grader.course."""
