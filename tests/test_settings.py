"""The course's settings, each declared once (autograder/course/settings.py): read from the course's
nbgrader_config.py and the command line, the same for the one-machine hub and Kubernetes, the docs' table and the
Kubernetes image's nbgrader settings generated from the declarations, and the commands' lines logged."""

import re
from pathlib import Path

import pytest
import yaml
from traitlets.config import Config, PyFileConfigLoader

from autograder.cli import main, parser
from autograder.course.settings import REPO_ROOT, CourseSettings, GradeSettings, HubSettings, load_config
from autograder.course.settings_table import K8S_CONFIG, generated
from autograder.launch.limits import Limits
from classroom.layout import HubLayout
from classroom.provision import write_config
from tests.classroom.test_k8s import exec_config

K8S = REPO_ROOT / "classroom" / "k8s"
EVERY_USERS = ("CourseDirectory", "Execute")  # the sections every user's nbgrader settings hold (every_users_settings)


def test_the_generated_files_are_what_the_declarations_give() -> None:
    for path, text in generated().items():
        assert (REPO_ROOT / path).read_text() == text, (
            f"{path} is out of date: run `python -m autograder.course.settings_table` and commit it"
        )


def test_kubernetes_and_the_one_machine_hub_give_every_user_the_same_nbgrader_settings(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "someone")  # ngshare_exchange reads both on import, as in every pod
    monkeypatch.setenv("TFCOURSE_NGSHARE_URL", "http://proxy-public/services/ngshare")
    kubernetes = exec_config(REPO_ROOT / K8S_CONFIG)
    layout = HubLayout(tmp_path)
    write_config(layout, "ngshare")
    hub = PyFileConfigLoader("nbgrader_config.py", path=str(layout.role_config("common"))).load_config()
    both = {(section, key) for section in EVERY_USERS for key in kubernetes[section] if key in hub[section]}
    assert both == {(s, k) for s in EVERY_USERS for k in {*kubernetes[s], *hub[s]}}, "a setting only one of them has"
    assert {("CourseDirectory", "course_id"), ("Execute", "timeout")} <= both
    for section, key in both:
        assert kubernetes[section][key] == hub[section][key], f"{section}.{key}"
    assert kubernetes.Execute.timeout == CourseSettings().cell_timeout  # not nbgrader's 30 s: Validate as grading


def test_the_helm_values_agree_with_the_hub_s_settings_where_both_have_one() -> None:
    values = yaml.safe_load((K8S / "values.yaml").read_text())
    assert values["cull"]["timeout"] == HubSettings.cull_idle.default_value
    assert float(values["singleuser"]["cpu"]["limit"]) == float(HubSettings.cpu_limit.default_value)


def test_the_course_s_file_then_the_command_line_then_a_flag(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "nbgrader_config.py").write_text("c.GradeSettings.jobs = 5\nc.CourseSettings.cell_timeout = 60\n")
    student = tmp_path / "grading" / "submitted" / "ann" / "01_attention"
    student.mkdir(parents=True)
    (student / "nbgrader_config.py").write_text("c.GradeSettings.jobs = 99\n")  # a student's file: never read
    monkeypatch.chdir(student)
    config = load_config(tmp_path)
    assert GradeSettings(config=config).jobs == 5 and Limits.configured(config).cell_timeout == 60
    args = parser(config).parse_args(["grade"])
    assert (args.jobs, args.cell_timeout, args.timeout) == (5, 60, GradeSettings.wall_seconds.default_value)
    config = load_config(tmp_path, ["--GradeSettings.jobs=7", "--GradeSettings.reference_factor=3"])
    assert parser(config).parse_args(["grade"]).jobs == 7 and Limits.configured(config).reference_factor == 3
    assert parser(config).parse_args(["grade", "--jobs", "3"]).jobs == 3
    assert GradeSettings(config=load_config(tmp_path / "elsewhere")).jobs == GradeSettings.jobs.default_value


def test_a_variable_gives_a_setting_the_configuration_leaves_unset(monkeypatch) -> None:
    monkeypatch.setenv("TFCOURSE_HUB_PORT", "9001")
    assert HubSettings().port == 9001
    assert HubSettings(config=Config({"HubSettings": {"port": 9002}})).port == 9002
    monkeypatch.setenv("TFCOURSE_HUB_PORT", "")
    assert HubSettings().port == HubSettings.port.default_value


def test_the_make_hub_variables_table_and_help_say_the_declared_defaults() -> None:
    text = (REPO_ROOT / "docs" / "running-a-class.md").read_text()
    rows = dict(re.findall(r"^\| `([A-Z_]+)` \| (\S+)[^|]* \|", text, re.M))
    names = {"CULL_IDLE", "KERNEL_CULL_IDLE", "MEM_LIMIT", "CPU_LIMIT", "TASKS_LIMIT", "DISK_LIMIT"}
    names.add("NGSHARE_MEM_LIMIT")
    assert names <= set(rows), sorted(names - set(rows))
    for name in names:
        assert rows[name] == str(getattr(HubSettings, name.lower()).default_value), name
    (hub_help,) = [line for line in (REPO_ROOT / "Makefile").read_text().splitlines() if line.startswith("hub:")]
    written = dict(re.findall(r"\b([A-Z_]+)=([0-9][0-9A-Za-z.]*)", hub_help))
    assert names <= set(written), sorted(names - set(written))
    for name, value in written.items():
        assert value == str(getattr(HubSettings, name.lower()).default_value), f"make hub's help: {name}={value}"


@pytest.mark.parametrize(
    ("document", "sentence"),
    [
        ("docs/running-a-class.md", "Grading allows a cell `CourseSettings.cell_timeout` ({cell_timeout} s)"),
        ("classroom/k8s/README.md", "the plain cell timeout (`CourseSettings.cell_timeout`, {cell_timeout} s)"),
        ("docs/instructors.md", "every cell {reference_factor:g}x its reference time plus {reference_margin:g} s"),
    ],
)
def test_a_value_written_out_in_a_document_is_the_declared_default(document: str, sentence: str) -> None:
    defaults = {name: trait.default_value for name, trait in {**CourseSettings.class_traits(),
                                                               **GradeSettings.class_traits()}.items()}
    text = " ".join((REPO_ROOT / document).read_text().split())
    assert sentence.format(**defaults) in text, f"{document} should say: {sentence.format(**defaults)}"


def test_log_level_quiets_and_raises_verbosity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = "checked 0 notebooks of 0 students"
    assert main(["--root", str(tmp_path), "sanitize"]) == 0
    said = capsys.readouterr()
    assert summary in said.out and "settings (" not in said.out + said.err
    for quiet in (["--quiet", "sanitize"], ["sanitize", "-q"], ["sanitize", "--log-level", "warning"]):
        assert main(["--root", str(tmp_path), *quiet]) == 0
        said = capsys.readouterr()
        assert said.out == said.err == "", quiet
    assert main(["--root", str(tmp_path), "sanitize", "--verbose", "--GradeSettings.jobs=3"]) == 0
    said = capsys.readouterr()
    assert "{'GradeSettings': {'jobs': 3}}" in said.out and summary in said.out
