#include "analysis/profile_export.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "github.com/google/pprof/proto/profile.pb.h"

namespace benchlab {
namespace {

FoldedProfile Profile(const std::string& folded) {
  auto parsed = ParseFolded(folded);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  return parsed.ok() ? *parsed : FoldedProfile{};
}

PprofOptions Options(uint64_t period_ns, std::string name = "") {
  PprofOptions options;
  options.period_ns = period_ns;
  options.name = std::move(name);
  return options;
}

// gunzip, as pprof opens a profile file; "" unless the bytes are one whole gzip stream.
std::string Gunzip(const std::string& bytes) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return "";
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char chunk[4096];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - z.avail_out);
  }
  inflateEnd(&z);
  return rc == Z_STREAM_END && z.avail_in == 0 ? out : "";
}

perftools::profiles::Profile ParsePprof(const std::string& gz) {
  perftools::profiles::Profile p;
  const std::string raw = Gunzip(gz);
  EXPECT_FALSE(raw.empty()) << "not a gzip stream";
  EXPECT_TRUE(p.ParseFromString(raw)) << "not a perftools.profiles.Profile";
  return p;
}

std::string Str(const perftools::profiles::Profile& p, int64_t index) {
  EXPECT_GE(index, 0);
  EXPECT_LT(index, p.string_table_size());
  return index >= 0 && index < p.string_table_size() ? p.string_table(static_cast<int>(index))
                                                     : "<out of range>";
}

// A sample's frames as "leaf;...;root" with the file names of kernel and JIT frames.
std::string LeafFirst(const perftools::profiles::Profile& p,
                      const perftools::profiles::Sample& sample) {
  std::map<uint64_t, const perftools::profiles::Function*> functions;
  for (const auto& f : p.function()) functions[f.id()] = &f;
  std::map<uint64_t, const perftools::profiles::Location*> locations;
  for (const auto& l : p.location()) locations[l.id()] = &l;
  std::string out;
  for (uint64_t id : sample.location_id()) {
    const auto* loc = locations.at(id);
    EXPECT_EQ(loc->line_size(), 1);
    const auto* fn = functions.at(loc->line(0).function_id());
    if (!out.empty()) out += ';';
    out += Str(p, fn->name());
    const std::string file = Str(p, fn->filename());
    if (!file.empty()) out += "@" + file;
  }
  return out;
}

