"""musify: a syntax-aware CUDA-to-MUSA source migration toolkit."""

__version__ = "0.1.0"
