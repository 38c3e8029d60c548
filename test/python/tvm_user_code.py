# SPDX-License-Identifier: Apache-2.0
"""Code written for TVM's tvm.support, run against devrt with one changed line: the import.

Each function uses TVM's API as TVM's documentation and tests use it (functions defined in this
__main__ module, timeouts, dying workers, recycling, initializers, temporary directories, file
locks, compute versions, compilers). test_tvm_user_code.py runs this file as a script and expects
"all TVM-style checks passed".
"""
import os
import sys
import time

import devrt.support as support  # the one line: `import tvm.support as support` in TVM

PopenPoolExecutor = support.popen_pool.PopenPoolExecutor
PopenWorker = support.popen_pool.PopenWorker
StatusKind = support.popen_pool.StatusKind


def identity_after(x, seconds):
    time.sleep(seconds)
    return x


def terminate_self():
    sys.exit(-1)


_INIT_STATE = []


def initializer(a, b, c):
    _INIT_STATE[:] = [a, b, c]


def after_initializer():
    return tuple(_INIT_STATE)


def pid_exists(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def check_popen_worker():
    proc = PopenWorker()
    try:
        proc.send(identity_after, [1, 100], timeout=0.01)
        proc.recv()
        raise AssertionError("no TimeoutError")
    except TimeoutError:
        pass
    try:
        proc.send(terminate_self)
        proc.recv()
        raise AssertionError("no ChildProcessError")
    except ChildProcessError:
        pass
    proc.send(identity_after, [2, 0])
    assert proc.recv() == 2
    proc.send(identity_after, [4, 0.0001], timeout=0.5)
    assert proc.recv() == 4


def check_recycling_with_initializer():
    initargs = [1, 2, 3]
    proc = PopenWorker(initializer=initializer, initargs=initargs, maximum_uses=3)
    proc.send(os.getpid)
    initial_pid = proc.recv()
    proc.send(after_initializer)
    assert list(proc.recv()) == initargs
    proc.send(os.getpid)
    assert proc.recv() == initial_pid
    proc.send(os.getpid)  # the fourth call runs in a new process...
    assert proc.recv() != initial_pid and not pid_exists(initial_pid)
    proc.send(after_initializer)  # ...whose initializer ran too
    assert list(proc.recv()) == initargs


def check_pool():
    pool = PopenPoolExecutor(max_workers=2, timeout=0.01)
    value1 = pool.submit(identity_after, 1, 100)
    value2 = pool.submit(terminate_self)
    value3 = pool.submit(identity_after, 3, 0)
    try:
        value1.result()
        raise AssertionError("no TimeoutError")
    except TimeoutError:
        pass
    try:
        value2.result()
        raise AssertionError("no ChildProcessError")
    except ChildProcessError:
        pass
    assert value3.result() == 3
    pool = PopenPoolExecutor(max_workers=4, timeout=None)
    for index, result in enumerate(pool.map_with_error_catching(lambda x: x, range(100))):
        assert result.status == StatusKind.COMPLETE and result.value == index
    pool = PopenPoolExecutor(max_workers=1, timeout=None, maximum_process_uses=2)
    initial_pid = pool.submit(os.getpid).result()
    assert initial_pid == pool.submit(os.getpid).result()
    assert initial_pid != pool.submit(os.getpid).result()
    pool.shutdown()


def check_utils():
    temp = support.utils.tempdir()
    path = temp.relpath("x.txt")
    with open(path, "w") as out:
        out.write("x")
    assert temp.listdir() == ["x.txt"] and os.path.exists(temp.path / "x.txt")
    temp.remove()
    assert not os.path.exists(path)
    with support.utils.TempDirectory.set_keep_for_debug():
        kept = support.utils.tempdir()
    kept_path = kept.path
    kept.remove()
    assert kept_path.is_dir()
    support.utils.TempDirectory.set_keep_for_debug(False)
    scratch = support.utils.tempdir()
    lock = support.utils.filelock(scratch.relpath("lock"))
    lock.release()
    import shutil

    shutil.rmtree(kept_path.parent)


def check_nvcc():
    nvcc = support.nvcc
    assert nvcc.parse_compute_version("9.0.a") == (9, 0)
    major, minor = nvcc.parse_compute_version("10.0.a")
    assert (major, minor) == (10, 0)
    assert nvcc.have_fp16("9.0.a") and nvcc.have_bf16("10.0.a") and nvcc.have_fp8("8.9")
    assert not nvcc.have_fp8("8.6") and nvcc.have_tensorcore("7.5") and not nvcc.have_tensorcore("6.1")
    try:
        version = nvcc.get_cuda_version()
    except RuntimeError:  # no toolkit: TVM raises RuntimeError too (devrt's UnavailableError is one)
        return
    assert version >= (10, 0) and nvcc.have_cudagraph()


def check_cc():
    cc = support.cc
    temp = support.utils.tempdir()
    source = temp.relpath("add.cc")
    with open(source, "w") as out:
        out.write('extern "C" int add(int a, int b) { return a + b; }\n')
    cc.create_shared(temp.relpath("libadd.so"), [source])
    fcompile = cc.cross_compiler(cc.create_shared, options=["-O2"])
    fcompile(temp.relpath("libadd2.so"), [source])
    assert fcompile.output_format == "so"
    import ctypes

    assert ctypes.CDLL(temp.relpath("libadd2.so")).add(2, 3) == 5
    if support.utils.which("ccache"):
        cc.create_shared(temp.relpath("libadd3.so"), [source], ccache_env={"CCACHE_DIR": temp.relpath("ccache")})


if __name__ == "__main__":
    check_popen_worker()
    check_recycling_with_initializer()
    check_pool()
    check_utils()
    check_nvcc()
    check_cc()
    print("all TVM-style checks passed")
