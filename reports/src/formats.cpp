// SPDX-License-Identifier: Apache-2.0
// formats.cpp: the one table of report formats (reports.hpp: Format).
#include <ostream>

#include "dlpack_validate/reports.hpp"

namespace dlpv::reports {

void write_record(const nlohmann::ordered_json& run, std::ostream& out) {
  out << run.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

namespace {
void markdown(const nlohmann::ordered_json& run, std::ostream& out) { write_markdown(run, out); }
}  // namespace

const std::vector<Format>& formats() {
  static const std::vector<Format> table = {
      {"json", ".json",
       "write the canonical JSON run record to PATH ('-': stdout, the summary then goes to stderr; "
       "with --list: the declarations)",
       write_record},
      {"html", ".html", "write a self-contained HTML report to PATH", write_html},
      {"junit", ".xml", "write JUnit XML to PATH", write_junit},
      {"summary_md", ".md", "write a Markdown summary to PATH (also appended to $GITHUB_STEP_SUMMARY when set)",
       markdown},
  };
  return table;
}

const Format* format_named(std::string_view name) {
  for (const Format& f : formats())
    if (name == f.option || name == std::string_view(f.extension).substr(1)) return &f;
  return nullptr;
}

}  // namespace dlpv::reports
