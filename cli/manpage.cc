#include "cli/manpage.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

namespace benchlab {
namespace {

// A subcommand `--help` lists: named, and not hidden (an empty group).
bool ManListed(const CLI::App* app) {
  return !app->get_name().empty() && !app->get_group().empty();
}

std::vector<const CLI::App*> ManSubcommands(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (ManListed(sub)) out.push_back(sub);
  }
  return out;
}

// "benchlab ca issue": the command's words from the root.
std::string ManCommandPath(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* up = app.get_parent(); up != nullptr; up = up->get_parent()) {
    path = (up->get_parent() == nullptr ? std::string("benchlab") : up->get_name()) + " " + path;
  }
  return path;
}

// One UTF-8 sequence from text[i] as a code point; `length` is its byte count (1 for a byte
// that starts no valid sequence, read as itself).
unsigned ManCodePoint(std::string_view text, size_t i, size_t& length) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned lead = byte(i);
  size_t n = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  if (i + n > text.size()) n = 1;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) n = 1;
  }
  length = n;
  if (n == 1) return lead;
  unsigned cp = lead & (0xFFu >> (n + 1));
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (byte(i + k) & 0x3Fu);
  return cp;
}

// `text` escaped for roff within a line: \e for a backslash, \- for a hyphen, \[uXXXX] for
// what is not ASCII.
std::string ManEscape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      size_t length = 1;
      const unsigned cp = ManCodePoint(text, i, length);
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\[u%04X]", cp);
      out += buf;
      i += length;
      continue;
    } else if (c == '\t') {
      out += ' ';
    } else {
      out += c;
    }
    ++i;
  }
  return out;
}

// An argument of a macro line, in double quotes (a quote inside as \(dq).
std::string ManQuoted(std::string_view text) {
  std::string out = "\"";
  for (char c : ManEscape(text)) out += c == '"' ? std::string("\\(dq") : std::string(1, c);
  return out + "\"";
}

// What NAME says after the dash: the description's first clause, without its full stop, its
// first letter small unless the second is a capital too ("JSON ...").
std::string ManSummary(const std::string& description) {
  size_t end = description.size();
  for (const char* stop : {": ", ". ", "\n"}) end = std::min(end, description.find(stop));
  std::string summary = description.substr(0, end);
  while (!summary.empty() && (summary.back() == '.' || summary.back() == ' ')) summary.pop_back();
  if (summary.size() > 1 && std::isupper(static_cast<unsigned char>(summary[0])) &&
      !std::isupper(static_cast<unsigned char>(summary[1]))) {
    summary[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(summary[0])));
  }
  return summary;
}

// The options of `app` a page shows (not hidden), positionals or the others.
std::vector<const CLI::Option*> ManOptions(const CLI::App& app, bool positional) {
  std::vector<const CLI::Option*> out;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty() || opt->nonpositional() == positional) continue;
    out.push_back(opt);
  }
  return out;
}

// The value an option takes as --help shows it ("TEXT:{warn,enforce}"), with "..." when it takes
// several; empty for a flag (which expects no value).
std::string ManValueName(const CLI::Option* opt) {
  if (opt->get_expected_max() == 0) return "";
  std::string name = opt->get_type_name();
  if (name.empty()) name = "VALUE";
  return opt->get_expected_max() > 1 ? name + " ..." : name;
}

// The synopsis lines of `app`: its path, [options], then its positionals or a subcommand.
void ManSynopsis(std::ostringstream& s, const CLI::App& app) {
  s << "\\fB" << ManEscape(ManCommandPath(app)) << "\\fR";
  if (!ManSubcommands(app).empty()) s << " \\fIcommand\\fR";
  if (!ManOptions(app, false).empty()) s << " [\\fIoptions\\fR]";
  for (const CLI::Option* opt : ManOptions(app, true)) {
    std::string name = opt->get_name(true);
    if (opt->get_items_expected_max() > 1) name += "...";
    const std::string word = "\\fI" + ManEscape(name) + "\\fR";
    s << " " << (opt->get_required() ? word : "[" + word + "]");
  }
  s << "\n";
}

