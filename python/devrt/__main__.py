# SPDX-License-Identifier: Apache-2.0
"""`python -m devrt` and the `devrt-info` command a pip install makes: devrt-info, the program that
lists every backend, device, attribute and detected target (--json, --selftest, --build, --version),
shipped with the package. The same program as the C++ build's tools/devrt-info, run in place of this
process."""
import os
import shutil
import sys
import sysconfig


def _candidates():
    package_dirs = list(getattr(sys.modules.get("devrt"), "__path__", [])) or [os.path.dirname(__file__)]
    for folder in package_dirs:
        yield os.path.join(folder, "devrt-info")  # a wheel: beside the package's compiled module
        # A build tree: <build>/python/devrt holds the compiled module, <build>/tools the program.
        yield os.path.join(folder, os.pardir, os.pardir, "tools", "devrt-info")
    try:  # meson install: <prefix>/bin, written into devrt/_install.py
        from devrt import _install

        yield os.path.join(_install.BINDIR, "devrt-info")
    except ImportError:
        pass
    yield os.path.join(sysconfig.get_path("scripts"), "devrt-info")


def find():
    """The devrt-info program of this installation, or None."""
    for path in _candidates():
        if os.path.isfile(path) and os.access(path, os.X_OK) and not _is_this_script(path):
            return os.path.normpath(path)
    found = shutil.which("devrt-info")
    return found if found and not _is_this_script(found) else None


def _is_this_script(path):
    # pip's console script of the same name is a Python file that calls main(): never run it again.
    with open(path, "rb") as file:
        return file.read(2) == b"#!" and b"devrt.__main__" in file.read(4096)


def main():
    import devrt  # noqa: F401 -- its __path__ says where this installation lives

    program = find()
    if program is None:
        sys.stderr.write("devrt-info is not installed with this devrt (its build had -Dtools=false)\n")
        return 2
    sys.stdout.flush()
    os.execv(program, [program, *sys.argv[1:]])
    return 0  # not reached: execv replaces this process


if __name__ == "__main__":
    sys.exit(main())
