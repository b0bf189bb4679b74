# The instructor profile's nbgrader settings (JUPYTER_CONFIG_PATH=/etc/jupyter/roles/instructor).
# The course folder is the instructors' private volume, mounted at /srv/tfcourse/course with
# PYTHONPATH pointing there (values.yaml): the formgrader's course is the course's own settings.
# nbgrader's extensions are all on here (its defaults); the student role turns three of them off.
import ngshare_exchange

from autograder.course.settings import REPO_ROOT, configure

c = get_config()  # noqa: F821 (traitlets provides get_config)
configure(c, REPO_ROOT)
# configure() sets the course's collect for a filesystem exchange; here every step goes to ngshare.
ngshare_exchange.configureExchange(c)
