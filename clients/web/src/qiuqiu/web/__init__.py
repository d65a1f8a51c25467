"""The browser client: plain HTML, CSS and JavaScript modules in ``static/``,
served by ``qiuqiu-server`` at ``/``. It speaks only the public protocol."""

from importlib.resources import files
from importlib.resources.abc import Traversable

STATIC: Traversable = files(__name__) / "static"
"""The page's files, wherever the package is installed."""
