// What `benchlab history` and `benchlab regressions` share (docs/history.md): reading a series'
// campaigns from a database, the --cell/--target filter, and writing the result to stdout or a
// file. Each returns 0, or prints one line "benchlab COMMAND: ..." and returns the exit status
// (cli/commands.h: 1 failure, 2 bad input).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/report_format.h"
#include "analysis/series.h"
#include "coordinator/store.h"

namespace benchlab {

// --cell "SCENARIO" or "SCENARIO/LEVEL", and --target, into `filter`.
int ParseSeriesFilter(const char* command, const std::string& cell, const std::string& target,
                      SeriesFilter& filter);

// The campaigns of `series` in the database `db`, oldest first, each with its report's input
// (LoadStoredSeries), and the store they came from. A missing database is not created; an
// unknown series is refused with the series `db` holds.
struct SeriesInput {
  std::vector<CampaignRow> campaigns;
  std::vector<ReportInput> inputs;
  std::unique_ptr<Store> store;
};
int LoadSeriesInput(const char* command, const std::string& db, const std::string& series,
                    SeriesInput& out);

// `text` to stdout ("" or "-"), or to `output` through a file beside it renamed over it, so that
// a reader never sees half of it.
int WriteCommandOutput(const char* command, const std::string& text, const std::string& output);

}  // namespace benchlab
