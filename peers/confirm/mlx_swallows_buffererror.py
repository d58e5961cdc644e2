"""mlx: a BufferError raised by the producer's __dlpack__ reaches the caller as TypeError
('incompatible function arguments'): from_dlpack "must propagate such exceptions" (ERR-03).
Case: python.consumer.error.propagated."""
import mlx.core as mx

from _dl import confirmed


class Refuses:
    def __dlpack__(self, **kw):
        raise BufferError("producer refuses")

    def __dlpack_device__(self):
        return (1, 0)


try:
    mx.from_dlpack(Refuses())
except Exception as e:  # noqa: BLE001
    assert type(e).__name__ == "TypeError", type(e)
    confirmed(f"mlx {mx.__version__}: the producer's BufferError arrives as {type(e).__name__}: {str(e)[:80]}")
