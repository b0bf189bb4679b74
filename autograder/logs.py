"""The command-line tools' lines, through the standard library's logging, as pip sends them.

Each module logs to ``logging.getLogger(__name__)``. :func:`configure` shows the course's own loggers from a level up
(``--log-level``, ``--quiet``, ``--verbose``): lines below warnings on stdout, as the commands printed them, warnings
and errors on stderr. Other libraries' loggers are left as they are.
"""

import argparse
import logging
import sys


def add_options(parser: argparse.ArgumentParser, default: str = "INFO") -> None:
    """``--log-level``, ``-q``/``--quiet``, ``-v``/``--verbose`` (``default`` SUPPRESS: keep one given earlier)."""
    parser.add_argument("--log-level", choices=("DEBUG", "INFO", "WARNING", "ERROR"), default=default, type=str.upper,
                        help="the least important lines shown (default: INFO)")
    for flags, level, what in ((("-q", "--quiet"), "WARNING", "warnings and errors only"),
                               (("-v", "--verbose"), "DEBUG", "every line, debugging ones too")):
        parser.add_argument(*flags, dest="log_level", action="store_const", const=level, default=argparse.SUPPRESS,
                            help=what)


def parse_args(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> argparse.Namespace:
    """``parser``'s arguments and the logging options, with logging configured from them."""
    add_options(parser)
    args = parser.parse_args(argv)
    configure(args.log_level)
    return args


def configure(level: str = "INFO") -> None:
    below_warnings, warnings = logging.StreamHandler(sys.stdout), logging.StreamHandler(sys.stderr)
    below_warnings.addFilter(lambda record: record.levelno < logging.WARNING)
    warnings.setLevel(logging.WARNING)
    for name in ("autograder", "classroom", "__main__"):  # __main__: a module run as ``python -m classroom.provision``
        logger = logging.getLogger(name)
        logger.handlers, logger.propagate = [below_warnings, warnings], False
        logger.setLevel(level)
