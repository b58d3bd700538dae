// The keys docs/campaign.md and docs/agent.md document are the keys the parsers accept
// (ParseCampaignText, coordinator/campaign.h; ParseAgentConfigText, agent/server/agent_config.h),
// both ways: each documented key, written into a valid file where the doc puts it, draws no
// "unknown key" error, and each key a parser's table knows (the list its "unknown key" error
// gives) is documented. Also, every full example in the docs parses.
//
// Where the docs document keys:
//   campaign.md: the key tables ("| key | ...") and the lines that open with "`key`:" of each
//     "## `[table]`" or "## `[[array]]`" section, and of "## Top level" (`[matrix]` there is the
//     key "matrix"). `[gates]`'s keys are docs/gates.md's; `[labels]`' keys are target names.
//   agent.md: the configuration example (keys and [table] headers, a commented "# key = ..."
//     line included), the "## Limits" key table, the keys named after "`[[target]]` tables take
//     the same keys", and every `[table]` or `[[array]]` the page names (a key of the root).
//   services.md: the keys of `[[service]]` and `[[service.probe]]`, which campaign files and
//     agent configurations take alike: those of its first toml block, a commented "# key = ..."
//     line and an alternative given in a comment ("# or key = ...") included.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "agent/server/agent_config.h"
#include "coordinator/campaign.h"
#include "tests/unit/docs/markdown.h"

