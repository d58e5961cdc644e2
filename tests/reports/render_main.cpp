// SPDX-License-Identifier: Apache-2.0
// render_main.cpp: test helper that renders one record in one format to stdout, so the
// Python checks (XML structure, headless browser) exercise the real writers.
//   dlpv_reports_render RECORD.json html|junit|md|json [BASELINE.json]
#include <iostream>
#include <string>

#include "dlpack_validate/reports.hpp"

int main(int argc, char** argv) {
  using namespace dlpv::reports;
  if (argc < 3 || argc > 4) {
    std::cerr << "usage: dlpv_reports_render RECORD.json html|junit|md|json [BASELINE.json]\n";
    return 2;
  }
  try {
    auto run = load_run(argv[1]);
    if (argc == 4) apply_baseline(run, load_baseline(argv[3]), argv[3]);
    finalize_summary(run);
    std::string format = argv[2];
    if (format == "html") {
      write_html(run, std::cout);
    } else if (format == "junit") {
      write_junit(run, std::cout);
    } else if (format == "md") {
      write_markdown(run, std::cout);
    } else if (format == "json") {
      std::cout << run.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
    } else {
      std::cerr << "unknown format '" << format << "'\n";
      return 2;
    }
  } catch (const BadInput& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
  return std::cout.good() ? 0 : 3;
}
