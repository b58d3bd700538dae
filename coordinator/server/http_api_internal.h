// What HttpApi's files share, and nothing else includes: http_api.cc (the routes and their
// answers), http_api_docs.cc (the JSON documents) and http_api_hosts.cc (the Host and Origin
// checks and the dashboard's callers).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "coordinator/store.h"

namespace httplib {
struct Response;
}  // namespace httplib

namespace benchlab::http_detail {

using ojson = nlohmann::ordered_json;

inline ojson Nullable(const std::string& s) { return s.empty() ? ojson(nullptr) : ojson(s); }

// A JSON error answer {"error": message} of `status`, not cached (http_api.cc).
void ReplyError(httplib::Response& res, int status, const std::string& message);

// The campaign, its claims and re-run requests, and the version they and the stored attempts
// make together: everything that decides whether a page's copy is still current.
struct CampaignHead {
  CampaignRow row;
  std::vector<WindowClaim> claims;
  std::vector<WindowKey> reruns;
  int series_position = 0;  // 1-based, oldest first
  int series_campaigns = 0;
  std::string version;
};

// http_api_docs.cc.
Result<CampaignHead> ReadCampaignHead(Store& store, const std::string& name);
// The document of a campaign whose head was read first: built after it, the document may only
// be newer than the head's version, so a page never keeps a copy older than its version says.
Result<ojson> CampaignDocAfter(Store& store, const CampaignHead& head);

}  // namespace benchlab::http_detail
