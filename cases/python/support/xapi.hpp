// cases/python/support/xapi.hpp: what the python.xapi.* producer-side cases share: the
// package's exchange-API table, and the comparison of its export routes with __dlpack__.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <vector>

#include "py_producer.hpp"

namespace dlpv::python {

inline constexpr const char* kXapiAttr = "__dlpack_c_exchange_api__";
inline constexpr const char* kXapiAttrV12 = "__c_dlpack_exchange_api__";

/// The type of x (a borrowed reference made owning).
inline py::object type_of(py::handle x) {
  return py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(Py_TYPE(x.ptr())));
}

/// The package's major-1 table, or a skip saying why there is none to test.
const DLPackExchangeAPI* table_of(CaseContext& ctx, py::handle x);

/// The fields of an exported tensor two routes must agree on.
struct Fields {
  DLDevice device{};
  DLDataType dtype{};
  std::vector<int64_t> shape, strides;
  uint64_t flags = 0;
  uintptr_t address = 0;
};
Fields fields_of(const DLTensor& t, uint64_t flags);
/// "" when equal (the address only if `address`), else the first difference.
std::string diff_fields(const Fields& a, const Fields& b, bool address);
/// managed_tensor_from_py_object_no_sync against __dlpack__ for each sample array (`address`:
/// the data address too), checked under requirement `req`.
void compare_routes(CaseContext& ctx, PythonSubject& ps, const char* req, bool address);

}  // namespace dlpv::python
