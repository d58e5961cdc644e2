# SPDX-License-Identifier: Apache-2.0
# Tests of the reports/ component. Included from reports/CMakeLists.txt when BUILD_TESTING
# is on (deliberately not a CMakeLists.txt, so nothing adds this directory twice).
#
# CTest names:
#   reports.unit            doctest units (escaping, and the verdict: baseline, summary; JUnit,
#                           Markdown, HTML)
#   reports.golden          byte-exact golden files (DLPV_UPDATE_GOLDEN=1 rewrites them)
#   reports.junit_structure JUnit output parsed and cross-checked against the records (python3)
#   reports.html_static     HTML parsed offline: ids, order, embedded record, no network refs,
#                           a generated 1,300-result record under 1 MB
#   reports.html_browser    headless chromium: 1280x800 screenshot, the verdict and "Needs
#                           attention" on the first screen, DOM with and without JavaScript
#                           (skipped, exit 77, when chromium is not installed)

set(_dlpv_reports_tests_dir ${CMAKE_CURRENT_LIST_DIR})

if(NOT TARGET doctest::doctest)
  find_package(doctest REQUIRED)
endif()

add_executable(test_reports
  ${_dlpv_reports_tests_dir}/main.cpp
  ${_dlpv_reports_tests_dir}/test_baseline.cpp
  ${_dlpv_reports_tests_dir}/test_bench.cpp
  ${_dlpv_reports_tests_dir}/test_escape.cpp
  ${_dlpv_reports_tests_dir}/test_golden.cpp
  ${_dlpv_reports_tests_dir}/test_html.cpp
  ${_dlpv_reports_tests_dir}/test_junit.cpp
  ${_dlpv_reports_tests_dir}/test_markdown.cpp
  ${_dlpv_reports_tests_dir}/test_summary.cpp
)
# The units also test internal helpers (reports/src/escape.hpp, verdict/src/sha256.hpp) directly.
target_include_directories(test_reports PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR}/../verdict/src ${_dlpv_reports_tests_dir})
target_compile_definitions(test_reports PRIVATE
  DLPV_REPORTS_TEST_DIR="${_dlpv_reports_tests_dir}")
target_link_libraries(test_reports PRIVATE dlpv_reports doctest::doctest)

add_executable(dlpv_reports_render ${_dlpv_reports_tests_dir}/render_main.cpp)
target_link_libraries(dlpv_reports_render PRIVATE dlpv_reports)

if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(test_reports PRIVATE -Wall -Wextra -Werror)
  target_compile_options(dlpv_reports_render PRIVATE -Wall -Wextra -Werror)
endif()

add_test(NAME reports.unit COMMAND test_reports --test-suite-exclude=golden)
add_test(NAME reports.golden COMMAND test_reports --test-suite=golden)

if(Python3_EXECUTABLE)
  set(_dlpv_render_args
    $<TARGET_FILE:dlpv_reports_render> ${_dlpv_reports_tests_dir}/data)
  add_test(NAME reports.junit_structure
    COMMAND ${Python3_EXECUTABLE} ${_dlpv_reports_tests_dir}/check_junit.py ${_dlpv_render_args})
  add_test(NAME reports.html_static
    COMMAND ${Python3_EXECUTABLE} ${_dlpv_reports_tests_dir}/check_html_static.py ${_dlpv_render_args})
  add_test(NAME reports.html_browser
    COMMAND ${Python3_EXECUTABLE} ${_dlpv_reports_tests_dir}/check_html_browser.py ${_dlpv_render_args})
  set_tests_properties(reports.html_browser PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1200)
else()
  message(STATUS "reports: Python3_EXECUTABLE not set; JUnit/HTML structure tests not registered")
endif()
