#include "cli/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "cli/report_lines.h"
#include "common/text_table.h"

namespace benchlab {
namespace {

constexpr const char* kErase = "\r\033[K";  // to the line's start, and clear it

std::string Level(const std::string& load_level, int connections) {
  return load_level.empty() ? "c" + std::to_string(connections) : load_level;
}

// A window, whatever its attempt: what NewestAttempts (cli/client.h) groups by.
std::string WindowName(const v1::Window& w) {
  return w.pair() + "|" + w.target() + "|" + w.scenario() + "|" +
         Level(w.load_level(), w.connections()) + "|" + std::to_string(w.round()) + "|" +
         std::to_string(w.position());
}

// One attempt, as both a WindowStarted and the stored Window name it (a start has no position:
// a pair measures one window at a time, so the noise windows of a pair cannot be confused).
std::string AttemptKey(const std::string& pair, const std::string& target,
                       const std::string& scenario, const std::string& level, int round, bool noise,
                       int attempt) {
  return pair + "|" + target + "|" + scenario + "|" + level + "|" + std::to_string(round) + "|" +
         (noise ? "n" : "m") + "|" + std::to_string(attempt);
}
std::string AttemptKey(const v1::WindowStarted& w) {
  return AttemptKey(w.pair(), w.target(), w.scenario(), w.load_level(), w.round(), w.noise(),
                    w.attempt());
}
std::string AttemptKey(const v1::Window& w) {
  return AttemptKey(w.pair(), w.target(), w.scenario(), Level(w.load_level(), w.connections()),
                    w.round(), w.noise(), w.attempt());
}

std::string Repeat(const char* piece, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += piece;
  return out;
}

// UTF-8 text cut to `columns` code points (each one terminal column here: the status line holds
// ASCII, box drawing and punctuation only, besides names), "…" marking a cut.
std::string FitColumns(const std::string& text, int columns) {
  if (columns <= 0) return "";
  auto is_lead = [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; };
  int count = static_cast<int>(std::count_if(text.begin(), text.end(), is_lead));
  if (count <= columns) return text;
  int keep = columns - 1;
  size_t end = 0;
  for (int seen = 0; end < text.size(); ++end) {
    if (is_lead(text[end]) && seen++ == keep) break;
  }
  return text.substr(0, end) + "…";
}

std::string Total(const Progress& p) { return p.total() > 0 ? std::to_string(p.total()) : "?"; }

}  // namespace

std::optional<ProgressMode> ParseProgressMode(const std::string& text) {
  if (text == "auto") return ProgressMode::kAuto;
  if (text == "tty") return ProgressMode::kTty;
  if (text == "plain") return ProgressMode::kPlain;
  if (text == "off") return ProgressMode::kOff;
  return std::nullopt;
}

ProgressMode ResolveProgressMode(ProgressMode requested, bool stdout_is_terminal) {
  if (requested != ProgressMode::kAuto) return requested;
  return stdout_is_terminal ? ProgressMode::kTty : ProgressMode::kPlain;
}

Progress::Progress(int total_windows, TimePoint start, bool at_most)
    : total_(total_windows), at_most_(at_most), last_stored_(start) {}

void Progress::Started(const v1::WindowStarted& w, TimePoint /*now*/) {
  // A pair measures one window at a time: a new claim replaces whatever it showed before.
  std::erase_if(running_, [&](const v1::WindowStarted& r) { return r.pair() == w.pair(); });
  running_.push_back(w);
  const std::string key = AttemptKey(w);
  if (std::find(started_keys_.begin(), started_keys_.end(), key) == started_keys_.end()) {
    started_keys_.push_back(key);
  }
}

void Progress::Stored(const v1::Window& w, TimePoint now) {
  if (w.total_windows() > 0) total_ = w.total_windows();
  ++attempts_;
  Newest& newest = newest_[WindowName(w)];
  if (w.attempt() >= newest.attempt) newest = Newest{w.attempt(), w.verdict()};

  const std::string key = AttemptKey(w);
  std::erase_if(running_, [&](const v1::WindowStarted& r) { return AttemptKey(r) == key; });
  auto started = std::find(started_keys_.begin(), started_keys_.end(), key);
  if (started != started_keys_.end()) {
    started_keys_.erase(started);
    seconds_per_window_.push_back(std::chrono::duration<double>(now - last_stored_).count());
  }
  last_stored_ = now;
}

int Progress::Count(const std::string& verdict) const {
  return static_cast<int>(std::count_if(newest_.begin(), newest_.end(), [&](const auto& entry) {
    return entry.second.verdict == verdict;
  }));
}

std::optional<double> Progress::EtaSeconds() const {
  if (total_ <= 0) return std::nullopt;
  const int remaining = std::max(0, total_ - done());
  if (remaining == 0) return running_.empty() ? std::optional<double>(0.0) : std::nullopt;
  if (seconds_per_window_.empty()) return std::nullopt;
  double mean = std::accumulate(seconds_per_window_.begin(), seconds_per_window_.end(), 0.0) /
                static_cast<double>(seconds_per_window_.size());
  return remaining * mean;
}

std::string DescribeWindow(const v1::WindowStarted& w) {
  std::string text = w.pair().empty() ? "" : w.pair() + " · ";
  text += w.noise() ? "noise" : "round " + std::to_string(w.round());
  return text + " · " + w.target() + " · " + w.scenario() + " · " + w.load_level();
}

std::string FormatEta(std::optional<double> seconds, bool clock) {
  if (!seconds || !std::isfinite(*seconds)) return "–";
  const long long s = std::max(0LL, std::llround(*seconds));
  char buf[48];
  if (clock) {
    if (s >= 3600) {
      std::snprintf(buf, sizeof(buf), "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    } else {
      std::snprintf(buf, sizeof(buf), "%lld:%02lld", s / 60, s % 60);
    }
  } else if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%llds", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%lldh%02lldm", s / 3600, s / 60 % 60);
  }
  return buf;
}

