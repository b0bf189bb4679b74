"""The words of the feedback page's summary and of the clean re-run's explanations, in the student's edition.

A submission of the Chinese edition (``notebooks_zh/``, whose metadata names its edition, see
:func:`autograder.course.notebooks.edition`) gets its summary in Chinese; its own Markdown cells are already
Chinese, since nbgrader restores only locked and graded cells and the course's prose cells are
neither.
"""

WORDS = {
    "en": {
        "feedback": "Feedback",
        "title": "Feedback: {notebook}",
        "label": "{}:",  # a bold label before its value: "Status: graded"
        "separator": ": ",  # the heading's, between "Feedback" and the notebook
        "student": "Student",
        "status": "Status",
        "note": "Note",
        "score": "Autograded score",
        "by_hand": "written answers are graded by hand",
        "columns": ("test", "points", "result", "message"),
        "passed": "passed",
        "failed": "failed",
        "checks": "Checks that need a look by the instructor",
        "statuses": {"graded": "graded", "missing": "missing", "unreadable": "unreadable", "timed out": "timed out",
                     "crashed": "crashed", "flagged": "flagged"},  # fmt: skip
        "clean_rerun": "clean re-run: ",  # a failure message's prefix when the clean re-run failed the test
        # A test that passed in the student's kernel and failed in the clean re-run for a missing name.
        "clean_where": "line {line} of cell {cell}",
        "clean_missing_state": (
            "`{name}` was missing when your answers were run again on their own: {where} computes it from "
            "{lacking}, which no cell above defines (your kernel still had it from an earlier run), so that "
            "line was left out. Define what it needs in your answer cell."
        ),
        "clean_missing_code": (
            "`{name}` was missing when your answers were run again on their own: {where} sets it in top-level "
            "code (a call, a loop, an attribute), which that run leaves out. Set it with a plain assignment, or "
            "inside the function or class that uses it."
        ),
        "clean_missing_stopped": (
            "`{name}` was missing when your answers were run again on their own: cell {cell} stopped before "
            "defining it, with {error} (your kernel had what the cell needed from an earlier run)."
        ),
        "clean_missing_nowhere": (
            "`{name}` was missing when your answers were run again on their own: no cell above this test defines "
            "it (your kernel still had it from an earlier run: a cell since deleted or changed, or run out of "
            "order). Define it in your answer cell."
        ),
    },
    "zh": {
        "feedback": "反馈",
        "title": "反馈：{notebook}",
        "label": "{}：",  # Chinese text takes the full-width colon, and no space after it
        "separator": "：",
        "student": "学生",
        "status": "状态",
        "note": "说明",
        "score": "自动评分",
        "by_hand": "书面回答由教师人工评分",
        "columns": ("测试", "分数", "结果", "信息"),
        "passed": "通过",
        "failed": "未通过",
        "checks": "需要教师查看的检查项",
        "statuses": {"graded": "已评分", "missing": "未提交", "unreadable": "无法读取", "timed out": "超时",
                     "crashed": "内核中途退出", "flagged": "待教师查看"},  # fmt: skip
        "clean_rerun": "单独重新运行：",
        "clean_where": "单元格 {cell} 的第 {line} 行",
        "clean_missing_state": (
            "单独重新运行你的答案时缺少 `{name}`：{where}用 {lacking} 计算它，"
            "而上方没有任何单元格定义 {lacking}（你的内核里还留着之前运行的结果），所以这一行被略过了。"
            "请在答案单元格中定义它所需要的内容。"
        ),
        "clean_missing_code": (
            "单独重新运行你的答案时缺少 `{name}`：{where}在顶层代码（函数调用、循环、属性赋值）中设置它，"
            "而这次运行会略过这类代码。请用普通赋值设置它，或在使用它的函数或类中设置。"
        ),
        "clean_missing_stopped": (
            "单独重新运行你的答案时缺少 `{name}`：单元格 {cell} 在定义它之前中止，错误为 {error}"
            "（你的内核里有这个单元格所需的内容，来自之前的运行）。"
        ),
        "clean_missing_nowhere": (
            "单独重新运行你的答案时缺少 `{name}`：这个测试上方没有任何单元格定义它"
            "（你的内核里还留着之前运行的结果：一个已删除或已修改的单元格，或不按顺序运行的单元格）。"
            "请在答案单元格中定义它。"
        ),
    },
}

# How the message of a test the clean re-run failed starts (verdict.award); the page says it in the student's words.
CLEAN_RERUN = WORDS["en"]["clean_rerun"]


def page_language(language: str) -> str:
    """The language the page is written in: ``language`` where the page speaks it, else English."""
    return language if language in WORDS else "en"


def words(language: str) -> dict:
    """The summary's words in ``language`` (English for one the page does not speak)."""
    return WORDS[page_language(language)]
