// What `benchlab history` and `benchlab regressions` print (docs/history.md), made in one place
// from a store and the command's arguments: the command calls these on the database it opens
// (--db), the coordinator on its own store (GetHistory, GetRegressions), so the text is the same
// byte for byte whichever of them answers. Reads the store, never writes it.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "common/text_table.h"
#include "coordinator/server/query_fields.h"
#include "coordinator/store.h"

namespace benchlab {

// The longest cell, target or (regressions) --since a query takes, in bytes; the most figures a
// regressions query searches; the longest dashboard URL.
inline constexpr size_t kMaxQueryFieldBytes = 256;
inline constexpr size_t kMaxQueryFigures = 16;
inline constexpr size_t kMaxDashboardUrlBytes = 2048;

// `benchlab history SERIES`: one figure of every line of a series over its campaigns.
struct HistoryQuery {
  std::string series;
  std::string cell;    // "" | "SCENARIO" | "SCENARIO/LEVEL" (json/c64)
  std::string target;  // "": every target
  std::string figure = "rps";
  std::string format = "text";  // text | md | json
  int width = kDefaultTextWidth;
};

// `benchlab regressions SERIES`: the change points of a series, with their re-measurements.
struct RegressionsQuery {
  std::string series;
  std::string since;  // a campaign of the series: only changes first seen there or later
  std::vector<std::string> figures = {"rps", "cpu"};
  std::string cell;
  std::string target;
  std::string format = "text";  // text | md | json
  std::string dashboard;        // md: each campaign linked under this URL
  int width = kDefaultTextWidth;
};

struct RegressionsView {
  std::string text;
  // A change that is a regression was confirmed by re-measurement (`--fail-on regression`).
  bool confirmed_regression = false;
};

// InvalidArgument naming the field when a query is malformed: a series that is no name
// (lowercase letters, digits and -, 1 to 64 characters), a cell not SCENARIO or SCENARIO/LEVEL,
// a cell, target or --since longer than kMaxQueryFieldBytes or a --since that is no name, an
// unknown figure (analysis/figure.h), no figure or more than kMaxQueryFigures, a format not
// text, md or json, a width outside kMinTextWidth..kMaxTextWidth, a dashboard URL longer than
// kMaxDashboardUrlBytes or holding control characters.
Status CheckHistoryQuery(const HistoryQuery& query, QueryFields fields = QueryFields::kOptions);
Status CheckRegressionsQuery(const RegressionsQuery& query,
                             QueryFields fields = QueryFields::kOptions);

// The history as text (tables `query.width` wide), Markdown or JSON. Errors: the query's
// (CheckHistoryQuery); NotFound for a series the store does not hold, naming those it holds
// ("no series \"x\" in STORE_NAME (series: ...)", LoadStoredSeries); the store's.
Result<std::string> HistoryText(Store& store, const HistoryQuery& query,
                                const std::string& store_name = "");

// The changes as text (paragraphs wrapped at `query.width`), a pull request's Markdown or JSON,
// each confirmed change followed by where the CPU went when its re-measurement was profiled.
// Errors: the query's; NotFound for an unknown series; InvalidArgument for a --since that is no
// campaign of the series; the store's.
Result<RegressionsView> RegressionsText(Store& store, const RegressionsQuery& query,
                                        const std::string& store_name = "");

}  // namespace benchlab
