// Window tokens and the agent's other secrets (docs/agent.md, "What the agent refuses"). A window
// token is the opaque string a coordinator makes per window (proto/benchlab/v1/agent.proto): 16 to
// 128 characters of [A-Za-z0-9._:-]. A target is bound to the token that started it and a spooled
// result to the token it was spooled under; tokens are compared in constant time. Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace benchlab {

inline constexpr size_t kMinWindowToken = 16;
inline constexpr size_t kMaxWindowToken = 128;

bool IsWindowToken(std::string_view token);
// InvalidArgument naming `field` and the form when `token` is not a window token; the token
// itself is never quoted (it may be a secret someone mistyped).
Status CheckWindowToken(std::string_view field, std::string_view token);

// Equality whose running time depends only on the lengths, not on where the strings differ.
bool TokensEqual(std::string_view a, std::string_view b);

// `bytes` random bytes from getrandom(2) as 2*bytes lowercase hex digits: target handles (16
// bytes) and the instance proof (32 bytes).
Result<std::string> RandomHex(size_t bytes);

}  // namespace benchlab
