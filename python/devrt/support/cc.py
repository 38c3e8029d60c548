# SPDX-License-Identifier: Apache-2.0
"""Host compilers (TVM's tvm.contrib.cc), over devrt_toolchain."""
import json
import os
import shutil

from devrt import _capi
from devrt.support._toolchain import require


_SHARED, _EXECUTABLE = 0, 2  # devrt_tc_output_kind


def _options(options):
    if options is None:
        return []
    return [options] if isinstance(options, str) else list(options)


def _inputs(objects):
    return [objects] if isinstance(objects, (str, os.PathLike)) else list(objects)


def get_cc():
    """The C++ compiler's path ($CXX, else c++, g++, clang++ on PATH), or None when there is none."""
    try:
        return require().tc_find_cxx_compiler()
    except _capi.UnavailableError:
        return None


def _ccache(ccache_env):
    """([launcher words], ["NAME=value"]) for TVM's ccache_env: None means no ccache; a dict
    compiles through ccache on PATH with those variables (ValueError when there is no ccache)."""
    if ccache_env is None:
        return [], []
    if not isinstance(ccache_env, dict):
        raise TypeError(f"cc: ccache_env must be a dict of environment variables or None, not "
                        f"{type(ccache_env).__name__}")
    ccache = shutil.which("ccache")
    if ccache is None:
        raise ValueError("cc: ccache_env was given but ccache is not on PATH")
    return [ccache], [f"{key}={value}" for key, value in ccache_env.items()]


def _build(kind, output, objects, options, cc, cwd, ccache_env):
    launcher, env = _ccache(ccache_env)
    require().tc_compile(kind, output, _inputs(objects), _options(options), cc or None, launcher, env, cwd or None)


def create_shared(output, objects, options=None, cc=None, cwd=None, ccache_env=None):
    """Builds a shared library from sources or objects (`cc`: the compiler, default get_cc()).

    `cwd`: the compiler runs there (relative paths are relative to it). `ccache_env`: a dict of
    environment variables compiles through ccache with them (ValueError when ccache is not on
    PATH); None compiles without ccache. Raises ToolFailedError with the compiler's output.
    """
    _build(_SHARED, output, objects, options, cc, cwd, ccache_env)


create_shared.output_format = "so"


def create_executable(output, objects, options=None, cc=None, cwd=None, ccache_env=None):
    """Builds an executable from sources or objects (as create_shared)."""
    _build(_EXECUTABLE, output, objects, options, cc, cwd, ccache_env)


create_executable.output_format = ""


def create_staticlib(output, inputs, ar=None):
    """`ar crs output inputs...` (`ar`: the archiver, default $AR or ar)."""
    require().tc_create_staticlib(output, _inputs(inputs), ar or None)


create_staticlib.output_format = "a"


def get_target_by_dump_machine(compiler):
    """A function returning `<compiler> -dumpmachine` ("x86_64-linux-gnu"), or None when it fails."""
    def get_target_triple():
        try:
            return require().tc_target_triple(compiler or None)
        except _capi.DevrtError:
            return None
    return get_target_triple


create_shared.get_target_triple = get_target_by_dump_machine(None)


def cross_compiler(compile_func, options=None, output_format=None, get_target_triple=None, add_files=None):
    """A compile function with fixed extra options (TVM's cross_compiler).

    `compile_func` is a compiler path (then create_shared with it) or a function such as
    create_shared. The result is called as fcompile(output, objects, options=None) and carries
    output_format and get_target_triple.
    """
    base_options = _options(options)
    extra_files = list(add_files or [])
    if isinstance(compile_func, (str, os.PathLike)):
        compiler = os.fspath(compile_func)

        def run(output, objects, options=None):
            create_shared(output, _inputs(objects) + extra_files, base_options + _options(options), cc=compiler)
        run.output_format = output_format or "so"
        run.get_target_triple = get_target_triple or get_target_by_dump_machine(compiler)
        return run

    def run(output, objects, options=None):
        compile_func(output, _inputs(objects) + extra_files, options=base_options + _options(options))
    run.output_format = output_format or getattr(compile_func, "output_format", "so")
    run.get_target_triple = get_target_triple or getattr(compile_func, "get_target_triple", None)
    return run


def get_global_symbol_section_map(path, *, nm=None):
    """Each defined global symbol of an ELF file mapped to its section name (".text", ".data", ...).

    Read from the file's own symbol tables by devrt (no nm needed; `nm` is accepted for TVM
    compatibility and ignored).
    """
    del nm
    return json.loads(require().tc_global_symbol_sections(path))
