// SPDX-License-Identifier: Apache-2.0
// io.cpp: file reading and JSON parsing for user inputs.
#include "io.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sys/stat.h>

#include <fmt/format.h>

#include "dlpack_validate/verdict.hpp"

namespace dlpv::verdict::detail {

std::string read_bytes(const std::string& what, const std::string& path) {
  // Only regular files of a sane size: a directory "opens" and reads nothing, a FIFO would
  // block forever and /dev/zero never ends.
  constexpr std::uintmax_t kMaxBytes = 256u << 20;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw BadInput(fmt::format(FMT_STRING("{} '{}': cannot read ({})"), what, path,
                               std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    throw BadInput(fmt::format(FMT_STRING("{} '{}': cannot read (is a directory)"), what, path));
  }
  if (!S_ISREG(st.st_mode)) {
    throw BadInput(fmt::format(FMT_STRING("{} '{}': not a regular file"), what, path));
  }
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxBytes) {
    throw BadInput(fmt::format(FMT_STRING("{} '{}': larger than 256 MiB"), what, path));
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

}  // namespace dlpv::verdict::detail
