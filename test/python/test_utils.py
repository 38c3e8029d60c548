# SPDX-License-Identifier: Apache-2.0
"""devrt.support.utils behaves as TVM's tvm.support.utils."""
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

import devrt
from conftest import run_python
from devrt.support import utils
from devrt.support.utils import DirectoryCreatedPastAtExit, TempDirectory


def test_tempdir_paths_joining_and_listing():
    directory = utils.tempdir()
    assert isinstance(directory.path, pathlib.Path) and directory.path.is_dir()
    (directory / "a.txt").write_text("x")
    assert directory / "a.txt" == directory.path / "a.txt"
    assert directory.relpath("a.txt") == os.path.join(str(directory.path), "a.txt")
    assert directory.listdir() == ["a.txt"]
    with pytest.raises(TypeError):
        directory / 3
    path = directory.path
    directory.remove()
    assert not path.exists()
    directory.remove()  # twice is fine


def test_tempdir_as_a_context_manager_and_on_collection():
    with utils.tempdir() as scoped:
        inside = scoped.path
        assert inside.is_dir()
    assert not inside.exists()
    collected = utils.tempdir()
    path = collected.path
    del collected
    assert not path.exists()


def test_custom_path_is_created_and_removed(tmp_path):
    target = tmp_path / "mine"
    directory = utils.tempdir(custom_path=str(target))
    assert target.is_dir() and directory.path == target
    with pytest.raises(FileExistsError):
        utils.tempdir(custom_path=str(target))  # TVM: os.mkdir, never someone else's directory
    directory.remove()
    assert not target.exists()


def test_keep_for_debug_per_directory_and_for_the_class():
    kept = utils.tempdir(keep_for_debug=True)
    assert "devrt-debug-mode-tempdirs" in str(kept.path)
    path = kept.path
    kept.remove()
    assert path.is_dir()
    TempDirectory.set_keep_for_debug(True)  # a plain call takes effect...
    try:
        also_kept = utils.tempdir()
        forced = utils.tempdir(keep_for_debug=False)  # ...but an explicit False wins
    finally:
        TempDirectory.set_keep_for_debug(False)
    also_kept_path, forced_path = also_kept.path, forced.path
    also_kept.remove()
    forced.remove()
    assert also_kept_path.is_dir() and not forced_path.exists()
    with TempDirectory.set_keep_for_debug():  # ...and it is a context manager too
        inside = utils.tempdir()
    after = utils.tempdir()
    kept_path, after_path = inside.path, after.path
    inside.remove()
    after.remove()
    assert kept_path.is_dir() and not after_path.exists()
    # Kept directories are numbered in creation order under one parent.
    assert path.parent == also_kept_path.parent == kept_path.parent
    assert path.name < also_kept_path.name < kept_path.name and len(path.name) == 5
    shutil.rmtree(path.parent)


def test_every_directory_is_removed_at_exit_unless_kept():
    code = textwrap.dedent("""
        from devrt.support import utils
        first, second = utils.tempdir(), utils.tempdir()
        (first / "f").write_text("x")
        kept = utils.tempdir(keep_for_debug=True)
        print(first.path, second.path, kept.path)
    """)
    first, second, kept = run_python(code).stdout.split()
    assert not os.path.exists(first) and not os.path.exists(second)
    assert os.path.isdir(kept)
    shutil.rmtree(os.path.dirname(kept))


def test_creating_a_directory_after_exit_began_is_a_clear_error():
    code = textwrap.dedent("""
        import atexit
        from devrt.support import utils

        def late():
            try:
                utils.tempdir()
            except utils.DirectoryCreatedPastAtExit as error:
                print("refused:", error)

        # Exit hooks run last-registered first: `late` runs after the removal hook.
        atexit.register(late)
        atexit.unregister(utils.TempDirectory.remove_tempdirs)
        atexit.register(utils.TempDirectory.remove_tempdirs)
    """)
    result = run_python(code)
    assert result.stdout.count("refused:") == 1
    assert issubclass(DirectoryCreatedPastAtExit, Exception)


@pytest.mark.skipif(not devrt._capi.HAS_TOOLCHAIN, reason="FileLock is devrt_toolchain's; this build has none")
def test_file_lock_blocks_another_process_until_released(tmp_path):
    path = str(tmp_path / "lock")
    released = tmp_path / "released"
    # Ordering, not timing: the waiter reports whether the holder had released when it got the lock.
    waiter = textwrap.dedent("""
        import os, sys
        from devrt.support import utils
        lock = utils.filelock(sys.argv[1])
        print("after release" if os.path.exists(sys.argv[2]) else "while held")
        lock.release()
    """)
    lock = utils.FileLock(path)
    process = subprocess.Popen([sys.executable, "-c", waiter, path, str(released)], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    assert process.poll() is None  # still waiting for the lock
    released.touch()
    lock.release()
    assert process.communicate(timeout=60)[0].strip() == "after release"
    lock.release()  # idempotent


def test_is_source_path_and_which(tmp_path):
    assert utils.is_source_path("kernel.cu") and not utils.is_source_path("int main() {\n}")
    (tmp_path / "x").write_text("")
    assert utils.is_source_path(str(tmp_path / "x"))
    assert utils.which("sh") and utils.which("no-such-tool-here") is None
