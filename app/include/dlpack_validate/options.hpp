// app/include/dlpack_validate/options.hpp: the one table of options. Every option of
// `dlpack-validate`, `python -m validator` and `validator.run` is a row here (name, type,
// default, check, help); the C++ CLI (validator/main.cpp) and the Python package
// (python_shim/validator/cli.py, api.py, through validator._dlpack_validate.options()) are
// built from it, and config_from() is the one place a value is checked and lands in AppConfig.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/app.hpp>

#include <map>
#include <string>
#include <vector>

namespace dlpv::options {

enum class Type {
  flag,     ///< on when given (no value)
  seconds,  ///< a positive number of seconds
  number,   ///< a number above (or at, `inclusive`) `floor`
  whole,    ///< a whole number at or above `floor`
  choice,   ///< one of `choices` ('|'-separated)
  path,     ///< a file path ("-" where the help says so)
  globs,    ///< repeatable: one glob per use
  shard,    ///< "K/N": part K of N (1 <= K <= N)
};

/// The commands an option belongs to (bits). kPytest: the pytest plugin offers it as
/// --dlpack-validate-FLAG (python_shim/validator/pytest_plugin.py builds its options from the rows
/// with this bit).
enum Command : unsigned { kRun = 1, kBench = 2, kReport = 4, kPytest = 8 };

struct Spec {
  const char* name;       ///< "load_timeout": the key; the flag is --load-timeout
  const char* short_flag; ///< "-x", or ""
  const char* keyword;    ///< the validator.run keyword ("filters"), or "" where it has none
  Type type;
  const char* fallback;   ///< the default, as text ("10"); "" = none (off, empty, not written)
  double floor;           ///< number/whole: the bound
  bool inclusive;         ///< number: whether `floor` itself is allowed
  const char* choices;    ///< choice: "worker|case|none"
  const char* metavar;    ///< "S", "PATH", "GLOB"
  unsigned commands;      ///< Command bits
  const char* help;       ///< the help text (help_of adds the default)
};

/// Every option, in the order --help shows them.
const std::vector<Spec>& table();
/// The row of `name` (key, not flag), or nullptr.
const Spec* find(const std::string& name);
/// The help text with the default: "... (default 10)".
std::string help_of(const Spec& spec);
/// "--load-timeout" for "load_timeout".
std::string flag_of(const Spec& spec);
/// A report format as the front ends see it (reports::formats(), in order): the option that
/// names its file and the file's usual extension (".xml").
struct FormatName {
  std::string option;
  std::string extension;
};
std::vector<FormatName> report_formats();
/// "" when `text` is a valid value of `spec`, else why not ("'abc' is not a positive number
/// of seconds").
std::string check(const Spec& spec, const std::string& text);

/// "K/N" with 1 <= K <= N (digits only): true and k, n set.
bool parse_shard(const std::string& text, int& k, int& n);

/// Option values as the front-ends collect them: key -> the texts given (a flag: {"1"} when on).
using Values = std::map<std::string, std::vector<std::string>>;

/// AppConfig from the values (defaults from the table for what is absent), each value checked
/// against its row. Throws BadInput naming the option as `naming` gives it: "--timeout" for
/// the command lines, "timeout" for validator.run (naming = keywords).
enum class Naming { flags, keywords };
AppConfig config_from(const Values& values, Naming naming = Naming::flags);

}  // namespace dlpv::options
