"""Build step of the sqlite-chash package: the chash loadable extension
goes into the package beside its module.

It is built by the repository's Makefile (`make`, which needs a C
compiler, SQLite's headers, xxHash's header, nettle, zlib and libyaml), or taken
from the path in the environment variable CHASH_LOADABLE where the
extension was built some other way.
"""
import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SUFFIX = {"darwin": "dylib", "win32": "dll", "cygwin": "dll"}.get(sys.platform, "so")


def built_loadable():
    """The path of a freshly built chash loadable extension."""
    given = os.environ.get("CHASH_LOADABLE")
    if given:
        if not os.path.isfile(given):
            sys.exit("sqlite-chash: CHASH_LOADABLE=%s is not a file" % given)
        return given
    if not os.path.isfile(os.path.join(REPO, "Makefile")):
        sys.exit("sqlite-chash: build from a checkout of chash (bindings/python),"
                 " or set CHASH_LOADABLE to a built chash.%s" % SUFFIX)
    subprocess.check_call(["make", "-C", REPO, "--no-print-directory", "chash." + SUFFIX])
    return os.path.join(REPO, "chash." + SUFFIX)


class BuildWithLoadable(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "sqlite_chash", "chash." + SUFFIX)
        shutil.copyfile(built_loadable(), target)


class BinaryDistribution(Distribution):
    """The package holds a compiled library: its wheel is per platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLoadable}, distclass=BinaryDistribution)
