// SPDX-License-Identifier: Apache-2.0
// test_escape.cpp: escaping, globbing and hashing helpers.
#include <doctest/doctest.h>

#include "dlpack_validate/ids.hpp"
#include "escape.hpp"
#include "sha256.hpp"

using namespace dlpv::reports::detail;
using dlpv::glob_escape;
using dlpv::glob_match;
using dlpv::verdict::detail::sha256_hex;

TEST_CASE("clean_text replaces control bytes and invalid UTF-8 with visible escapes") {
  CHECK(clean_text("a\x01z") == "a\\x01z");
  CHECK(clean_text("tab\tnl\ncr\r") == "tab\tnl\ncr\r");
  CHECK(clean_text(std::string("nul\0x", 5)) == "nul\\x00x");
  CHECK(clean_text("\x7f") == "\\x7F");
  CHECK(clean_text("caf\xc3\xa9 \xe2\x9c\x93") == "caf\xc3\xa9 \xe2\x9c\x93");  // valid kept
  CHECK(clean_text("bad\xff\xfe") == "bad\\xFF\\xFE");
  CHECK(clean_text("trunc\xe2\x9c") == "trunc\\xE2\\x9C");
  CHECK(clean_text("\xc0\xaf") == "\\xC0\\xAF");          // overlong '/'
  CHECK(clean_text("\xed\xa0\x80") == "\\xED\\xA0\\x80");  // UTF-16 surrogate
  CHECK(clean_text("\xef\xbf\xbf") == "\\uFFFF");          // XML non-character
}

TEST_CASE("terminal_text: a library's bytes never act on the terminal (issue 45's hostile inputs)") {
  // ANSI: recolour, retitle (OSC), clear screen; each ESC shown, the rest harmless text
  CHECK(terminal_text("\x1b[31mred\x1b[0m", true) == "\\x1B[31mred\\x1B[0m");
  CHECK(terminal_text("\x1b]0;owned\x07", true) == "\\x1B]0;owned\\x07");
  CHECK(terminal_text("\x1b[2J\x1b[H", true) == "\\x1B[2J\\x1B[H");
  // the one-byte CSI (U+009B in UTF-8) and other C1 controls; a raw 0x9B byte is invalid UTF-8
  CHECK(terminal_text("\xc2\x9b" "31m", true) == "\\u009B31m");
  CHECK(terminal_text("\x9b" "31m", true) == "\\x9B31m");
  // bidirectional overrides (reordering what the reader sees) and line separators
  CHECK(terminal_text("a\xe2\x80\xae" "b\xe2\x81\xa6" "c", true) == "a\\u202Eb\\u2066c");
  CHECK(terminal_text("x\xe2\x80\xa8y", true) == "x\\u2028y");
  // invalid UTF-8, NUL, backspace, carriage return (overwrites the line) and newlines
  CHECK(terminal_text(std::string("n\0ul\b", 5), true) == "n\\x00ul\\x08");
  CHECK(terminal_text("bad\xff", true) == "bad\\xFF");
  CHECK(terminal_text("one\ntwo\rthree\tfour", true) == "one two three four");
  CHECK(terminal_text("one\ntwo", false) == "one\ntwo");
  // ordinary text, accents and symbols kept; idempotent
  CHECK(terminal_text("caf\xc3\xa9 \xe2\x9c\x93 50%", true) == "caf\xc3\xa9 \xe2\x9c\x93 50%");
  const std::string once = terminal_text("\x1b[31m\xc2\x9b\xff", true);
  CHECK(terminal_text(once, true) == once);
}

TEST_CASE("html_escape neutralises markup and quotes") {
  CHECK(html_escape("<script>alert(\"x\")</script>&'") ==
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;");
}

TEST_CASE("xml escaping: text, attributes, CDATA terminator") {
  CHECK(xml_text("a]]>b<c&d") == "a]]&gt;b&lt;c&amp;d");
  CHECK(xml_attr("say \"hi\"\nnext\tcol") == "say &quot;hi&quot;&#10;next&#9;col");
  CHECK(xml_attr("\x01") == "\\x01");
}

TEST_CASE("markdown cells cannot break tables or inject HTML") {
  CHECK(md_text("a|b\nc") == "a\\|b c");
  CHECK(md_text("<b>x</b>") == "&lt;b&gt;x&lt;/b&gt;");
  CHECK(md_text("snake_case *x*") == "snake\\_case \\*x\\*");
  CHECK(md_code("a.b|c") == "`a.b\\|c`");
  CHECK(md_code("has`tick") == "``has`tick``");
  CHECK(md_code("`edge") == "`` `edge ``");
  CHECK(md_code("") == "");
}

TEST_CASE("script_json cannot close its script element") {
  nlohmann::ordered_json j = {{"x", "</script><!-- & -->"}};
  std::string s = script_json(j);
  CHECK(s.find("</") == std::string::npos);
  CHECK(s.find("<!--") == std::string::npos);
  CHECK(nlohmann::ordered_json::parse(s) == j);
}

TEST_CASE("sanitize_identifier folds anything outside [A-Za-z0-9_-]") {
  CHECK(sanitize_identifier("dlpv-reference 1.0") == "dlpv-reference_1_0");
  CHECK(sanitize_identifier("  <x> ") == "x");
  CHECK(sanitize_identifier("...") == "");
}

TEST_CASE("glob_match follows fnmatch rules over dotted ids") {
  CHECK(glob_match("deleter.*", "deleter.called_once.versioned"));
  CHECK(glob_match("*", ""));
  CHECK(glob_match("*.versioned", "a.b.versioned"));
  CHECK_FALSE(glob_match("*.versioned", "a.b.legacy"));
  CHECK(glob_match("dtype.float?.x", "dtype.float8.x"));
  CHECK(glob_match("dtype.[fi]*", "dtype.int8"));
  CHECK_FALSE(glob_match("dtype.[!fi]*", "dtype.int8"));
  CHECK(glob_match("v[0-9].[0-9]", "v1.3"));
  CHECK(glob_match("a\\*b", "a*b"));
  CHECK_FALSE(glob_match("a\\*b", "axb"));
  CHECK(glob_match("[", "["));
  CHECK(glob_match("*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaab"));
  CHECK_FALSE(glob_match("*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
  CHECK(glob_match(glob_escape("odd*[name]?"), "odd*[name]?"));
  CHECK_FALSE(glob_match(glob_escape("odd*"), "oddity"));
}

TEST_CASE("sha256 matches the FIPS 180-4 test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
