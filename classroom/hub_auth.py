"""Who may log in to the classroom hub: members of the course's two groups, and nobody else.

PAM checks a system password; LTI trusts the LMS's signed launch. Either way the user must
already be a system user in ``tfcourse-students`` or ``tfcourse-instructors`` (the roster
script makes them, with the ids that ``collect`` and ``export`` use), because each server runs
as that user. LTI's username is the launch parameter ``username_key`` names, lower-cased.
"""

import grp

from jupyterhub.auth import PAMAuthenticator
from ltiauthenticator.lti11.auth import LTI11Authenticator
from ltiauthenticator.lti13.auth import LTI13Authenticator

from classroom.layout import INSTRUCTORS, STUDENTS


def in_course(username: str) -> bool:
    """``username`` is a member of the course's students or instructors (read fresh at every login)."""
    for group in (STUDENTS, INSTRUCTORS):
        try:
            if username in grp.getgrnam(group).gr_mem:
                return True
        except KeyError:
            continue
    return False


class CoursePAMAuthenticator(PAMAuthenticator):
    """PAM login, for the course's members only."""

    def check_allowed(self, username: str, authentication: dict | None = None) -> bool:
        return in_course(username)


class CourseLTI11Authenticator(LTI11Authenticator):
    """An LMS link (LTI 1.1, signed with the consumer secret), for the course's members only."""

    def check_allowed(self, username: str, authentication: dict | None = None) -> bool:
        return in_course(username)


class CourseLTI13Authenticator(LTI13Authenticator):
    """An LMS link (LTI 1.3, an id token the LMS signs), for the course's members only."""

    def check_allowed(self, username: str, authentication: dict | None = None) -> bool:
        return in_course(username)
