"""A student's ``nbgrader submit`` on the hub: a hand-in only its student and the instructors can read.

nbgrader 0.9.6's submit leaves the hand-in folder in the exchange open to everyone (0777, so
that an instructor can delete it) with its files readable by all (0644), and logs the folder's
full name, whose random part is all that hides it from other students: whoever reads that log
can read the submission secret (and with it the student's feedback page) and replace the
hand-in. Here the folder is 0750 and its files 0640, in the group of the exchange's inbound
folder (the instructors', inherited through its set-group-id bit), and the log names the folder
without its random part. The hub's shared nbgrader settings select it for every user
(``ExchangeFactory.submit``); an attacker can bypass it for their own hand-ins, never for another's.
"""

import os
import secrets
import shutil

from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import ignore_patterns

FOLDER_MODE = 0o750  # owner rwx, instructors r-x (the group the inbound's set-group-id bit gave), others nothing
FILE_MODE = 0o640


class PrivateSubmit(ExchangeSubmit):
    def copy_files(self) -> None:
        self.init_release()
        secret = secrets.token_hex(64)  # names the feedback page (nbgrader's notebook_hash)
        dest = os.path.join(self.inbound_path, self.assignment_filename)
        cache = os.path.join(self.cache_path, self.assignment_filename.rsplit("+", 1)[0])
        self.log.info("Source: %s", self.src_path)
        self.log.info("Destination: %s", os.path.join(self.inbound_path, self.assignment_filename.rsplit("+", 1)[0]))
        self.check_filename_diff()
        previous = os.umask(0o027)  # what is made here starts closed to other students
        try:
            # The folder first, with the marks, while it still has the inbound's set-group-id bit:
            # copytree's copystat clears that bit (a student is not in the instructors' group and
            # cannot set it again), and a file made after that would be in the student's own group.
            os.mkdir(dest)
            self.mark(dest, secret)
            self.do_copy(self.src_path, dest)
            self.set_perms(dest, fileperms=FILE_MODE, dirperms=FOLDER_MODE)
        finally:
            os.umask(previous)
        os.makedirs(self.cache_path, exist_ok=True)  # the student's own copy, which fetch_feedback reads
        self.do_copy(self.src_path, cache)
        self.mark(cache, secret)
        self.log.info("Submitted as: %s %s %s", self.coursedir.course_id, self.coursedir.assignment_id, self.timestamp)

    def do_copy(self, src: str, dest: str, log=None) -> None:
        """nbgrader's copy (its size limit, its ignore and include patterns) into a folder that may exist."""
        size = self.get_size(src)
        if size > 1000 * self.coursedir.max_dir_size:
            self.log.error("Directory size is too big")
            limit = 1000 * self.coursedir.max_dir_size
            raise RuntimeError(f"Directory size is too big. Size is {size}, maximum size is {limit}")
        patterns = ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                                   max_file_size=self.coursedir.max_file_size, log=self.log)  # fmt: skip
        shutil.copytree(src, dest, ignore=patterns, dirs_exist_ok=True)

    def mark(self, folder: str, secret: str) -> None:
        """The two files nbgrader's submit writes beside the notebooks."""
        with open(os.path.join(folder, "timestamp.txt"), "w") as handle:
            handle.write(self.timestamp)
        with open(os.path.join(folder, "submission_secret.txt"), "w") as handle:
            handle.write(secret)
