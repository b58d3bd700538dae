// RpcMetrics: counts and times every call a gRPC server handles, for Prometheus
// (docs/metrics.md), under the names go-grpc-prometheus uses so that existing dashboards work:
//   grpc_server_handled_total{grpc_type, grpc_service, grpc_method, grpc_code}     counter
//   grpc_server_handling_seconds{grpc_type, grpc_service, grpc_method}             histogram
// grpc_type is "unary", "client_stream", "server_stream" or "bidi_stream"; grpc_code is gRPC's
// code in Go's spelling ("OK", "InvalidArgument", "Canceled", ...). A method that is not in the
// process's protobuf descriptor pool (a client calling a name the server does not have) is
// counted as service and method "unknown", so the labels stay a fixed set. The time runs from
// the call's arrival to the status being sent; a call that ends without sending one (the client
// went away) is counted as Canceled. Thread-safe.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <memory>

namespace prometheus {
class Registry;
template <typename T>
class Family;
class Counter;
class Histogram;
}  // namespace prometheus

namespace benchlab {

class RpcMetrics {
 public:
  // Adds both families to `registry`, which must outlive this object.
  explicit RpcMetrics(prometheus::Registry& registry);

  // A factory for ServerBuilder::experimental().SetInterceptorCreators; it refers to this
  // object, which must outlive the server.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> Factory();

  // Records one call: `full_method` as gRPC names it ("/benchlab.v1.Agent/Mark").
  void Record(grpc::experimental::ServerRpcInfo::Type type, const char* full_method,
              grpc::StatusCode code, double seconds);

 private:
  prometheus::Family<prometheus::Counter>& handled_;
  prometheus::Family<prometheus::Histogram>& handling_;
};

// gRPC's status code as Go spells it ("OK", "DeadlineExceeded", ...).
const char* GrpcCodeName(grpc::StatusCode code);

}  // namespace benchlab
