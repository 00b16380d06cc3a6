"""s08's version, defined once: `s08 --version`, `python agent.py --version` and pyproject.toml read it."""

__version__ = "0.8.0"
