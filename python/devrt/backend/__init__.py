# SPDX-License-Identifier: Apache-2.0
"""Backends and their loading, with TVM's autoload semantics (tvm.backend).

Each in-tree backend has a Python module, ``devrt.backend.<name>`` (cuda, rocm, vulkan, opencl,
hexagon, metal, webgpu), that owns its native library (libdevrt_<name>.so in a plugin build) and its
target detector; ``load(name)`` imports it and runs its ``register_backend()`` once.

When ``import devrt`` has defined every public name, it autoloads: the native plugins on devrt's
search path (a missing one is skipped silently, one that fails to load is a warning naming the
file and the reason), every in-tree backend module, then each out-of-tree backend registered
under the entry-point group ``devrt.backends``, once (one that raises is a warning; the others
still load). A hook can therefore use ``devrt.describe``, ``devrt.support``, ``devrt.device``
and every other public name. ``DEVRT_BACKEND_AUTOLOAD=0`` turns all of that off, as in C++:
nothing is loaded until ``load_all()`` or ``load(name)`` is called.
"""
import importlib
import threading
import warnings

from devrt import _capi, _ext
from devrt.target import register_device_target_detector  # noqa: F401 -- TVM has it beside load()

#: The in-tree backends with a module devrt.backend.<name>, in the order autoload loads them.
BUILTIN_BACKENDS = ("cuda", "rocm", "opencl", "vulkan", "metal", "webgpu", "hexagon")

#: The entry-point group out-of-tree backends register under.
ENTRY_POINT_GROUP = "devrt.backends"

_lock = threading.RLock()
_entry_points_called = {}  # "name = value" -> the entry point's return value
_warned_failures = set()
_loaded = {}  # name -> what load(name) returned, for the backends loaded so far


class BackendLoadWarning(UserWarning):
    """A backend plugin or an entry point failed to load; the others did."""


def autoload_enabled():
    """False when DEVRT_BACKEND_AUTOLOAD is set to a false value (0, false, off, no): the C++
    library's rule for boolean variables, read through it, so that both faces agree."""
    return _ext.environment_flag("DEVRT_BACKEND_AUTOLOAD", True)


def names():
    """The registered backends' names, in registration order (built-in, plugins, placeholders)."""
    return [name for name, _ in _ext.backends()]


def availability(name):
    """None when backend `name` can be used here, else the reason (a str) it cannot."""
    return _ext.backend_availability(name)


def is_available(name):
    """True when backend `name` is registered and usable here."""
    return name in names() and availability(name) is None


def loaded_plugins():
    """[(path, [backend names])] of the plugins loaded so far, in load order."""
    return [(path, backends.split(",") if backends else []) for path, backends in _ext.loaded_plugins()]


def failures():
    """[(path, reason)] of the plugin files that failed to load."""
    return _ext.plugin_failures()


def search_path():
    """The directories searched for plugins, in order."""
    text = _ext.plugin_search_path()
    return text.split(":") if text else []


def _warn_new_failures():
    for path, reason in failures():
        if (path, reason) in _warned_failures:
            continue
        _warned_failures.add((path, reason))
        warnings.warn(f"devrt: backend plugin {path} failed to load: {reason}", BackendLoadWarning, stacklevel=3)


_OUTCOMES = {_ext.PLUGIN_LOADED: "loaded", _ext.PLUGIN_ALREADY_LOADED: "already_loaded",
             _ext.PLUGIN_BUILT_IN: "built_in"}


def load_native(name):
    """Loads the native library providing backend `name` (libdevrt_<name>.so on the search path).

    Returns "loaded", "already_loaded" or "built_in". Raises NotFoundError when no such plugin is
    on the search path, DevrtError when it is there and broken (the message says why).
    """
    return _OUTCOMES[_ext.backend_load(name)]


def load_native_if_present(name):
    """load_native(name), or None when no library provides the backend (TVM skips a missing
    backend library silently). A broken library is still an error."""
    try:
        return load_native(name)
    except _capi.NotFoundError:
        return None


def native_backend_hooks(name, detector=None):
    """The register_backend() of an in-tree backend module: registers `detector` (default:
    devrt's native detection) for devices of type `name`, then loads the native library when one
    provides the backend. Returns load_native_if_present's answer."""
    from devrt.target import native_target

    def register_backend():
        register_device_target_detector(name, detector or native_target)
        return load_native_if_present(name)

    register_backend.__doc__ = f"Registers the {name} target detector and loads the native {name} backend if present."
    return register_backend


