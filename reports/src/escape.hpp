// SPDX-License-Identifier: Apache-2.0
// escape.hpp: making untrusted text safe for HTML, XML, Markdown and inline JSON.
//
// Everything a library under test controls (its name, messages, captured output) can hold
// markup, control bytes and invalid UTF-8. XML 1.0 forbids most C0 controls even as
// character references, and browsers and CI parsers differ on the rest, so all writers first
// reduce text to valid UTF-8 where each offending byte becomes a visible "\xNN".
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace dlpv::reports::detail {

/// Valid UTF-8 without C0 controls (other than tab, LF, CR), DEL or U+FFFE/U+FFFF:
/// invalid bytes and those controls become "\xNN", the two non-characters "\uFFFE"/"\uFFFF".
std::string clean_text(std::string_view s);

/// Text for a terminal (the text summary, progress lines, explain, the pytest plugin's lines):
/// clean_text's rule, and the code points a terminal acts on although they are printable
/// UTF-8 (the C1 controls U+0080..U+009F, among them the one-byte CSI U+009B; the bidirectional
/// overrides and isolates U+202A..U+202E, U+2066..U+2069; the line and paragraph separators
/// U+2028, U+2029) shown as "\uNNNN". ESC and every other C0 control are "\xNN" already. With
/// `one_line`, tab, LF and CR become spaces.
std::string terminal_text(std::string_view s, bool one_line);

/// clean_text + HTML entities for & < > " ' (safe in element content and quoted attributes).
std::string html_escape(std::string_view s);

/// clean_text + entities for & < > (XML element content; also defuses "]]>").
std::string xml_text(std::string_view s);

/// clean_text + entities for & < > " and character references for tab/LF/CR, so attribute
/// value normalisation does not turn a multi-line message into one line of spaces.
std::string xml_attr(std::string_view s);

/// Inline Markdown text (table cells, list items): newlines become spaces, "|" becomes "\|",
/// markup characters are backslash-escaped and < > & become entities, so library text can
/// neither break the table nor inject HTML.
std::string md_text(std::string_view s);

/// A Markdown code span holding s on one line (for case ids and requirement ids).
std::string md_code(std::string_view s);

/// JSON for embedding inside <script type="application/json">: "<", ">" and "&" are written
/// as \u003c, \u003e, \u0026 so no "</script>" or "<!--" can appear in the element.
std::string script_json(const nlohmann::ordered_json& j);

/// Characters safe in a JUnit classname segment: [A-Za-z0-9_-], others folded to '_'.
std::string sanitize_identifier(std::string_view s);

}  // namespace dlpv::reports::detail