namespace benchlab::docs {
namespace {

// table ("" for the top level, "scenario.expect") -> key -> where the doc gives it (file:line).
using KeysByTable = std::map<std::string, std::map<std::string, std::string>>;

// "[matrix]" -> "matrix", "[[target]]" -> "target"; "" when `s` is not a table's name.
std::string TableName(const std::string& s) {
  static const std::regex table(R"(^\[{1,2}([a-z_]+)\]{1,2}$)");
  std::smatch m;
  return std::regex_match(s, m, table) ? m[1].str() : "";
}

// A TOML file to test keys in, and where each table's keys go.
struct Skeleton {
  std::string text;
  // table -> the line after which its keys go; a table absent here is appended with its header.
  std::map<std::string, std::string> after;
  // Keys the skeleton has already (its clean parse shows they are known).
  std::map<std::string, std::set<std::string>> present;
  // The header of a table the skeleton lacks, and lines it needs besides the key.
  std::map<std::string, std::string> header;
};

Skeleton CampaignSkeleton() {
  Skeleton s;
  s.text =
      "name = \"docs\"\n"
      "baseline = \"a\"\n"
      "[matrix]\n"
      "connections = [1]\n"
      "[[target]]\n"
      "name = \"a\"\n"
      "command = [\"true\"]\n"
      "[[scenario]]\n"
      "name = \"s\"\n"
      "path = \"/\"\n"
      "[scenario.expect]\n"
      "status = 200\n"
      "[[negative]]\n"
      "name = \"n\"\n"
      "path = \"/nope\"\n"
      "[negative.expect]\n"
      "status = 404\n"
      "[[service]]\n"
      "name = \"pg\"\n"
      "command = [\"true\"]\n"
      "[[service.probe]]\n"
      "name = \"p\"\n"
      "command = [\"true\"]\n";
  s.after = {{"", ""},
             {"matrix", "[matrix]"},
             {"target", "[[target]]"},
             {"scenario", "[[scenario]]"},
             {"negative", "[[negative]]"},
             {"scenario.expect", "[scenario.expect]"},
             {"negative.expect", "[negative.expect]"},
             {"service", "[[service]]"},
             {"service.probe", "[[service.probe]]"}};
  s.present = {{"", {"name", "baseline", "matrix", "target", "scenario", "negative", "service"}},
               {"matrix", {"connections"}},
               {"target", {"name", "command"}},
               {"scenario", {"name", "path", "expect"}},
               {"negative", {"name", "path", "expect"}},
               {"scenario.expect", {"status"}},
               {"negative.expect", {"status"}},
               {"service", {"name", "command", "probe"}},
               {"service.probe", {"name", "command"}}};
  return s;
}

Skeleton AgentSkeleton() {
  Skeleton s;
  s.text =
      "name = \"docs\"\n"
      "roles = [\"server\"]\n"
      "coordinator = \"127.0.0.1:7700\"\n"
      "state_dir = \"/nonexistent/benchlab-docs-test\"\n";
  s.after = {{"", ""}};
  s.present = {{"", {"name", "roles", "coordinator", "state_dir"}}};
  s.header = {{"limits", "[limits]\n"},
              {"tls", "[tls]\n"},
              {"target", "[[target]]\nname = \"t\"\ncommand = [\"true\"]\n"},
              {"service", "[[service]]\nname = \"pg\"\ncommand = [\"true\"]\n"},
              {"service.probe",
               "[[service]]\nname = \"pg\"\ncommand = [\"true\"]\n[[service.probe]]\n"
               "name = \"p\"\ncommand = [\"true\"]\n"}};
  return s;
}

// The skeleton with `key = 1` in `table`.
std::string WithKey(const Skeleton& s, const std::string& table, const std::string& key) {
  const std::string line = key + " = 1\n";
  auto after = s.after.find(table);
  if (after == s.after.end()) {
    // The table's header and the lines it needs, less one that sets `key` itself.
    auto header = s.header.find(table);
    std::string head;
    for (const std::string& l :
         SplitLines(header != s.header.end() ? header->second : "[" + table + "]\n")) {
      if (!l.starts_with(key + " = ")) head += l + "\n";
    }
    return s.text + head + line;
  }
  if (after->second.empty()) return line + s.text;
  const size_t at = s.text.find(after->second + "\n");
  EXPECT_NE(at, std::string::npos) << after->second;
  std::string text = s.text;
  text.insert(at + after->second.size() + 1, line);
  return text;
}

// Parses a text; errors cite `source`:line.
using Parse = std::function<Status(const std::string& text, const std::string& source)>;

// Nothing is read from the (nonexistent) directories.
Status ParseCampaign(const std::string& text, const std::string& source) {
  return ParseCampaignText(text, source, "/nonexistent").status();
}
Status ParseAgent(const std::string& text, const std::string& source) {
  StateEnv env;
  env.home = "/nonexistent";
  return ParseAgentConfigText(text, source, "/nonexistent", env).status();
}

// The keys the parser knows in `table`, from the "(known: a, b)" of the error an unknown key
// draws there.
std::set<std::string> KnownKeys(const Skeleton& s, const std::string& table, const Parse& parse) {
  const Status st = parse(WithKey(s, table, "docs_test_unknown_key"), "test.toml");
  const std::string msg = st.message();
  const size_t at = msg.find("docs_test_unknown_key: unknown key (known: ");
  EXPECT_NE(at, std::string::npos) << "table \"" << table << "\": " << st.ToString();
  std::set<std::string> keys;
  if (at == std::string::npos) return keys;
  const size_t start = msg.find("(known: ", at) + 8;
  const size_t end = msg.find(')', start);
  std::string list = msg.substr(start, end - start);
  for (size_t pos = 0; pos <= list.size();) {
    size_t comma = list.find(", ", pos);
    if (comma == std::string::npos) comma = list.size();
    keys.insert(list.substr(pos, comma - pos));
    pos = comma + 2;
  }
  return keys;
}

// Each documented key is accepted where the doc puts it, and each known key is documented.
void CheckBothWays(const std::string& doc, const KeysByTable& documented, const Skeleton& s,
                   const Parse& parse, const std::set<std::string>& tables) {
  {
    const Status clean = parse(s.text, "test.toml");
    ASSERT_TRUE(clean.ok()) << "the skeleton of " << doc << " does not parse: " << clean.ToString();
  }
  for (const auto& [table, keys] : documented) {
    for (const auto& [key, where] : keys) {
      auto present = s.present.find(table);
      if (present != s.present.end() && present->second.count(key) != 0) continue;
      const std::string text = WithKey(s, table, key);
      const Status st = parse(text, "test.toml");
      EXPECT_EQ(st.message().find("unknown key"), std::string::npos)
          << where << ": documents key `" << key << "` of "
          << (table.empty() ? "the top level" : "[" + table + "]")
          << ", which the parser does not know: " << st.ToString();
    }
  }
  for (const std::string& table : tables) {
    auto keys = documented.find(table);
    // [[service]]'s keys are services.md's in either file (AddServiceDocKeys).
    const std::string page =
        table == "service" || table.starts_with("service.") ? "docs/services.md" : doc;
    for (const std::string& key : KnownKeys(s, table, parse)) {
      EXPECT_TRUE(keys != documented.end() && keys->second.count(key) != 0)
          << doc << ": the parser accepts key `" << key << "` in "
          << (table.empty() ? "the top level" : "[" + table + "]") << ", which " << page
          << " does not document there";
    }
  }
}

// The keys of campaign.md's sections (see the top of this file).
KeysByTable CampaignDocKeys() {
  KeysByTable keys;
  const std::string file = "docs/campaign.md";
  const std::vector<std::string> lines = SplitLines(ReadSource(file));
  std::vector<std::string> tables;  // the tables of the current section
  bool fenced = false;
  bool in_key_table = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::string where = file + ":" + std::to_string(i + 1);
    if (IsFence(line)) fenced = !fenced;
    if (fenced) continue;
    if (line.starts_with("## ")) {
      tables.clear();
      const std::string title = line.substr(3);
      if (title == "Top level") tables.push_back("");
      for (const std::string& span : Backticked(title)) {
        const std::string t = TableName(span);
        if (!t.empty() && t != "gates" && t != "labels") tables.push_back(t);
      }
      continue;
    }
    std::vector<std::string> cells = TableCells(line);
    if (!cells.empty()) {
      if (cells[0] == "key") in_key_table = true;
      if (!in_key_table || cells[0] == "key" || cells[0].starts_with("---")) continue;
      std::vector<std::string> named = Backticked(cells[0]);
      if (named.size() != 1 || "`" + named[0] + "`" != cells[0]) continue;
      std::string key = TableName(named[0]).empty() ? named[0] : TableName(named[0]);
      for (const std::string& t : tables) keys[t][key] = where;
      continue;
    }
    in_key_table = false;
    // "`expect`:" opens the key table of a sub-table of the section's tables.
    static const std::regex key_line(R"(^`([a-z_]+)`:)");
    std::smatch m;
    if (std::regex_search(line, m, key_line)) {
      const std::string key = m[1].str();
      for (const std::string& t : tables) keys[t][key] = where;
      if (i + 2 < lines.size() && Trim(lines[i + 1]).empty() && !TableCells(lines[i + 2]).empty()) {
        std::vector<std::string> sub;
        for (const std::string& t : tables) sub.push_back(t + "." + key);
        tables = sub;
      }
    }
  }
  return keys;
}

// The keys agent.md documents (see the top of this file).
KeysByTable AgentDocKeys() {
  KeysByTable keys;
  const std::string file = "docs/agent.md";
  const std::vector<std::string> lines = SplitLines(ReadSource(file));
  // The configuration example: the first toml block.
  for (const Fenced& block : FencedBlocks(lines)) {
    if (block.info != "toml") continue;
    std::string table;
    static const std::regex key(R"(^(?:#\s*)?([a-z_]+)\s*=)");
    for (size_t i = 0; i < block.lines.size(); ++i) {
      const std::string line = Trim(block.lines[i]);
      const std::string where = file + ":" + std::to_string(block.line + static_cast<int>(i));
      const std::string header = TableName(Trim(line.substr(0, line.find('#'))));
      std::smatch m;
      if (!header.empty()) {
        table = header;
        keys[""][header] = where;
      } else if (std::regex_search(line, m, key)) {
        keys[table][m[1].str()] = where;
      }
    }
    break;
  }
  std::string section;
  bool in_key_table = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::string where = file + ":" + std::to_string(i + 1);
    if (line.starts_with("## ")) section = line.substr(3);
    for (const Span& span : InlineSpans({line})) {
      const std::string t = TableName(span.text);
      if (!t.empty()) keys[""].emplace(t, where);
    }
    std::vector<std::string> cells = TableCells(line);
    if (section == "Limits" && !cells.empty()) {
      if (cells[0] == "key") in_key_table = true;
      if (in_key_table && cells[0] != "key" && !cells[0].starts_with("---")) {
        std::vector<std::string> named = Backticked(cells[0]);
        if (named.size() == 1) keys["limits"][named[0]] = where;
      }
    } else {
      in_key_table = false;
    }
  }
  // "`[[target]]` tables take the same keys as a campaign file's (docs/campaign.md): `name`, ...".
  std::string text;
  int line_of_text = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].starts_with("`[[target]]` tables take the same keys")) {
      line_of_text = static_cast<int>(i) + 1;
      for (size_t j = i; j < lines.size() && !Trim(lines[j]).empty(); ++j) text += lines[j] + " ";
      break;
    }
  }
  EXPECT_GT(line_of_text, 0) << file << ": no \"`[[target]]` tables take the same keys\"";
  const size_t colon = text.find("): ");
  const size_t stop = text.find(". ", colon);
  if (colon != std::string::npos) {
    for (const std::string& k : Backticked(text.substr(colon, stop - colon))) {
      keys["target"][k] = file + ":" + std::to_string(line_of_text);
    }
  }
  return keys;
}

