"""What pyproject.toml cannot say: build in a temporary folder, so `pip install .` and `pipx install .`
leave no build/ and no s08.egg-info/ in the clone (pip builds in the source tree; a clone that has
them holds a second copy of every source file, and "every Python file" would count them)."""

import atexit
import shutil
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    """The package is the repository's root folder: this file is not one of its modules."""

    def find_package_modules(self, package, package_dir):
        return [m for m in super().find_package_modules(package, package_dir) if m[1] != "setup"]


WORK = tempfile.mkdtemp(prefix="s08-build-")
atexit.register(shutil.rmtree, WORK, True)
setup(cmdclass={"build_py": BuildPy}, options={"build": {"build_base": WORK}, "egg_info": {"egg_base": WORK}})
