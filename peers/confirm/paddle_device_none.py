"""paddle: Tensor.__dlpack_device__() returns (kDLCPU, None): the device id is not an int (DEV-01,
a MUST: a 2-tuple of (device_type, device_id)). Case: python.device.matches_capsule."""
import paddle

from _dl import confirmed

d = paddle.to_tensor([1.0, 2.0]).__dlpack_device__()
assert d[1] is None, d
confirmed(f"paddle {paddle.__version__}: __dlpack_device__() = {d!r}")