std::string FormatPlainProgress(const Progress& p) {
  std::string line = "progress: " + std::to_string(p.done()) +
                     (p.at_most() ? " of at most " : "/") + Total(p) + " windows, " +
                     std::to_string(p.valid()) + " valid, " + std::to_string(p.invalid()) +
                     " invalid, " + std::to_string(p.failed()) + " failed";
  if (p.skipped() > 0) line += ", " + std::to_string(p.skipped()) + " skipped";
  const std::optional<double> eta = p.EtaSeconds();
  return line + ", ETA " + (p.at_most() && eta ? "at most " : "") + FormatEta(eta, false);
}

std::string FormatRunningLine(const v1::WindowStarted& w, int width) {
  return CutEnd("running: " + DescribeWindow(w) + " (attempt " + std::to_string(w.attempt()) + ")",
                static_cast<size_t>(std::max(width, 1)));
}

std::string FormatStatusLine(const Progress& p, int width) {
  const int cells = width >= 110 ? 20 : 10;  // narrower on a narrow terminal, for the rest
  const int filled = p.total() > 0 ? std::clamp(p.done() * cells / p.total(), 0, cells) : 0;
  std::string line = "[" + Repeat("█", filled) + Repeat("░", cells - filled) + "] " +
                     std::to_string(p.done()) + (p.at_most() ? "/≤" : "/") + Total(p) + " · " +
                     std::to_string(p.valid()) + " valid · " + std::to_string(p.invalid()) +
                     " invalid";
  if (p.failed() > 0) line += " · " + std::to_string(p.failed()) + " failed";
  if (p.skipped() > 0) line += " · " + std::to_string(p.skipped()) + " skipped";
  const std::optional<double> eta = p.EtaSeconds();
  line += " · ETA " + std::string(p.at_most() && eta ? "≤" : "") + FormatEta(eta, true);
  for (size_t i = 0; i < p.running().size(); ++i) {
    const v1::WindowStarted& w = p.running()[i];
    line += (i == 0 ? " · now: " : " | ") + DescribeWindow(w);
    if (w.attempt() > 1) line += " (attempt " + std::to_string(w.attempt()) + ")";
  }
  // The last column stays free: a line filling it would wrap on some terminals.
  return FitColumns(line, width - 1);
}

ProgressPrinter::ProgressPrinter(ProgressMode mode, int total_windows, Clock& clock,
                                 std::function<int()> terminal_width, bool at_most, int line_width)
    : mode_(mode == ProgressMode::kAuto ? ProgressMode::kPlain : mode),
      clock_(clock),
      terminal_width_(std::move(terminal_width)),
      line_width_(line_width),
      progress_(total_windows, clock.Now(), at_most) {}

std::string ProgressPrinter::StatusLine() {
  status_shown_ = true;
  return FormatStatusLine(progress_, terminal_width_ ? terminal_width_() : 80);
}

std::string ProgressPrinter::OnStarted(const v1::WindowStarted& w) {
  progress_.Started(w, clock_.Now());
  switch (mode_) {
    case ProgressMode::kTty:
      return kErase + StatusLine();
    case ProgressMode::kPlain:
      return FormatRunningLine(w, line_width_) + "\n";
    default:
      return "";
  }
}

std::string ProgressPrinter::OnWindow(const v1::Window& w) {
  progress_.Stored(w, clock_.Now());
  const std::string line = FormatWindowLine(w, line_width_) + "\n";
  switch (mode_) {
    case ProgressMode::kTty:
      return kErase + line + StatusLine();
    case ProgressMode::kPlain:
      return line + FormatPlainProgress(progress_) + "\n";
    default:
      return line;
  }
}

std::string ProgressPrinter::OnWaiting(const std::string& why) {
  if (why.empty()) return "";
  const std::string line = WrapText("waiting for agents: " + why, line_width_);
  return mode_ == ProgressMode::kTty ? kErase + line + StatusLine() : line;
}

std::string ProgressPrinter::Finish() {
  if (!status_shown_) return "";
  status_shown_ = false;
  return kErase;
}

}  // namespace benchlab
