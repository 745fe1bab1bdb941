"""The version of reljudge (the package metadata's, kept equal by a test), importable by any
module without loading the package's façade."""

__version__ = "0.1.0"
