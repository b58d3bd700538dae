#include "common/host_requirement.h"

#include <gtest/gtest.h>

namespace benchlab {
namespace {

const std::vector<HostFinding> kFindings = {
    {"governor", "powersave", "warn", "why"},
    {"aslr", "0", "ok", "why"},
    {"smt_siblings", "siblings 2-3 outside the pinned CPUs", "warn", "why"},
    {"thp", "unavailable", "unavailable", "why"},
};

TEST(HostRequirementTest, KnownForms) {
  EXPECT_TRUE(KnownRequirement("governor=performance"));
  EXPECT_TRUE(KnownRequirement("aslr=0"));
  EXPECT_TRUE(KnownRequirement("smt_siblings_idle"));
  EXPECT_TRUE(KnownRequirement("swap"));
  EXPECT_FALSE(KnownRequirement("governer=performance"));
  EXPECT_FALSE(KnownRequirement("governor="));
  EXPECT_FALSE(KnownRequirement("=performance"));
  EXPECT_FALSE(KnownRequirement("smt_siblings_idle=1"));
  EXPECT_FALSE(KnownRequirement(""));
  EXPECT_NE(KnownRequirementNames().find("governor, "), std::string::npos);
  EXPECT_NE(KnownRequirementNames().find("smt_siblings_idle"), std::string::npos);
}

TEST(HostRequirementTest, ValueRequirements) {
  EXPECT_EQ(UnmetRequirement(kFindings, "governor=performance"), "governor is powersave");
  EXPECT_EQ(UnmetRequirement(kFindings, "governor=powersave"), std::nullopt);
  EXPECT_EQ(UnmetRequirement(kFindings, "aslr=0"), std::nullopt);
  EXPECT_EQ(UnmetRequirement(kFindings, "thp=never"), "thp is unavailable");
  EXPECT_EQ(UnmetRequirement(kFindings, "turbo=off"), "turbo was not reported");
  EXPECT_EQ(UnmetRequirement({}, "aslr=0"), "aslr was not reported");
}

TEST(HostRequirementTest, BareNamesMeanOk) {
  EXPECT_EQ(UnmetRequirement(kFindings, "aslr"), std::nullopt);
  EXPECT_EQ(UnmetRequirement(kFindings, "smt_siblings_idle"),
            "smt_siblings is siblings 2-3 outside the pinned CPUs (warn)");
  EXPECT_EQ(UnmetRequirement(kFindings, "thp"), "thp is unavailable");
  std::vector<HostFinding> idle = {{"smt_siblings", "no SMT", "ok", "why"}};
  EXPECT_EQ(UnmetRequirement(idle, "smt_siblings_idle"), std::nullopt);
  EXPECT_TRUE(UnmetRequirement(kFindings, "nonsense").has_value());
}

}  // namespace
}  // namespace benchlab
