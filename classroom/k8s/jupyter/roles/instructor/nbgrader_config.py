# The instructor profile's nbgrader settings (JUPYTER_CONFIG_PATH=/etc/jupyter/roles/instructor).
# The course folder is the instructors' private volume, mounted at /srv/tfcourse/course with
# PYTHONPATH pointing there (values.yaml): the formgrader's course is the course's own settings.
# nbgrader's extensions are all on here (its defaults); the student role turns three of them off.
from autograder.course.settings import REPO_ROOT, configure

c = get_config()  # noqa: F821 (traitlets provides get_config)
configure(c, REPO_ROOT)
# Every pod runs as the image's user, jovyan (uid 1000): nbgrader names a submission after
# JUPYTERHUB_USER, but the files in the exchange are all owned by jovyan, so collect's
# owner check would call every submission a cheating attempt.
c.CollectApp.check_owner = False
