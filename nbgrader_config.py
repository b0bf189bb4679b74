# nbgrader reads this file from the folder it is started in; the settings live in autograder/.
load_subconfig("autograder/nbgrader_config.py")  # noqa: F821 (traitlets provides load_subconfig)
