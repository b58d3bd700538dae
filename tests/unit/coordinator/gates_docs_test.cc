// docs/gates.md writes the gate table out (its key table and its gate table): these tests fail
// when the two differ, so a gate added to coordinator/gate_table.cc without its documentation, a
// key documented that no gate reads, or a changed default, range or verdict is caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "coordinator/gate_table.h"
#include "coordinator/gates_toml.h"

namespace benchlab {
namespace {

using Row = std::vector<std::string>;

std::string GatesDoc() {
  std::ifstream in(std::string(BENCHLAB_SOURCE_DIR) + "/docs/gates.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A table cell as read: spaces around it and backticks dropped.
std::string Cell(std::string cell) {
  cell.erase(std::remove(cell.begin(), cell.end(), '`'), cell.end());
  const size_t begin = cell.find_first_not_of(' ');
  const size_t end = cell.find_last_not_of(' ');
  return begin == std::string::npos ? "" : cell.substr(begin, end - begin + 1);
}

Row Cells(const std::string& line) {
  Row cells;
  std::string cell;
  for (char ch : line.substr(1)) {  // past the leading '|'
    if (ch == '|') {
      cells.push_back(Cell(cell));
      cell.clear();
    } else {
      cell += ch;
    }
  }
  return cells;
}

// The rows of the Markdown tables of `doc` whose header starts with `first_header`, below their
// separator line.
std::vector<Row> TableRows(const std::string& doc, const std::string& first_header) {
  std::vector<Row> rows;
  std::istringstream lines(doc);
  std::string line;
  bool in_table = false, wanted = false;
  int line_in_table = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '|') {
      in_table = false;
      continue;
    }
    if (!in_table) {
      in_table = true;
      line_in_table = 0;
      const Row header = Cells(line);
      wanted = !header.empty() && header[0] == first_header;
    }
    if (wanted && line_in_table++ >= 2) rows.push_back(Cells(line));
  }
  return rows;
}

// The items of a cell listing names: "a, b, c".
std::vector<std::string> Names(const std::string& cell) {
  std::vector<std::string> names;
  std::istringstream in(cell);
  std::string name;
  while (std::getline(in, name, ',')) names.push_back(Cell(name));
  return names;
}

// What `a` holds that `b` lacks.
std::vector<std::string> Lacking(const std::vector<std::string>& a,
                                 const std::vector<std::string>& b) {
  std::vector<std::string> out;
  for (const auto& x : a) {
    if (std::find(b.begin(), b.end(), x) == b.end()) out.push_back(x);
  }
  return out;
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

TEST(GatesDocsTest, TheKeyTableIsTheGateTablesKeys) {
  const std::vector<Row> rows = TableRows(GatesDoc(), "key");
  ASSERT_FALSE(rows.empty()) << "docs/gates.md has no table headed | key | form | default |";
  std::vector<std::string> documented, known;
  for (const Row& row : rows) {
    ASSERT_GE(row.size(), 3u) << Join(row);
    documented.push_back(row[0]);
  }
  for (const GateKey* key : GatesTableKeys()) known.push_back(std::string(key->name));
  EXPECT_EQ(Lacking(documented, known), std::vector<std::string>{})
      << "documented in docs/gates.md, unknown to coordinator/gate_table.cc";
  EXPECT_EQ(Lacking(known, documented), std::vector<std::string>{})
      << "keys of coordinator/gate_table.cc missing from docs/gates.md";
  EXPECT_EQ(documented, known) << "the docs list the keys in another order";

  for (const GateKey* key : GatesTableKeys()) {
    auto row =
        std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r[0] == key->name; });
    if (row == rows.end()) continue;
    EXPECT_EQ((*row)[1], GateKeyForm(*key)) << key->name << ": form";
    if (auto value = GateKeyDefault(*key)) {
      EXPECT_EQ((*row)[2], *value) << key->name << ": default";
    }
  }
}

TEST(GatesDocsTest, TheGateTableIsTheGateTablesGatesKeysAndVerdicts) {
  const std::vector<Row> rows = TableRows(GatesDoc(), "gate");
  ASSERT_FALSE(rows.empty()) << "docs/gates.md has no table headed | gate | keys | ... |";
  std::vector<std::string> documented, known;
  for (const Row& row : rows) {
    ASSERT_GE(row.size(), 4u) << Join(row);
    documented.push_back(row[0]);
  }
  for (const GateSpec& gate : GateTable()) known.push_back(std::string(gate.name));
  EXPECT_EQ(Lacking(documented, known), std::vector<std::string>{})
      << "documented in docs/gates.md, unknown to coordinator/gate_table.cc";
  EXPECT_EQ(Lacking(known, documented), std::vector<std::string>{})
      << "gates of coordinator/gate_table.cc missing from docs/gates.md";
  EXPECT_EQ(documented, known) << "the docs list the gates in another order";

  for (const GateSpec& gate : GateTable()) {
    auto row =
        std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r[0] == gate.name; });
    if (row == rows.end()) continue;
    std::vector<std::string> keys;
    for (const GateKey& key : gate.keys) keys.push_back(std::string(key.name));
    EXPECT_EQ(Names((*row)[1]), keys) << gate.name << ": keys";
    EXPECT_EQ((*row)[2], VerdictName(gate.enforce)) << gate.name << ": in enforce mode";
    EXPECT_EQ((*row)[3], VerdictName(gate.warn)) << gate.name << ": in warn mode";
  }
}

TEST(GatesDocsTest, EveryGateHasItsSection) {
  const std::string doc = GatesDoc();
  for (const GateSpec& gate : GateTable()) {
    // "### `probe.NAME.max`" is the section of the probe family.
    EXPECT_NE(doc.find("\n### `" + std::string(gate.name)), std::string::npos)
        << gate.name << " has no section \"### `" << gate.name << "`\" in docs/gates.md";
  }
}

TEST(GatesDocsTest, TheExampleUsesOnlyKeysTheTableKnows) {
  const std::string doc = GatesDoc();
  const size_t begin = doc.find("```toml\n[gates]\n");
  ASSERT_NE(begin, std::string::npos) << "docs/gates.md has no [gates] example";
  const size_t end = doc.find("```", begin + 3);
  std::set<std::string> known;
  for (const GateKey* key : GatesTableKeys()) known.insert(std::string(key->name));
  std::istringstream lines(doc.substr(begin, end - begin));
  std::string line;
  int keys = 0;
  while (std::getline(lines, line)) {
    const size_t eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    ++keys;
    EXPECT_TRUE(known.count(line.substr(0, eq))) << line;
  }
  EXPECT_GT(keys, 0);
}

}  // namespace
}  // namespace benchlab
