#include "rpc/server_port.h"

#include <grpc/grpc.h>
#include <grpc/support/log.h>
#include <grpcpp/resource_quota.h>

#include <algorithm>
#include <string_view>

#include "spdlog/spdlog.h"

namespace benchlab {

void SetExclusivePort(grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
}

void LimitServerThreads(grpc::ServerBuilder& builder, int max_threads) {
  // The builder keeps its own reference to the quota.
  grpc::ResourceQuota quota("benchlab-server");
  quota.SetMaxThreads(std::max(max_threads, 2));
  builder.SetResourceQuota(quota);
}

namespace {

void GrpcLogLine(gpr_log_func_args* args) {
  const std::string_view file = args->file != nullptr ? args->file : "";
  spdlog::debug("grpc {}:{}: {}", file.substr(file.rfind('/') + 1), args->line,
                args->message != nullptr ? args->message : "");
}

}  // namespace

void RouteGrpcLogging() { gpr_set_log_function(GrpcLogLine); }

}  // namespace benchlab
