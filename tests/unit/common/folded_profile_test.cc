#include "common/folded_profile.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace benchlab {
namespace {

// What `perf script -F comm,period,ip,sym,dso` printed for a server on this machine's kind of
// host, with a C++ symbol, a JIT frame from Node's perf map and frames perf could not name.
constexpr char kPerfScript[] =
    "hello-server   10101010 \n"
    "\t          5246 [unknown] (/usr/bin/hello-server)\n"
    "\n"
    "hello-server   10101010 \n"
    "\tffffffff82242009 pvm_irq_enable ([kernel.kallsyms])\n"
    "\tffffffff8223c925 do_syscall_64 ([kernel.kallsyms])\n"
    "\t           f8350 __GI___libc_write (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\t           41c2e Handle(Request const&, std::vector<int, std::allocator<int> >&) "
    "(/usr/bin/hello-server)\n"
    "\t           40010 main (/usr/bin/hello-server)\n"
    "\n"
    "node main   10101010 \n"
    "\t    7f3a1b2c3d4e LazyCompile:*parse /srv/app.js:10 (/tmp/perf-4242.map)\n"
    "\t    55d0c0ffee00 [unknown] ([unknown])\n"
    "\n";

TEST(FoldPerfScriptTest, StacksRootFirstWithNamesNeverAddresses) {
  auto folded = FoldPerfScript(kPerfScript);
  ASSERT_TRUE(folded.ok()) << folded.status().message();
  EXPECT_EQ(FormatFolded(*folded),
            "hello-server;[hello-server] 1\n"
            "hello-server;main;Handle(Request const&, std::vector<int, std::allocator<int> >&);"
            "__GI___libc_write;do_syscall_64_[k];pvm_irq_enable_[k] 1\n"
            "node main;[unknown];LazyCompile:parse /srv/app.js:10_[j] 1\n");
  EXPECT_EQ(folded->samples(), 3u);
  EXPECT_FALSE(folded->truncated);
}

TEST(FoldPerfScriptTest, AJitFunctionKeepsOneNameWhateverItsTier) {
  // Node 20's --perf-basic-prof names: optimised (*), interpreted (~), Sparkplug (^), Maglev (+).
  const std::string script =
      "node 1\n\t1 JS:*parse /srv/app.js:10:3 (/tmp/perf-7.map)\n\t2 main (/bin/node)\n\n"
      "node 1\n\t1 JS:~parse /srv/app.js:10:3 (/tmp/perf-7.map)\n\t2 main (/bin/node)\n\n"
      "node 1\n\t1 JS:^parse /srv/app.js:10:3 (/tmp/perf-7.map)\n\t2 main (/bin/node)\n\n"
      "node 1\n\t1 JS:+parse /srv/app.js:10:3 (/tmp/perf-7.map)\n\t2 main (/bin/node)\n\n"
      // Not a JIT frame: a C++ name keeps every character.
      "node 1\n\t1 ns:*odd (/bin/node)\n\t2 main (/bin/node)\n\n";
  auto folded = FoldPerfScript(script);
  ASSERT_TRUE(folded.ok()) << folded.status().message();
  EXPECT_EQ(FormatFolded(*folded),
            "node;main;JS:parse /srv/app.js:10:3_[j] 4\n"
            "node;main;ns:*odd 1\n");
}

TEST(FoldPerfScriptTest, JitCodeNoMapNamesIsOneFrameWhateverThePid) {
  // Bun: JavaScriptCore writes no perf map, so perf knows the JIT region only by the map's path.
  const std::string script =
      "bun 1\n\t7f01 [unknown] (/tmp/perf-9237.map)\n\t2 [unknown] (/srv/bun.exe)\n\n"
      "bun 1\n\t7f02 [unknown] (/tmp/perf-9300.map)\n\t2 [unknown] (/srv/bun.exe)\n\n";
  auto folded = FoldPerfScript(script);
  ASSERT_TRUE(folded.ok()) << folded.status().message();
  EXPECT_EQ(FormatFolded(*folded), "bun;[bun.exe];[jit] 2\n");
}

TEST(FoldPerfScriptTest, TheSameStackTwiceCountsTwo) {
  const std::string one = "srv 1\n\t1 f (/bin/srv)\n\t2 main (/bin/srv)\n\n";
  auto folded = FoldPerfScript(one + one + "srv 1\n\t1 g (/bin/srv)\n");  // no blank at the end
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(FormatFolded(*folded), "srv;g 1\nsrv;main;f 2\n");
}

TEST(FoldPerfScriptTest, TextOfAnotherShapeIsRefusedWithItsLine) {
  auto frame_first = FoldPerfScript("\t1 f (/bin/srv)\n");
  ASSERT_FALSE(frame_first.ok());
  EXPECT_NE(frame_first.status().message().find("line 1: a frame before"), std::string::npos);
  auto no_period = FoldPerfScript("srv 1\n\t1 f (/bin/srv)\n\nsrv: cpu-clock:\n");
  ASSERT_FALSE(no_period.ok());
  EXPECT_NE(no_period.status().message().find("line 4: expected \"COMM PERIOD\""),
            std::string::npos)
      << no_period.status().message();
}

TEST(FoldPerfScriptTest, ADeepStackKeepsItsRootEndAndSaysItWasCut) {
  std::string text = "srv 1\n";
  for (size_t i = 0; i < kMaxProfileDepth + 44; ++i) {
    text += "\t1 f" + std::to_string(i) + " (/bin/srv)\n";  // f0 is the leaf
  }
  auto folded = FoldPerfScript(text);
  ASSERT_TRUE(folded.ok());
  ASSERT_EQ(folded->stacks.size(), 1u);
  const std::string& stack = folded->stacks.begin()->first;
  EXPECT_EQ(stack.rfind("srv;f" + std::to_string(kMaxProfileDepth + 43) + ";", 0), 0u);
  EXPECT_NE(stack.find(";f44;[truncated]"), std::string::npos) << "f0..f43 were cut";
  EXPECT_EQ(stack.find(";f43;"), std::string::npos);
  EXPECT_TRUE(folded->truncated);
  EXPECT_TRUE(ParseFolded(FormatFolded(*folded)).ok()) << "what is folded parses back";
}

TEST(FoldedTextTest, RoundTripsAndSumsRepeatedLines) {
  auto parsed = ParseFolded("a;b 3\na;c 4\na;b 2\n");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(FormatFolded(*parsed), "a;b 5\na;c 4\n");
  EXPECT_EQ(parsed->samples(), 9u);
}

TEST(FoldedTextTest, HostileTextIsRefusedWithItsLine) {
  for (const char* bad :
       {"a;b\n", "a;b x\n", " 3\n", "a;;b 3\n", "a;b\x1b[2J 3\n", "a;b 99999999999999999999\n"}) {
    auto parsed = ParseFolded(std::string("ok;fine 1\n") + bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("line 2"), std::string::npos)
        << parsed.status().message();
  }
  std::string long_frame = "a;" + std::string(kMaxFrameBytes + 1, 'x') + " 1\n";
  EXPECT_FALSE(ParseFolded(long_frame).ok());
}

TEST(FoldedTextTest, MergingAddsStacks) {
  auto a = ParseFolded("p;f 3\np;g 1\n");
  auto b = ParseFolded("p;f 2\np;h 5\n");
  ASSERT_TRUE(a.ok() && b.ok());
  MergeProfile(*a, *b);
  EXPECT_EQ(FormatFolded(*a), "p;f 5\np;g 1\np;h 5\n");
}

TEST(FoldedTextTest, PastTheStackLimitTheRarestAreMergedIntoOne) {
  FoldedProfile many;
  for (size_t i = 0; i < kMaxProfileStacks + 10; ++i) {
    many.stacks["p;f" + std::to_string(i)] = i < 10 ? 1 : 100;
  }
  FoldedProfile none;
  MergeProfile(none, many);
  EXPECT_EQ(none.stacks.size(), kMaxProfileStacks);
  EXPECT_EQ(none.stacks.at("[other stacks]"), 10u + 100u) << "the 10 rarest and one more";
  EXPECT_EQ(none.samples(), many.samples());
  EXPECT_TRUE(none.truncated);
}

TEST(SamplesByFunctionTest, SelfIsTheLeafTotalCountsARecursiveFunctionOnce) {
  auto p = ParseFolded("srv;main;walk;walk;walk;leaf 4\nsrv;main;walk 6\nsrv 2\n");
  ASSERT_TRUE(p.ok());
  const auto f = SamplesByFunction(*p);
  EXPECT_EQ(f.at("main").total, 10u);
  EXPECT_EQ(f.at("main").self, 0u);
  EXPECT_EQ(f.at("walk").total, 10u) << "not 4 x 3 + 6";
  EXPECT_EQ(f.at("walk").self, 6u);
  EXPECT_EQ(f.at("leaf").self, 4u);
  EXPECT_EQ(f.count("srv"), 0u) << "the process is the root, not a function";
}

TEST(CompressedProfileTest, RoundTrips) {
  auto p = ParseFolded("srv;main;parse 30\nsrv;main;write 12\n");
  ASSERT_TRUE(p.ok());
  auto packed = CompressFolded(*p);
  ASSERT_TRUE(packed.ok()) << packed.status().message();
  auto back = DecompressFolded(*packed);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(FormatFolded(*back), FormatFolded(*p));
  EXPECT_FALSE(back->truncated);
}

TEST(CompressedProfileTest, WhatDoesNotFitKeepsItsMostSampledStacks) {
  FoldedProfile big;
  for (int i = 0; i < 5000; ++i) {
    // Distinct, poorly compressible frames; stack i has i + 1 samples.
    big.stacks["srv;f" + std::to_string(i * 7919 % 100003) +
               std::string(40, static_cast<char>('a' + i % 26))] = static_cast<uint64_t>(i + 1);
  }
  auto packed = CompressFolded(big, 16 * 1024);
  ASSERT_TRUE(packed.ok()) << packed.status().message();
  EXPECT_LE(packed->size(), 16u * 1024);
  auto back = DecompressFolded(*packed);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->truncated);
  EXPECT_EQ(back->samples(), big.samples()) << "no sample is lost, the rare ones are merged";
  EXPECT_LT(back->stacks.size(), big.stacks.size());
  uint64_t kept_min = UINT64_MAX;
  for (const auto& [stack, count] : back->stacks) {
    if (stack != "[other stacks]") kept_min = std::min(kept_min, count);
  }
  EXPECT_GT(kept_min, 5000u - back->stacks.size()) << "the most sampled stacks are the ones kept";
}

TEST(CompressedProfileTest, BytesThatAreNotAProfileAreRefused) {
  EXPECT_FALSE(DecompressFolded("not zlib at all").ok());
  auto packed = CompressFolded(*ParseFolded("a;b 1\n"));
  ASSERT_TRUE(packed.ok());
  EXPECT_FALSE(DecompressFolded(packed->substr(0, packed->size() - 3)).ok()) << "cut short";
  // A bomb: 40 MiB of one repeated line compresses to a few tens of KiB.
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "x";
  std::string line = "a;" + text.substr(0, 500) + " 1\n";
  std::string huge;
  while (huge.size() < 40u * 1024 * 1024) huge += line;
  uLongf size = compressBound(static_cast<uLong>(huge.size()));
  std::string z(size, '\0');
  ASSERT_EQ(
      compress2(reinterpret_cast<Bytef*>(z.data()), &size,
                reinterpret_cast<const Bytef*>(huge.data()), static_cast<uLong>(huge.size()), 9),
      Z_OK);
  z.resize(size);
  auto refused = DecompressFolded(z);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("once uncompressed"), std::string::npos);
}

}  // namespace
}  // namespace benchlab
