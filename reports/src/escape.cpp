// SPDX-License-Identifier: Apache-2.0
// escape.cpp: text sanitising and escaping for every output format.
#include "escape.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

namespace dlpv::reports::detail {

namespace {

void append_hex_byte(std::string& out, unsigned char b) {
  out += fmt::format(FMT_STRING("\\x{:02X}"), b);
}

// Length of the valid UTF-8 sequence starting at s[i] and its code point, or 0 when the
// bytes there do not form one (overlong forms, surrogates and values above U+10FFFF are
// invalid too).
std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t& cp) {
  auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  std::size_t len;
  std::uint32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1Fu, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0Fu, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07u, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

std::string clean_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    std::size_t len = decode_utf8(s, i, cp);
    if (len == 0) {
      append_hex_byte(out, static_cast<unsigned char>(s[i]));
      i += 1;
      continue;
    }
    if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F) {
      append_hex_byte(out, static_cast<unsigned char>(cp));
    } else if (cp == 0xFFFE || cp == 0xFFFF) {
      out += fmt::format(FMT_STRING("\\u{:04X}"), cp);
    } else {
      out.append(s.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string terminal_text(std::string_view s, bool one_line) {
  const std::string clean = clean_text(s);
  std::string out;
  out.reserve(clean.size());
  for (std::size_t i = 0; i < clean.size();) {
    std::uint32_t cp = 0;
    const std::size_t len = decode_utf8(clean, i, cp);  // clean_text's output is valid UTF-8
    const bool acts = (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
                      (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
    if (acts)
      out += fmt::format(FMT_STRING("\\u{:04X}"), cp);
    else if (one_line && (cp == '\n' || cp == '\r' || cp == '\t'))
      out += ' ';
    else
      out.append(clean, i, len);
    i += len;
  }
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : clean_text(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string xml_text(std::string_view s) {
  std::string out;
  for (char c : clean_text(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string xml_attr(std::string_view s) {
  std::string out;
  for (char c : clean_text(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\t': out += "&#9;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string md_text(std::string_view s) {
  std::string out;
  bool pending_space = false;
  for (char c : clean_text(s)) {
    if (c == '\n' || c == '\r' || c == '\t') {
      pending_space = true;
      continue;
    }
    if (pending_space && !out.empty()) out += ' ';
    pending_space = false;
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\\': case '`': case '*': case '_': case '[': case ']': case '~': case '|':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

std::string md_code(std::string_view s) {
  std::string body;
  std::size_t run = 0, longest = 0;
  for (char c : clean_text(s)) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    // GFM splits table rows on unescaped pipes before parsing code spans.
    body += c == '|' ? std::string("\\|") : std::string(1, c);
  }
  if (body.empty()) return {};
  std::string fence(longest + 1, '`');
  bool pad = body.front() == '`' || body.back() == '`';
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

std::string script_json(const nlohmann::ordered_json& j) {
  std::string dumped = j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::string out;
  out.reserve(dumped.size());
  // These characters only occur inside JSON strings, where \uXXXX is an equivalent spelling.
  for (char c : dumped) {
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  }
  return out;
}

std::string sanitize_identifier(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    char r = ok ? c : '_';
    if (r == '_' && !out.empty() && out.back() == '_') continue;
    out += r;
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  std::size_t lead = out.find_first_not_of('_');
  return lead == std::string::npos ? std::string() : out.substr(lead);
}

}  // namespace dlpv::reports::detail
