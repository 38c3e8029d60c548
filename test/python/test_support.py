# SPDX-License-Identifier: Apache-2.0
"""devrt.support with the real tools of this machine (g++, ar, nvcc, NVRTC, ld.lld, libarchive)."""
import ctypes
import io
import os
import shutil
import subprocess
import sys
import tarfile
import time

import pytest

import devrt
from devrt.support import cc, nvcc, popen_pool, rocm, tar, utils

pytestmark = pytest.mark.skipif(not devrt._capi.HAS_TOOLCHAIN, reason="libdevrt_c.so was built without devrt_toolchain")

SOURCE = 'extern "C" int devrt_py_add(int a, int b) { return a + b; }\nint devrt_py_data = 7;\n'


def test_libinfo_and_describe(capfd):
    info = devrt.support.libinfo()
    assert info["version"] == devrt.__version__
    assert "cpu" in info["backends"].split(",")
    assert info["plugins"] in ("ON", "OFF")
    devrt.support.describe()
    assert "runtime:" in capfd.readouterr().out


def test_cc_builds_a_shared_library_an_executable_and_an_archive(tmp_path):
    assert cc.get_cc()
    source = tmp_path / "add.cc"
    source.write_text(SOURCE)
    library = tmp_path / "libadd.so"
    cc.create_shared(str(library), [str(source)], options=["-O2"])
    assert ctypes.CDLL(str(library)).devrt_py_add(2, 40) == 42
    sections = cc.get_global_symbol_section_map(str(library))
    assert sections["devrt_py_add"] == ".text" and sections["devrt_py_data"] == ".data"
    main = tmp_path / "main.cc"
    main.write_text('#include <cstdio>\nint main() { std::puts("hello from devrt"); }\n')
    program = tmp_path / "hello"
    cc.create_executable(str(program), str(main))
    assert subprocess.run([str(program)], capture_output=True, text=True).stdout == "hello from devrt\n"
    obj = tmp_path / "add.o"
    cc.create_shared(str(obj), [str(source)], options=["-c"])
    archive = tmp_path / "libadd.a"
    cc.create_staticlib(str(archive), [str(obj)])
    assert archive.read_bytes().startswith(b"!<arch>\n")


def test_cc_failure_carries_the_compiler_output(tmp_path):
    broken = tmp_path / "broken.cc"
    broken.write_text("int main() { return undeclared_name; }\n")
    with pytest.raises(devrt.ToolFailedError) as error:
        cc.create_executable(str(tmp_path / "broken"), [str(broken)])
    assert "undeclared_name" in str(error.value)


def test_cross_compiler_and_target_triple(tmp_path):
    compiler = cc.get_cc()
    triple = cc.get_target_by_dump_machine(compiler)()
    expected = subprocess.run([compiler, "-dumpmachine"], capture_output=True, text=True).stdout.strip()
    assert triple == expected
    build = cc.cross_compiler(compiler, options=["-O1", "-DVALUE=5"])
    assert build.output_format == "so" and build.get_target_triple() == expected
    source = tmp_path / "value.cc"
    source.write_text('extern "C" int value() { return VALUE; }\n')
    build(str(tmp_path / "libvalue.so"), [str(source)])
    assert ctypes.CDLL(str(tmp_path / "libvalue.so")).value() == 5
    wrapped = cc.cross_compiler(cc.create_shared, options=["-DVALUE=9"])
    wrapped(str(tmp_path / "libnine.so"), [str(source)])
    assert ctypes.CDLL(str(tmp_path / "libnine.so")).value() == 9


def test_nvcc_facts():
    assert nvcc.parse_compute_version("8.6") == (8, 6)
    assert nvcc.parse_compute_version("sm_90") == (9, 0)
    with pytest.raises(ValueError):
        nvcc.parse_compute_version("eight")
    assert nvcc.have_fp16("5.3") and not nvcc.have_fp16("5.2")
    assert nvcc.have_int8("6.1") and not nvcc.have_int8("5.0")
    assert nvcc.have_tensorcore("7.0") and not nvcc.have_tensorcore("6.1")
    assert nvcc.have_bf16("8.0") and not nvcc.have_bf16("7.5")


def _cuda_path():
    try:
        return nvcc.find_cuda_path()
    except devrt.UnavailableError as error:
        pytest.skip(f"no CUDA toolkit: {error}")


def test_nvcc_finds_the_toolkit_and_its_version():
    path = _cuda_path()
    assert os.path.exists(os.path.join(path, "include", "cuda.h")) or os.path.exists(os.path.join(path, "bin", "nvcc"))
    version = nvcc.get_cuda_version(path)
    assert version >= 10.0 and nvcc.get_cuda_version() == version
    assert nvcc.have_cudagraph()


KERNEL = 'extern "C" __global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n'


def test_compile_cuda_with_nvcc(tmp_path):
    path = _cuda_path()
    if not os.path.exists(os.path.join(path, "bin", "nvcc")):
        pytest.skip(f"no nvcc in {path}")
    ptx = nvcc.compile_cuda(KERNEL, "ptx", arch="sm_80", path_target=str(tmp_path / "k.ptx"))
    assert b".entry scale" in ptx and (tmp_path / "k.ptx").read_bytes() == ptx
    cubin = nvcc.compile_cuda(KERNEL, "cubin", arch=["sm_90"], options="-O3")
    assert cubin.startswith(b"\x7fELF")
    with pytest.raises(devrt.ToolFailedError):
        nvcc.compile_cuda("this is not CUDA", "ptx", arch="sm_80")


