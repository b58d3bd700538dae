// benchlab: one executable, with subcommands (see `benchlab --help`; cli/app.h).
#include "cli/app.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

int main(int argc, char** argv) {
  // Logs go to stderr; stdout carries what a command reports (window lines, tables, JSON).
  spdlog::set_default_logger(spdlog::stderr_color_mt("benchlab"));
  return benchlab::RunBenchlab(argc, argv);
}
