// SPDX-License-Identifier: Apache-2.0
// main.cpp: doctest entry point for test_reports.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
