"""Build configuration that pyproject.toml cannot express: the optional compiled scanner.

`optional=True`: without a C compiler (or Python's headers) the build only warns and the
pure-Python scanner runs; `musify.frontend.scanner.SCANNER` says which one is in use.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("musify.frontend._cscan", ["musify/frontend/_cscan.c", "musify/frontend/_cscan_ident.c"],
                  depends=["musify/frontend/_cscan.h"], optional=True,
                  extra_compile_args=["-O2"]),
    ],
)
