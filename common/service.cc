#include "common/service.h"

#include <cstdio>

namespace benchlab {
namespace {

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.15g", v);
  return buf;
}

}  // namespace

const char* ServiceScopeName(ServiceScope scope) {
  switch (scope) {
    case ServiceScope::kCampaign:
      return "campaign";
    case ServiceScope::kTarget:
      return "target";
    case ServiceScope::kWindow:
      return "window";
  }
  return "campaign";
}

const char* ServiceKindName(ServiceKind kind) {
  return kind == ServiceKind::kPostgres ? "postgres" : "command";
}

const char* ResetEveryName(ResetEvery every) {
  return every == ResetEvery::kRound ? "round" : "window";
}

ProbeDelta ProbeDeltaOf(std::optional<double> before, std::optional<double> after,
                        const std::string& error) {
  ProbeDelta out;
  if (!before || !after) {
    out.unavailable = !error.empty()      ? error
                      : !before && !after ? "no reading before or after"
                      : !before           ? "no reading before"
                                          : "no reading after";
    return out;
  }
  if (*after < *before) {
    out.unavailable =
        "counter reset: " + FormatNumber(*before) + " before, " + FormatNumber(*after) + " after";
    return out;
  }
  out.delta = *after - *before;
  return out;
}

}  // namespace benchlab
