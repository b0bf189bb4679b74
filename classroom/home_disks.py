"""Each student's home on a filesystem of its own, a loop-mounted ext4 image: a student who writes until the disk
refuses fills their own home only, never the disk that the exchange, the course folder, the others' homes and the
hub's database share.

The way to bound a student's disk where per-user quotas cannot be had (this project's containers: their kernel
refuses ext4's and XFS's quota mount options). The hub, as root, makes ``<prefix>/homes/<user>.ext4`` (sparse: it
takes on the disk what the student wrote, up to its size) before the student's first limited server starts, copies
the home's files into it, and mounts it on the home (``nosuid,nodev``) before each start where it is not mounted
(after a reboot). It bounds the home only: what a student writes in ``/tmp`` or the filesystem exchange's inbound is
bounded by per-user quotas alone (docs/running-a-class.md, *Disk*).
"""

import os
import pwd
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


def mount(image: Path, target: Path | str) -> None:
    subprocess.run(["mount", "-o", "loop,nosuid,nodev", str(image), str(target)], check=True, capture_output=True)


@dataclass(frozen=True)
class HomeDisks:
    """The folder of the students' home images (root's, 700)."""

    folder: Path

    def image(self, user: str) -> Path:
        return self.folder / f"{user}.ext4"

    def ensure(self, user: str, size: int) -> Path:
        """The user's home, mounted on its own filesystem of ``size`` bytes (made the first time, with the home's
        files; a home already mounted is left as it is)."""
        account = pwd.getpwnam(user)
        home = Path(account.pw_dir)
        if os.path.ismount(home):
            return home
        image = self.image(user)
        if not image.exists():
            self.make(image, home, account, size)
        mount(image, home)
        return home

    def make(self, image: Path, home: Path, account: pwd.struct_passwd, size: int) -> None:
        """An image of ``size`` bytes holding a copy of ``home``'s files, owned by the user, 700."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = image.with_name(f"{image.name}.part")
        with open(partial, "wb") as sparse:
            sparse.truncate(size)
        # -m 0: no blocks kept for root (nobody else writes here); the root folder is the user's.
        make_fs = ["mkfs.ext4", "-q", "-F", "-m", "0", "-E", f"root_owner={account.pw_uid}:{account.pw_gid}"]
        subprocess.run([*make_fs, str(partial)], check=True, capture_output=True)
        with tempfile.TemporaryDirectory() as staging:
            mount(partial, staging)
            try:
                (Path(staging) / "lost+found").rmdir()  # not the student's to see; e2fsck makes it again if needed
                os.chmod(staging, 0o700)
                copied = subprocess.run(["cp", "-a", f"{home}/.", staging], capture_output=True, text=True)
                if copied.returncode != 0:
                    raise OSError(
                        f"{home} could not be copied into a disk of {size:,} bytes (the disk limit, DISK_LIMIT): "
                        f"{copied.stderr.strip()}; is the home larger than the limit?"
                    )
            finally:
                subprocess.run(["umount", staging], check=True)
        partial.rename(image)
