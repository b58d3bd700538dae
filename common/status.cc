#include "common/status.h"

namespace benchlab {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kAlreadyExists:
      return "already exists";
    case StatusCode::kFailedPrecondition:
      return "failed precondition";
    case StatusCode::kDeadlineExceeded:
      return "deadline exceeded";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kIoError:
      return "I/O error";
    case StatusCode::kInternal:
      return "internal error";
    case StatusCode::kResourceExhausted:
      return "resource exhausted";
    case StatusCode::kPermissionDenied:
      return "permission denied";
    case StatusCode::kCancelled:
      return "cancelled";
    case StatusCode::kUnauthenticated:
      return "unauthenticated";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace benchlab
