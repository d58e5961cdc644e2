"""Built-in adapter for TensorFlow (tensorflow-cpu), used only when tensorflow imports. Tensors
are always compact (tf.constant of a NumPy array of the pattern; bfloat16 cast from float32);
the consumer under test is tf.experimental.dlpack.from_dlpack."""
import os

# Noise off (named here, per docs/design.md §4), before TensorFlow is imported: its C++ logging
# prints INFO and WARNING lines (CPU feature notes, oneDNN notices) into every worker's output
# tail, costing time and tail space and changing nothing a case observes. Errors still print.
# A user's own TF_CPP_MIN_LOG_LEVEL wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from . import _numpy_layouts as L  # noqa: E402

_NAMES = {
    (6, 8): "bool", (0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
    (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
    (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
    (5, 64): "complex64", (5, 128): "complex128", (4, 16): "bfloat16",
}


class Adapter(L.NumpyBacked):
    module_name = "tensorflow"

    def __init__(self):
        self.name = "tensorflow"
        self.version = tf.__version__

    def _dtype(self, key):
        name = _NAMES.get(key)
        return getattr(tf, name, None) if name else None

    def _wrap(self, a, key, device):
        with tf.device("/CPU:0"):
            if key == (4, 16):
                return tf.cast(tf.constant(a.astype(np.float32)), tf.bfloat16)
            return tf.constant(a)

    def _to_numpy(self, array):
        # Read through one of TensorFlow's own kernels (a gather of every element), as any
        # computation on an imported tensor would: .numpy() alone hands the buffer back without
        # the checks TensorFlow's kernels make (they abort on data not 64-byte aligned).
        with tf.device("/CPU:0"):
            flat = tf.reshape(array, [-1])
            every = tf.gather(flat, tf.range(tf.size(flat)))
            if array.dtype == tf.bfloat16:
                every = tf.cast(every, tf.float32)
                return L.logical_from_float(every.numpy(), (4, 16)).reshape(array.shape)
            return every.numpy().reshape(array.shape)

    # TensorFlow's consumer takes a capsule, not an object with __dlpack__: the adapter asks for
    # the capsule (as a pre-2023.12 caller would, no keywords), so the capsule handling is
    # TensorFlow's and the calling protocol is the adapter's (those cases skip, saying so).
    consumer_protocol = False
    consumer_protocol_note = ("tf.experimental.dlpack.from_dlpack takes a capsule, not an object with __dlpack__: "
                              "the adapter calls __dlpack__() for it, so keywords, streams and call order are not "
                              "TensorFlow's to judge")

    def from_dlpack(self, obj, **kwargs):
        if kwargs:
            raise TypeError(f"tf.experimental.dlpack.from_dlpack takes no keywords ({', '.join(kwargs)})")
        return tf.experimental.dlpack.from_dlpack(obj.__dlpack__())
