"""The ASGI app, settings, limits, error mapping and the ``proofgate`` command."""

from importlib.metadata import version

__version__ = version("proofgate")
