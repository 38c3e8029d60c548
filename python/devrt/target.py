# SPDX-License-Identifier: Apache-2.0
"""A live device as a compiler target (TVM's tvm.target.detect_target).

``detect(device)`` asks the detector registered for the device's type; each backend module
(devrt.backend.<name>) registers its own when it loads, and an out-of-tree backend registers one
from Python with ``register_device_target_detector(type, fn)``. The built-in detectors return
devrt's native description (``Device.target()``): TVM's target as a dict, {"kind": "cuda",
"arch": "sm_90", ...}.
"""
import threading

_lock = threading.Lock()
#: Device type name -> detector(device) -> target. TVM's SUPPORTED_DEVICE.
SUPPORTED_DEVICE = {}


def native_target(device):
    """devrt's own detection for a device of an in-tree backend (the C++ detect_target)."""
    return device.target()


def register_device_target_detector(device_type, detector):
    """Makes detect() use detector(device) for devices of `device_type` ("cuda", or the name of
    an out-of-tree device type such as "ext_dev"); replaces an earlier one. Thread-safe."""
    if not isinstance(device_type, str) or not device_type:
        raise TypeError(f"register_device_target_detector: the device type is a name such as 'cuda', "
                        f"not {device_type!r}")
    if not callable(detector):
        raise TypeError(f"register_device_target_detector: the detector must be callable, not "
                        f"{type(detector).__name__}")
    with _lock:
        SUPPORTED_DEVICE[device_type] = detector


def detect(device):
    """The target describing a live device (a Device or "cuda:0").

    ValueError when no detector is registered for the device's type (the message lists those
    that are; a backend registers its own when it loads) or when the device does not exist."""
    from devrt._device import Device

    device = device if isinstance(device, Device) else Device(device)
    with _lock:
        detector = SUPPORTED_DEVICE.get(device.type)
        supported = sorted(SUPPORTED_DEVICE)
    if detector is None:
        raise ValueError(f"devrt.target.detect: no target detector for device type '{device.type}' (registered: "
                         f"{', '.join(supported)}); load its backend (devrt.backend.load) or register one with "
                         "devrt.target.register_device_target_detector")
    if not device.exist:
        raise ValueError(f"devrt.target.detect: device {device} does not exist here: is the device present, its "
                         "driver installed and its backend available (devrt.backend.availability)?")
    return detector(device)


#: TVM's name for detect().
detect_target_from_device = detect

register_device_target_detector("cpu", native_target)
