// Text from outside benchlab (a peer's request, an agent's host facts, a stored name or reason)
// made safe to print on a terminal or in a log line: one stored value never prints as two lines,
// moves the cursor or starts an escape sequence (docs/security.md, "What holds everywhere").
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace benchlab {

// `text` with every character a terminal would act on shown escaped, the rest as it is:
// - C0 controls as \n, \r, \t or \xNN ("\x1b"), DEL as \x7f;
// - C1 controls (U+0080 to U+009F, which some terminals read as ESC sequences), the line and
//   paragraph separators (U+2028, U+2029) and the bidirectional controls that reorder what
//   follows (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069) as \uXXXX;
// - each byte that is not part of well-formed UTF-8 as \xNN;
// - a backslash as \\, so that an escape in the output always stands for one of the above.
std::string PrintableText(std::string_view text);

// The offset of the first character PrintableText escapes (a backslash apart), or npos when
// `text` is printable UTF-8 as it stands.
size_t FirstUnprintable(std::string_view text);

// `text` when it fits in `max_bytes`; else its first `max_bytes` bytes or fewer, cut between
// UTF-8 characters, followed by "…[+N bytes]" for the N bytes left out.
std::string Truncated(std::string_view text, size_t max_bytes);

}  // namespace benchlab
