"""A student's kernel answers after every (re)start, or ends in jupyter's own "dead" state: never a kernel that is
alive and silent, however the ports it was given were taken.

jupyter_client picks a kernel's five ports and writes them into its connection file; the kernel binds them a second
or two later (jupyter_client#487: the kernel does not choose them itself, JEP 66's handshake is not implemented in
jupyter_client 8.10). On the one-machine hub every student's processes share the machine's ports, and any of them
can take one in between: another student's kernel that starts then, or a student who watches another's ports
(``/proc/net/tcp`` lists everyone's). jupyter_client also restarts a kernel on the dead kernel's ports (its
``newports`` changes nothing under jupyter_server: the ports come from its port cache), and the student's "Restart
kernel" keeps them too, so a port taken after an out-of-memory kill stops every restart. A taken shell port stops
the kernel at once on "Address already in use"; any later port leaves a kernel that bound its shell port and hangs
as it exits (ipykernel 7.4 waits in ``zmq.Context.term`` for the socket that failed to bind): its process lives, so
the server's restarter (which only watches the process) never acts, and every cell waits for ever.

:class:`FreshPortsKernelManager` therefore restarts a kernel on new ports, and waits for each new kernel to answer
a ``kernel_info`` request, for the server's ``MappingKernelManager.kernel_info_timeout`` (60 s by default, the time
jupyter_server gives a restarted kernel), as jupyter_client's restarter says would be correct and does not do. A
kernel that does not answer is stopped, so that the restarter starts it again, on new ports, up to its
``restart_limit``; past that the server drops it and JupyterLab says the kernel is dead. After a restart its server
watches the new kernel's messages (jupyter_server does that only for a restart asked over its API, so after an
automatic one it kept the dead kernel's state, "busy", and never saw the new kernel's activity). JupyterLab opens a
new channel to a restarted kernel, on its current ports. Student servers select it with
``MappingKernelManager.kernel_manager_class`` (classroom/provision.py's ``STUDENT_KERNEL_MANAGER``, and the k8s
image's student role).
"""

from __future__ import annotations

from typing import Any

from jupyter_client.connect import LocalPortCache, port_names
from jupyter_client.session import Session
from jupyter_server.services.kernels.kernelmanager import ServerKernelManager


class FreshPortsKernelManager(ServerKernelManager):
    """A student server's kernel manager: each restart on new ports, and a kernel that does not answer stopped."""

    async def _async_pre_start_kernel(self, **kw: Any) -> tuple[list[str], dict[str, Any]]:
        if self.transport == "tcp" and self.shell_port:  # a restart: any of the old ports may have been taken since
            cache = LocalPortCache.instance()
            for name in port_names:
                cache.return_port(getattr(self, name))
                setattr(self, name, cache.find_available_port(self.ip))
            self.cleanup_connection_file()  # rewritten with the new ports
        return await super()._async_pre_start_kernel(**kw)

    async def _async_post_start_kernel(self, **kw: Any) -> None:
        if silence := await self._silence():
            self.log.warning("Kernel %s: %s; stopped, to be restarted on new ports", self.kernel_id, silence)
            await self.provisioner.kill()  # as the machine stops a kernel: the restarter finds it dead
        await super()._async_post_start_kernel(**kw)  # starts the restarter

    async def _silence(self) -> str | None:
        """Why the kernel did not answer a kernel_info request in time (it died, or never replied), or None."""
        # A session of its own, as each of the server's channels has: a client on the manager's session would share
        # its ZeroMQ identity, and the kernel's shell hands an identity over to its newest connection.
        client = self.client(session=Session(config=self.session.config, key=self.session.key))
        client.start_channels(stdin=False, hb=False, control=False)
        try:
            await client.wait_for_ready(timeout=self.parent.kernel_info_timeout)
        except RuntimeError as error:  # jupyter_client's: "Kernel died before replying ...", "... didn't respond ..."
            return str(error)
        finally:
            client.stop_channels()
        return None

    async def restart_kernel(self, *args: Any, **kwargs: Any) -> None:
        await super().restart_kernel(*args, **kwargs)
        servers_kernels = self.parent
        watching = getattr(servers_kernels, "_kernel_ports", {})
        if self.kernel_id in watching and servers_kernels._get_changed_ports(self.kernel_id) is not None:
            servers_kernels.stop_watching_activity(self.kernel_id)
            self.execution_state = "starting"
            servers_kernels.start_watching_activity(self.kernel_id)
