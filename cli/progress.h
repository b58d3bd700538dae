// Live progress of a campaign as `benchlab run` and `benchlab submit --wait` show it: `Progress`
// counts the events of the WatchCampaign stream (windows done of total, verdicts, the window each
// pair is measuring, an ETA), and `ProgressPrinter` turns each event into the text for stdout, as
// a status line redrawn in place on a terminal or as plain lines for logs and pipes. No I/O: the
// caller writes the text, and time comes from the injected Clock. One thread uses an instance.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "benchlab/v1/common.pb.h"
#include "benchlab/v1/coordinator.pb.h"
#include "cli/progress_mode.h"
#include "common/clock.h"
#include "common/text_table.h"

namespace benchlab {

class Progress {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // `total_windows` 0: not known yet, taken from the first window's total_windows.
  // `at_most`: the total is an adaptive plan's maximum (every cell at max rounds), which a
  // campaign whose cells are decided earlier never reaches; the lines and the ETA say "at most".
  Progress(int total_windows, TimePoint start, bool at_most = false);

  // A window was claimed and is being measured now.
  void Started(const v1::WindowStarted& w, TimePoint now);
  // An attempt was stored. A later attempt of a window already counted replaces its verdict.
  void Stored(const v1::Window& w, TimePoint now);

  int total() const { return total_; }
  bool at_most() const { return at_most_; }
  int done() const { return static_cast<int>(newest_.size()); }  // distinct windows stored
  int valid() const { return Count("valid"); }
  int invalid() const { return Count("invalid"); }
  int failed() const { return Count("failed"); }
  int skipped() const { return Count("skipped"); }
  int attempts() const { return attempts_; }
  // The windows being measured now, one per pair at most, in the order they started.
  const std::vector<v1::WindowStarted>& running() const { return running_; }

  // Windows left × the mean time between stored windows, over the windows seen starting during
  // the watch (windows stored before it arrive at once and would say nothing of the pace). A
  // mean, not a median: with fleet pairs measuring in parallel, the intervals alternate long
  // and short. nullopt before the first such window, while the total is unknown, and when every
  // window is done but a re-run is still measuring.
  std::optional<double> EtaSeconds() const;

 private:
  struct Newest {
    int attempt = 0;
    std::string verdict;
  };
  int Count(const std::string& verdict) const;

  int total_;
  bool at_most_;
  TimePoint last_stored_;  // the start, then the arrival of the last window stored
  int attempts_ = 0;
  std::map<std::string, Newest> newest_;  // window key -> its newest attempt
  std::vector<v1::WindowStarted> running_;
  std::vector<std::string> started_keys_;   // attempts seen starting, not yet stored
  std::vector<double> seconds_per_window_;  // intervals ending at a window seen starting
};

// "round 2 · nginx · json · c32"; "noise · ..." for a noise window; "srv2 · round 2 · ..." for a
// fleet pair's window (its server agent). The attempt is left to the caller.
std::string DescribeWindow(const v1::WindowStarted& w);
// ETA: nullopt -> "–"; `clock` true: "0:21", "1:02:03"; false: "21s", "3m05s", "1h02m".
std::string FormatEta(std::optional<double> seconds, bool clock);
// "progress: 14/24 windows, 12 valid, 2 invalid, 0 failed, ETA 21s" (", 1 skipped" when any);
// for an adaptive plan "progress: 14 of at most 24 windows, ..., ETA at most 21s".
std::string FormatPlainProgress(const Progress& p);
// "running: round 2 · nginx · json · c32 (attempt 1)", cut to `width` columns with "…".
std::string FormatRunningLine(const v1::WindowStarted& w, int width = kDefaultTextWidth);
// "[████████░░░░] 14/24 · 12 valid · 2 invalid · ETA 0:21 · now: round 2 · nginx · json · c32",
// cut to fit `width` terminal columns (one left free, so the terminal never wraps it). No
// control characters. For an adaptive plan "14/≤24 · ... · ETA ≤0:21".
std::string FormatStatusLine(const Progress& p, int width);

// Turns the watch's events into what stdout shows in a resolved mode (not kAuto):
//  - kTty: window lines scroll; the status line below them is redrawn in place ("\r\033[K"),
//    erased before each window line and by Finish().
//  - kPlain: no control characters; after each window line a FormatPlainProgress line, and a
//    FormatRunningLine when a window starts.
//  - kOff: the window lines only.
class ProgressPrinter {
 public:
  // `terminal_width` is asked at each redraw, so a resized terminal is followed. The lines that
  // scroll (a window's, the plain progress lines) are cut to `line_width` (cli/text_width.h).
  ProgressPrinter(ProgressMode mode, int total_windows, Clock& clock,
                  std::function<int()> terminal_width, bool at_most = false,
                  int line_width = kDefaultTextWidth);
  ProgressPrinter(const ProgressPrinter&) = delete;
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;

  std::string OnStarted(const v1::WindowStarted& w);
  std::string OnWindow(const v1::Window& w);  // includes FormatWindowLine(w)
  // Why the campaign waits for agents before it runs (CampaignEvent.waiting): lines of their own
  // in every mode, wrapped at the line width, "waiting for agents: no ready server agent has
  // targets nginx: srv1 is busy"; "" for the empty reason sent once it runs.
  std::string OnWaiting(const std::string& why);
  // Erases the status line (kTty), before the summary or a message on stderr.
  std::string Finish();

  ProgressMode mode() const { return mode_; }
  const Progress& progress() const { return progress_; }

 private:
  std::string StatusLine();

  const ProgressMode mode_;
  Clock& clock_;
  std::function<int()> terminal_width_;
  const int line_width_;
  Progress progress_;
  bool status_shown_ = false;
};

}  // namespace benchlab
