#include "rpc/status.h"

#include <string>
#include <string_view>

#include "common/parse.h"

namespace benchlab::rpc {
namespace {

constexpr std::string_view kMark = "benchlab:";

// Every StatusCode with its gRPC code; the first entry of a gRPC code is the one it maps back to.
struct CodePair {
  StatusCode ours;
  grpc::StatusCode grpc;
  const char* name;  // in the mark
};
constexpr CodePair kCodes[] = {
    {StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT, "invalid_argument"},
    {StatusCode::kNotFound, grpc::StatusCode::NOT_FOUND, "not_found"},
    {StatusCode::kAlreadyExists, grpc::StatusCode::ALREADY_EXISTS, "already_exists"},
    {StatusCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION, "failed_precondition"},
    {StatusCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED, "deadline_exceeded"},
    {StatusCode::kUnavailable, grpc::StatusCode::UNAVAILABLE, "unavailable"},
    {StatusCode::kInternal, grpc::StatusCode::INTERNAL, "internal"},
    {StatusCode::kIoError, grpc::StatusCode::INTERNAL, "io_error"},
    {StatusCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED, "resource_exhausted"},
    {StatusCode::kPermissionDenied, grpc::StatusCode::PERMISSION_DENIED, "permission_denied"},
    {StatusCode::kCancelled, grpc::StatusCode::CANCELLED, "cancelled"},
    {StatusCode::kUnauthenticated, grpc::StatusCode::UNAUTHENTICATED, "unauthenticated"},
};

// Bytes `c` takes in grpc-message: printable ASCII but '%' as itself, the rest percent-encoded.
size_t EncodedSize(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x20 && u <= 0x7e && u != '%' ? 1 : 3;
}

}  // namespace

std::string BoundStatusMessage(std::string_view message, size_t limit) {
  size_t encoded = 0;
  for (char c : message) encoded += EncodedSize(c);
  if (encoded <= limit) return std::string(message);
  // Room for the marker at its longest (a count of 20 digits and separators).
  constexpr size_t kMarkerRoom = 48;
  const size_t budget = limit > kMarkerRoom ? limit - kMarkerRoom : 0;
  size_t end = 0;
  for (size_t used = 0; end < message.size() && used + EncodedSize(message[end]) <= budget;) {
    used += EncodedSize(message[end++]);
  }
  // Not inside a UTF-8 sequence: back to the start of the character cut.
  while (end > 0 && end < message.size() &&
         (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) {
    --end;
  }
  return std::string(message.substr(0, end)) + " ... and " + FormatCount(message.size() - end) +
         " more bytes";
}

grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const std::string message = BoundStatusMessage(status.message());
  for (const CodePair& c : kCodes) {
    if (c.ours == status.code()) return grpc::Status(c.grpc, message, std::string(kMark) + c.name);
  }
  return grpc::Status(grpc::StatusCode::INTERNAL, message, std::string(kMark) + "internal");
}

grpc::Status ToGrpcStatus(const Status& status, std::string_view reason) {
  grpc::Status plain = ToGrpcStatus(status);
  if (plain.ok() || reason.empty()) return plain;
  return grpc::Status(plain.error_code(), plain.error_message(),
                      plain.error_details() + "/" + std::string(reason));
}

std::string HandlerReason(const grpc::Status& status) {
  if (!FromHandler(status)) return "";
  const std::string details = status.error_details();
  const size_t slash = details.find('/', kMark.size());
  return slash == std::string::npos ? "" : details.substr(slash + 1);
}

bool FromHandler(const grpc::Status& status) {
  return !status.ok() && std::string_view(status.error_details()).starts_with(kMark);
}

bool TransportLost(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE && !FromHandler(status);
}

Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return Status::Ok();
  if (FromHandler(status)) {
    // error_details() returns a copy: keep it alive while `name` looks into it.
    const std::string details = status.error_details();
    std::string_view name = std::string_view(details).substr(kMark.size());
    name = name.substr(0, name.find('/'));  // without a reason
    for (const CodePair& c : kCodes) {
      if (name == c.name) return Status(c.ours, status.error_message());
    }
  }
  for (const CodePair& c : kCodes) {
    if (c.grpc == status.error_code()) return Status(c.ours, status.error_message());
  }
  return Status::Internal(status.error_message());
}

const char* GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

}  // namespace benchlab::rpc