// The keys services.md documents (see the top of this file), added to `keys`.
void AddServiceDocKeys(KeysByTable& keys) {
  const std::string file = "docs/services.md";
  const std::vector<std::string> lines = SplitLines(ReadSource(file));
  for (const Fenced& block : FencedBlocks(lines)) {
    if (block.info != "toml") continue;
    static const std::regex header(R"(^\[\[([a-z_.]+)\]\]$)");
    static const std::regex key(R"(^(?:#\s*)?([a-z_]+)\s*=)");
    static const std::regex alternative(R"(#\s*or\s+([a-z_]+)\s*=)");
    std::string table;
    for (size_t i = 0; i < block.lines.size(); ++i) {
      const std::string line = Trim(block.lines[i]);
      const std::string where = file + ":" + std::to_string(block.line + static_cast<int>(i));
      std::smatch m;
      if (std::regex_match(line, m, header)) {
        // [[target]] there is a campaign's or agent's, whose keys are documented with them.
        table = m[1].str() == "service" || m[1].str() == "service.probe" ? m[1].str() : "";
        if (table == "service.probe") keys["service"]["probe"] = where;
        continue;
      }
      if (table.empty()) continue;
      if (std::regex_search(line, m, key)) keys[table][m[1].str()] = where;
      const size_t comment = line.find('#', 1);
      if (comment == std::string::npos) continue;
      const std::string after = line.substr(comment);
      if (std::regex_search(after, m, alternative)) keys[table][m[1].str()] = where;
    }
    break;
  }
}

