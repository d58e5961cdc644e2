"""warp: warp.from_dlpack refuses a 0-d tensor (LAYOUT-06, a MUST for consumers: a 0-d tensor is
imported, its one element at data + byte_offset); Warp arrays have no 0-d form, and the import
fails with an IndexError rather than a BufferError.
Cases: consumer.roundtrip.scalar.legacy, consumer.scalar.null_shape.legacy.
Usage: python3 warp_scalar_import.py"""
import numpy as np
import warp as wp

from _dl import Producer, verdict

wp.config.quiet = True
if hasattr(wp, "LOG_WARNING"):
    wp.config.log_level = wp.LOG_WARNING
wp.init()
try:
    y = wp.from_dlpack(Producer(np.array(2.5, dtype=np.float32)))
except Exception as e:  # noqa: BLE001 - the refusal is the finding
    verdict(True, f"warp {wp.__version__}: a 0-d float32 tensor is refused: {type(e).__name__}: {e}")
verdict(False, f"warp {wp.__version__}: a 0-d tensor is imported as shape {y.shape}")
