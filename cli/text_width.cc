#include "cli/text_width.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "common/text_table.h"

namespace benchlab {
namespace {

int given_width = 0;  // --width; 0 when not given

}  // namespace

CLI::Option* AddWidthOption(CLI::App* cmd) {
  return cmd
      ->add_option_function<int>(
          "--width", [](const int& width) { given_width = width; },
          "fit text tables and progress lines to N columns (default: the terminal's width when "
          "stdout is a terminal wider than 100, else 100)")
      ->type_name("N")
      ->check(CLI::Range(kMinTextWidth, kMaxTextWidth));
}

int ResolveTextWidth(int flag, int terminal) {
  if (flag > 0) return flag;
  return terminal > kDefaultTextWidth ? terminal : kDefaultTextWidth;
}

int StdoutTerminalColumns() {
  if (isatty(STDOUT_FILENO) == 0) return 0;
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    const long value = std::strtol(columns, nullptr, 10);
    if (value > 0 && value <= kMaxTextWidth) return static_cast<int>(value);
  }
  return 0;
}

int OutputWidth() { return ResolveTextWidth(given_width, StdoutTerminalColumns()); }

}  // namespace benchlab
