// DashboardAuth: who a request to the coordinator's dashboard is, and what it may do
// (docs/security.md, "The dashboard"). A caller shows a token (coordinator/dashboard_token.h)
// either on each request (`Authorization: Bearer TOKEN`, for scripts) or once, to log in, and
// then carries a session cookie (HttpOnly, SameSite=Strict, and Secure over HTTPS). A session
// keeps only its token's hash, and the token is checked in the store again on every request, so
// revoking a token ends its sessions at once. Reads are open without a token only when the
// dashboard listens on loopback; a re-run needs an operator's token everywhere. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "common/status.h"

namespace benchlab {

class Clock;
class Store;

inline constexpr const char* kSessionCookie = "benchlab_session";

struct DashboardCaller {
  std::string name;  // the token's name; "" for a caller without one
  std::string role;  // "viewer" or "operator"; "" for a caller without a token
  bool anonymous() const { return role.empty(); }
};

class DashboardAuth {
 public:
  static constexpr size_t kMaxSessions = 1024;
  static constexpr std::chrono::hours kSessionLifetime{12};

  // `reads_open`: a caller without a token may read (a dashboard on loopback). `https`: cookies
  // are marked Secure.
  DashboardAuth(Store& store, Clock& clock, bool reads_open, bool https);

  // The caller of a request from its Authorization and Cookie headers (either may be empty).
  // A Bearer token is checked; else the session cookie; else the caller is anonymous.
  // Unauthenticated, with the reason, for a bad token, an unknown or ended session (a forged or
  // stale cookie), or an Authorization header that is not "Bearer TOKEN".
  Result<DashboardCaller> Identify(const std::string& authorization,
                                   const std::string& cookie_header);
  // Unauthenticated for an anonymous caller when reads are not open.
  Status MayRead(const DashboardCaller& caller) const;
  // Unauthenticated for an anonymous caller; PermissionDenied for a viewer.
  Status MayChange(const DashboardCaller& caller) const;

  struct Login {
    DashboardCaller caller;
    std::string set_cookie;  // the Set-Cookie header's value
  };
  // Checks a token and opens a session for it. Unauthenticated for a bad token.
  Result<Login> LogIn(const std::string& token);
  // Ends the request's session, if any; returns the Set-Cookie value that clears the cookie.
  std::string LogOut(const std::string& cookie_header);

  bool reads_open() const { return reads_open_; }
  size_t sessions() const;

 private:
  struct Session {
    std::string token_hash;
    std::chrono::steady_clock::time_point ends;
  };
  std::string Cookie(const std::string& value, int max_age_seconds) const;

  Store& store_;
  Clock& clock_;
  const bool reads_open_;
  const bool https_;
  mutable std::mutex mu_;
  std::map<std::string, Session> sessions_;  // by session id (the cookie's value)
};

// The value of cookie `name` in a Cookie header ("a=1; benchlab_session=XYZ"); "" when absent.
std::string CookieValue(const std::string& cookie_header, const std::string& name);

}  // namespace benchlab
