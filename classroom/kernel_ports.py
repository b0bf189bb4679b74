"""A kernel that died (stopped past its memory limit, or restarted by its student) comes back even when another
process took one of its ports meanwhile.

jupyter_client restarts a kernel on the dead kernel's ports (its ``newports`` for a kernel that dies within its
first seconds changes nothing under jupyter_server: the ports come from its port cache), and the student's
"Restart kernel" keeps them too. On the one-machine hub every student's processes share the machine's ports, and
any of them can be taken between the old kernel's end and the new kernel's start (the restarter looks every 3 s):
by another student's kernel that starts then, or on purpose by a student who watches another's ports
(``/proc/net/tcp`` lists everyone's). Taken, the shell port stops the new kernel at once on "Address already in
use", all five automatic restarts end the same way, and the server drops the kernel: JupyterLab marks it dead and
neither runs a cell nor restarts it ("Kernel is dead"). Any later port leaves a kernel that bound its shell port
and hangs as it exits: its process lives, so nothing restarts it, and every cell waits for ever.

:class:`FreshPortsKernelManager` starts a kernel on new ports when one of the old ones is taken (each attempt
checks again), and after a restart on new ports its server watches the new kernel's messages (jupyter_server does
that only for a restart asked over its API, so after an automatic one it kept the dead kernel's state, "busy",
and never saw the new kernel's activity). JupyterLab opens a new channel to a restarted kernel, on its current
ports. Student servers select it with ``MappingKernelManager.kernel_manager_class`` (classroom/provision.py's
``STUDENT_KERNEL_MANAGER``, and the k8s image's student role).
"""

from __future__ import annotations

import errno
import socket
from typing import Any

from jupyter_client.connect import LocalPortCache, port_names
from jupyter_server.services.kernels.kernelmanager import ServerKernelManager


def port_taken(ip: str, port: int) -> bool:
    """Whether a kernel could not listen on ``ip:port`` now (bound as ZeroMQ binds: SO_REUSEADDR, so a closed
    connection's TIME_WAIT does not count)."""
    with socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((ip, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return True
            raise
    return False


class FreshPortsKernelManager(ServerKernelManager):
    """A student server's kernel manager: a (re)start on new ports where an old one is taken."""


    async def _async_pre_start_kernel(self, **kw: Any) -> tuple[list[str], dict[str, Any]]:
        taken = [name for name in port_names if self.transport == "tcp" and 0 < getattr(self, name)]
        taken = [name for name in taken if port_taken(self.ip, getattr(self, name))]
        if taken:  # jupyter_client's own newports=True changes nothing here: the ports came from its port cache
            self.log.warning("Kernel %s: %s taken since its last start; new ones", self.kernel_id, ", ".join(taken))
            cache = LocalPortCache.instance()
            for name in taken:
                cache.return_port(getattr(self, name))
                setattr(self, name, cache.find_available_port(self.ip))
            self.cleanup_connection_file()  # rewritten with the new ports
        return await super()._async_pre_start_kernel(**kw)

    async def restart_kernel(self, *args: Any, **kwargs: Any) -> None:
        await super().restart_kernel(*args, **kwargs)
        servers_kernels = self.parent
        watching = getattr(servers_kernels, "_kernel_ports", {})
        if self.kernel_id in watching and servers_kernels._get_changed_ports(self.kernel_id) is not None:
            servers_kernels.stop_watching_activity(self.kernel_id)
            self.execution_state = "starting"
            servers_kernels.start_watching_activity(self.kernel_id)
