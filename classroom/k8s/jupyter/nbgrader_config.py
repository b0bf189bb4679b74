# Every user's nbgrader settings in the single-user image (/etc/jupyter/nbgrader_config.py).
# The exchange is a ReadWriteMany volume that values.yaml mounts at this path in every pod;
# tests/classroom/test_k8s.py checks that the two agree.
c = get_config()  # noqa: F821 (traitlets provides get_config)
c.CourseDirectory.course_id = "transformers-from-scratch"  # as autograder/course/settings.py sets it
c.Exchange.root = "/srv/nbgrader/exchange"
