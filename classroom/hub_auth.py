"""Who may log in to the classroom hub: members of the course's two groups, and nobody else.

PAM checks a system password; LTI trusts the LMS's signed launch. Either way the user must
already be a system user in ``tfcourse-students`` or ``tfcourse-instructors`` (the roster
script makes them, with the ids that ``collect`` and ``export`` use), because each server runs
as that user. LTI's username is the launch parameter ``username_key`` names, lower-cased.
"""

from jupyterhub.auth import PAMAuthenticator
from ltiauthenticator.lti11.auth import LTI11Authenticator
from ltiauthenticator.lti13.auth import LTI13Authenticator

from classroom.layout import INSTRUCTORS, STUDENTS, members


class CourseMembersOnly:
    """An authenticator's check that lets in the course's students and instructors alone (read at every login)."""

    def check_allowed(self, username: str, authentication: dict | None = None) -> bool:
        return any(username in members(group) for group in (STUDENTS, INSTRUCTORS))


class CoursePAMAuthenticator(CourseMembersOnly, PAMAuthenticator):
    """PAM login, for the course's members only."""


class CourseLTI11Authenticator(CourseMembersOnly, LTI11Authenticator):
    """An LMS link (LTI 1.1, signed with the consumer secret), for the course's members only."""


class CourseLTI13Authenticator(CourseMembersOnly, LTI13Authenticator):
    """An LMS link (LTI 1.3, an id token the LMS signs), for the course's members only."""