TEST(ToPprofTest, ParsesBackWithSamplesLeafFirstAndKernelAndJitFiles) {
  const FoldedProfile profile = Profile(
      "srv;main;handle;write_[k] 3\n"
      "srv;main;handle 5\n"
      "node;run;parse_[j] 2\n");
  auto gz = ToPprof(profile, Options(10'000'000, "window 7"));
  ASSERT_TRUE(gz.ok()) << gz.status().message();
  ASSERT_GE(gz->size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>((*gz)[0]), 0x1f) << "gzip magic";
  EXPECT_EQ(static_cast<unsigned char>((*gz)[1]), 0x8b);
  const auto p = ParsePprof(*gz);

  ASSERT_GT(p.string_table_size(), 0);
  EXPECT_EQ(p.string_table(0), "");
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(Str(p, p.sample_type(0).type()), "samples");
  EXPECT_EQ(Str(p, p.sample_type(0).unit()), "count");
  EXPECT_EQ(Str(p, p.sample_type(1).type()), "cpu");
  EXPECT_EQ(Str(p, p.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(Str(p, p.period_type().type()), "cpu");
  EXPECT_EQ(Str(p, p.period_type().unit()), "nanoseconds");
  EXPECT_EQ(p.period(), 10'000'000);
  ASSERT_EQ(p.comment_size(), 1);
  EXPECT_EQ(Str(p, p.comment(0)), "window 7");

  // Samples in the folded order (sorted stacks), leaf first, values (count, count × period).
  std::map<std::string, std::vector<int64_t>> samples;
  for (const auto& s : p.sample()) {
    samples[LeafFirst(p, s)] = {s.value().begin(), s.value().end()};
  }
  const std::map<std::string, std::vector<int64_t>> want = {
      {"parse@[jit];run;node", {2, 20'000'000}},
      {"handle;main;srv", {5, 50'000'000}},
      {"write@[kernel];handle;main;srv", {3, 30'000'000}},
  };
  EXPECT_EQ(samples, want);

  // One function and one location per distinct frame, ids nonzero and unique.
  EXPECT_EQ(p.function_size(), 7);  // srv main handle write node run parse
  EXPECT_EQ(p.location_size(), 7);
  std::map<std::string, int> names;
  for (const auto& f : p.function()) {
    EXPECT_NE(f.id(), 0u);
    ++names[Str(p, f.name())];
  }
  for (const auto& [name, n] : names) EXPECT_EQ(n, 1) << name;
  EXPECT_EQ(names.count("write_[k]"), 0u) << "the suffix is a file name, not part of the name";
}

TEST(ToPprofTest, KernelAndUserFramesOfOneNameStayApart) {
  const auto p = ParsePprof(*ToPprof(Profile("srv;read;read_[k] 4\n"), Options(1)));
  ASSERT_EQ(p.sample_size(), 1);
  EXPECT_EQ(LeafFirst(p, p.sample(0)), "read@[kernel];read;srv");
  EXPECT_EQ(p.function_size(), 3);
}

TEST(ToPprofTest, SaysWhenTheProfileWasTruncated) {
  FoldedProfile profile = Profile("srv;f 1\n");
  profile.truncated = true;
  const auto p = ParsePprof(*ToPprof(profile, Options(1)));
  ASSERT_EQ(p.comment_size(), 1);
  EXPECT_NE(Str(p, p.comment(0)).find("limits"), std::string::npos);
}

TEST(ToPprofTest, RefusesAZeroPeriodAndValuesPastInt64) {
  auto zero = ToPprof(Profile("srv;f 1\n"), Options(0));
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("period_ns"), std::string::npos);

  // 10^10 samples at 1 s each are 10^19 ns, past int64's 9.2 × 10^18.
  auto big = ToPprof(Profile("srv;f 10000000000\n"), Options(1'000'000'000));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(big.status().message().find("srv;f"), std::string::npos);
}

TEST(ToPprofTest, CutsAStackDeeperThanTheFoldedLimit) {
  // A profile built by hand, not parsed: 400 frames after the process.
  std::string stack = "srv";
  for (int i = 0; i < 400; ++i) stack += ";f" + std::to_string(i);
  FoldedProfile profile;
  profile.stacks[stack] = 1;
  const auto p = ParsePprof(*ToPprof(profile, Options(1)));
  ASSERT_EQ(p.sample_size(), 1);
  ASSERT_EQ(p.sample(0).location_id_size(), static_cast<int>(kMaxProfileDepth) + 2);
  EXPECT_EQ(LeafFirst(p, p.sample(0)).substr(0, 12), "[truncated];");
}

TEST(ToPprofTest, InvalidUtf8InAFrameBecomesReplacementCharacters) {
  FoldedProfile profile;
  profile.stacks["srv;caf\xC3\xA9;bad\xFF"] = 1;
  const auto p = ParsePprof(*ToPprof(profile, Options(1)));
  ASSERT_EQ(p.sample_size(), 1);
  EXPECT_EQ(LeafFirst(p, p.sample(0)), "bad\xEF\xBF\xBD;caf\xC3\xA9;srv");
}

TEST(ToSpeedscopeTest, HoldsTheStructureTheSchemaRequires) {
  const FoldedProfile profile = Profile(
      "srv;main;handle;write_[k] 3\n"
      "srv;main;handle 5\n"
      "node;run 2\n");
  const auto doc = nlohmann::json::parse(ToSpeedscope(profile, "window 7", 10101.0));
  EXPECT_EQ(doc.at("$schema"), "https://www.speedscope.app/file-format-schema.json");
  EXPECT_EQ(doc.at("name"), "window 7");
  EXPECT_EQ(doc.at("activeProfileIndex"), 0);
  ASSERT_TRUE(doc.at("exporter").is_string());

  const auto& frames = doc.at("shared").at("frames");
  ASSERT_TRUE(frames.is_array());
  std::vector<std::string> names;
  for (const auto& f : frames) {
    ASSERT_TRUE(f.is_object());
    ASSERT_TRUE(f.at("name").is_string());
    names.push_back(f.at("name"));
  }
  EXPECT_EQ(names.size(), 6u) << "each frame once: node run srv main handle write_[k]";

  const auto& profiles = doc.at("profiles");
  ASSERT_TRUE(profiles.is_array());
  ASSERT_EQ(profiles.size(), 1u);
  const auto& sampled = profiles[0];
  EXPECT_EQ(sampled.at("type"), "sampled");
  EXPECT_EQ(sampled.at("name"), "window 7");
  EXPECT_EQ(sampled.at("unit"), "microseconds");
  EXPECT_EQ(sampled.at("startValue"), 0);
  ASSERT_TRUE(sampled.at("endValue").is_number());
  const auto& samples = sampled.at("samples");
  const auto& weights = sampled.at("weights");
  ASSERT_TRUE(samples.is_array());
  ASSERT_TRUE(weights.is_array());
  ASSERT_EQ(samples.size(), 3u);
  ASSERT_EQ(weights.size(), samples.size());

  std::map<std::string, double> by_stack;
  double sum = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    std::string stack;
    for (const auto& index : samples[i]) {
      ASSERT_TRUE(index.is_number_unsigned());
      ASSERT_LT(index.get<size_t>(), names.size());
      stack += (stack.empty() ? "" : ";") + names[index.get<size_t>()];
    }
    ASSERT_TRUE(weights[i].is_number());
    by_stack[stack] = weights[i].get<double>();
    sum += weights[i].get<double>();
  }
  const std::map<std::string, double> want = {
      {"node;run", 2 * 10101.0},
      {"srv;main;handle", 5 * 10101.0},
      {"srv;main;handle;write_[k]", 3 * 10101.0},
  };
  EXPECT_EQ(by_stack, want) << "root first, samples × µs per sample";
  EXPECT_DOUBLE_EQ(sampled.at("endValue").get<double>(), sum);
  EXPECT_DOUBLE_EQ(sum, 10 * 10101.0);
}

TEST(ToSpeedscopeTest, WithoutAUsableWeightCountsSamples) {
  for (double weight : {0.0, -1.0, std::nan("")}) {
    const auto doc =
        nlohmann::json::parse(ToSpeedscope(Profile("srv;f 4\nsrv;g 6\n"), "w", weight));
    const auto& sampled = doc.at("profiles").at(0);
    EXPECT_EQ(sampled.at("unit"), "none") << weight;
    EXPECT_EQ(sampled.at("weights"), nlohmann::json::array({4, 6})) << weight;
    EXPECT_EQ(sampled.at("endValue"), 10) << weight;
  }
}

TEST(ToSpeedscopeTest, AnEmptyProfileIsAValidEmptyFile) {
  const auto doc = nlohmann::json::parse(ToSpeedscope(FoldedProfile{}, "empty", 1.0));
  EXPECT_TRUE(doc.at("shared").at("frames").empty());
  EXPECT_TRUE(doc.at("profiles").at(0).at("samples").empty());
  EXPECT_EQ(doc.at("profiles").at(0).at("endValue"), 0);
}

TEST(ToSpeedscopeTest, InvalidUtf8StillDumpsAndParses) {
  FoldedProfile profile;
  profile.stacks["srv;bad\xC3"] = 1;
  const auto doc = nlohmann::json::parse(ToSpeedscope(profile, "w\xFF", 1.0));
  EXPECT_EQ(doc.at("shared").at("frames").at(1).at("name"), "bad\xEF\xBF\xBD");
  EXPECT_EQ(doc.at("name"), "w\xEF\xBF\xBD");
}

// The child of `node` called `name`, or null.
const nlohmann::json* Child(const nlohmann::json& node, const std::string& name) {
  for (const auto& c : node.at("children")) {
    if (c.at("name") == name) return &c;
  }
  return nullptr;
}

TEST(FlameTreeTest, ValuesAreSubtreeTotalsAndChildrenSortedByName) {
  const auto tree =
      FlameTree(Profile("srv;main;write 3\n"
                        "srv;main 5\n"
                        "srv;main;alloc 2\n"
                        "node;run 4\n"));
  EXPECT_EQ(tree.at("name"), "all");
  EXPECT_EQ(tree.at("value"), 14);
  const auto& roots = tree.at("children");
  ASSERT_EQ(roots.size(), 2u);
  EXPECT_EQ(roots[0].at("name"), "node");
  EXPECT_EQ(roots[1].at("name"), "srv");
  EXPECT_EQ(roots[1].at("value"), 10);
  const auto& main_node = roots[1].at("children").at(0);
  EXPECT_EQ(main_node.at("name"), "main");
  EXPECT_EQ(main_node.at("value"), 10) << "5 of its own and 5 in its callees";
  const auto& callees = main_node.at("children");
  ASSERT_EQ(callees.size(), 2u);
  EXPECT_EQ(callees[0].at("name"), "alloc");
  EXPECT_EQ(callees[0].at("value"), 2);
  EXPECT_EQ(callees[1].at("name"), "write");
  EXPECT_EQ(callees[1].at("value"), 3);
  EXPECT_TRUE(callees[1].at("children").empty());
  EXPECT_FALSE(tree.contains("delta"));
}

TEST(FlameTreeTest, AnEmptyProfileIsAnEmptyRoot) {
  const auto tree = FlameTree(FoldedProfile{});
  EXPECT_EQ(tree,
            nlohmann::json({{"name", "all"}, {"value", 0}, {"children", nlohmann::json::array()}}));
}

TEST(DiffFlameTreeTest, DeltaIsNextMinusTheBaseScaledToNextsTotal) {
  // Base: 100 samples, parse 50. Next: 200 samples, parse 80. Scaled to 200, base's parse is
  // 100, so parse lost 20 samples' worth of share; write went from 50 (100 scaled) to 120.
  const FoldedProfile base = Profile("srv;parse 50\nsrv;write 50\n");
  const FoldedProfile next = Profile("srv;parse 80\nsrv;write 120\n");
  const auto tree = DiffFlameTree(base, next);
  EXPECT_EQ(tree.at("value"), 200);
  EXPECT_EQ(tree.at("base"), 100);
  EXPECT_DOUBLE_EQ(tree.at("delta").get<double>(), 0.0);
  const auto* srv = Child(tree, "srv");
  ASSERT_NE(srv, nullptr);
  EXPECT_DOUBLE_EQ(srv->at("delta").get<double>(), 0.0);
  const auto* parse = Child(*srv, "parse");
  const auto* write = Child(*srv, "write");
  ASSERT_NE(parse, nullptr);
  ASSERT_NE(write, nullptr);
  EXPECT_EQ(parse->at("value"), 80);
  EXPECT_EQ(parse->at("base"), 50);
  EXPECT_DOUBLE_EQ(parse->at("delta").get<double>(), -20.0);
  EXPECT_DOUBLE_EQ(write->at("delta").get<double>(), 20.0);
  EXPECT_FALSE(parse->contains("vanished"));
}

TEST(DiffFlameTreeTest, SameSharesAtAnotherRateGiveNoDelta) {
  const auto tree = DiffFlameTree(Profile("srv;a 1\nsrv;b 3\n"), Profile("srv;a 10\nsrv;b 30\n"));
  const auto* srv = Child(tree, "srv");
  ASSERT_NE(srv, nullptr);
  for (const auto& c : srv->at("children")) {
    EXPECT_DOUBLE_EQ(c.at("delta").get<double>(), 0.0) << c.at("name");
  }
}

TEST(DiffFlameTreeTest, FramesOnlyInBaseAreVanishedWithValueZero) {
  const FoldedProfile base = Profile("srv;main;lock;futex_[k] 30\nsrv;main;work 70\n");
  const FoldedProfile next = Profile("srv;main;work 50\nsrv;main;fast 50\n");
  const auto tree = DiffFlameTree(base, next);
  const auto* main_node = Child(*Child(tree, "srv"), "main");
  ASSERT_NE(main_node, nullptr);
  EXPECT_FALSE(main_node->contains("vanished"));
  const auto& callees = main_node->at("children");
  ASSERT_EQ(callees.size(), 3u);
  EXPECT_EQ(callees[0].at("name"), "fast");
  EXPECT_EQ(callees[1].at("name"), "lock");
  EXPECT_EQ(callees[2].at("name"), "work");

  const auto& lock = callees[1];
  EXPECT_EQ(lock.at("value"), 0);
  EXPECT_EQ(lock.at("vanished"), true);
  EXPECT_DOUBLE_EQ(lock.at("delta").get<double>(), -30.0);  // totals equal: scale 1
  const auto* futex = Child(lock, "futex_[k]");
  ASSERT_NE(futex, nullptr);
  EXPECT_EQ(futex->at("vanished"), true) << "a vanished node's callees vanished too";
  EXPECT_EQ(futex->at("value"), 0);

  const auto& fast = callees[0];
  EXPECT_EQ(fast.at("value"), 50);
  EXPECT_EQ(fast.at("base"), 0);
  EXPECT_DOUBLE_EQ(fast.at("delta").get<double>(), 50.0);
  EXPECT_FALSE(fast.contains("vanished"));
  EXPECT_DOUBLE_EQ(callees[2].at("delta").get<double>(), -20.0);
}

TEST(DiffFlameTreeTest, AnEmptySideScalesToNothing) {
  const FoldedProfile some = Profile("srv;f 4\n");
  const auto from_nothing = DiffFlameTree(FoldedProfile{}, some);
  EXPECT_DOUBLE_EQ(Child(from_nothing, "srv")->at("delta").get<double>(), 4.0);
  const auto to_nothing = DiffFlameTree(some, FoldedProfile{});
  EXPECT_FALSE(to_nothing.contains("vanished")) << "the root is never vanished";
  const auto* srv = Child(to_nothing, "srv");
  ASSERT_NE(srv, nullptr);
  EXPECT_EQ(srv->at("vanished"), true);
  EXPECT_EQ(srv->at("value"), 0);
  EXPECT_DOUBLE_EQ(srv->at("delta").get<double>(), 0.0);
}

}  // namespace
}  // namespace benchlab
