# Every user's nbgrader settings in the single-user image (/etc/jupyter/nbgrader_config.py).
# The exchange is the ngshare service (values.yaml registers it with the hub; ngshare-values.yaml
# installs it): each user's nbgrader talks to it with their own hub token, so who hands in what
# comes from the hub, not from a shared volume every pod (all running as jovyan) could write.
# Its address is TFCOURSE_NGSHARE_URL (the Dockerfile sets it: the chart's proxy-public Service, as
# on the one-machine hub, where the hub gives every server the variable).
import os

import ngshare_exchange

c = get_config()  # noqa: F821 (traitlets provides get_config)
c.CourseDirectory.course_id = "transformers-from-scratch"  # as autograder/course/settings.py sets it
ngshare_exchange.configureExchange(c, os.environ["TFCOURSE_NGSHARE_URL"])
