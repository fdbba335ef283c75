"""The package version (one place; ``meld8_env.__version__`` re-exports it, replay files record it)."""

__version__ = "0.1.0"
