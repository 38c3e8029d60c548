# SPDX-License-Identifier: Apache-2.0
"""Autoload with TVM's semantics: plugins, DEVRT_BACKEND_AUTOLOAD, entry points, other CPythons."""
import glob
import importlib
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import devrt
from conftest import run_python

PLUGIN_BACKENDS = [name for name in os.environ.get("DEVRT_TEST_PLUGIN_BACKENDS", "").split(",") if name]


def test_import_autoloads_the_built_plugins():
    out = run_python("import devrt; print(sorted(n for p in devrt.backend.loaded_plugins() for n in p[1]))").stdout
    loaded = eval(out)
    for name in PLUGIN_BACKENDS:
        assert name in loaded, f"plugin backend {name} was not autoloaded"
    if not PLUGIN_BACKENDS:
        assert loaded == []


@pytest.mark.parametrize("off", ["0", "false", "off", "no"])
def test_autoload_off_loads_nothing_until_asked(off):
    code = textwrap.dedent("""
        import devrt
        assert not devrt.backend.autoload_enabled()
        print(len(devrt.backend.loaded_plugins()), len(devrt.backend.loaded_entry_points()))
        reasons = [devrt.backend.availability(n) for n in devrt.backend.names()]
        print(sum(1 for r in reasons if r and "autoload is off" in r))
        devrt.backend.load_all()
        print(len(devrt.backend.loaded_plugins()))
    """)
    lines = run_python(code, {"DEVRT_BACKEND_AUTOLOAD": off}).stdout.split("\n")
    assert lines[0] == "0 0"
    assert int(lines[1]) >= len(PLUGIN_BACKENDS)  # a placeholder per backend of each plugin
    assert int(lines[2]) == len(PLUGIN_BACKENDS)


def test_out_of_tree_plugin_on_the_search_path_is_loaded(tmp_path, example_plugin):
    shutil.copy(example_plugin, tmp_path)
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("DEVRT_PLUGIN_PATH")]))
    code = "import devrt; print('example' in devrt.backend.names(), devrt.ext_dev(0).exist)"
    assert run_python(code, {"DEVRT_PLUGIN_PATH": path}).stdout.split() == ["True", "True"]
    code = "import devrt; print('example' in devrt.backend.names())"
    assert run_python(code, {"DEVRT_PLUGIN_PATH": path, "DEVRT_BACKEND_AUTOLOAD": "0"}).stdout.split() == ["False"]


def test_a_broken_plugin_is_a_warning_naming_it_and_the_rest_loads(tmp_path, example_plugin):
    shutil.copy(example_plugin, tmp_path)
    (tmp_path / "libdevrt_junk.so").write_bytes(b"\x7fELF not really" * 64)
    code = textwrap.dedent("""
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import devrt
        print([str(w.message) for w in caught if w.category is devrt.backend.BackendLoadWarning])
        print('example' in devrt.backend.names())
    """)
    lines = run_python(code, {"DEVRT_PLUGIN_PATH": str(tmp_path)}).stdout.split("\n")
    messages = eval(lines[0])
    assert len(messages) == 1
    assert "libdevrt_junk.so" in messages[0] and "failed to load" in messages[0]
    assert lines[1] == "True"


def test_load_by_name_and_by_file(example_plugin):
    with pytest.raises(devrt.NotFoundError) as error:
        devrt.backend.load("no_such_backend")
    assert "search path" in str(error.value)
    assert devrt.backend.load("cpu") == "built_in"
    code = textwrap.dedent(f"""
        import devrt
        print(devrt.backend.load_plugin({example_plugin!r}), devrt.backend.load_plugin({example_plugin!r}))
    """)
    assert run_python(code, {"DEVRT_BACKEND_AUTOLOAD": "0"}).stdout.split() == ["loaded", "already_loaded"]


DEMO_PACKAGE = """
import os

import devrt

calls = []


def register():
    calls.append("register")
    with open(os.environ["DEVRT_DEMO_MARKER"], "a") as marker:
        marker.write("called\\n")
    return devrt.backend.load_plugin(os.environ["DEVRT_TEST_EXAMPLE_PLUGIN"])


def explode():
    raise RuntimeError("the demo backend's driver is missing")


def uses_everything():
    # Runs during `import devrt`: every public name must already be there.
    import contextlib
    import io
    import json

    with contextlib.redirect_stdout(io.StringIO()) as printed:
        devrt.describe()
    facts = {"describe": "runtime:" in printed.getvalue(),
             "support": devrt.support.libinfo()["version"] == devrt.__version__,
             "device": str(devrt.device("cpu", 0)),
             "tensor": devrt.tensor([1, 2, 3]).numel(),
             "target": devrt.target.detect("cpu:0")["kind"],
             "opencl_hooks": devrt.backend.is_loaded("opencl")}
    with open(os.environ["DEVRT_DEMO_MARKER"] + ".everything", "w") as out:
        json.dump(facts, out)
"""


