// Status and Result<T>: errors as values, with a code and a message a person can act on.
// Value types; safe to copy and to pass between threads.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace benchlab {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kDeadlineExceeded,
  kUnavailable,
  kIoError,
  kInternal,
  kResourceExhausted,  // a configured limit (targets, spool size) is reached
  kPermissionDenied,   // the caller may not do this (another agent's name, another window's target)
  kCancelled,          // the caller went away or its deadline passed
  kUnauthenticated,    // the caller's certificate is missing, unreadable or revoked
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status DeadlineExceeded(std::string m) {
    return {StatusCode::kDeadlineExceeded, std::move(m)};
  }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status Unauthenticated(std::string m) {
    return {StatusCode::kUnauthenticated, std::move(m)};
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "ok", or "<code>: <message>".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result built from an ok Status has no value");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace benchlab

// Propagates a non-ok Status out of the calling function.
#define BENCHLAB_RETURN_IF_ERROR(expr) \
  do {                                 \
    ::benchlab::Status _st = (expr);   \
    if (!_st.ok()) return _st;         \
  } while (0)

// Evaluates `expr`, a Result<T>: on error returns its Status from the calling function, otherwise
// moves the value into `lhs`, which may declare it:
//   BENCHLAB_ASSIGN_OR_RETURN(auto campaign, ParseCampaignText(text, source, dir));
//   BENCHLAB_ASSIGN_OR_RETURN(row.id, store.CreateCampaign(row, targets, scenarios));
// The Result lives in a variable named after the line, so two uses on different lines of one
// scope do not collide.
#define BENCHLAB_ASSIGN_OR_RETURN(lhs, expr) \
  BENCHLAB_ASSIGN_OR_RETURN_IMPL(BENCHLAB_STATUS_CONCAT(_benchlab_result_, __LINE__), lhs, expr)
#define BENCHLAB_ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                                   \
  if (!result.ok()) return result.status();               \
  lhs = std::move(result).value()
#define BENCHLAB_STATUS_CONCAT(a, b) BENCHLAB_STATUS_CONCAT_INNER(a, b)
#define BENCHLAB_STATUS_CONCAT_INNER(a, b) a##b
