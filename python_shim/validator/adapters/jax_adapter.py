"""Built-in adapter for JAX (CPU), used only when jax imports."""
import jax
import jax.numpy as jnp

from .array_api import Adapter as _ArrayAPI


class Adapter(_ArrayAPI):
    module_name = "jax"

    def __init__(self):
        super().__init__(jnp, name="jax")
        self.version = jax.__version__

    def from_dlpack(self, obj, **kwargs):
        return jnp.from_dlpack(obj, **kwargs)
