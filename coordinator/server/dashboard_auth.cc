#include "coordinator/server/dashboard_auth.h"

#include <algorithm>

#include "common/clock.h"
#include "coordinator/dashboard_token.h"
#include "coordinator/store.h"

namespace benchlab {

std::string CookieValue(const std::string& cookie_header, const std::string& name) {
  size_t at = 0;
  while (at < cookie_header.size()) {
    size_t end = cookie_header.find(';', at);
    if (end == std::string::npos) end = cookie_header.size();
    std::string pair = cookie_header.substr(at, end - at);
    const size_t first = pair.find_first_not_of(' ');
    pair = first == std::string::npos ? "" : pair.substr(first);
    if (pair.size() > name.size() && pair.compare(0, name.size(), name) == 0 &&
        pair[name.size()] == '=') {
      return pair.substr(name.size() + 1);
    }
    at = end + 1;
  }
  return "";
}

DashboardAuth::DashboardAuth(Store& store, Clock& clock, bool reads_open, bool https)
    : store_(store), clock_(clock), reads_open_(reads_open), https_(https) {}

Result<DashboardCaller> DashboardAuth::Identify(const std::string& authorization,
                                                const std::string& cookie_header) {
  if (!authorization.empty()) {
    constexpr std::string_view kBearer = "Bearer ";
    if (authorization.size() <= kBearer.size() ||
        authorization.compare(0, kBearer.size(), kBearer) != 0) {
      return Status::Unauthenticated("Authorization: expected \"Bearer TOKEN\"");
    }
    auto who = CheckDashboardToken(store_, authorization.substr(kBearer.size()), clock_.WallNow());
    if (!who.ok()) return who.status();
    return DashboardCaller{who->name, who->role};
  }
  const std::string id = CookieValue(cookie_header, kSessionCookie);
  if (id.empty()) return DashboardCaller{};
  std::string hash;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.ends <= clock_.Now()) {
      if (it != sessions_.end()) sessions_.erase(it);
      return Status::Unauthenticated(
          "no such session (it ended, or the coordinator restarted): "
          "log in again");
    }
    hash = it->second.token_hash;
  }
  auto who = CheckDashboardTokenHash(store_, hash, clock_.WallNow());
  if (!who.ok()) {
    if (who.status().code() == StatusCode::kUnauthenticated) {
      std::lock_guard lock(mu_);
      sessions_.erase(id);
    }
    return who.status();
  }
  return DashboardCaller{who->name, who->role};
}

Status DashboardAuth::MayRead(const DashboardCaller& caller) const {
  if (caller.anonymous() && !reads_open_) {
    return Status::Unauthenticated(
        "this dashboard needs a token: log in, or send Authorization: Bearer TOKEN "
        "(benchlab token create)");
  }
  return Status::Ok();
}

Status DashboardAuth::MayChange(const DashboardCaller& caller) const {
  if (caller.anonymous()) {
    return Status::Unauthenticated(
        "re-runs need an operator's token: log in, or send Authorization: Bearer TOKEN");
  }
  if (caller.role != "operator") {
    return Status::PermissionDenied("token " + caller.name + " is a " + caller.role +
                                    "'s: only an operator's token may queue re-runs");
  }
  return Status::Ok();
}

std::string DashboardAuth::Cookie(const std::string& value, int max_age_seconds) const {
  std::string cookie = std::string(kSessionCookie) + "=" + value +
                       "; Path=/; Max-Age=" + std::to_string(max_age_seconds) +
                       "; HttpOnly; SameSite=Strict";
  if (https_) cookie += "; Secure";
  return cookie;
}

Result<DashboardAuth::Login> DashboardAuth::LogIn(const std::string& token) {
  auto who = CheckDashboardToken(store_, token, clock_.WallNow());
  if (!who.ok()) return who.status();
  // A session id is as random as a token (without its prefix), never stored, never logged.
  auto random = NewDashboardToken();
  if (!random.ok()) return random.status();
  const std::string id = random->substr(std::string_view(kDashboardTokenPrefix).size());
  const auto now = clock_.Now();
  std::lock_guard lock(mu_);
  if (sessions_.size() >= kMaxSessions) {
    std::erase_if(sessions_, [now](const auto& s) { return s.second.ends <= now; });
  }
  if (sessions_.size() >= kMaxSessions) {
    // Full of live sessions: the one that ends soonest goes.
    auto oldest = std::min_element(sessions_.begin(), sessions_.end(),
                                   [](auto& a, auto& b) { return a.second.ends < b.second.ends; });
    sessions_.erase(oldest);
  }
  sessions_[id] = Session{DashboardTokenHash(token), now + kSessionLifetime};
  const int max_age =
      static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(kSessionLifetime).count());
  return Login{DashboardCaller{who->name, who->role}, Cookie(id, max_age)};
}

std::string DashboardAuth::LogOut(const std::string& cookie_header) {
  const std::string id = CookieValue(cookie_header, kSessionCookie);
  if (!id.empty()) {
    std::lock_guard lock(mu_);
    sessions_.erase(id);
  }
  return Cookie("", 0);
}

size_t DashboardAuth::sessions() const {
  std::lock_guard lock(mu_);
  return sessions_.size();
}

}  // namespace benchlab
