// The input format of the service fuzz targets (docs/fuzzing.md): a sequence of calls, each
//   [selector: 1 byte][length: 2 bytes, little-endian][message: `length` bytes]
// The selector picks the RPC (selector % number of RPCs, in the order each target lists them);
// the message is that RPC's request in protobuf's binary form. A length past the end of the input
// takes what is left. tests/fuzz/make_service_seeds.py writes seeds in this form from text protos.
#pragma once

#include <grpcpp/support/status.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace benchlab::fuzz {

struct Call {
  uint8_t selector = 0;
  std::string_view message;
};

// At most max_calls calls; a trailing fragment shorter than a header is ignored.
inline std::vector<Call> SplitCalls(const uint8_t* data, size_t size, size_t max_calls) {
  std::vector<Call> calls;
  size_t pos = 0;
  while (size - pos >= 3 && calls.size() < max_calls) {
    Call call;
    call.selector = data[pos];
    size_t length = data[pos + 1] | (size_t{data[pos + 2]} << 8);
    pos += 3;
    if (length > size - pos) length = size - pos;
    call.message = std::string_view(reinterpret_cast<const char*>(data) + pos, length);
    pos += length;
    calls.push_back(call);
  }
  return calls;
}

// A request message from the call's bytes; false when they are not one.
template <typename Request>
bool Parse(std::string_view bytes, Request& req) {
  return req.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// What the harness answers for a call it did not make.
inline grpc::Status NotParsed() {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "fuzz: not a request message");
}
inline grpc::Status Skipped(const std::string& why) {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "fuzz: skipped: " + why);
}

// Makes the call (a function returning its grpc::Status); with BENCHLAB_FUZZ_VERBOSE set in the
// environment, prints it with its status and duration to stderr.
template <typename Call>
void Traced(const char* rpc, Call call) {
  static const bool verbose = std::getenv("BENCHLAB_FUZZ_VERBOSE") != nullptr;
  const auto start = std::chrono::steady_clock::now();
  const grpc::Status status = call();
  if (!verbose) return;
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  std::fprintf(stderr, "fuzz: %s -> %d %s (%.1f ms)\n", rpc, static_cast<int>(status.error_code()),
               status.error_message().c_str(), took.count());
}

}  // namespace benchlab::fuzz
