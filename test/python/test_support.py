# SPDX-License-Identifier: Apache-2.0
"""devrt.support with the real tools of this machine (g++, ar, nvcc, NVRTC, ld.lld, libarchive)."""
import ctypes
import io
import os
import shutil
import subprocess
import tarfile

import pytest

import devrt
from devrt.support import cc, nvcc, rocm, tar

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


def _ccache_stats(env):
    stats = subprocess.run(["ccache", "--print-stats"], env={**os.environ, **env}, capture_output=True, text=True,
                           check=True).stdout
    return {key: int(value) for key, value in (line.split("\t")[:2] for line in stats.splitlines() if "\t" in line)}


def test_cc_compiles_through_ccache_with_its_environment(tmp_path):
    if shutil.which("ccache") is None:
        pytest.skip("no ccache on PATH (Debian package ccache)")
    source = tmp_path / "add.cc"
    source.write_text(SOURCE)
    env = {"CCACHE_DIR": str(tmp_path / "cache")}
    # Objects: the second compile is served from the cache the first filled, in CCACHE_DIR.
    for name in ("first.o", "second.o"):
        cc.create_shared(str(tmp_path / name), [str(source)], options=["-c"], ccache_env=env)
    stats = _ccache_stats(env)
    assert stats["cache_miss"] == 1 and stats["direct_cache_hit"] + stats["preprocessed_cache_hit"] == 1
    # Compile-and-link runs go through ccache too (it passes them to the compiler uncached).
    cc.create_shared(str(tmp_path / "lib.so"), [str(source)], ccache_env=env)
    assert ctypes.CDLL(str(tmp_path / "lib.so")).devrt_py_add(1, 2) == 3
    assert _ccache_stats(env)["called_for_link"] == 1


def test_cc_without_ccache_env_does_not_use_ccache(tmp_path, monkeypatch):
    source = tmp_path / "add.cc"
    source.write_text(SOURCE)
    cache = tmp_path / "cache"
    monkeypatch.setenv("CCACHE_DIR", str(cache))
    cc.create_shared(str(tmp_path / "plain.so"), [str(source)], ccache_env=None)
    assert not cache.exists()
    monkeypatch.setenv("PATH", str(tmp_path))  # no ccache on PATH
    with pytest.raises(ValueError) as error:
        cc.create_shared(str(tmp_path / "x.so"), [str(source)], cc=cc.get_cc() or "c++", ccache_env={})
    assert "ccache" in str(error.value)


def test_cc_runs_in_cwd(tmp_path):
    (tmp_path / "add.cc").write_text(SOURCE)
    before = os.getcwd()
    cc.create_shared("librel.so", ["add.cc"], cwd=str(tmp_path))
    assert os.getcwd() == before and (tmp_path / "librel.so").exists()


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


# Every form TVM's get_target_compute_version returns, with what TVM's rules say about it.
COMPUTE_VERSIONS = {
    "7.5": (7, 5), "8.6": (8, 6), "8.9": (8, 9), "9.0": (9, 0), "9.0.a": (9, 0), "10.0.a": (10, 0),
    "12.0.f": (12, 0), "sm_86": (8, 6), "sm_90a": (9, 0), "sm_100a": (10, 0), "compute_80": (8, 0),
}


def test_parse_compute_version_takes_every_form_tvm_returns():
    for text, expected in COMPUTE_VERSIONS.items():
        assert nvcc.parse_compute_version(text) == expected, text
    for bad in ("9", "9.0a", "9.0.", "9.0.ab", "sm_", "sm_9", "", "nine.zero"):
        with pytest.raises(ValueError) as error:
            nvcc.parse_compute_version(bad)
        assert isinstance(error.value, RuntimeError)  # TVM raises RuntimeError; devrt's is both
    with pytest.raises(TypeError):
        nvcc.parse_compute_version(9.0)


def test_capability_rules_hold_over_every_form():
    for text, (major, minor) in COMPUTE_VERSIONS.items():
        assert nvcc.have_fp16(text) == ((major, minor) == (5, 3) or major >= 6), text
        assert nvcc.have_int8(text) == (major >= 6), text
        assert nvcc.have_tensorcore(text) == (major >= 7), text
        assert nvcc.have_bf16(text) == (major >= 8), text
        assert nvcc.have_fp8(text) == ((major, minor) >= (8, 9)), text
        assert nvcc.have_fp4(text) == ((major, minor) == (10, 0)), text


def test_get_target_compute_version_from_targets():
    assert nvcc.get_target_compute_version("cuda -arch=sm_86") == "8.6"
    assert nvcc.get_target_compute_version({"kind": "cuda", "arch": "sm_90a"}) == "9.0.a"
    assert nvcc.get_target_compute_version({"arch": "sm_100a"}) == "10.0.a"
    assert nvcc.get_target_compute_version({"arch": "sm_120"}) == "12.0"

    class TvmStyleTarget:
        attrs = {"arch": "sm_75"}

    assert nvcc.get_target_compute_version(TvmStyleTarget()) == "7.5"
    assert nvcc.parse_compute_version(nvcc.get_target_compute_version("cuda -arch=sm_90a")) == (9, 0)
    with pytest.raises(ValueError):
        nvcc.get_target_compute_version({"arch": "sm_x"})
    if devrt.cuda(0).exist:
        version = nvcc.get_target_compute_version()
        assert nvcc.parse_compute_version(version) == nvcc.parse_compute_version(devrt.cuda(0).compute_version)
    else:
        with pytest.raises(ValueError) as error:
            nvcc.get_target_compute_version()
        assert "no CUDA device" in str(error.value)


def test_have_tensorcore_follows_tvms_order():
    if devrt.cuda(0).exist:
        pytest.skip("with a CUDA device present, its compute version decides")
    assert nvcc.have_tensorcore(target={"arch": "sm_80"})
    assert not nvcc.have_tensorcore(target={"arch": "sm_61"})
    with pytest.warns(UserWarning):
        assert nvcc.have_tensorcore() is False


def _cuda_path():
    try:
        return nvcc.find_cuda_path()
    except devrt.UnavailableError as error:
        pytest.skip(f"no CUDA toolkit: {error}")


def test_nvcc_finds_the_toolkit_and_its_version():
    path = _cuda_path()
    assert os.path.exists(os.path.join(path, "include", "cuda.h")) or os.path.exists(os.path.join(path, "bin", "nvcc"))
    version = nvcc.get_cuda_version(path)
    assert isinstance(version, tuple) and all(isinstance(part, int) for part in version)
    assert version >= (10, 0) and nvcc.get_cuda_version() == version
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
