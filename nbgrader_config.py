# nbgrader reads this file from the folder it is started in; the settings live in autograder/course/.
load_subconfig("autograder/course/nbgrader_config.py")  # noqa: F821 (traitlets provides load_subconfig)
