# SPDX-License-Identifier: Apache-2.0
"""Host compilers (TVM's tvm.contrib.cc), over devrt_toolchain."""
import json
import os

from devrt import _capi
from devrt._capi import check
from devrt.support._toolchain import require


def _options(options):
    if options is None:
        return []
    return [options] if isinstance(options, str) else list(options)


def _inputs(objects):
    return [objects] if isinstance(objects, (str, os.PathLike)) else list(objects)


def get_cc():
    """The C++ compiler's path ($CXX, else c++, g++, clang++ on PATH), or None when there is none."""
    try:
        return _capi.call_string(require().devrt_tc_find_cxx_compiler)
    except _capi.UnavailableError:
        return None


def _build(function, output, objects, options, cc, cwd):
    inputs, count = _capi.string_list(_inputs(objects))
    flags, flag_count = _capi.string_list(_options(options))
    compiler = os.fsencode(cc) if cc else None
    previous = os.getcwd() if cwd else None
    if cwd:
        os.chdir(cwd)
    try:
        check(function(os.fsencode(output), inputs, count, flags, flag_count, compiler))
    finally:
        if previous:
            os.chdir(previous)


def create_shared(output, objects, options=None, cc=None, cwd=None, ccache_env=None):
    """Builds a shared library from sources or objects (`cc`: the compiler, default get_cc()).

    Raises ToolFailedError with the compiler's output when it fails. `ccache_env` is accepted for
    TVM compatibility and ignored (set CXX="ccache g++" instead).
    """
    del ccache_env
    _build(require().devrt_tc_create_shared, output, objects, options, cc, cwd)


create_shared.output_format = "so"


def create_executable(output, objects, options=None, cc=None, cwd=None, ccache_env=None):
    """Builds an executable from sources or objects (as create_shared)."""
    del ccache_env
    _build(require().devrt_tc_create_executable, output, objects, options, cc, cwd)


create_executable.output_format = ""


def create_staticlib(output, inputs, ar=None):
    """`ar crs output inputs...` (`ar`: the archiver, default $AR or ar)."""
    files, count = _capi.string_list(_inputs(inputs))
    check(require().devrt_tc_create_staticlib(os.fsencode(output), files, count, os.fsencode(ar) if ar else None))


create_staticlib.output_format = "a"


def get_target_by_dump_machine(compiler):
    """A function returning `<compiler> -dumpmachine` ("x86_64-linux-gnu"), or None when it fails."""
    def get_target_triple():
        try:
            return _capi.call_string(require().devrt_tc_target_triple, os.fsencode(compiler) if compiler else None)
        except _capi.DevrtError:
            return None
    return get_target_triple


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
    return json.loads(_capi.call_string(require().devrt_tc_global_symbol_sections, os.fsencode(path)))