def _module(name):
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as error:
        if error.name == f"{__name__}.{name}":
            return None
        raise


def load(name):
    """Loads backend `name` once; later calls return the first call's answer (TVM's load).

    An in-tree backend (BUILTIN_BACKENDS): imports devrt.backend.<name> and runs its
    register_backend(), which loads its native library when one is present and registers its
    target detector; returns the native outcome ("loaded", "already_loaded", "built_in") or None
    when no native library provides it (the backend is then unavailable, as devrt.backend.
    availability(name) says). Any other name is a native plugin (an out-of-tree backend, or "cpu"):
    returns as load_native(name) does, NotFoundError naming the search path when it is absent.
    """
    if not isinstance(name, str):
        raise TypeError(f"devrt.backend.load: a backend name is a str, not {type(name).__name__}")
    if not name:
        raise ValueError("devrt.backend.load: the backend name is empty")
    with _lock:
        if name in _loaded:
            return _loaded[name]
        module = _module(name)
        if module is None:
            outcome = load_native(name)
        else:
            register = getattr(module, "register_backend", None)
            if register is None:
                raise AttributeError(f"devrt.backend.{name} has no register_backend()")
            outcome = register()
        _loaded[name] = outcome
    _warn_new_failures()
    return outcome


def is_loaded(name):
    """True once load(name) has run for this backend (by autoload or by a call)."""
    with _lock:
        return name in _loaded


def load_plugin(path):
    """Loads one plugin file (an out-of-tree backend); returns as load() does."""
    return _OUTCOMES[_ext.plugin_load_file(path)]


def _entry_points():
    from importlib import metadata

    found = metadata.entry_points()
    if hasattr(found, "select"):
        return list(found.select(group=ENTRY_POINT_GROUP))
    return list(found.get(ENTRY_POINT_GROUP, []))  # Python < 3.10


def load_entry_points():
    """Calls each entry point of the group `devrt.backends` not called yet, once.

    An entry point names a callable (``pkg.module:register``) that registers its backend, typically
    with load_plugin() on a library it ships. One that raises is reported as a BackendLoadWarning
    and the others still run. Returns the names of those called now.
    """
    called = []
    for entry_point in _entry_points():
        key = f"{entry_point.name} = {entry_point.value}"
        with _lock:
            if key in _entry_points_called:
                continue
            _entry_points_called[key] = None
        try:
            target = entry_point.load()
            _entry_points_called[key] = target() if callable(target) else target
            called.append(entry_point.name)
        except Exception as error:  # an out-of-tree backend's failure must not stop the others
            warnings.warn(f"devrt: backend entry point '{entry_point.name}' ({entry_point.value}) failed: "
                          f"{type(error).__name__}: {error}", BackendLoadWarning, stacklevel=2)
    return called


def loaded_entry_points():
    """The entry points called so far, as "name = module:function" strings."""
    with _lock:
        return list(_entry_points_called)


def _load_builtin_backends():
    for name in BUILTIN_BACKENDS:
        try:
            load(name)
        except Exception as error:  # one backend's failure must not stop the others
            warnings.warn(f"devrt: backend '{name}' failed to load: {type(error).__name__}: {error}",
                          BackendLoadWarning, stacklevel=3)


def load_all():
    """Loads every backend not loaded yet, whatever DEVRT_BACKEND_AUTOLOAD says: the native
    plugins on the search path, the in-tree backend modules, then the entry points.

    Returns the number of plugin files loaded now plus the entry points called now. Failures are
    warnings (BackendLoadWarning), as at import.
    """
    count = _ext.backend_load_all()
    _load_builtin_backends()
    _warn_new_failures()
    return count + len(load_entry_points())


_autoloaded = False


def _autoload():
    """What `import devrt` runs once every public name is defined (TVM's _autoload_backends)."""
    global _autoloaded
    if _autoloaded:
        return
    _autoloaded = True
    # The C++ registry loads the native plugins on first use, honouring DEVRT_BACKEND_AUTOLOAD.
    _ext.backends()
    _warn_new_failures()
    if autoload_enabled():
        _load_builtin_backends()
        load_entry_points()
