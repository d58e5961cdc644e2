"""Built-in adapter for JAX (CPU), used only when jax imports.

JAX makes 32-bit arrays of 64-bit requests unless x64 is enabled: without it an int64 or
float64 case would judge truncated data. The adapter enables it before making any array."""
import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402 - after the x64 switch

from .array_api import Adapter as _ArrayAPI


class Adapter(_ArrayAPI):
    module_name = "jax"

    def __init__(self):
        super().__init__(jnp, name="jax")
        self.version = jax.__version__

    def from_dlpack(self, obj, **kwargs):
        return jnp.from_dlpack(obj, **kwargs)