// The [[service]] tables' keys: every table of them must be found, and be the parser's.
const std::set<std::string> kServiceTables = {"service", "service.probe"};

TEST(ConfigKeysTest, CampaignKeysAreTheParsersBothWays) {
  KeysByTable documented = CampaignDocKeys();
  AddServiceDocKeys(documented);
  // Every table campaign.md gives keys of, apart from [gates] (gates.md) and [labels] (targets).
  std::set<std::string> tables = {
      "",      "matrix", "load",     "stats",    "placement",       "host",           "profile",
      "noise", "target", "scenario", "negative", "scenario.expect", "negative.expect"};
  for (const std::string& t : tables) {
    EXPECT_TRUE(documented.count(t) != 0)
        << "docs/campaign.md: no keys found for [" << t << "]; has the doc's form changed?";
  }
  for (const std::string& t : kServiceTables) {
    EXPECT_TRUE(documented.count(t) != 0)
        << "docs/services.md: no keys found for [[" << t << "]]; has the doc's form changed?";
    tables.insert(t);
  }
  CheckBothWays("docs/campaign.md", documented, CampaignSkeleton(), ParseCampaign, tables);
}

TEST(ConfigKeysTest, AgentKeysAreTheParsersBothWays) {
  KeysByTable documented = AgentDocKeys();
  AddServiceDocKeys(documented);  // [[service]]'s keys are docs/services.md's
  std::set<std::string> tables = {"", "limits", "tls", "target"};
  for (const std::string& t : tables) {
    EXPECT_TRUE(documented.count(t) != 0)
        << "docs/agent.md: no keys found for [" << t << "]; has the doc's form changed?";
  }
  tables.insert(kServiceTables.begin(), kServiceTables.end());
  CheckBothWays("docs/agent.md", documented, AgentSkeleton(), ParseAgent, tables);
}

// A complete campaign file (a toml block with name, baseline and [matrix]) or agent
// configuration (one with roles and coordinator) shown in the docs parses.
TEST(ConfigKeysTest, EveryFullExampleParses) {
  int campaigns = 0, agents = 0;
  for (const std::string& file : DocFiles()) {
    for (const Fenced& block : FencedBlocks(SplitLines(ReadSource(file)))) {
      if (block.info != "toml") continue;
      const std::string block_text = block.Text();
      auto has_line = [&](const std::string& start) {
        return block_text.starts_with(start) || block_text.find("\n" + start) != std::string::npos;
      };
      // Led by blank lines, so that the parser's file:line is the doc's.
      const std::string text = std::string(static_cast<size_t>(block.line - 1), '\n') + block_text;
      Status st;
      if (has_line("name = ") && has_line("baseline = ") && has_line("[matrix]")) {
        ++campaigns;
        st = ParseCampaign(text, file);
      } else if (has_line("roles = ") && has_line("coordinator = ")) {
        ++agents;
        st = ParseAgent(text, file);
      } else {
        continue;
      }
      EXPECT_TRUE(st.ok()) << "the example at " << file << ":" << block.line
                           << " does not parse: " << st.message();
    }
  }
  EXPECT_GT(campaigns, 1);  // README.md's and campaign.md's, at least
  EXPECT_GT(agents, 0);     // agent.md's
}

// The doc readers on a page of the docs' form.
TEST(ConfigKeysTest, TableNamesAndCells) {
  EXPECT_EQ(TableName("[matrix]"), "matrix");
  EXPECT_EQ(TableName("[[target]]"), "target");
  EXPECT_EQ(TableName("name"), "");
  EXPECT_EQ(TableCells("| `a` | b \\| c | `x | y` |"),
            (std::vector<std::string>{"`a`", "b \\| c", "`x | y`"}));
  EXPECT_EQ(TableCells("not a row"), std::vector<std::string>{});
  Skeleton s = CampaignSkeleton();
  EXPECT_NE(WithKey(s, "matrix", "rounds").find("[matrix]\nrounds = 1\nconnections"),
            std::string::npos);
  EXPECT_TRUE(WithKey(s, "", "series").starts_with("series = 1\nname"));
  EXPECT_TRUE(WithKey(s, "load", "threads").ends_with("[load]\nthreads = 1\n"));
}

}  // namespace
}  // namespace benchlab::docs
