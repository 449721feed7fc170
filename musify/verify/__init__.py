"""`musify verify`: build the original and the port on the emulator, run both, compare.

The flow is `musify.verify.flow.verify_record`; this package's `__init__` stays empty of imports
so that the command line can read the verify options (musify/verify/options.py) without loading
the engine (docs/verify.md).
"""
