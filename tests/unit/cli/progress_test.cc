#include "cli/progress.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cli/report_lines.h"

namespace benchlab {
namespace {

using std::chrono::seconds;

class FakeClock : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override { return now; }
  std::chrono::system_clock::time_point WallNow() override { return {}; }
  std::chrono::steady_clock::time_point now{seconds(1000)};
};

v1::WindowStarted Start(const std::string& target, int round, int attempt = 1,
                        const std::string& pair = "") {
  v1::WindowStarted w;
  w.set_target(target);
  w.set_scenario("json");
  w.set_load_level("c32");
  w.set_round(round);
  w.set_noise(round == 0);
  w.set_attempt(attempt);
  w.set_pair(pair);
  return w;
}

v1::Window Stored(const std::string& target, int round, const std::string& verdict, int attempt = 1,
                  const std::string& pair = "") {
  v1::Window w;
  w.set_target(target);
  w.set_scenario("json");
  w.set_load_level("c32");
  w.set_connections(32);
  w.set_round(round);
  w.set_noise(round == 0);
  w.set_attempt(attempt);
  w.set_pair(pair);
  w.set_verdict(verdict);
  w.set_total_windows(4);
  w.set_rps(1000);
  w.set_p99_us(500);
  return w;
}

// Columns as a terminal shows the status line: one per UTF-8 code point.
int Columns(const std::string& text) {
  return static_cast<int>(std::count_if(text.begin(), text.end(), [](char ch) {
    return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  }));
}

TEST(ProgressTest, CountsTheNewestAttemptOfEachWindow) {
  const auto t0 = std::chrono::steady_clock::time_point(seconds(0));
  Progress p(4, t0);
  p.Stored(Stored("nginx", 1, "valid"), t0);
  p.Stored(Stored("hello", 1, "invalid"), t0);
  p.Stored(Stored("nginx", 2, "failed"), t0);
  EXPECT_EQ(p.done(), 3);
  EXPECT_EQ(p.valid(), 1);
  EXPECT_EQ(p.invalid(), 1);
  EXPECT_EQ(p.failed(), 1);
  EXPECT_EQ(p.skipped(), 0);

  // A re-run of a window already counted is the same window: done stays, its verdict changes.
  p.Stored(Stored("hello", 1, "valid", 2), t0);
  EXPECT_EQ(p.done(), 3);
  EXPECT_EQ(p.valid(), 2);
  EXPECT_EQ(p.invalid(), 0);
  EXPECT_EQ(p.attempts(), 4);
  // An older attempt arriving late does not replace the newer one.
  p.Stored(Stored("hello", 1, "invalid", 1), t0);
  EXPECT_EQ(p.valid(), 2);
  EXPECT_EQ(p.invalid(), 0);

  p.Stored(Stored("hello", 2, "skipped"), t0);
  EXPECT_EQ(p.done(), 4);
  EXPECT_EQ(p.skipped(), 1);
}

TEST(ProgressTest, TotalComesWithTheWindowsWhenNotGiven) {
  const auto t0 = std::chrono::steady_clock::time_point(seconds(0));
  Progress p(0, t0);
  EXPECT_EQ(FormatPlainProgress(p), "progress: 0/? windows, 0 valid, 0 invalid, 0 failed, ETA –");
  p.Stored(Stored("nginx", 1, "valid"), t0);
  EXPECT_EQ(p.total(), 4);
}

TEST(ProgressTest, EtaIsWindowsLeftTimesTheMeanTimePerWindow) {
  const auto t0 = std::chrono::steady_clock::time_point(seconds(0));
  Progress p(4, t0);
  EXPECT_FALSE(p.EtaSeconds().has_value());  // nothing finished yet
  p.Started(Start("nginx", 1), t0 + seconds(1));
  EXPECT_FALSE(p.EtaSeconds().has_value());
  p.Stored(Stored("nginx", 1, "valid"), t0 + seconds(10));
  ASSERT_TRUE(p.EtaSeconds().has_value());
  EXPECT_DOUBLE_EQ(*p.EtaSeconds(), 3 * 10.0);
  p.Started(Start("hello", 1), t0 + seconds(10));
  p.Stored(Stored("hello", 1, "invalid"), t0 + seconds(16));
  EXPECT_DOUBLE_EQ(*p.EtaSeconds(), 2 * 8.0);  // mean of 10 s and 6 s
  EXPECT_EQ(FormatPlainProgress(p), "progress: 2/4 windows, 1 valid, 1 invalid, 0 failed, ETA 16s");
}

TEST(ProgressTest, WindowsStoredBeforeTheWatchDoNotSetThePace) {
  const auto t0 = std::chrono::steady_clock::time_point(seconds(0));
  Progress p(4, t0);
  // A resumed campaign: two windows stored earlier arrive at once, never seen starting.
  p.Stored(Stored("nginx", 1, "valid"), t0);
  p.Stored(Stored("hello", 1, "valid"), t0);
  EXPECT_FALSE(p.EtaSeconds().has_value());
  p.Started(Start("nginx", 2), t0);
  p.Stored(Stored("nginx", 2, "valid"), t0 + seconds(5));
  EXPECT_DOUBLE_EQ(*p.EtaSeconds(), 1 * 5.0);
}

TEST(ProgressTest, EtaWhenEveryWindowIsDone) {
  const auto t0 = std::chrono::steady_clock::time_point(seconds(0));
  Progress p(1, t0);
  v1::Window first = Stored("nginx", 1, "invalid");
  first.set_total_windows(1);
  v1::Window rerun = Stored("nginx", 1, "valid", 2);
  rerun.set_total_windows(1);
  p.Started(Start("nginx", 1), t0);
  p.Stored(first, t0 + seconds(3));
  EXPECT_DOUBLE_EQ(*p.EtaSeconds(), 0);
  // A re-run of it is measuring: how long it takes is not known from windows left.
  p.Started(Start("nginx", 1, 2), t0 + seconds(4));
  EXPECT_FALSE(p.EtaSeconds().has_value());
  p.Stored(rerun, t0 + seconds(7));
  EXPECT_DOUBLE_EQ(*p.EtaSeconds(), 0);
  EXPECT_EQ(p.done(), 1);
  EXPECT_EQ(p.valid(), 1);
}

TEST(ProgressTest, EtaFormats) {
  EXPECT_EQ(FormatEta(std::nullopt, true), "–");
  EXPECT_EQ(FormatEta(std::nullopt, false), "–");
  EXPECT_EQ(FormatEta(21.4, true), "0:21");
  EXPECT_EQ(FormatEta(21.4, false), "21s");
  EXPECT_EQ(FormatEta(185, true), "3:05");
  EXPECT_EQ(FormatEta(185, false), "3m05s");
  EXPECT_EQ(FormatEta(3723, true), "1:02:03");
  EXPECT_EQ(FormatEta(3723, false), "1h02m");
}

TEST(ProgressTest, CurrentWindowOfMatrixNoiseAndFleetPairs) {
  EXPECT_EQ(DescribeWindow(Start("nginx", 2)), "round 2 · nginx · json · c32");
  EXPECT_EQ(DescribeWindow(Start("nginx", 0)), "noise · nginx · json · c32");
  EXPECT_EQ(DescribeWindow(Start("nginx", 1, 1, "srv2")), "srv2 · round 1 · nginx · json · c32");
  EXPECT_EQ(FormatRunningLine(Start("nginx", 2)),
            "running: round 2 · nginx · json · c32 (attempt 1)");

  const auto t0 = std::chrono::steady_clock::time_point(seconds(0));
  Progress p(8, t0);
  p.Started(Start("nginx", 1, 1, "srv1"), t0);
  p.Started(Start("hello", 0, 1, "srv2"), t0);
  ASSERT_EQ(p.running().size(), 2u);
  std::string line = FormatStatusLine(p, 200);
  EXPECT_NE(line.find("now: srv1 · round 1 · nginx · json · c32 | srv2 · noise · hello"),
            std::string::npos)
      << line;
  // srv1's window is stored and its next one starts: one window per pair.
  p.Stored(Stored("nginx", 1, "valid", 1, "srv1"), t0 + seconds(2));
  ASSERT_EQ(p.running().size(), 1u);
  EXPECT_EQ(p.running()[0].pair(), "srv2");
  p.Started(Start("hello", 1, 2, "srv1"), t0 + seconds(2));
  p.Started(Start("nginx", 0, 1, "srv2"), t0 + seconds(3));  // replaces srv2's noise window
  ASSERT_EQ(p.running().size(), 2u);
  line = FormatStatusLine(p, 200);
  EXPECT_NE(
      line.find("now: srv1 · round 1 · hello · json · c32 (attempt 2) | srv2 · noise · nginx"),
      std::string::npos)
      << line;
}

TEST(ProgressTest, StatusLineShowsTheBarCountsAndEta) {
  const auto t0 = std::chrono::steady_clock::time_point(seconds(0));
  Progress p(4, t0);
  p.Started(Start("nginx", 1), t0);
  p.Stored(Stored("nginx", 1, "valid"), t0 + seconds(7));
  p.Started(Start("hello", 1), t0 + seconds(7));
  EXPECT_EQ(FormatStatusLine(p, 120),
            "[█████░░░░░░░░░░░░░░░] 1/4 · 1 valid · 0 invalid · ETA 0:21 · now: round 1 · hello · "
            "json · c32");
  p.Stored(Stored("hello", 1, "failed"), t0 + seconds(14));
  EXPECT_EQ(FormatStatusLine(p, 70),
            "[█████░░░░░] 2/4 · 1 valid · 0 invalid · 1 failed · ETA 0:14");
}

TEST(ProgressTest, AnAdaptivePlansTotalAndEtaAreMaximums) {
  // An adaptive plan's total has every cell at max rounds; cells decided earlier never run
  // them, so both the total and the ETA are upper bounds, and the lines say so.
  const auto t0 = std::chrono::steady_clock::time_point(seconds(0));
  Progress p(4, t0, /*at_most=*/true);
  EXPECT_EQ(FormatPlainProgress(p),
            "progress: 0 of at most 4 windows, 0 valid, 0 invalid, 0 failed, ETA –");
  p.Started(Start("nginx", 1), t0);
  p.Stored(Stored("nginx", 1, "valid"), t0 + seconds(2));
  EXPECT_EQ(FormatPlainProgress(p),
            "progress: 1 of at most 4 windows, 1 valid, 0 invalid, 0 failed, ETA at most 6s");
  EXPECT_EQ(FormatStatusLine(p, 80), "[██░░░░░░░░] 1/≤4 · 1 valid · 0 invalid · ETA ≤0:06");
  Progress fixed(4, t0);
  EXPECT_FALSE(fixed.at_most());
  EXPECT_EQ(FormatPlainProgress(fixed),
            "progress: 0/4 windows, 0 valid, 0 invalid, 0 failed, ETA –");
}

TEST(ProgressTest, StatusLineFitsTheTerminal) {
  const auto t0 = std::chrono::steady_clock::time_point(seconds(0));
  Progress p(24, t0);
  p.Started(Start("a-target-with-a-long-name", 3, 1, "server-agent-number-one"), t0);
  for (int width : {1, 2, 10, 40, 60, 80, 132}) {
    std::string line = FormatStatusLine(p, width);
    EXPECT_LE(Columns(line), std::max(0, width - 1)) << width << ": " << line;
  }
  EXPECT_EQ(FormatStatusLine(p, 40), "[░░░░░░░░░░] 0/24 · 0 valid · 0 invali…");
}

TEST(ProgressPrinterTest, PlainHasNoControlCharacters) {
  FakeClock clock;
  ProgressPrinter printer(ProgressMode::kPlain, 4, clock, [] { return 80; });
  std::string out = printer.OnStarted(Start("nginx", 1));
  EXPECT_EQ(out, "running: round 1 · nginx · json · c32 (attempt 1)\n");
  clock.now += seconds(10);
  v1::Window w = Stored("nginx", 1, "valid");
  out += printer.OnWindow(w);
  out += printer.OnStarted(Start("nginx", 0));
  clock.now += seconds(10);
  out += printer.OnWindow(Stored("nginx", 0, "invalid"));
  out += printer.Finish();
  EXPECT_EQ(out, "running: round 1 · nginx · json · c32 (attempt 1)\n" + FormatWindowLine(w) +
                     "\nprogress: 1/4 windows, 1 valid, 0 invalid, 0 failed, ETA 30s\n"
                     "running: noise · nginx · json · c32 (attempt 1)\n" +
                     FormatWindowLine(Stored("nginx", 0, "invalid")) +
                     "\nprogress: 2/4 windows, 1 valid, 1 invalid, 0 failed, ETA 20s\n");
  for (char ch : out) {
    EXPECT_TRUE(ch == '\n' || static_cast<unsigned char>(ch) >= 0x20) << static_cast<int>(ch);
    EXPECT_NE(ch, '\x7f');
  }
}

TEST(ProgressPrinterTest, TtyRedrawsOneStatusLineInPlace) {
  FakeClock clock;
  int width = 120;
  ProgressPrinter printer(ProgressMode::kTty, 4, clock, [&width] { return width; });
  std::string out = printer.OnStarted(Start("nginx", 1));
  EXPECT_EQ(out,
            "\r\033[K[░░░░░░░░░░░░░░░░░░░░] 0/4 · 0 valid · 0 invalid · ETA – · now: round 1 · "
            "nginx · json · c32");
  clock.now += seconds(10);
  v1::Window w = Stored("nginx", 1, "valid");
  out = printer.OnWindow(w);
  // The status line is erased, the window line scrolls, the status line is drawn below it.
  EXPECT_EQ(out, "\r\033[K" + FormatWindowLine(w) +
                     "\n[█████░░░░░░░░░░░░░░░] 1/4 · 1 valid · 0 invalid · ETA 0:30");
  width = 30;  // the terminal was resized
  out = printer.OnStarted(Start("hello", 1));
  ASSERT_EQ(out.rfind("\r\033[K", 0), 0u);
  EXPECT_LE(Columns(out.substr(4)), 29) << out;
  EXPECT_EQ(out.find('\n'), std::string::npos);
  EXPECT_EQ(printer.Finish(), "\r\033[K");
  EXPECT_EQ(printer.Finish(), "");  // erased once
}

// A gate's reason runs to hundreds of characters: a window's line and the running line are cut
// to the printer's line width with "…", and a wider line width shows more of it.
TEST(ProgressPrinterTest, LinesFitTheLineWidthWhateverTheReason) {
  for (int line_width : {100, 160}) {
    FakeClock clock;
    ProgressPrinter printer(
        ProgressMode::kPlain, 4, clock, [] { return 80; }, false, line_width);
    v1::WindowStarted start = Start(std::string(120, 'n'), 1);
    v1::Window w = Stored("nginx", 1, "invalid");
    w.add_reasons(
        "foreign_cpu: process \"cc1plus\" (pid 41234) used 38.2% of CPU 3 over the "
        "window, above the gate's 5.0%: another process competed with the target; stop "
        "it or move it off the lab's CPUs, then re-run the window");
    const std::string out = printer.OnStarted(start) + printer.OnWindow(w);
    size_t start_at = 0, lines = 0;
    for (size_t end; (end = out.find('\n', start_at)) != std::string::npos; start_at = end + 1) {
      const std::string line = out.substr(start_at, end - start_at);
      EXPECT_LE(Columns(line), line_width) << line;
      ++lines;
    }
    EXPECT_EQ(lines, 3u) << out;
    EXPECT_NE(out.find(line_width == 100 ? "invalid: foreign" : "invalid: foreign_cpu: process"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("…\n"), std::string::npos) << out;
  }
}

TEST(ProgressPrinterTest, OffPrintsTheWindowLinesOnly) {
  FakeClock clock;
  ProgressPrinter printer(ProgressMode::kOff, 4, clock, [] { return 80; });
  EXPECT_EQ(printer.OnStarted(Start("nginx", 1)), "");
  v1::Window w = Stored("nginx", 1, "valid");
  EXPECT_EQ(printer.OnWindow(w), FormatWindowLine(w) + "\n");
  EXPECT_EQ(printer.Finish(), "");
}

// What a campaign waits for is a line of its own in every mode; its end ("") prints nothing.
TEST(ProgressPrinterTest, WaitingSaysForWhatInEveryMode) {
  FakeClock clock;
  const std::string why = "no ready server agent has targets nginx: srv1 is busy";
  const std::string line = "waiting for agents: " + why + "\n";
  ProgressPrinter plain(ProgressMode::kPlain, 4, clock, [] { return 80; });
  EXPECT_EQ(plain.OnWaiting(why), line);
  EXPECT_EQ(plain.OnWaiting(""), "");
  ProgressPrinter off(ProgressMode::kOff, 4, clock, [] { return 80; });
  EXPECT_EQ(off.OnWaiting(why), line);
  ProgressPrinter tty(ProgressMode::kTty, 4, clock, [] { return 120; });
  const std::string out = tty.OnWaiting(why);
  EXPECT_EQ(out.rfind("\r\033[K" + line, 0), 0u) << out;
  EXPECT_NE(out.find("0/4"), std::string::npos) << "the status line is drawn below it: " << out;
  EXPECT_EQ(tty.Finish(), "\r\033[K");
}

TEST(ProgressPrinterTest, ModesParseAndAutoFollowsTheTerminal) {
  EXPECT_EQ(ParseProgressMode("auto"), ProgressMode::kAuto);
  EXPECT_EQ(ParseProgressMode("tty"), ProgressMode::kTty);
  EXPECT_EQ(ParseProgressMode("plain"), ProgressMode::kPlain);
  EXPECT_EQ(ParseProgressMode("off"), ProgressMode::kOff);
  EXPECT_FALSE(ParseProgressMode("fancy").has_value());
  EXPECT_EQ(ResolveProgressMode(ProgressMode::kAuto, true), ProgressMode::kTty);
  EXPECT_EQ(ResolveProgressMode(ProgressMode::kAuto, false), ProgressMode::kPlain);
  EXPECT_EQ(ResolveProgressMode(ProgressMode::kPlain, true), ProgressMode::kPlain);
  EXPECT_EQ(ResolveProgressMode(ProgressMode::kTty, false), ProgressMode::kTty);
  FakeClock clock;
  EXPECT_EQ(ProgressPrinter(ProgressMode::kAuto, 1, clock, nullptr).mode(), ProgressMode::kPlain);
}

}  // namespace
}  // namespace benchlab
