#include "coordinator/gate_table.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "coordinator/gates_toml.h"

namespace benchlab {
namespace {

TEST(GateTableTest, NamesAndKeysAreUniqueAndEveryGateJudgesAReading) {
  std::set<std::string> gates, keys;
  for (const GateSpec& gate : GateTable()) {
    EXPECT_TRUE(gates.insert(std::string(gate.name)).second) << gate.name << " twice";
    // A family's reasons are "<gate>.<member>" (FindGate), so a gate's own name has no dot.
    EXPECT_EQ(gate.name.find('.'), std::string_view::npos) << gate.name;
    EXPECT_TRUE(gate.judge_host || gate.judge_window) << gate.name << " judges nothing";
    EXPECT_FALSE(gate.keys.empty()) << gate.name << " has no key";
  }
  for (const GateKey* key : GatesTableKeys()) {
    EXPECT_TRUE(keys.insert(std::string(key->name)).second) << key->name << " twice";
  }
}

TEST(GateTableTest, AReasonFindsItsGateAndAFamilyMemberItsFamily) {
  ASSERT_NE(FindGate("steal"), nullptr);
  EXPECT_EQ(FindGate("steal")->name, "steal");
  ASSERT_NE(FindGate("probe.checkpoints"), nullptr);
  EXPECT_EQ(FindGate("probe.checkpoints")->name, "probe");
  EXPECT_EQ(FindGate("no_such_gate"), nullptr);
  EXPECT_EQ(FindGate(""), nullptr);
}

TEST(GateTableTest, AGateNoEntryNamesIsJudgedAsAnOrdinaryOne) {
  // A reason stored by a build with another gate, read back by the scheduler.
  EXPECT_EQ(GateVerdict("retired_gate", GateMode::kEnforce), Verdict::kInvalid);
  EXPECT_EQ(GateVerdict("retired_gate", GateMode::kWarn), Verdict::kValid);
  EXPECT_EQ(GateVerdict("probe.checkpoints", GateMode::kEnforce), Verdict::kInvalid);
  EXPECT_EQ(GateVerdict("service_exited", GateMode::kWarn), Verdict::kFailed);
}

TEST(GateTableTest, ASwitchTurnsItsGateOffAndAGateWithoutOneAlwaysApplies) {
  GateConfig c;
  c.steal.enabled = false;
  c.on_battery.enabled = false;
  EXPECT_FALSE(GateApplies(*FindGate("steal"), c));
  EXPECT_FALSE(GateApplies(*FindGate("on_battery"), c));
  EXPECT_TRUE(GateApplies(*FindGate("foreign_cpu"), c));
  EXPECT_TRUE(GateApplies(*FindGate("probe"), c));
}

TEST(GateTableTest, FormsAndDefaultsComeFromTheEntryAndGateConfig) {
  std::map<std::string, const GateKey*> by_name;
  for (const GateKey* key : GatesTableKeys()) by_name[std::string(key->name)] = key;
  EXPECT_EQ(GateKeyForm(*by_name.at("swap_max_pages")),
            "a whole number of pages from 0 to 1000000000");
  EXPECT_EQ(GateKeyForm(*by_name.at("min_freq_ratio")), "a number from 0 to 1 such as 0.75");
  EXPECT_EQ(GateKeyForm(*by_name.at("mode")), "\"enforce\" or \"warn\"");
  EXPECT_EQ(GateKeyDefault(*by_name.at("allow_battery")), "false");  // on_battery is on
  EXPECT_EQ(GateKeyDefault(*by_name.at("error_rate_max")), "0.01");
  EXPECT_EQ(GateKeyDefault(*by_name.at("mode")), "\"enforce\"");
  EXPECT_EQ(GateKeyDefault(*by_name.at("remeasure_max")), std::nullopt);
}

}  // namespace
}  // namespace benchlab