// One .TP entry per option: its names and value, then its help text, default and environment.
void ManOptionEntries(std::ostringstream& s, const std::vector<const CLI::Option*>& options) {
  for (const CLI::Option* opt : options) {
    s << ".TP\n";
    std::string names;
    if (!opt->nonpositional()) {
      names = "\\fI" + ManEscape(opt->get_name(true)) + "\\fR";
    } else {
      for (const std::string& sn : opt->get_snames()) {
        names += (names.empty() ? "" : ", ") + ("\\fB" + ManEscape("-" + sn) + "\\fR");
      }
      for (const std::string& ln : opt->get_lnames()) {
        names += (names.empty() ? "" : ", ") + ("\\fB" + ManEscape("--" + ln) + "\\fR");
      }
      const std::string value = ManValueName(opt);
      if (!value.empty()) names += " \\fI" + ManEscape(value) + "\\fR";
    }
    s << names << "\n";
    std::string text = opt->get_description();
    std::vector<std::string> notes;
    if (opt->get_required()) notes.push_back("required");
    if (!opt->get_default_str().empty()) notes.push_back("default: " + opt->get_default_str());
    if (!opt->get_envname().empty()) notes.push_back("environment: " + opt->get_envname());
    if (!notes.empty()) {
      std::string joined;
      for (const std::string& n : notes) joined += (joined.empty() ? "" : "; ") + n;
      text += (text.empty() ? "(" : " (") + joined + ")";
    }
    s << RoffText(text);
  }
}

// The options of `app` under `heading` (a .SH or .SS line): the default group first, then each
// other group under a subsection of its name.
void ManOptionSections(std::ostringstream& s, const CLI::App& app, const std::string& heading,
                       const std::string& group_macro) {
  const std::vector<const CLI::Option*> options = ManOptions(app, false);
  if (options.empty()) return;
  std::vector<std::string> groups;
  for (const CLI::Option* opt : options) {
    if (std::find(groups.begin(), groups.end(), opt->get_group()) == groups.end()) {
      groups.push_back(opt->get_group());
    }
  }
  // CLI11's default group is "Options": it goes first, under the heading itself.
  std::stable_partition(groups.begin(), groups.end(),
                        [](const std::string& g) { return g == "Options" || g == "OPTIONS"; });
  s << heading << "\n";
  for (const std::string& group : groups) {
    std::vector<const CLI::Option*> in_group;
    for (const CLI::Option* opt : options) {
      if (opt->get_group() == group) in_group.push_back(opt);
    }
    if (group != "Options" && group != "OPTIONS")
      s << group_macro << " " << ManQuoted(group) << "\n";
    ManOptionEntries(s, in_group);
  }
}

}  // namespace

std::vector<const CLI::App*> ManPageCommands(const CLI::App& root) { return ManSubcommands(root); }

std::string ManPageFileName(const CLI::App& command) {
  return "benchlab-" + command.get_name() + ".1";
}

std::string RoffText(std::string_view text) {
  // One output line per line of text, a blank line a new paragraph; a line that would begin
  // with a control character (. or ') starts with the zero-width \& instead.
  std::string out;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) {
      out += ".PP\n";
      continue;
    }
    line = line.substr(start);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (line[0] == '.' || line[0] == '\'') out += "\\&";
    out += ManEscape(line) + "\n";
  }
  return out;
}

std::string ManPage(const CLI::App& command, const ManPageHeader& header) {
  std::ostringstream s;
  std::string title = "BENCHLAB-" + command.get_name();
  std::transform(title.begin(), title.end(), title.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  s << ".TH " << ManQuoted(title) << " 1 " << ManQuoted(header.date) << " "
    << ManQuoted(header.source) << " \"User Commands\"\n";
  s << ".SH NAME\n"
    << ManEscape("benchlab-" + command.get_name()) << " \\- "
    << ManEscape(ManSummary(command.get_description())) << "\n";

  const std::vector<const CLI::App*> subs = ManSubcommands(command);
  s << ".SH SYNOPSIS\n";
  ManSynopsis(s, command);
  for (const CLI::App* sub : subs) {
    s << ".br\n";
    ManSynopsis(s, *sub);
  }

  s << ".SH DESCRIPTION\n" << RoffText(command.get_description());
  s << ".PP\n"
       "The options of \\fBbenchlab\\fR(1) itself, such as \\fB\\-\\-log\\-format\\fR, are "
       "accepted after the command too.\n";

  if (!subs.empty()) {
    s << ".SH COMMANDS\n";
    for (const CLI::App* sub : subs) {
      s << ".SS " << ManQuoted(ManCommandPath(*sub)) << "\n";
      s << RoffText(sub->get_description());
      const std::vector<const CLI::Option*> positionals = ManOptions(*sub, true);
      const std::vector<const CLI::Option*> options = ManOptions(*sub, false);
      if (!positionals.empty() || !options.empty()) s << ".PP\n";
      ManOptionEntries(s, positionals);
      ManOptionEntries(s, options);
    }
  }

  const std::vector<const CLI::Option*> positionals = ManOptions(command, true);
  if (!positionals.empty()) {
    s << ".SH ARGUMENTS\n";
    ManOptionEntries(s, positionals);
  }
  ManOptionSections(s, command, ".SH OPTIONS", ".SS");

  s << ".SH SEE ALSO\n"
       ".BR benchlab (1),\n"
       "and the design notes in\n"
       ".IR /usr/share/doc/benchlab/docs/ .\n";
  return s.str();
}

}  // namespace benchlab
