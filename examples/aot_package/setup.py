"""The wheel build runs `nanocuda build` into the package's prebuilt/ folder (the AOT hook).

Targets: $AOT_DEMO_ARCH, default sm_80,sm_90a,sm_100a (cubins) and compute_80 (PTX the driver
JIT-compiles on any newer GPU).
"""

import glob
import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

ARCH = os.environ.get("AOT_DEMO_ARCH", "sm_80,sm_90a,sm_100a,compute_80")


class build_py_with_kernels(build_py):
    def run(self):
        super().run()
        here = os.path.dirname(os.path.abspath(__file__))
        sources = sorted(glob.glob(os.path.join(here, "aot_demo", "kernels", "*.cu")))
        out = os.path.join(self.build_lib, "aot_demo", "prebuilt")
        subprocess.check_call([sys.executable, "-m", "nanocuda", "build", *sources, "--arch", ARCH, "-o", out])


setup(cmdclass={"build_py": build_py_with_kernels})