@pytest.fixture(scope="module")
def demo_prefix(tmp_path_factory):
    """A tiny out-of-tree package with two `devrt.backends` entry points, pip-installed into a
    temporary prefix (Debian's pip and setuptools, no network)."""
    if not os.path.exists(os.environ.get("DEVRT_TEST_EXAMPLE_PLUGIN", "")):
        pytest.skip("the example out-of-tree plugin was not built")
    source = tmp_path_factory.mktemp("demo-src")
    (source / "devrt_demo_backend.py").write_text(DEMO_PACKAGE)
    (source / "pyproject.toml").write_text(textwrap.dedent("""
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "devrt-demo-backend"
        version = "0.1"

        [project.entry-points."devrt.backends"]
        demo = "devrt_demo_backend:register"
        broken = "devrt_demo_backend:explode"
        everything = "devrt_demo_backend:uses_everything"

        [tool.setuptools]
        py-modules = ["devrt_demo_backend"]
    """))
    prefix = tmp_path_factory.mktemp("demo-prefix")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
                    "--disable-pip-version-check", "--quiet", "--prefix", str(prefix), str(source)],
                   check=True, capture_output=True, env={**os.environ, "PIP_NO_CACHE_DIR": "1"})
    site = [path for path in glob.glob(str(prefix / "**" / "devrt_demo_backend.py"), recursive=True)]
    assert len(site) == 1, site
    return os.path.dirname(site[0])


def _demo_env(site, tmp_path, **extra):
    env = {"PYTHONPATH": os.pathsep.join([site, os.environ["PYTHONPATH"]]),
           "DEVRT_DEMO_MARKER": str(tmp_path / "marker")}
    env.update(extra)
    return env


DEMO_CHECK = textwrap.dedent("""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import devrt
        {action}
    print([str(w.message) for w in caught if w.category is devrt.backend.BackendLoadWarning])
    print('example' in devrt.backend.names())
""")


def test_entry_points_are_called_once_and_a_raising_one_is_reported(demo_prefix, tmp_path):
    result = run_python(DEMO_CHECK.format(action="devrt.backend.load_all(); devrt.backend.load_entry_points()"),
                        _demo_env(demo_prefix, tmp_path))
    lines = result.stdout.split("\n")
    messages = eval(lines[0])
    assert len(messages) == 1
    assert "'broken'" in messages[0] and "the demo backend's driver is missing" in messages[0]
    assert lines[1] == "True"  # the good entry point registered its backend
    assert (tmp_path / "marker").read_text() == "called\n"  # once, for import + load_all + load_entry_points


def test_entry_points_wait_for_load_all_when_autoload_is_off(demo_prefix, tmp_path):
    env = _demo_env(demo_prefix, tmp_path, DEVRT_BACKEND_AUTOLOAD="0")
    lines = run_python(DEMO_CHECK.format(action="pass"), env).stdout.split("\n")
    assert lines[0] == "[]" and lines[1] == "False"
    assert not (tmp_path / "marker").exists()
    lines = run_python(DEMO_CHECK.format(action="devrt.backend.load_all()"), env).stdout.split("\n")
    assert len(eval(lines[0])) == 1 and lines[1] == "True"
    assert (tmp_path / "marker").read_text() == "called\n"


def test_entry_points_run_after_import_finished_and_can_use_every_public_name(demo_prefix, tmp_path):
    env = _demo_env(demo_prefix, tmp_path)
    result = run_python(DEMO_CHECK.format(action="pass"), env)
    assert len(eval(result.stdout.split("\n")[0])) == 1  # only 'broken' warns
    facts = json.loads((tmp_path / "marker.everything").read_text())
    assert facts == {"describe": True, "support": True, "device": "cpu:0", "tensor": 3, "target": "llvm",
                     "opencl_hooks": True}


