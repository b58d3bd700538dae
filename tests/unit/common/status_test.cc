#include "common/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace benchlab {
namespace {

Result<int> Number(bool ok) {
  if (!ok) return Status::NotFound("no number");
  return 7;
}

Result<std::unique_ptr<std::string>> Owned(bool ok) {
  if (!ok) return Status::Unavailable("no string");
  return std::make_unique<std::string>("kept");
}

// Two uses on separate lines of one scope, one declaring and one assigning.
Result<int> Sum(bool first, bool second, int* reached) {
  BENCHLAB_ASSIGN_OR_RETURN(int a, Number(first));
  *reached = 1;
  int b = 0;
  BENCHLAB_ASSIGN_OR_RETURN(b, Number(second));
  *reached = 2;
  return a + b;
}

TEST(AssignOrReturnTest, AssignsTheValueAndGoesOn) {
  int reached = 0;
  Result<int> r = Sum(true, true, &reached);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, 14);
  EXPECT_EQ(reached, 2);
}

TEST(AssignOrReturnTest, ReturnsTheFirstErrorAndStopsThere) {
  int reached = 0;
  Result<int> r = Sum(true, false, &reached);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "no number");
  EXPECT_EQ(reached, 1);

  reached = 0;
  EXPECT_FALSE(Sum(false, true, &reached).ok());
  EXPECT_EQ(reached, 0);
}

Status Take(bool ok, std::string* out) {
  BENCHLAB_ASSIGN_OR_RETURN(auto owned, Owned(ok));
  *out = *owned;
  return Status::Ok();
}

TEST(AssignOrReturnTest, MovesAMoveOnlyValueAndReturnsStatusFromAStatusFunction) {
  std::string out;
  EXPECT_TRUE(Take(true, &out).ok());
  EXPECT_EQ(out, "kept");
  Status st = Take(false, &out);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace benchlab
