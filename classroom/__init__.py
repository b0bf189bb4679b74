"""The course on a JupyterHub: provisioning (run as root), the roster, the hub's configuration.

``make hub`` lays out the hub under one prefix (``/srv/tfcourse`` by default, see
:class:`classroom.layout.HubLayout`) and starts JupyterHub with ``classroom/jupyterhub_config.py``.
"""
