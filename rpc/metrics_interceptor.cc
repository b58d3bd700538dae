#include "rpc/metrics_interceptor.h"

#include <google/protobuf/descriptor.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <string>
#include <utility>

namespace benchlab {
namespace {

using grpc::experimental::InterceptionHookPoints;
using grpc::experimental::ServerRpcInfo;
using Clock = std::chrono::steady_clock;

// Seconds: from a quick unary call to a long load run (RunLoad streams for the window's length).
const prometheus::Histogram::BucketBoundaries kHandlingBuckets = {
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};

const char* TypeName(ServerRpcInfo::Type type) {
  switch (type) {
    case ServerRpcInfo::Type::UNARY:
      return "unary";
    case ServerRpcInfo::Type::CLIENT_STREAMING:
      return "client_stream";
    case ServerRpcInfo::Type::SERVER_STREAMING:
      return "server_stream";
    case ServerRpcInfo::Type::BIDI_STREAMING:
      return "bidi_stream";
  }
  return "unknown";
}

// "/pkg.Service/Method" -> {"pkg.Service", "Method"} when the pool knows the method, else
// {"unknown", "unknown"}.
std::pair<std::string, std::string> ServiceAndMethod(const char* full_method) {
  const std::string name = full_method ? full_method : "";
  const size_t slash = name.rfind('/');
  if (name.size() < 3 || name[0] != '/' || slash == 0 || slash == std::string::npos) {
    return {"unknown", "unknown"};
  }
  std::string service = name.substr(1, slash - 1);
  std::string method = name.substr(slash + 1);
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  if (pool->FindMethodByName(service + "." + method) == nullptr) return {"unknown", "unknown"};
  return {std::move(service), std::move(method)};
}

class MetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(RpcMetrics& metrics, ServerRpcInfo* info)
      : metrics_(metrics), type_(info->type()), method_(info->method()), start_(Clock::now()) {}

  // A call torn down without a status sent: the client cancelled or went away.
  ~MetricsInterceptor() override {
    if (!recorded_) Record(grpc::StatusCode::CANCELLED);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      Record(methods->GetSendStatus().error_code());
    }
    methods->Proceed();
  }

 private:
  void Record(grpc::StatusCode code) {
    recorded_ = true;
    metrics_.Record(type_, method_, code,
                    std::chrono::duration<double>(Clock::now() - start_).count());
  }

  RpcMetrics& metrics_;
  const ServerRpcInfo::Type type_;
  const char* const method_;  // gRPC's, alive as long as the call
  const Clock::time_point start_;
  bool recorded_ = false;
};

class MetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(RpcMetrics& metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(ServerRpcInfo* info) override {
    return new MetricsInterceptor(metrics_, info);
  }

 private:
  RpcMetrics& metrics_;
};

}  // namespace

const char* GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "Canceled";
    case grpc::StatusCode::UNKNOWN:
      return "Unknown";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "InvalidArgument";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DeadlineExceeded";
    case grpc::StatusCode::NOT_FOUND:
      return "NotFound";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "AlreadyExists";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PermissionDenied";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "ResourceExhausted";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FailedPrecondition";
    case grpc::StatusCode::ABORTED:
      return "Aborted";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OutOfRange";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "Unimplemented";
    case grpc::StatusCode::INTERNAL:
      return "Internal";
    case grpc::StatusCode::UNAVAILABLE:
      return "Unavailable";
    case grpc::StatusCode::DATA_LOSS:
      return "DataLoss";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "Unauthenticated";
    default:
      return "Unknown";
  }
}

RpcMetrics::RpcMetrics(prometheus::Registry& registry)
    : handled_(prometheus::BuildCounter()
                   .Name("grpc_server_handled_total")
                   .Help("gRPC calls completed on the server, by method and status code")
                   .Register(registry)),
      handling_(prometheus::BuildHistogram()
                    .Name("grpc_server_handling_seconds")
                    .Help("Time from a gRPC call's arrival to its status, in seconds")
                    .Register(registry)) {}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> RpcMetrics::Factory() {
  return std::make_unique<MetricsInterceptorFactory>(*this);
}

void RpcMetrics::Record(ServerRpcInfo::Type type, const char* full_method, grpc::StatusCode code,
                        double seconds) {
  auto [service, method] = ServiceAndMethod(full_method);
  const std::string type_name = TypeName(type);
  handled_
      .Add({{"grpc_type", type_name},
            {"grpc_service", service},
            {"grpc_method", method},
            {"grpc_code", GrpcCodeName(code)}})
      .Increment();
  handling_
      .Add({{"grpc_type", type_name}, {"grpc_service", service}, {"grpc_method", method}},
           kHandlingBuckets)
      .Observe(seconds);
}

}  // namespace benchlab
