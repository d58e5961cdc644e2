"""tensorflow: tf.experimental.dlpack.from_dlpack refuses any non-zero byte_offset (LAYOUT-08: a
consumer that refuses it misreads nothing, a warning). Case: consumer.byte_offset.legacy."""
import os

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from _dl import Producer, confirmed  # noqa: E402

buf = np.arange(28, dtype=np.float32)
try:
    tf.experimental.dlpack.from_dlpack(Producer(buf[16:], byte_offset=64).capsule)
except Exception as e:  # noqa: BLE001
    confirmed(f"tensorflow {tf.__version__}: {type(e).__name__}: {str(e)[:120]}")
else:
    raise AssertionError("imported it")
