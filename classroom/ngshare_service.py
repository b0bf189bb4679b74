"""``python ngshare_service.py ARGS``: ngshare as the hub runs it, listening on the service's own address only.

ngshare 0.6.0, run by a hub, listens on every interface (``ngshare.py``: ``listen(port, '0.0.0.0')``,
"Must listen on all interfaces for proxy"; its ``--host`` serves its stand-alone mode only), so
anyone who reaches the machine reaches the exchange beside the hub's proxy. This runs ngshare's
own ``main`` with tornado's server bound to the host of ``JUPYTERHUB_SERVICE_URL``, the address
the hub gives the service (127.0.0.1 on the classroom hub: classroom/jupyterhub_config.py).
It runs in ngshare's own environment (classroom/provision.py), from the hub's runtime folder,
and imports nothing of the course.

Before ngshare starts, the launcher moves itself into the cgroups the hub made for it
(``TFCOURSE_SERVICE_CGROUPS``: their memory limit, classroom/limits.py): tornado holds each request's
body whole in memory (up to its default ``max_body_size``, 100 MiB), and many at once.
"""

import os
import sys
from urllib.parse import urlparse

from ngshare import ngshare
from tornado.httpserver import HTTPServer


class ServiceAddressServer(HTTPServer):
    """tornado's HTTP server, listening on the service's own host whatever address it is asked for."""

    def listen(self, port: int, address: str | None = None, **kwargs: object) -> None:
        super().listen(port, urlparse(os.environ["JUPYTERHUB_SERVICE_URL"]).hostname, **kwargs)


def join_own_cgroups() -> None:
    """Into the cgroups the hub made for this service, whose limits it cannot change (none where limits are off)."""
    for procs in os.environ.get("TFCOURSE_SERVICE_CGROUPS", "").split():
        with open(procs, "w") as control:
            control.write(str(os.getpid()))


if __name__ == "__main__":
    join_own_cgroups()
    ngshare.HTTPServer = ServiceAddressServer  # ngshare.main makes its server from this name
    ngshare.main(sys.argv[1:])
