// SPDX-License-Identifier: Apache-2.0
// render_main.cpp: test helper that renders one record in one format to stdout, so the
// Python checks (XML structure, headless browser) exercise the real writers.
//   dlpv_reports_render RECORD.json FORMAT (html, junit, md, json: reports::formats()) [BASELINE.json]
#include <iostream>
#include <string>

#include "dlpack_validate/reports.hpp"
#include "dlpack_validate/verdict.hpp"

int main(int argc, char** argv) {
  using namespace dlpv::reports;
  using namespace dlpv::verdict;
  if (argc < 3 || argc > 4) {
    std::cerr << "usage: dlpv_reports_render RECORD.json FORMAT (html, junit, md, json: reports::formats()) [BASELINE.json]\n";
    return 2;
  }
  try {
    auto run = load_run(argv[1]);
    if (argc == 4) apply_baseline(run, load_baseline(argv[3]), argv[3]);
    finalize_summary(run);
    const Format* format = format_named(argv[2]);  // an option (junit) or an extension (md)
    if (!format) {
      std::cerr << "unknown format '" << argv[2] << "'\n";
      return 2;
    }
    format->write(run, std::cout);
  } catch (const BadInput& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
  return std::cout.good() ? 0 : 3;
}
