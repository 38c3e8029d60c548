# SPDX-License-Identifier: Apache-2.0
"""`python -m devrt` and the `devrt-info` command a pip install makes: devrt-info, the program that
lists every backend, device, attribute and detected target (--json, --selftest, --build, --version),
shipped with the package. The same program as the C++ build's tools/devrt-info, run in place of this
process. The `devrt-server` command runs the package's devrt-server the same way (docs/remote.md)."""
import os
import shutil
import sys
import sysconfig


def _candidates(name):
    package_dirs = list(getattr(sys.modules.get("devrt"), "__path__", [])) or [os.path.dirname(__file__)]
    for folder in package_dirs:
        yield os.path.join(folder, name)  # a wheel: beside the package's compiled module
        # A build tree: <build>/python/devrt holds the compiled module, <build>/tools the program.
        yield os.path.join(folder, os.pardir, os.pardir, "tools", name)
    try:  # meson install: <prefix>/bin, written into devrt/_install.py
        from devrt import _install

        yield os.path.join(_install.BINDIR, name)
    except ImportError:
        pass
    yield os.path.join(sysconfig.get_path("scripts"), name)


def find(name="devrt-info"):
    """The program `name` (devrt-info, devrt-server) of this installation, or None."""
    for path in _candidates(name):
        if os.path.isfile(path) and os.access(path, os.X_OK) and not _is_this_script(path):
            return os.path.normpath(path)
    found = shutil.which(name)
    return found if found and not _is_this_script(found) else None


def _is_this_script(path):
    # pip's console script of the same name is a Python file that calls main(): never run it again.
    with open(path, "rb") as file:
        return file.read(2) == b"#!" and b"devrt.__main__" in file.read(4096)


def _run(name, missing_because):
    import devrt  # noqa: F401 -- its __path__ says where this installation lives

    program = find(name)
    if program is None:
        sys.stderr.write(f"{name} is not installed with this devrt ({missing_because})\n")
        return 2
    sys.stdout.flush()
    os.execv(program, [program, *sys.argv[1:]])
    return 0  # not reached: execv replaces this process


def main():
    return _run("devrt-info", "its build had -Dtools=false")


def server_main():
    return _run("devrt-server", "its build had -Dtools=false, or no remote backend: UCX's headers were missing")


if __name__ == "__main__":
    sys.exit(main())