def test_each_in_tree_backend_has_a_module_that_owns_its_loading():
    for name in ("cuda", "rocm", "vulkan", "opencl", "hexagon", "metal", "webgpu"):
        module = importlib.import_module(f"devrt.backend.{name}")
        assert callable(module.register_backend), name
        assert devrt.backend.is_loaded(name), name  # autoloaded at import
        assert name in devrt.target.SUPPORTED_DEVICE, name
    assert devrt.backend.load("cuda") == devrt.backend.load("cuda")  # once: the same answer again
    assert devrt.backend.load("cpu") == "built_in"
    assert not devrt.backend.is_loaded("no_such_backend")
    with pytest.raises(ValueError):  # a str, of the right type, with a wrong value
        devrt.backend.load("")
    with pytest.raises(TypeError):
        devrt.backend.load(b"cuda")


def test_with_autoload_off_nothing_loads_until_asked():
    code = textwrap.dedent("""
        import devrt
        print(devrt.backend.is_loaded("opencl"), sorted(devrt.target.SUPPORTED_DEVICE))
        try:
            devrt.target.detect("cpu:0")
            print("cpu detected")
        except ValueError as error:
            print("refused:", error)
        try:
            devrt.target.detect("opencl:0")
        except ValueError as error:
            print("refused:", "load its backend" in str(error))
        print(devrt.backend.load("opencl"), devrt.backend.is_loaded("opencl"))
        if devrt.opencl(0).exist:
            print(devrt.target.detect("opencl:0")["kind"])
        else:
            print("opencl")
        devrt.backend.load_all()
        print(all(devrt.backend.is_loaded(n) for n in devrt.backend.BUILTIN_BACKENDS))
    """)
    lines = run_python(code, {"DEVRT_BACKEND_AUTOLOAD": "0"}).stdout.split("\n")
    assert lines[0] == "False ['cpu']"
    assert lines[1] == "cpu detected"
    assert lines[2] == "refused: True"
    assert lines[3].split()[1] == "True" and lines[3].split()[0] in ("built_in", "loaded", "None")
    assert lines[4] == "opencl"
    assert lines[5] == "True"


def test_a_python_detector_for_an_out_of_tree_device_type(example_plugin, tmp_path):
    shutil.copy(example_plugin, tmp_path)
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("DEVRT_PLUGIN_PATH")]))
    code = textwrap.dedent("""
        import devrt
        try:
            devrt.target.detect(devrt.ext_dev(0))
        except ValueError as error:
            print("before:", "ext_dev" in str(error))
        devrt.backend.register_device_target_detector(
            "ext_dev", lambda dev: {"kind": "example", "device": str(dev), "name": dev.device_name})
        print(devrt.target.detect("ext_dev:0"))
        try:
            devrt.target.detect("ext_dev:7")
        except ValueError as error:
            print("missing:", "does not exist" in str(error))
    """)
    lines = run_python(code, {"DEVRT_PLUGIN_PATH": path}).stdout.split("\n")
    assert lines[0] == "before: True"
    target = eval(lines[1])
    assert target["kind"] == "example" and target["device"] == "ext_dev:0" and target["name"]
    assert lines[2] == "missing: True"
    with pytest.raises(TypeError):
        devrt.target.register_device_target_detector("ext_dev", "not callable")


def _other_pythons():
    """CPython interpreters (3.11 or later) of another version than this one, to import the package
    and its one abi3 build of devrt._ext unchanged."""
    mine = f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"
    found = {}
    candidates = glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))
    candidates += glob.glob("/usr/bin/python3.*") + glob.glob("/usr/local/bin/python3.*")
    for candidate in sorted(candidates):
        if not os.access(candidate, os.X_OK) or candidate.endswith("-config"):
            continue
        try:
            version = subprocess.run([candidate, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                                     capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            continue
        # devrt._ext is an abi3 module for CPython 3.11 and later.
        if version and version != mine and tuple(map(int, version.split(".")[:2])) >= (3, 11):
            found.setdefault(version, candidate)
    return found


def test_the_package_imports_on_other_cpython_versions():
    others = _other_pythons()
    if not others:
        pytest.skip("no CPython 3.11+ of another version than this one on this machine")
    code = "import devrt; print(devrt.cuda(0).exist, devrt.cpu(0).max_threads_per_block, devrt.empty((2, 2)).shape)"
    for version, python in others.items():
        words = run_python(code, python=python).stdout.split(maxsplit=2)
        assert words[0] in ("True", "False") and int(words[1]) > 0, version
        assert words[2].strip() == "(2, 2)", version
