"""The package's version, read by the build (pyproject) and shown by ``engine --version``."""

__version__ = "0.2.0"
