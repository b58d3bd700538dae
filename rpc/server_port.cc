#include "rpc/server_port.h"

#include <grpc/grpc.h>
#include <grpcpp/resource_quota.h>

#include <algorithm>

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

}  // namespace benchlab