def test_compile_cuda_with_devrt_nvrtc():
    try:
        ptx = nvcc.compile_cuda(KERNEL, "ptx", arch="sm_80", compiler="nvrtc")
    except devrt.UnavailableError as error:
        pytest.skip(f"NVRTC unavailable: {error}")
    assert b".entry scale" in ptx
    with pytest.raises(devrt.ToolFailedError) as error:
        nvcc.compile_cuda("__global__ void broken( {", "ptx", arch="sm_80", compiler="nvrtc")
    assert "error" in str(error.value)
    with pytest.raises(ValueError):
        nvcc.compile_cuda(KERNEL, "ptx", arch="sm_80", compiler="gcc")


def test_rocm_lld_links_an_amdgpu_object(tmp_path):
    found = rocm.find_lld(required=False)
    if not found:
        pytest.skip("no ld.lld on this machine")
    assert "ld.lld" in os.path.basename(found[0])
    clang = shutil.which("clang-14") or shutil.which("clang")
    if clang is None:
        pytest.skip("no clang to build an AMDGPU object")
    source = tmp_path / "k.cl"
    source.write_text("__kernel void k(__global int* x) { x[0] = 1; }\n")
    obj = tmp_path / "k.o"
    subprocess.run([clang, "-x", "cl", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx906", "-nogpulib", "-c", str(source), "-o",
                    str(obj)], check=True)
    rocm.rocm_link(str(obj), str(tmp_path / "k.hsaco"))
    assert (tmp_path / "k.hsaco").read_bytes().startswith(b"\x7fELF")
    with pytest.raises(devrt.DevrtError):
        rocm.rocm_link(str(source), str(tmp_path / "bad.hsaco"))


def _square(x):
    return x * x


def _sleep_then(seconds, value):
    time.sleep(seconds)
    return value


def _raise(message):
    raise KeyError(message)


def _pid():
    return os.getpid()


@pytest.fixture
def importable_tests(monkeypatch):
    """The workers import this module to find the functions they run."""
    here = os.path.dirname(os.path.abspath(__file__))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])))


def test_popen_pool_runs_times_out_and_reports_errors(importable_tests):
    with popen_pool.PopenPoolExecutor(max_workers=2, timeout=3) as pool:
        assert pool.submit(_square, 12).result() == 144
        assert pool.submit(_pid).result() != os.getpid()
        results = pool.map_with_error_catching(_square, range(5))
        assert [r.value for r in results] == [0, 1, 4, 9, 16] and all(r.status for r in results)
        with pytest.raises(KeyError):
            pool.submit(_raise, "wanted").result()
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            pool.submit(_sleep_then, 30, "late").result()
        assert time.monotonic() - started < 20
        assert pool.submit(_sleep_then, 0, "after a timeout").result() == "after a timeout"


def test_popen_pool_restarts_workers_after_maxtasks(importable_tests):
    with popen_pool.PopenPoolExecutor(max_workers=1, maxtasksperchild=1) as pool:
        first, second = pool.submit(_pid).result(), pool.submit(_pid).result()
    assert first != second


def test_tempdir_removes_unless_kept():
    directory = utils.tempdir()
    path = directory.path
    with open(directory.relpath("file.txt"), "w") as out:
        out.write("x")
    assert directory.listdir() == ["file.txt"]
    directory.remove()
    assert not os.path.exists(path)
    kept = utils.tempdir(keep_for_debug=True)
    kept.remove()
    assert os.path.isdir(kept.path)
    shutil.rmtree(kept.path)
    with utils.tempdir() as scoped:
        inside = scoped.path
    assert not os.path.exists(inside)


def test_file_lock_excludes_another_process(tmp_path):
    path = str(tmp_path / "lock")
    probe = ("import devrt, sys\nfrom devrt.support import utils\n"
             "try:\n    utils.FileLock(sys.argv[1], blocking=False)\n    print('got it')\n"
             "except devrt.UnavailableError:\n    print('held')\n")
    with utils.FileLock(path):
        held = subprocess.run([sys.executable, "-c", probe, path], capture_output=True, text=True, check=True)
    free = subprocess.run([sys.executable, "-c", probe, path], capture_output=True, text=True, check=True)
    assert held.stdout.strip() == "held" and free.stdout.strip() == "got it"


def test_tar_and_untar_round_trip_and_refuse_escapes(tmp_path):
    files = []
    for name, text in (("a.txt", "alpha"), ("b.bin", "beta")):
        (tmp_path / name).write_text(text)
        files.append(str(tmp_path / name))
    archive = str(tmp_path / "out.tar")
    tar.tar(archive, files)
    target = tmp_path / "x"
    target.mkdir()
    extracted = tar.untar(archive, str(target))
    assert sorted(os.path.basename(p) for p in extracted) == ["a.txt", "b.bin"]
    assert (target / "a.txt").read_text() == "alpha"
    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w") as out:
        info = tarfile.TarInfo("../escaped.txt")
        info.size = 4
        out.addfile(info, io.BytesIO(b"evil"))
    empty = tmp_path / "y"
    empty.mkdir()
    with pytest.raises(ValueError):
        tar.untar(str(evil), str(empty))
    assert not (tmp_path / "escaped.txt").exists() and os.listdir(empty) == []
