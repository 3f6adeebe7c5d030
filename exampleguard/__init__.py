"""exampleguard: keep the command examples a CLI publishes to AI agents true."""

__version__ = "0.1.0"
