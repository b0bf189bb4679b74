# The instructor profile's nbgrader settings (JUPYTER_CONFIG_PATH=/etc/jupyter/roles/instructor).
# The course folder is the instructors' private volume, mounted at /srv/tfcourse/course with
# PYTHONPATH pointing there (values.yaml): the formgrader's course is the course's own settings.
# nbgrader's extensions are all on here (its defaults); the student role turns three of them off.
import ngshare_exchange

from autograder.course.settings import REPO_ROOT, CourseSettings, configure

c = get_config()  # noqa: F821 (traitlets provides get_config)
ngshare_exchange.configureExchange(c, CourseSettings().ngshare_url)
# The course's settings after the exchange's: with TFCOURSE_NGSHARE_URL set (the image sets it), configure()
# replaces ngshare_exchange's collect with the guarded one (autograder/pipeline/exchange/ngshare_collect.py) and leaves
# every other step ngshare's, as the course folder's own nbgrader_config.py does in a terminal there.
configure(c, REPO_ROOT)
