"""The message catalog: every text a student sees, in English and Chinese.

Two ways to write a text, both checked by `kata verify` and tests/test_i18n.py:
- a key of `CATALOG` (key -> {"en", "zh"}), rendered with `t(key, **fields)` or held as
  `Msg.key(key, **fields)`;
- inline in a check, `Msg(en, zh, **fields)`: two templates with the same {fields}, or two
  f-strings interpolating the same expressions. `code(text)` is text that reads the same in
  both languages (a Python expression such as `softmax([2, 3, -inf])`).

The language is `KATA_LANG` (set by `kata --lang`), else the locale (`LC_ALL`, `LC_MESSAGES`,
`LANG`): Chinese for any zh* locale, English otherwise and as the fallback.
"""
from __future__ import annotations

import os
import re
import string

LANGS = ("en", "zh")

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
    "not_equal": {
        "en": "{what}: expected {expected}, got {actual}",
        "zh": "{what}：应为 {expected}，实际为 {actual}",
    },
    "values_hidden": {
        "en": "{what}: {bad} of {total} values differ from the expected ones (tolerance {tol})",
        "zh": "{what}：{total} 个值中有 {bad} 个与期望值不符（容差 {tol}）",
    },
    "mistake": {
        "en": "This looks like {mistake}.",
        "zh": "这看起来像是{mistake}。",
    },
    "with_hint": {
        "en": "{message}. {hint}",
        "zh": "{message}。{hint}",
    },
    "not_implemented": {
        "en": "not implemented yet: {message}",
        "zh": "尚未实现：{message}",
    },
    "missing": {
        "en": "{message}",
        "zh": "{message}",
    },
    "signature": {
        "en": "wrong signature: {message}",
        "zh": "函数签名不对：{message}",
    },
    "forbidden": {
        "en": "{message}",
        "zh": "{message}",
    },
    "syntax": {
        "en": "syntax error in {where}: {message}",
        "zh": "{where} 有语法错误：{message}",
    },
    "raised": {
        "en": "{label} raised {type}: {message}{at}",
        "zh": "{label} 抛出了 {type}：{message}{at}",
    },
    "at_where": {"en": " (at {where})", "zh": "（位于 {where}）"},
    "import_failed": {
        "en": "importing {file} failed: {reason}",
        "zh": "导入 {file} 失败：{reason}",
    },
    "import_failed_before": {
        "en": "not run: importing {file} failed in an earlier check ({reason})",
        "zh": "未运行：在前面的检查中导入 {file} 已失败（{reason}）",
    },
    "file_missing": {
        "en": "{file} is missing from the submission",
        "zh": "提交中缺少 {file}",
    },
    "assertion_failed": {
        "en": "assertion failed",
        "zh": "断言失败",
    },
    "fault": {
        "en": "{reason}",
        "zh": "{reason}",
    },
    "scan": {
        "en": "uses an API this exercise asks you to write yourself: {items}. {hint} This exercise scores 0 until it is removed.",
        "zh": "使用了本练习要求你自己实现的 API：{items}。{hint}在删除它之前，本练习记 0 分。",
    },
    "scan_use": {
        "en": "{file}:{line}: uses {name} ({code})",
        "zh": "{file}:{line}：使用了 {name}（{code}）",
    },
    "hidden_failed": {
        "en": "{what}: the result is not correct for this hidden input",
        "zh": "{what}：对这个隐藏输入的结果不正确",
    },
    "asset_missing": {
        "en": "{name} is not in {folder}: run `python -m grader.gpt2 fetch` (setup.sh does) where PyPI is reachable",
        "zh": "{folder} 中没有 {name}：请在能访问 PyPI 的机器上运行 `python -m grader.gpt2 fetch`（setup.sh 会运行它）",
    },
    "no_assets": {
        "en": "this grader gives the sandbox no assets folder (sub.assets), so the ranks cannot be read there",
        "zh": "这个评分器没有给沙箱提供资源文件夹（sub.assets），因此无法在沙箱中读取合并排名",
    },
    # ------------------------------------------------ the worker's faults and errors
    "fault_timeout": {
        "en": "your code took longer than the {seconds} s limit",
        "zh": "你的代码运行时间超过了 {seconds} 秒的限制",
    },
    "fault_exit": {
        "en": "the worker process exited (exit code {code}) while running your code: "
              "calling exit() or os._exit() is not allowed",
        "zh": "运行你的代码时工作进程退出了（退出码 {code}）：不允许调用 exit() 或 os._exit()",
    },
    "fault_signal": {
        "en": "the worker process {why} while running your code",
        "zh": "运行你的代码时工作进程{why}",
    },
    "signal_xcpu": {"en": "used more CPU time than the limit allows", "zh": "用掉的 CPU 时间超过了限制"},
    "signal_xfsz": {
        "en": "printed or wrote more than {output_mb} MB of output (the limit)",
        "zh": "打印或写入的输出超过了 {output_mb} MB（上限）",
    },
    "signal_segv": {"en": "crashed (segmentation fault)", "zh": "崩溃了（段错误）"},
    "signal_abrt": {"en": "aborted", "zh": "异常中止了"},
    "signal_kill": {"en": "was killed", "zh": "被强行终止了"},
    "signal_other": {"en": "was stopped by signal {signal}", "zh": "被信号 {signal} 终止了"},
    "fault_stopped": {
        "en": "the worker process stopped while running your code",
        "zh": "运行你的代码时工作进程停止了",
    },
    "fault_stopped_earlier": {
        "en": "the worker stopped earlier in this check",
        "zh": "工作进程在本项检查中已经提前停止",
    },
    "fault_wire": {
        "en": "the worker sent something that is not a valid answer: {error}",
        "zh": "工作进程发回的内容不是有效的应答：{error}",
    },
    "fault_start": {"en": "the sandboxed worker did not start: {log}", "zh": "沙箱中的工作进程没有启动：{log}"},
    "fault_server_silent": {"en": "the worker's fork server did not answer", "zh": "工作进程的 fork 服务器没有应答"},
    "fault_server_stopped": {"en": "the worker's fork server stopped", "zh": "工作进程的 fork 服务器停止了"},
    "fault_server_unreachable": {
        "en": "the worker's fork server is unreachable ({error})",
        "zh": "无法连接工作进程的 fork 服务器（{error}）",
    },
    # Sent by the worker as a code and fields (it has no catalog); rendered by worker/proxy.py.
    "worker_gone": {"en": "that object no longer exists in the worker", "zh": "该对象在工作进程中已不存在"},
    "worker_no_module": {"en": "no exercise module is imported", "zh": "还没有导入练习模块"},
    "worker_unreachable": {"en": "attribute {name} cannot be reached", "zh": "无法访问属性 {name}"},
    "worker_no_attribute_module": {
        "en": "module {module} has no attribute '{name}'",
        "zh": "模块 {module} 中没有 '{name}'",
    },
    "worker_no_attribute_object": {
        "en": "{type} object has no attribute '{name}'",
        "zh": "{type} 对象没有属性 '{name}'",
    },
    "worker_file_missing": {"en": "file {path} is missing from the submission", "zh": "提交中缺少文件 {path}"},
    "worker_not_callable": {"en": "'{name}' is not a function or class", "zh": "'{name}' 既不是函数也不是类"},
    "worker_unknown_op": {"en": "unknown operation {op}", "zh": "未知的操作 {op}"},
    "worker_signature": {
        "en": "{name}{signature} cannot be called as the exercise asks: {error}",
        "zh": "无法按练习要求的方式调用 {name}{signature}：{error}",
    },
    "worker_forbidden": {
        "en": "{name} is not allowed in exercise {exercise}: this exercise asks you to write it yourself.{hint}",
        "zh": "练习 {exercise} 中不允许使用 {name}：本练习要求你自己实现它。{hint}",
    },
    "worker_forbidden_op": {
        "en": "the operator {name} is not allowed in exercise {exercise}: this exercise asks you to write it "
              "yourself.{hint}",
        "zh": "练习 {exercise} 中不允许使用算子 {name}：本练习要求你自己实现它。{hint}",
    },
    "worker_exit": {"en": "sys.exit({code}) was called", "zh": "调用了 sys.exit({code})"},
    "forbidden_hint": {"en": " {hint}", "zh": "{hint}"},
    # ------------------------------------------------ reading a submission
    "sub_missing": {"en": "{path}: no such file or folder", "zh": "{path}：没有这个文件或文件夹"},
    "sub_not_zip": {"en": "{path}: a submission file must be a .zip", "zh": "{path}：提交的文件必须是 .zip"},
    "sub_no_chapter": {
        "en": "{folder}: no '{chapter}/' or 'exercises/{chapter}/' folder found",
        "zh": "{folder}：没有找到 '{chapter}/' 或 'exercises/{chapter}/' 文件夹",
    },
    "sub_link_skipped": {"en": "{file}: symbolic link skipped", "zh": "{file}：是符号链接，已跳过"},
    "sub_large_skipped": {"en": "{file}: larger than {mb} MB, skipped", "zh": "{file}：大于 {mb} MB，已跳过"},
    "sub_too_big": {"en": "{folder}: more than {mb} MB or {files} files", "zh": "{folder}：超过 {mb} MB 或 {files} 个文件"},
    "zip_entries": {"en": "{name}: {count} entries, more than the limit of {limit}",
                    "zh": "{name}：有 {count} 个条目，超过了 {limit} 个的上限"},
    "zip_absolute": {"en": "{name}: entry '{entry}' has an absolute path; archive refused",
                     "zh": "{name}：条目 '{entry}' 是绝对路径；拒绝该压缩包"},
    "zip_dotdot": {"en": "{name}: entry '{entry}' points outside the archive ('..'); archive refused",
                   "zh": "{name}：条目 '{entry}' 指向压缩包之外（'..'）；拒绝该压缩包"},
    "zip_link": {"en": "{name}: entry '{entry}' is a symbolic link; archive refused",
                 "zh": "{name}：条目 '{entry}' 是符号链接；拒绝该压缩包"},
    "zip_special": {"en": "{name}: entry '{entry}' is not a regular file; archive refused",
                    "zh": "{name}：条目 '{entry}' 不是普通文件；拒绝该压缩包"},
    "zip_large": {"en": "{name}: entry '{entry}' is {size} bytes, over the {limit} limit",
                  "zh": "{name}：条目 '{entry}' 有 {size} 字节，超过了 {limit} 的上限"},
    "zip_bomb": {"en": "{name}: entry '{entry}' expands {ratio}x (limit {limit}x): looks like a zip bomb; archive refused",
                 "zh": "{name}：条目 '{entry}' 解压后膨胀 {ratio} 倍（上限 {limit} 倍）：像是 zip 炸弹；拒绝该压缩包"},
    "zip_total": {"en": "{name}: expands to more than {mb} MB; archive refused",
                  "zh": "{name}：解压后超过 {mb} MB；拒绝该压缩包"},
    "zip_unreadable": {"en": "{name}: not a readable zip file ({error})", "zh": "{name}：不是可读的 zip 文件（{error}）"},
    "zip_outside": {"en": "{name}: entry '{entry}' points outside the archive",
                    "zh": "{name}：条目 '{entry}' 指向压缩包之外"},
    "zip_lies": {"en": "{name}: entry '{entry}' is larger than it claims", "zh": "{name}：条目 '{entry}' 比它声明的更大"},
    # ------------------------------------------------ report and command output (slice: languages)
    "col_exercise": {"en": "exercise", "zh": "练习"},
    "col_check": {"en": "check", "zh": "检查项"},
    "col_points": {"en": "points", "zh": "得分"},
    "hidden_mark": {"en": " (hidden)", "zh": "（隐藏）"},
    "score": {"en": "Score: {score} / {max_score}", "zh": "得分：{score} / {max_score}"},
    "score_details": {"en": "({seconds} s, sandbox: {sandbox})", "zh": "（{seconds} 秒，沙箱：{sandbox}）"},
    "limits_only": {
        "en": "(sandbox: limits only — bubblewrap not found)",
        "zh": "（沙箱：仅有资源限制——未找到 bubblewrap）",
    },
    "note": {"en": "note:", "zh": "注意："},
    "no_exercise": {
        "en": "kata: no exercise '{id}'.{hint} (`kata grade --help`; ids are listed in course.toml)",
        "zh": "kata：没有练习 '{id}'。{hint}（参见 `kata grade --help`；练习编号列在 course.toml 中）",
    },
    "did_you_mean": {"en": " Did you mean {names}?", "zh": "你是不是想输入 {names}？"},
    "cannot_grade": {"en": "kata: cannot grade {path}: {reason}", "zh": "kata：无法评分 {path}：{reason}"},
    "no_listing": {
        "en": "kata: no listing '{id}'.{hint} Known: {known}",
        "zh": "kata：没有代码清单 '{id}'。{hint}已有的：{known}",
    },
    "listing_title": {"en": "Listing {id} ({exercise}, §{section}): {title}",
                      "zh": "代码清单 {id}（{exercise}，§{section}）：{title}"},
    "your_code": {"en": "your code ({path})", "zh": "你的代码（{path}）"},
    "book_prints": {"en": "the book prints", "zh": "书中的输出"},
    "nothing_printed": {"en": "(nothing printed)", "zh": "（没有输出）"},
    "errata": {"en": "ERRATA {entry}", "zh": "勘误 {entry}"},
    "two_messages": {"en": "{first} {second}", "zh": "{first}{second}"},
    "check_error": {
        "en": "the check could not use your result: {type}: {message}",
        "zh": "检查无法使用你的返回值：{type}：{message}",
    },
}



