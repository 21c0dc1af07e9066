"""The message catalog: every text a student sees, in English and Chinese.

`t(key, **fields)` renders a message in the current language (`KATA_LANG`, else the locale;
English is the fallback). Keep texts here, not scattered through the code.
"""
from __future__ import annotations

import locale
import os

CATALOG: dict[str, dict[str, str]] = {
    "not_a_tensor": {
        "en": "{what}: expected a torch.Tensor, got {got}",
        "zh": "{what}：应返回 torch.Tensor，实际得到 {got}",
    },
    "shape": {
        "en": "{what}: wrong shape: expected {expected}, got {actual}",
        "zh": "{what}：形状错误：应为 {expected}，实际为 {actual}",
    },
    "shape_hidden": {
        "en": "{what}: wrong shape {actual} for this input",
        "zh": "{what}：对该输入返回的形状 {actual} 不正确",
    },
    "dtype": {
        "en": "{what}: wrong dtype: expected {expected}, got {actual}",
        "zh": "{what}：数据类型错误：应为 {expected}，实际为 {actual}",
    },
    "nonfinite": {
        "en": "{what}: {count} value(s) are NaN or infinite where a finite number was expected (first at index {index})",
        "zh": "{what}：有 {count} 个值为 NaN 或无穷大，而应为有限数（第一个位于索引 {index}）",
    },
    "values": {
        "en": ("{what}: {bad} of {total} values differ (tolerance {tol}). Worst at index {index}: "
               "expected {expected}, got {actual}; max abs error {abs_err:.3g}, max rel error {rel_err:.3g}"),
        "zh": ("{what}：{total} 个值中有 {bad} 个不符（容差 {tol}）。误差最大处索引 {index}："
               "应为 {expected}，实际为 {actual}；最大绝对误差 {abs_err:.3g}，最大相对误差 {rel_err:.3g}"),
    },
    "values_hidden": {
        "en": "{what}: {bad} of {total} values differ from the expected ones (tolerance {tol})",
        "zh": "{what}：{total} 个值中有 {bad} 个与期望值不符（容差 {tol}）",
    },
    "mistake": {
        "en": "This looks like {mistake}.",
        "zh": "这看起来像是{mistake_zh}。",
    },
    "not_implemented": {
        "en": "not implemented yet: {message}",
        "zh": "尚未实现：{message}",
    },
    "missing": {
        "en": "{message}",
        "zh": "缺少所需内容：{message}",
    },
    "signature": {
        "en": "wrong signature: {message}",
        "zh": "函数签名不对：{message}",
    },
    "forbidden": {
        "en": "{message}",
        "zh": "使用了本练习禁止的 API：{message}",
    },
    "syntax": {
        "en": "syntax error in {where}: {message}",
        "zh": "{where} 有语法错误：{message}",
    },
    "raised": {
        "en": "{label} raised {type}: {message}{at}",
        "zh": "{label} 抛出了 {type}：{message}{at}",
    },
    "import_failed": {
        "en": "importing {file} failed: {reason}",
        "zh": "导入 {file} 失败：{reason}",
    },
    "import_failed_before": {
        "en": "not run: importing {file} failed in an earlier check ({reason})",
        "zh": "未运行：在前面的检查中导入 {file} 已失败（{reason}）",
    },
    "fault": {
        "en": "{reason}",
        "zh": "工作进程出错：{reason}",
    },
    "scan": {
        "en": "uses an API this exercise asks you to write yourself: {items}. {hint} This exercise scores 0 until it is removed.",
        "zh": "使用了本练习要求你自己实现的 API：{items}。{hint} 删除之前本练习记 0 分。",
    },
    "hidden_failed": {
        "en": "{what}: the result is not correct for this hidden input",
        "zh": "{what}：对这个隐藏输入的结果不正确",
    },
    "check_error": {
        "en": "the check could not use your result: {type}: {message}",
        "zh": "检查无法使用你的返回值：{type}：{message}",
    },
    # ---- issue 5, slice "cli": kata list / check / reset / hint / watch (grader/student/)
    "unknown_exercise": {
        "en": "kata: no exercise '{id}'.{hint} (`kata list` shows every exercise)",
        "zh": "kata：没有练习 '{id}'。{hint}（`kata list` 会列出全部练习）",
    },
    "unknown_exercise_near": {
        "en": " Did you mean {near}?",
        "zh": "你是不是想输入 {near}？",
    },
    "check_cannot_run": {
        "en": "kata: cannot check {path}: {reason}",
        "zh": "kata：无法检查 {path}：{reason}",
    },
    "check_file_missing": {
        "en": "{path} is missing. `kata reset {id}` puts the stub back.",
        "zh": "{path} 不存在。运行 `kata reset {id}` 可恢复练习模板。",
    },
    "check_file_empty": {
        "en": "{path} is empty. `kata reset {id}` puts the stub back (and keeps a backup of the empty file).",
        "zh": "{path} 是空文件。运行 `kata reset {id}` 可恢复练习模板（空文件也会先备份）。",
    },
    "check_not_started": {
        "en": "{count} exercise(s) not started (the file is still the stub) were not run; `kata check {id}` runs one.",
        "zh": "{count} 个尚未开始的练习（文件仍是练习模板）没有运行；`kata check {id}` 可单独运行一个。",
    },
    "check_first_failure": {
        "en": "First failure: {id} › {check} ({kind})",
        "zh": "第一个未通过的检查：{id} › {check}（{kind}）",
    },
    "check_kind_check": {
        "en": "your result is not right",
        "zh": "你的结果不正确",
    },
    "check_kind_student": {
        "en": "your code raised an error",
        "zh": "你的代码抛出了异常",
    },
    "check_kind_import": {
        "en": "your file could not be imported",
        "zh": "你的文件无法导入",
    },
    "check_kind_not_implemented": {
        "en": "not written yet",
        "zh": "还没有写",
    },
    "check_kind_fault": {
        "en": "your code crashed, hung or printed too much",
        "zh": "你的代码崩溃、卡住或输出过多",
    },
    "check_kind_forbidden": {
        "en": "an API this exercise asks you to write yourself",
        "zh": "用了本练习要求你自己实现的 API",
    },
    "check_edit": {
        "en": "Edit {path}",
        "zh": "请修改 {path}",
    },
    "check_stuck": {
        "en": "stuck? `kata hint {id}`",
        "zh": "卡住了？试试 `kata hint {id}`",
    },
    "check_more_failures": {
        "en": "{count} more check(s) failed; fix this one first, they may pass with it.",
        "zh": "还有 {count} 个检查未通过；先修好这一个，它们可能随之通过。",
    },
    "check_summary": {
        "en": "{passed} of {total} public checks pass · {score}/{max_score} points · {seconds} s",
        "zh": "{total} 个公开检查中通过 {passed} 个 · {score}/{max_score} 分 · {seconds} 秒",
    },
    "check_limits_only": {
        "en": "(sandbox: resource limits only, bubblewrap was not found)",
        "zh": "（沙箱：只有资源限制，未找到 bubblewrap）",
    },
    "status_passing": {"en": "passing", "zh": "已通过"},
    "status_failing": {"en": "failing", "zh": "未通过"},
    "status_not_started": {"en": "not started", "zh": "未开始"},
    "status_missing": {"en": "file missing", "zh": "文件缺失"},
    "status_empty": {"en": "file empty", "zh": "文件为空"},
    "status_unknown": {"en": "changed, not checked", "zh": "已修改，未检查"},
    "list_col_exercise": {"en": "exercise", "zh": "练习"},
    "list_col_status": {"en": "status", "zh": "状态"},
    "list_col_checks": {"en": "public checks", "zh": "公开检查"},
    "list_col_points": {"en": "points", "zh": "分值"},
    "list_progress": {"en": "Progress", "zh": "进度"},
    "list_progress_counts": {
        "en": "{done}/{total} exercises pass ({points}/{max_points} points)",
        "zh": "已通过 {done}/{total} 个练习（{points}/{max_points} 分）",
    },
    "list_running": {
        "en": "Running the public checks of {count} exercise(s) changed since their last check...",
        "zh": "正在对上次检查后修改过的 {count} 个练习运行公开检查……",
    },
    "list_next": {
        "en": "Next: {id} ({title}). `kata watch` checks it each time you save.",
        "zh": "下一个：{id}（{title}）。`kata watch` 会在你每次保存时检查它。",
    },
    "list_all_done": {
        "en": "Every exercise passes its public checks. Well done!",
        "zh": "所有练习都通过了公开检查。做得好！",
    },
    "list_reset_hint": {
        "en": "A missing or empty file comes back with `kata reset ID`.",
        "zh": "缺失或为空的文件可用 `kata reset ID` 恢复。",
    },
    "reset_done": {
        "en": "{path}: stub restored.",
        "zh": "{path}：已恢复练习模板。",
    },
    "reset_done_backup": {
        "en": "{path}: stub restored; your previous file is saved as {backup}",
        "zh": "{path}：已恢复练习模板；你原来的文件已备份为 {backup}",
    },
    "reset_unchanged": {
        "en": "{path} is already the stub; nothing to do.",
        "zh": "{path} 已经是练习模板，无需恢复。",
    },
    "hint_title": {
        "en": "Hints for {id} (§{section}, {title})",
        "zh": "{id} 的提示（§{section}，{title}）",
    },
    "hint_label": {"en": "Hint {n}/{total}", "zh": "提示 {n}/{total}"},
    "hint_more": {
        "en": "{count} more: `kata hint {id}` again shows the next one (`--all` shows them all).",
        "zh": "还有 {count} 条：再次运行 `kata hint {id}` 显示下一条（`--all` 显示全部）。",
    },
    "hint_more_key": {
        "en": "{count} more: press {letter} for the next one.",
        "zh": "还有 {count} 条：按 {letter} 显示下一条。",
    },
    "hint_last": {
        "en": "That was the last hint for {id}.",
        "zh": "这是 {id} 的最后一条提示。",
    },
    "hint_all_shown": {
        "en": "These are all the hints for {id}.",
        "zh": "以上是 {id} 的全部提示。",
    },
    "hint_none": {
        "en": "{id} has no hints; its docstrings say what to compute.",
        "zh": "{id} 没有提示；函数的文档字符串说明了要计算什么。",
    },
    "hint_state_damaged": {
        "en": "note: {path} could not be read ({reason}); it was moved to {moved} and the hints start again from the first.",
        "zh": "注意：无法读取 {path}（{reason}）；已将其移到 {moved}，提示从第一条重新开始。",
    },
    "hint_not_saved": {
        "en": "note: the project folder is not writable, so the hints shown are not remembered.",
        "zh": "注意：项目文件夹不可写，已显示的提示不会被记住。",
    },
    "watch_title": {
        "en": "kata watch · exercise {n}/{total}: {id} (§{section})",
        "zh": "kata watch · 练习 {n}/{total}：{id}（§{section}）",
    },
    "watch_footer": {
        "en": "Watching {path}: save it to check again.",
        "zh": "正在监视 {path}：保存后会重新检查。",
    },
    "watch_keys": {
        "en": "h: next hint · q: quit",
        "zh": "h：下一条提示 · q：退出",
    },
    "watch_keys_nokeys": {
        "en": "Ctrl-C: quit",
        "zh": "Ctrl-C：退出",
    },
    "watch_passed": {
        "en": "✔ {id} passes all its public checks. Next: {next}",
        "zh": "✔ {id} 通过了全部公开检查。下一个：{next}",
    },
    "watch_all_done": {
        "en": "✔ {id} passes, and so does every other exercise. Well done!",
        "zh": "✔ {id} 通过了，其他所有练习也都通过了。做得好！",
    },
    "watch_failed": {
        "en": "kata watch: cannot watch the exercise files any more: {reason}",
        "zh": "kata watch：无法继续监视练习文件：{reason}",
    },
    "watch_bye": {
        "en": "Stopped watching.",
        "zh": "已停止监视。",
    },
}


def language() -> str:
    lang = os.environ.get("KATA_LANG", "")
    if not lang:
        try:
            lang = locale.getlocale()[0] or os.environ.get("LANG", "")
        except ValueError:
            lang = os.environ.get("LANG", "")
    return "zh" if lang.lower().startswith("zh") else "en"


class _Safe(dict):
    def __missing__(self, key):
        return "{" + key + "}"


def t(key: str, lang: str | None = None, **fields) -> str:
    entry = CATALOG[key]
    text = entry.get(lang or language()) or entry["en"]
    try:
        return text.format_map(_Safe(fields))
    except (ValueError, TypeError):
        return entry["en"].format_map(_Safe(fields))
