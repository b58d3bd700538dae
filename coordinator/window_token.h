// Window tokens: the proof that a call to an agent (StartTarget, StopTarget, Mark, RunLoad,
// Acknowledge) comes from the coordinator that runs the window (proto/benchlab/v1/agent.proto).
// A token is the first kWindowTokenHexChars hex digits of HMAC-SHA256(lab secret, spool key):
// nobody without the lab secret can make one, and the coordinator makes the same one again after
// a restart, from the secret kept in its store (Store::lab_secret). Pure function, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace benchlab {

inline constexpr size_t kWindowTokenHexChars = 32;  // 128 bits of the HMAC

// `spool_key` is the window attempt's SpoolKey (coordinator/server/window_runner.h), without the
// ".server" / ".load" suffix: every call of one window attempt carries the same token.
std::string WindowToken(std::string_view lab_secret, std::string_view spool_key);

}  // namespace benchlab
