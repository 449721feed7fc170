"""Build the fused_ops extension: python setup.py build_ext --inplace.

The CUDA sources are compiled by nvcc with the flags below; the C++ binding by the host compiler.
"""
import glob
import os

from setuptools import setup
from torch_musa.utils.musa_extension import BuildExtension, MUSAExtension, MUSA_HOME

here = os.path.dirname(os.path.abspath(__file__))

# nvcc flags: an explicit architecture unless TORCH_CUDA_ARCH_LIST says otherwise
nvcc_flags = [
    "-O3",
    # constexpr host functions in device code
    "--offload-arch=mp_22",
    "-ffast-math",
]
if os.environ.get("TORCH_MUSA_ARCH_LIST"):
    nvcc_flags = ["-O3"]

sources = ["csrc/bindings.cpp"] + sorted(glob.glob(os.path.join("csrc", "*.mu")))

setup(
    name="fused_ops",
    version="0.1.0",
    packages=["fused_ops"],
    ext_modules=[
        MUSAExtension(
            name="fused_ops._C",
            sources=sources,
            include_dirs=[os.path.join(here, "csrc"), os.path.join(MUSA_HOME, "include")],
            extra_compile_args={"cxx": ["-O3"], "mcc": nvcc_flags},
            libraries=["musart"],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
