"""The package version (also in pyproject.toml), importable without the package's lazy API."""

__version__ = "0.1.0"
