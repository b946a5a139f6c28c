"""Package discovery (the rest of the metadata is in pyproject.toml).

The repository root is the `xrelay` package (`package-dir = {"xrelay" = "."}`), so every
subpackage below it ships as `xrelay.<subpackage>`, found rather than listed by hand; the
tests, benchmarks and examples stay out of the wheel, and so does this file.
"""

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

NOT_SHIPPED = ["tests", "tests.*", "bench", "bench.*", "examples", "examples.*"]


class BuildPy(build_py):
    def find_package_modules(self, package: str, package_dir: str) -> list:
        found = super().find_package_modules(package, package_dir)
        return [m for m in found if (m[0], m[1]) != ("xrelay", "setup")]


setup(
    packages=["xrelay", *(f"xrelay.{p}" for p in find_packages(".", exclude=NOT_SHIPPED))],
    cmdclass={"build_py": BuildPy},
)
