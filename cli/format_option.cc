#include "cli/format_option.h"

namespace benchlab {

CLI::Option* AddFormatOption(CLI::App* cmd, std::string* format,
                             const std::vector<std::string>& forms, const std::string& help) {
  CLI::Option* option =
      cmd->add_option("--format", *format, help)
          ->transform(
              [](std::string value) { return value == "markdown" ? std::string("md") : value; }, "",
              "markdown is md");
  if (!forms.empty()) option->check(CLI::IsMember(forms));
  return option;
}

}  // namespace benchlab