def language() -> str:
    """"zh" or "en": KATA_LANG, else the POSIX locale variables in their order of precedence."""
    for var in ("KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def pick(en: str, zh: str, lang: str | None = None) -> str:
    """`zh` when the language is Chinese and there is a Chinese text, else `en`."""
    return zh if (lang or language()) == "zh" and zh else en


class _Safe(dict):
    def __missing__(self, key):
        return "{" + key + "}"


class Msg:
    """A text in English and Chinese, rendered in the reader's language when shown.

    With fields, `en` and `zh` are templates (`str.format` syntax) and fields may be Msgs
    themselves (rendered in the same language). Without fields they are final texts (e.g.
    f-strings), never formatted, so braces in them are safe.
    """

    __slots__ = ("en", "zh", "fields")

    def __init__(self, en: str, zh: str, /, **fields):
        if not isinstance(en, str) or not isinstance(zh, str):
            raise TypeError("Msg(en, zh): both texts must be strings")
        self.en = en
        self.zh = zh
        self.fields = fields

    @classmethod
    def key(cls, key: str, /, **fields) -> "Msg":
        entry = CATALOG[key]
        return cls(entry["en"], entry["zh"], **fields)

    @classmethod
    def of(cls, exc: BaseException) -> "Msg":
        """The message of an error that is already in the reader's language (a StudentError's,
        a CheckFailure's)."""
        if not isinstance(exc, BaseException):
            raise TypeError(f"Msg.of takes an exception, not {type(exc).__name__}")
        text = str(exc)
        return cls(text, text)

    def render(self, lang: str | None = None) -> str:
        lang = lang or language()
        text = self.zh if lang == "zh" and self.zh else self.en
        if not self.fields:
            return text
        fields = {k: v.render(lang) if isinstance(v, Msg) else v for k, v in self.fields.items()}
        try:
            return text.format_map(_Safe(fields))
        except (ValueError, TypeError, IndexError, AttributeError, KeyError):
            return self.en.format_map(_Safe(fields))

    def __str__(self) -> str:
        return self.render()

    def __format__(self, spec: str) -> str:
        return format(self.render(), spec)

    def __repr__(self) -> str:
        return f"Msg({self.en!r}, {self.zh!r}{''.join(f', {k}={v!r}' for k, v in self.fields.items())})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Msg) and (self.en, self.zh, self.fields) == (other.en, other.zh, other.fields)

    __hash__ = None


def code(text: str, /, **fields) -> Msg:
    """Text that reads the same in both languages: code, numbers, names (`softmax([1, 2])`)."""
    return Msg(text, text, **fields)


def joined(items, sep: str = "; ", sep_zh: str = "；") -> Msg:
    """Several texts as one, separated by `sep` (`sep_zh` in Chinese)."""
    items = list(items)
    for item in items:
        if not isinstance(item, Msg):
            raise TypeError(f"joined() takes Msg items, not {type(item).__name__} {item!r}")
    names = {f"i{n}": item for n, item in enumerate(items)}
    en = sep.join("{" + name + "}" for name in names)
    zh = sep_zh.join("{" + name + "}" for name in names)
    return Msg(en, zh, **names) if names else Msg("", "")


def t(key: str, lang: str | None = None, **fields) -> str:
    """The catalog text `key` with its {fields}, in `lang` (default: the current language)."""
    return Msg.key(key, **fields).render(lang)


# ---------------------------------------------------------------- completeness
CJK = re.compile(r"[\u3400-\u9fff]")  # ideographs: punctuation alone is not Chinese


def placeholders(template: str) -> set[str]:
    """The field names a template uses ({what}, {index}, {err:.3g} -> err). Raises ValueError
    for a malformed template (a single brace)."""
    names = set()
    for _, name, _, _ in string.Formatter().parse(template):
        if name is not None:
            if name == "" or name.isdigit():
                raise ValueError(f"positional field {{{name}}} in {template!r}: name it")
            names.add(name.split(".")[0].split("[")[0])
    return names


def pair_problems(en: str, zh: str, templates: bool = True) -> list[str]:
    """What is wrong with one English/Chinese pair: an empty side, Chinese text without Chinese,
    or (for templates) different or malformed {fields}."""
    problems = []
    if not en.strip():
        problems.append("the English text is empty")
    if not zh.strip():
        problems.append("the Chinese text is empty")
    elif not CJK.search(zh) and re.search(r"[A-Za-z]", re.sub(r"\{[^{}]*\}", "", en)):
        problems.append(f"the Chinese text {zh!r} has no Chinese in it")
    if templates:
        try:
            a, b = placeholders(en), placeholders(zh)
        except ValueError as e:
            problems.append(str(e))
        else:
            if a != b:
                problems.append(f"the fields differ: English {sorted(a)}, Chinese {sorted(b)}")
    return problems


def catalog_problems(catalog: dict | None = None) -> list[str]:
    """Every catalog entry has exactly an English and a Chinese text with the same fields."""
    problems = []
    for key, entry in (CATALOG if catalog is None else catalog).items():
        langs = set(entry)
        if langs != set(LANGS):
            missing = sorted(set(LANGS) - langs)
            extra = sorted(langs - set(LANGS))
            problems.append(f"message {key!r}: " + "; ".join(
                ([f"no {', '.join(missing)} text"] if missing else []) + ([f"unknown language(s) {extra}"] if extra else [])))
            continue
        problems += [f"message {key!r}: {p}" for p in pair_problems(entry["en"], entry["zh"])]
    return problems
