"""Where the classroom hub keeps everything, under one prefix: what each folder holds, its owner and its mode are
in docs/running-a-class.md (the table "What the prefix holds")."""

import grp
from dataclasses import dataclass
from pathlib import Path

from autograder.course.settings import CourseSettings, load_config

DEFAULT_PREFIX = Path("/srv/tfcourse")
INSTRUCTORS = "tfcourse-instructors"
STUDENTS = "tfcourse-students"
COURSE_ID = CourseSettings(config=load_config()).course_id  # the exchange's course: the repository's setting


@dataclass(frozen=True)
class HubLayout:
    prefix: Path = DEFAULT_PREFIX
    # The Python environment the users' servers run: ``env/`` under the prefix on the course's own hub; a
    # department's existing one where the course is added to its hub (classroom/install.py).
    users_env: Path | None = None

    @property
    def env(self) -> Path:
        return self.users_env or self.prefix / "env"

    @property
    def python(self) -> Path:
        return self.env / "bin" / "python"

    @property
    def runtime(self) -> Path:
        return self.prefix / "runtime"

    @property
    def proxy(self) -> Path:
        return self.prefix / "proxy" / "node_modules" / ".bin" / "configurable-http-proxy"

    @property
    def config(self) -> Path:
        return self.prefix / "config"

    def role_config(self, role: str) -> Path:
        return self.config / role

    @property
    def course(self) -> Path:
        return self.prefix / "course"

    @property
    def exchange(self) -> Path:
        return self.prefix / "exchange"

    @property
    def state(self) -> Path:
        return self.prefix / "state"

    @property
    def home_images(self) -> Path:
        return self.prefix / "homes"

    @property
    def exchange_choice(self) -> Path:
        """Which exchange ``provision`` set up (``filesystem`` or ``ngshare``): the hub's config reads it."""
        return self.config / "exchange"

    def exchange_kind(self) -> str:
        return self.exchange_choice.read_text().strip() if self.exchange_choice.exists() else "filesystem"

    @property
    def ngshare_env(self) -> Path:
        return self.prefix / "ngshare-env"

    @property
    def ngshare_state(self) -> Path:
        return self.prefix / "ngshare"


def members(group: str) -> list[str]:
    """The system users in ``group``, read afresh at each call (none where there is no such group)."""
    try:
        return grp.getgrnam(group).gr_mem
    except KeyError:
        return []


def is_instructor(account: str) -> bool:
    return account in members(INSTRUCTORS)
