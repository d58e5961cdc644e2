// SPDX-License-Identifier: Apache-2.0
// io.cpp: file reading and JSON parsing for user inputs.
#include "io.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sys/stat.h>

#include <fmt/format.h>

#include "dlpack_validate/reports.hpp"

namespace dlpv::reports::detail {

std::string read_bytes(const std::string& what, const std::string& path) {
  // A directory opens "successfully" as an ifstream on Linux and then reads nothing.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw BadInput(fmt::format(FMT_STRING("{} '{}': cannot read (is a directory)"), what, path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw BadInput(fmt::format(FMT_STRING("{} '{}': cannot read ({})"), what, path,
                               std::strerror(errno)));
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw BadInput(fmt::format(FMT_STRING("{} '{}': read error"), what, path));
  return bytes;
}

nlohmann::ordered_json parse_json(const std::string& what, const std::string& path,
                                  const std::string& bytes) {
  try {
    return nlohmann::ordered_json::parse(bytes);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and points just past the offending character.
    std::size_t end = std::min(bytes.size(), e.byte == 0 ? std::size_t{0} : e.byte - 1);
    auto line = 1 + std::count(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(end), '\n');
    if (bytes.find_first_not_of(" \t\r\n") == std::string::npos) {
      throw BadInput(fmt::format(FMT_STRING("{} '{}': empty file, expected JSON"), what, path));
    }
    throw BadInput(
        fmt::format(FMT_STRING("{} '{}': not valid JSON at line {}"), what, path, line));
  }
}

}  // namespace dlpv::reports::detail
