"""The LMS formats, one module each: what the LMS imports (grades) and how feedback reaches it.

A format is a subclass of :class:`autograder.lms.base.LmsFormat` in a module of this package,
decorated with :func:`autograder.lms.base.register`; ``export --format`` offers every registered
format (docs/maintainers.md, "Adding an LMS format").
"""
