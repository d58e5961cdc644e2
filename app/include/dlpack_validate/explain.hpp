// app/include/dlpack_validate/explain.hpp: `explain ID` (dlpack-validate explain CAP-01,
// python -m validator explain python.capsule.name.versioned): a requirement's text, strength,
// source, how the validator tests it and the cases that do; a case's description, its
// requirements and how to run it alone.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace dlpv {

struct ExplainContext {
  std::string kind = "plugin";  ///< the subject kind this front end runs ("plugin", "python")
  std::string program;          ///< the shell command that runs this front end (the record's invocation)
  std::string requirements_doc; ///< where requirement ids link to ("" when nowhere)
};

/// The explanation of `id`: a requirement id (CAP-01, any case) or a case id (any case, a point of
/// a family's input space included). Throws BadInput, one line naming the closest ids, when it
/// is neither.
std::string explain(const std::string& id, const ExplainContext& ctx);

/// `explain ID` printed on stdout; 0, or BadInput thrown as explain's.
int run_explain(const std::string& id, const ExplainContext& ctx);

}  // namespace dlpv
