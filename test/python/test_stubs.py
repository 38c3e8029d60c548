# SPDX-License-Identifier: Apache-2.0
"""devrt/_ext.pyi types the compiled module: it names exactly what devrt._ext defines, and the
status constants are named, never numbers."""
import ast
import inspect
import pathlib

import devrt
from devrt import _ext

STUB = pathlib.Path(devrt.__file__).with_name("_ext.pyi")


def stub_names(body):
    names = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
    return names


def public(obj):
    return {name for name in vars(obj) if not name.startswith("__") or name in ("__dlpack__", "__dlpack_device__")}


def test_the_stub_names_every_function_and_constant_of_the_module_and_no_other():
    tree = ast.parse(STUB.read_text())
    declared = set(stub_names(tree.body))
    defined = {name for name in public(_ext) if not name.startswith("_") and not inspect.ismodule(getattr(_ext, name))}
    if not _ext.HAS_TOOLCHAIN:  # a build without devrt_toolchain defines no tc_* function
        declared = {name for name in declared if not name.startswith("tc_")}
    assert declared == defined, f"only in the stub: {declared - defined}; only in the module: {defined - declared}"


def test_the_stub_names_every_method_and_property_of_the_types():
    tree = ast.parse(STUB.read_text())
    classes = {name: node for name, node in stub_names(tree.body).items() if isinstance(node, ast.ClassDef)}
    for name, node in classes.items():
        declared = {n for n in stub_names(node.body) if not n.startswith("__") or n in ("__dlpack__", "__dlpack_device__")}
        defined = {n for n in public(getattr(_ext, name)) if n not in ("__doc__", "__module__")}
        assert declared >= defined, f"_ext.{name}: not in the stub: {defined - declared}"
        assert declared <= defined | {"__new__"}, f"_ext.{name}: not in the module: {declared - defined}"


def test_status_codes_are_named_as_the_c_api_names_them():
    assert devrt.Status.OK == 0
    assert devrt.Status.INVALID_ARGUMENT == 1
    assert devrt.Status.TIMED_OUT.name == "TIMED_OUT"
    assert [status.name.lower() for status in devrt.Status] == list(_ext.STATUS_CODES)
    assert list(devrt.Status) == sorted(devrt.Status)


def test_an_error_carries_its_status():
    try:
        devrt.empty((2,), "float32", devrt.cpu(12345))
    except devrt.DevrtError as error:
        assert error.status is devrt.Status.INVALID_ARGUMENT
        assert error.code == "invalid_argument"
    else:
        raise AssertionError("a device that does not exist was accepted")
