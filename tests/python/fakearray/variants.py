"""One adapter per planted bug, made on first use (``fakearray.variants:NAME``);
``correct`` has none. A few names plant several bugs whose target cases are disjoint (to keep
the CTest run short); COMBINED lists them."""
from . import KNOWN_BUGS, LAWFUL, Adapter

COMBINED = {
    "consumer_gpu_streams": ["consumer_stream_zero_cuda", "consumer_rocm_stream_one"],
    "consumer_exception_types": ["consumer_wraps_errors", "consumer_type_error_for_non_arrays",
                                 "consumer_rejection_value_error", "consumer_device_type_error"],
    "consumer_result_flags": ["consumer_read_only_ignored", "consumer_result_device_wrong"],
    "consumer_xapi_ownership_lookup": ["consumer_xapi_leaks", "consumer_xapi_instance_lookup"],
    "xapi_producer_functions": ["xapi_from_wrong_error", "xapi_dltensor_allocates", "xapi_to_leaks"],
}


def __getattr__(name):
    if name == "correct":
        return Adapter()
    if name in KNOWN_BUGS or name in LAWFUL:
        return Adapter(bugs=[name])
    if name in COMBINED:
        return Adapter(bugs=COMBINED[name])
    raise AttributeError(name)
