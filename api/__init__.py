"""The ASGI app (``app.py``) and its parts by concern (docs/design.md, Start here)."""

from importlib.metadata import version

__version__ = version("proofgate")

__all__ = ["__version__"]
