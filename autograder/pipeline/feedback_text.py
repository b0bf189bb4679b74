"""The words of the feedback page's summary, in the language of the edition the student worked in.

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
    },
}


def page_language(language: str) -> str:
    """The language the page is written in: ``language`` where the page speaks it, else English."""
    return language if language in WORDS else "en"


def words(language: str) -> dict:
    """The summary's words in ``language`` (English for one the page does not speak)."""
    return WORDS[page_language(language)]
