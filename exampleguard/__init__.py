"""exampleguard: keep the command examples a CLI publishes to AI agents true."""

__all__ = ["__version__"]

__version__ = "0.1.0"
